import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { defaultExchangeTypes } from '../../src/exchange/exchange-type-registry.js';
import { F, type FieldTable } from '../../src/frame/field-table.js';
import { encodeContentHeaderPayload, type BasicProperties } from '../../src/frame/generated/properties.js';
import { createLogger } from '../../src/log.js';
import { ChurnCounters } from '../../src/metrics/counters.js';
import { Message, senderSelectedRoutingKeys } from '../../src/queue/message.js';
import type { Queue } from '../../src/queue/queue.js';
import { openMemoryStore } from '../../src/store/memory-store.js';
import type { Store } from '../../src/store/store.js';
import type { Exchange } from '../../src/vhost/exchange.js';
import { VHost } from '../../src/vhost/vhost.js';
import { takeAll } from '../queue/harness.js';

/**
 * VHost.publish, the one publish path (route, then enqueue) behind basic.publish, delayed
 * messages and dead-lettering, on a vhost without a broker (FakeClock, memory store).
 */
describe('VHost.publish', () => {
  let clock: FakeClock;
  let store: Store;
  let vhost: VHost;
  const owner = {};

  beforeEach(() => {
    clock = new FakeClock();
    store = openMemoryStore();
    const log = createLogger('silent');
    vhost = new VHost('/', {
      log, clock, exchangeTypes: defaultExchangeTypes(), metadata: store.metadata,
      queueDeps: { log, clock, store: store.messages, memoryWindow: 4096 },
      nextMessageId: () => store.messages.nextMessageId(),
      churn: new ChurnCounters(),
    });
  });

  const exchange = (name: string, type = 'direct', args: FieldTable = {}, durable = false): Exchange =>
    vhost.declareExchange({ name, type, passive: false, durable, autoDelete: false, internal: false, arguments: args });
  const queue = (name: string, args: FieldTable = {}, durable = false): Queue =>
    vhost.declareQueue({ name, passive: false, durable, exclusive: false, autoDelete: false, arguments: args, owner });
  const message = (routingKey: string, body: string, properties: BasicProperties = {}, exchangeName = 'x'): Message => {
    const buf = Buffer.from(body);
    return new Message(store.messages.nextMessageId(), exchangeName, routingKey, encodeContentHeaderPayload(60, buf.length, properties), buf, properties);
  };
  it('routes to every bound queue once and reports whether a store commit holds the message', () => {
    const x = exchange('x');
    const durableQ = queue('d', {}, true);
    const transientQ = queue('t');
    vhost.bind(x, durableQ, 'k', {});
    vhost.bind(x, transientQ, 'k', {});
    const persistent = vhost.publish(x, message('k', 'p', { deliveryMode: 2 }), undefined);
    expect([[...persistent.queues].map((q) => q.name), persistent.durable, persistent.rejected]).to.deep.equal([['d', 't'], true, false]);
    const transient = vhost.publish(x, message('k', 't'), undefined);
    expect([transient.queues.size, transient.durable]).to.deep.equal([2, false]);
    const unroutable = vhost.publish(x, message('other', 'u'), undefined);
    expect([unroutable.queues.size, unroutable.durable, unroutable.rejected]).to.deep.equal([0, false, false]);
    expect(takeAll(durableQ)).to.deep.equal(['p', 't']);
  });

  it('routes by CC and BCC keys and queues (and returns) the message without its BCC header', () => {
    const x = exchange('x');
    const [a, b, c] = [queue('a'), queue('b'), queue('c')];
    for (const q of [a, b, c]) vhost.bind(x, q, q.name, {});
    const headers = { CC: F.array([F.str('b')]), BCC: F.array([F.str('c')]) };
    const published = message('a', 'm', { headers });
    const { message: queued, queues } = vhost.publish(x, published, senderSelectedRoutingKeys(headers));
    expect([...queues].map((q) => q.name)).to.have.members(['a', 'b', 'c']);
    expect(Object.keys(queued.properties.headers ?? {})).to.deep.equal(['CC']);
    const got = c.take();
    expect(got?.msg).to.equal(queued);
  });

  it('reports a queue that refused the message (reject-publish) while the others took it', () => {
    const x = exchange('x', 'fanout');
    const full = queue('full', { 'x-max-length': F.int32(0), 'x-overflow': F.str('reject-publish') });
    const open = queue('open');
    vhost.bind(x, full, '', {});
    vhost.bind(x, open, '', {});
    const r = vhost.publish(x, message('', 'm'), undefined);
    expect([r.rejected, full.messageCount, open.messageCount]).to.deep.equal([true, 0, 1]);
  });

  it('routes through a fanout exchange to each bound queue once, BCC header removed, and falls back to routing when it has no queue', () => {
    const f = exchange('f', 'fanout');
    const [a, b] = [queue('a'), queue('b')];
    vhost.bind(f, a, 'one', {});
    vhost.bind(f, a, 'two', {}); // bound twice: still one copy
    vhost.bind(f, b, '', {});
    const headers = { BCC: F.array([F.str('nobody')]) };
    const r = vhost.publish(f, message('any', 'm', { headers }, 'f'), senderSelectedRoutingKeys(headers));
    expect([[...r.queues].map((q) => q.name), r.durable, r.rejected]).to.deep.equal([['a', 'b'], false, false]);
    expect(r.message.properties.headers?.['BCC']).to.equal(undefined);
    expect([takeAll(a), takeAll(b)]).to.deep.equal([['m'], ['m']]);
    // Unbound: nothing reached; with an alternate exchange, that one routes it.
    vhost.unbind(f, a, 'one', {});
    vhost.unbind(f, a, 'two', {});
    vhost.unbind(f, b, '', {});
    expect(vhost.publish(f, message('any', 'lost', {}, 'f'), undefined).queues.size).to.equal(0);
    const ae = exchange('ae', 'fanout');
    vhost.bind(ae, b, '', {});
    const withAe = exchange('with-ae', 'fanout', { 'alternate-exchange': F.str('ae') });
    expect([...vhost.publish(withAe, message('any', 'aside', {}, 'with-ae'), undefined).queues].map((q) => q.name)).to.deep.equal(['b']);
    // Bound to another exchange too: routed through it, each queue once.
    const g = exchange('g', 'fanout');
    vhost.bind(g, a, '', {});
    vhost.bind(g, b, '', {});
    vhost.bind(f, g, '', {});
    vhost.bind(f, a, '', {});
    expect([...vhost.publish(f, message('any', 'via-g', {}, 'f'), undefined).queues].map((q) => q.name)).to.have.members(['a', 'b']);
    expect([takeAll(a), takeAll(b)]).to.deep.equal([['via-g'], ['aside', 'via-g']]);
  });

  it('routes through a direct exchange by its own set for the key: each queue once, CC keys still routed, unbound keys to the alternate exchange', () => {
    const ae = exchange('ae-d', 'fanout');
    const aside = queue('aside');
    vhost.bind(ae, aside, '', {});
    const d = exchange('d', 'direct', { 'alternate-exchange': F.str('ae-d') });
    const [a, b] = [queue('a'), queue('b')];
    vhost.bind(d, a, 'k', {});
    vhost.bind(d, a, 'k', { x: F.str('other args') }); // bound twice with the key: still one copy
    vhost.bind(d, b, 'k', {});
    vhost.bind(d, b, 'cc', {});
    const r = vhost.publish(d, message('k', 'm', {}, 'd'), undefined);
    expect([[...r.queues].map((q) => q.name), r.durable, r.rejected]).to.deep.equal([['a', 'b'], false, false]);
    // With a CC key the message is routed (each queue once), not offered to the key's set.
    const headers = { CC: F.array([F.str('cc')]) };
    const cc = vhost.publish(d, message('k', 'with-cc', { headers }, 'd'), senderSelectedRoutingKeys(headers));
    expect([...cc.queues].map((q) => q.name)).to.have.members(['a', 'b']);
    const viaCc = vhost.publish(d, message('none', 'cc-only', { headers }, 'd'), senderSelectedRoutingKeys(headers));
    expect([...viaCc.queues].map((q) => q.name)).to.deep.equal(['b']);
    // A key nobody is bound with (or no longer): the alternate exchange routes it.
    expect([...vhost.publish(d, message('nobody', 'lost', {}, 'd'), undefined).queues].map((q) => q.name)).to.deep.equal(['aside']);
    vhost.unbind(d, a, 'k', {});
    vhost.unbind(d, a, 'k', { x: F.str('other args') });
    vhost.unbind(d, b, 'k', {});
    expect([...vhost.publish(d, message('k', 'late', {}, 'd'), undefined).queues].map((q) => q.name)).to.deep.equal(['aside']);
    expect([takeAll(a), takeAll(b), takeAll(aside)]).to.deep.equal([['m', 'with-cc'], ['m', 'with-cc', 'cc-only'], ['lost', 'late']]);
  });

  it('publishes a delayed message through the same path when it is due, BCC keys included', () => {
    const x = exchange('later', 'x-delayed-message', { 'x-delayed-type': F.str('direct') }, true);
    const [a, hidden] = [queue('a'), queue('hidden')];
    vhost.bind(x, a, 'a', {});
    vhost.bind(x, hidden, 'hidden', {});
    const headers = { BCC: F.array([F.str('hidden')]), 'x-delay': F.int32(500) };
    const held = message('a', 'd', { deliveryMode: 2, headers }, 'later');
    expect(vhost.delay(x, held, senderSelectedRoutingKeys(headers), 500)).to.equal(true);
    expect(store.metadata.loadDelayed().length).to.equal(1);
    clock.advance(499);
    expect([a.messageCount, hidden.messageCount]).to.deep.equal([0, 0]);
    clock.advance(1);
    expect([takeAll(a), store.metadata.loadDelayed().length]).to.deep.equal([['d'], 0]);
    const e = hidden.take();
    expect(e?.msg.properties.headers?.['BCC']).to.equal(undefined);
  });

  it('dead-letters through the same path, and cuts a cycle unless a rejection is in it', () => {
    const dlx = exchange('dlx', 'fanout');
    const q = queue('q', { 'x-dead-letter-exchange': F.str('dlx'), 'x-message-ttl': F.int32(100) });
    const other = queue('other');
    vhost.bind(dlx, q, '', {});
    vhost.bind(dlx, other, '', {});
    vhost.publish(vhost.defaultExchange, message('q', 'expiring', {}, ''), undefined);
    clock.advance(100);
    // Expired from q: it goes to "other", and not back to q, where it already expired.
    expect([q.messageCount, takeAll(other)]).to.deep.equal([0, ['expiring']]);

    vhost.publish(vhost.defaultExchange, message('q', 'rejected', {}, ''), undefined);
    const e = q.take();
    q.delivered(e!);
    q.discard([e!]);
    // Rejected: the cycle rule does not apply, so it comes back to q too.
    expect([takeAll(other), q.messageCount]).to.deep.equal([['rejected'], 1]);
    const back = q.take();
    const death = back?.msg.properties.headers?.['x-death'];
    expect(death?.type === 'A' && death.value.length).to.equal(1);
  });
});
