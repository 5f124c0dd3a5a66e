import { expect } from 'chai';
import { channel, closedWith, confirmChannel, type Channel, type ConsumeMessage } from '../support/amqp.js';
import { FakeClock } from '../../src/clock.js';
import { useBroker } from '../support/broker.js';
import { drainBodies as drain, useSession } from '../support/session.js';

/**
 * Routing (issue 3): exchange declare/delete rules, bindings (queue and exchange-to-exchange),
 * the four built-in types and x-consistent-hash driven through the broker, alternate exchanges,
 * sender-selected distribution (CC/BCC) and mandatory returns. Every expectation was checked
 * against RabbitMQ 3.10.8 (Debian's rabbitmq-server with the consistent-hash plugin).
 */
describe('routing (exchanges and bindings)', () => {
  const broker = useBroker();

  const session = useSession(broker);
  const { uniq, openRaw } = session;

  /** Takes every ready message off a queue (no-ack) with its routing fields and headers. */
  async function drainFull(ch: Channel, queue: string) {
    const out: Array<{ body: string; exchange: string; routingKey: string; headers: unknown }> = [];
    for (;;) {
      const m = await ch.get(queue, { noAck: true });
      if (!m) return out;
      out.push({ body: m.content.toString(), exchange: m.fields.exchange, routingKey: m.fields.routingKey, headers: m.properties.headers });
    }
  }

  async function tempQueue(ch: Channel): Promise<string> {
    return (await ch.assertQueue('', { exclusive: true })).queue;
  }

  /** Resolves with the channel.close a publish provokes (amqplib reports it as a channel error). */
  function channelClosed(ch: Channel): Promise<{ code: number; text: string; classId: number; methodId: number }> {
    return new Promise((resolve) =>
      ch.once('error', (e: Error & { code: number; classId: number; methodId: number }) => {
        const m = /with message "(.*)"$/.exec(e.message);
        resolve({ code: e.code, text: m ? (m[1] as string) : e.message, classId: e.classId, methodId: e.methodId });
      }),
    );
  }

  /**
   * Publishes and resolves with the channel.close it provokes, or with 'no close' when a round trip
   * after the publish succeeds (so a broker that accepts the message fails the test fast).
   */
  async function publishRefused(ch: Channel, exchange: string, routingKey: string, options: object = {}) {
    const closed = channelClosed(ch);
    ch.publish(exchange, routingKey, Buffer.from('x'), options);
    return Promise.race([closed, ch.checkExchange('amq.direct').then(() => 'no close' as const, () => closed)]);
  }

  describe('exchange.declare (spec 1.6.2.1; RabbitMQ exchanges guide)', () => {
    it('declares direct, fanout, topic and headers exchanges that route to bound queues (queue.bind to every type)', async () => {
      const ch = await channel(session.conn);
      const names = { direct: uniq('d'), fanout: uniq('f'), topic: uniq('t'), headers: uniq('h') };
      for (const [type, name] of Object.entries(names)) await ch.assertExchange(name, type, { durable: false });
      const q = await tempQueue(ch);
      await ch.bindQueue(q, names.direct, 'rk');
      await ch.bindQueue(q, names.fanout, 'ignored');
      await ch.bindQueue(q, names.topic, 'a.*');
      await ch.bindQueue(q, names.headers, '', { 'x-match': 'all', kind: 'h' });
      ch.publish(names.direct, 'rk', Buffer.from('direct'));
      ch.publish(names.direct, 'other', Buffer.from('direct-miss'));
      ch.publish(names.fanout, 'anything', Buffer.from('fanout'));
      ch.publish(names.topic, 'a.b', Buffer.from('topic'));
      ch.publish(names.topic, 'a.b.c', Buffer.from('topic-miss'));
      ch.publish(names.headers, 'x', Buffer.from('headers'), { headers: { kind: 'h' } });
      ch.publish(names.headers, 'x', Buffer.from('headers-miss'), { headers: { kind: 'other' } });
      expect(await drain(ch, q)).to.deep.equal(['direct', 'fanout', 'topic', 'headers']);
    });

    it('redeclaring with the same properties is fine; with another type is 406 inequivalent arg \'type\'', async () => {
      const ch = await channel(session.conn);
      const x = uniq('redecl-type');
      await ch.assertExchange(x, 'direct', { durable: false });
      await ch.assertExchange(x, 'direct', { durable: false });
      const err = await closedWith(ch.assertExchange(x, 'fanout', { durable: false }));
      expect(err).to.deep.equal({
        code: 406,
        text: `PRECONDITION_FAILED - inequivalent arg 'type' for exchange '${x}' in vhost '/': received 'fanout' but current is 'direct'`,
        classId: 40,
        methodId: 10,
      });
    });

    it('redeclaring with another durable / auto_delete / internal flag is 406 with RabbitMQ wording', async () => {
      const cases: Array<[string, object, string]> = [
        ['durable', { durable: true }, 'durable'],
        ['auto_delete', { durable: false, autoDelete: true }, 'auto_delete'],
        ['internal', { durable: false, internal: true }, 'internal'],
      ];
      for (const [, opts, arg] of cases) {
        const ch = await channel(session.conn);
        const x = uniq('redecl-flag');
        await ch.assertExchange(x, 'direct', { durable: false, autoDelete: false, internal: false });
        const err = await closedWith(ch.assertExchange(x, 'direct', opts));
        expect(err.code).to.equal(406);
        expect(err.text).to.equal(`PRECONDITION_FAILED - inequivalent arg '${arg}' for exchange '${x}' in vhost '/': received 'true' but current is 'false'`);
      }
    });

    it('redeclaring with another alternate-exchange is 406; other arguments are not compared (RabbitMQ exchanges guide)', async () => {
      const added = uniq('ae-added');
      const changed = uniq('ae-changed');
      const removed = uniq('ae-removed');
      const other = uniq('other-args');
      let ch = await channel(session.conn);
      await ch.assertExchange(added, 'direct', { durable: false });
      expect((await closedWith(ch.assertExchange(added, 'direct', { durable: false, alternateExchange: 'ae1' }))).text).to.equal(
        `PRECONDITION_FAILED - inequivalent arg 'alternate-exchange' for exchange '${added}' in vhost '/': received the value 'ae1' of type 'longstr' but current is none`,
      );
      ch = await channel(session.conn);
      await ch.assertExchange(changed, 'direct', { durable: false, alternateExchange: 'ae0' });
      expect((await closedWith(ch.assertExchange(changed, 'direct', { durable: false, alternateExchange: 'ae1' }))).text).to.equal(
        `PRECONDITION_FAILED - inequivalent arg 'alternate-exchange' for exchange '${changed}' in vhost '/': received 'ae1' but current is 'ae0'`,
      );
      ch = await channel(session.conn);
      await ch.assertExchange(removed, 'direct', { durable: false, alternateExchange: 'ae0' });
      expect((await closedWith(ch.assertExchange(removed, 'direct', { durable: false }))).text).to.equal(
        `PRECONDITION_FAILED - inequivalent arg 'alternate-exchange' for exchange '${removed}' in vhost '/': received none but current is the value 'ae0' of type 'longstr'`,
      );
      ch = await channel(session.conn);
      await ch.assertExchange(other, 'direct', { durable: false, arguments: { foo: 1 } });
      await ch.assertExchange(other, 'direct', { durable: false, arguments: { foo: 2 } });
      await ch.assertExchange(other, 'direct', { durable: false });
    });

    it('passive declare of a missing exchange is 404 NOT_FOUND', async () => {
      const ch = await channel(session.conn);
      const err = await closedWith(ch.checkExchange('no-such-exchange'));
      expect(err).to.deep.equal({ code: 404, text: "NOT_FOUND - no exchange 'no-such-exchange' in vhost '/'", classId: 40, methodId: 10 });
    });

    it("declaring an exchange named amq.* is 403 (reserved prefix); passive on a missing amq.* is 404", async () => {
      let ch = await channel(session.conn);
      const err = await closedWith(ch.assertExchange('amq.foo', 'direct'));
      expect(err).to.deep.equal({ code: 403, text: "ACCESS_REFUSED - exchange name 'amq.foo' contains reserved prefix 'amq.*'", classId: 40, methodId: 10 });
      ch = await channel(session.conn);
      expect((await closedWith(ch.checkExchange('amq.foo'))).text).to.equal("NOT_FOUND - no exchange 'amq.foo' in vhost '/'");
    });

    it('redeclaring a predefined amq.* exchange with its own properties is fine; with others is 406', async () => {
      const ch = await channel(session.conn);
      await ch.assertExchange('amq.direct', 'direct', { durable: true });
      await ch.assertExchange('amq.topic', 'topic', { durable: true });
      const err = await closedWith(ch.assertExchange('amq.direct', 'direct', { durable: false }));
      expect(err.text).to.equal("PRECONDITION_FAILED - inequivalent arg 'durable' for exchange 'amq.direct' in vhost '/': received 'false' but current is 'true'");
    });

    it('declaring the default exchange is 403 "operation not permitted on the default exchange"', async () => {
      const ch = await channel(session.conn);
      const err = await closedWith(ch.assertExchange('', 'direct'));
      expect(err).to.deep.equal({ code: 403, text: 'ACCESS_REFUSED - operation not permitted on the default exchange', classId: 40, methodId: 10 });
    });

    it('an unknown exchange type closes the connection with 503 COMMAND_INVALID (raw frames)', async () => {
      const c = await openRaw();
      await c.openChannel(1);
      c.method(1, 'exchange.declare', {
        reserved1: 0, exchange: uniq('unknown-type'), type: 'no-such-type', passive: false, durable: false, autoDelete: false, internal: false, noWait: false, arguments: {},
      });
      const close = await c.expect('connection.close');
      expect(close).to.deep.equal({ replyCode: 503, replyText: "COMMAND_INVALID - unknown exchange type 'no-such-type'", classId: 40, methodId: 10 });
      expect(await c.waitClosed(), 'socket closed').to.equal(true);
    });

    it('a passive declare ignores the type field', async () => {
      const c = await openRaw();
      await c.openChannel(1);
      c.method(1, 'exchange.declare', {
        reserved1: 0, exchange: 'amq.direct', type: 'no-such-type', passive: true, durable: false, autoDelete: false, internal: false, noWait: false, arguments: {},
      });
      await c.expect('exchange.declare-ok');
      c.destroy();
    });
  });

  describe('internal exchanges (RabbitMQ exchanges guide; e2e)', () => {
    it("publishing to an internal exchange is 403 \"cannot publish to internal exchange 'x' in vhost '/'\"", async () => {
      const ch = await channel(session.conn);
      const x = uniq('internal');
      await ch.assertExchange(x, 'fanout', { durable: false, internal: true });
      expect(await publishRefused(ch, x, '')).to.deep.equal({ code: 403, text: `ACCESS_REFUSED - cannot publish to internal exchange '${x}' in vhost '/'`, classId: 60, methodId: 40 });
    });

    it('an internal exchange still receives through an exchange-to-exchange binding', async () => {
      const ch = await channel(session.conn);
      const x = uniq('internal-dest');
      await ch.assertExchange(x, 'fanout', { durable: false, internal: true });
      await ch.bindExchange(x, 'amq.direct', `${x}-key`);
      const q = await tempQueue(ch);
      await ch.bindQueue(q, x, '');
      ch.publish('amq.direct', `${x}-key`, Buffer.from('via e2e'));
      expect(await drain(ch, q)).to.deep.equal(['via e2e']);
      await ch.deleteExchange(x);
    });
  });

  describe('auto-delete exchanges (RabbitMQ exchanges guide)', () => {
    it('is deleted when its last queue binding is removed, not before', async () => {
      const ch = await channel(session.conn);
      const x = uniq('autodel');
      await ch.assertExchange(x, 'direct', { durable: false, autoDelete: true });
      const q = await tempQueue(ch);
      await ch.bindQueue(q, x, 'a');
      await ch.bindQueue(q, x, 'b');
      await ch.unbindQueue(q, x, 'a');
      await ch.checkExchange(x);
      await ch.unbindQueue(q, x, 'b');
      expect((await closedWith(ch.checkExchange(x))).text).to.equal(`NOT_FOUND - no exchange '${x}' in vhost '/'`);
    });

    it('is deleted when the last bound queue is deleted', async () => {
      const ch = await channel(session.conn);
      const x = uniq('autodel-q');
      await ch.assertExchange(x, 'direct', { durable: false, autoDelete: true });
      const q = await tempQueue(ch);
      await ch.bindQueue(q, x, 'a');
      await ch.deleteQueue(q);
      expect((await closedWith(ch.checkExchange(x))).code).to.equal(404);
    });

    it('is deleted when its last exchange-to-exchange binding (as source) goes, but not one where it is the destination', async () => {
      let ch = await channel(session.conn);
      const src = uniq('autodel-src');
      const dst = uniq('autodel-dst');
      await ch.assertExchange(src, 'fanout', { durable: false, autoDelete: true });
      await ch.assertExchange(dst, 'fanout', { durable: false, autoDelete: true });
      await ch.bindExchange('amq.fanout', src, '');
      await ch.unbindExchange('amq.fanout', src, '');
      expect((await closedWith(ch.checkExchange(src))).code).to.equal(404);
      ch = await channel(session.conn);
      await ch.bindExchange(dst, 'amq.fanout', '');
      await ch.unbindExchange(dst, 'amq.fanout', '');
      await ch.checkExchange(dst);
      await ch.deleteExchange(dst);
    });

    it('an auto-delete exchange that never had a binding stays', async () => {
      const ch = await channel(session.conn);
      const x = uniq('autodel-never');
      await ch.assertExchange(x, 'direct', { durable: false, autoDelete: true });
      await ch.checkExchange(x);
      await ch.deleteExchange(x);
    });
  });

  describe('exchange.delete (spec 1.6.2.3)', () => {
    it('if-unused on an exchange with bindings is 406 "in use"', async () => {
      const ch = await channel(session.conn);
      const x = uniq('in-use');
      await ch.assertExchange(x, 'fanout', { durable: false });
      const q = await tempQueue(ch);
      await ch.bindQueue(q, x, '');
      const err = await closedWith(ch.deleteExchange(x, { ifUnused: true }));
      expect(err).to.deep.equal({ code: 406, text: `PRECONDITION_FAILED - exchange '${x}' in vhost '/' in use`, classId: 40, methodId: 20 });
    });

    it('if-unused counts only bindings where the exchange is the source', async () => {
      const ch = await channel(session.conn);
      const x = uniq('dest-only');
      await ch.assertExchange(x, 'fanout', { durable: false });
      await ch.bindExchange(x, 'amq.fanout', '');
      await ch.deleteExchange(x, { ifUnused: true });
      expect((await closedWith(ch.checkExchange(x))).code).to.equal(404);
    });

    it('if-unused succeeds once the bound queue is gone', async () => {
      const ch = await channel(session.conn);
      const x = uniq('unused-after');
      await ch.assertExchange(x, 'fanout', { durable: false });
      const q = await tempQueue(ch);
      await ch.bindQueue(q, x, '');
      await ch.deleteQueue(q);
      await ch.deleteExchange(x, { ifUnused: true });
    });

    it('deleting a missing exchange is fine (delete-ok), with or without if-unused', async () => {
      const ch = await channel(session.conn);
      await ch.deleteExchange('never-declared');
      await ch.deleteExchange('never-declared', { ifUnused: true });
    });

    it('deleting a predefined amq.* exchange is 403; deleting the default exchange is 403', async () => {
      let ch = await channel(session.conn);
      expect(await closedWith(ch.deleteExchange('amq.direct'))).to.deep.equal({
        code: 403, text: "ACCESS_REFUSED - deletion of system exchange 'amq.direct' in vhost '/' not allowed", classId: 40, methodId: 20,
      });
      ch = await channel(session.conn);
      expect((await closedWith(ch.deleteExchange(''))).text).to.equal('ACCESS_REFUSED - operation not permitted on the default exchange');
    });

    it('deleting an exchange removes its bindings: a new exchange of the same name routes nowhere', async () => {
      const ch = await channel(session.conn);
      const x = uniq('recreated');
      await ch.assertExchange(x, 'fanout', { durable: false });
      const q = await tempQueue(ch);
      await ch.bindQueue(q, x, '');
      await ch.deleteExchange(x);
      await ch.assertExchange(x, 'fanout', { durable: false });
      ch.publish(x, '', Buffer.from('lost'));
      expect(await drain(ch, q)).to.deep.equal([]);
      await ch.deleteExchange(x);
    });
  });

  describe('queue.bind / queue.unbind (spec 1.7.2.3, 1.7.2.5)', () => {
    it('binding to or unbinding from the default exchange is 403', async () => {
      let ch = await channel(session.conn);
      const q = await tempQueue(ch);
      expect(await closedWith(ch.bindQueue(q, '', 'k'))).to.deep.equal({
        code: 403, text: 'ACCESS_REFUSED - operation not permitted on the default exchange', classId: 50, methodId: 20,
      });
      ch = await channel(session.conn);
      expect(await closedWith(ch.unbindQueue(q, '', q))).to.deep.equal({
        code: 403, text: 'ACCESS_REFUSED - operation not permitted on the default exchange', classId: 50, methodId: 50,
      });
    });

    it('binding a missing queue or to a missing exchange is 404', async () => {
      let ch = await channel(session.conn);
      expect((await closedWith(ch.bindQueue('no-such-queue', 'amq.direct', 'k'))).text).to.equal("NOT_FOUND - no queue 'no-such-queue' in vhost '/'");
      ch = await channel(session.conn);
      const q = await tempQueue(ch);
      expect((await closedWith(ch.bindQueue(q, 'no-such-exchange', 'k'))).text).to.equal("NOT_FOUND - no exchange 'no-such-exchange' in vhost '/'");
    });

    it('unbinding a binding, queue or exchange that does not exist is fine (unbind-ok), as in RabbitMQ 3.10', async () => {
      const ch = await channel(session.conn);
      const q = await tempQueue(ch);
      await ch.unbindQueue(q, 'amq.direct', 'never-bound');
      await ch.unbindQueue('no-such-queue', 'amq.direct', 'k');
      await ch.unbindQueue(q, 'no-such-exchange', 'k');
      await ch.checkQueue(q);
    });

    it('bind and unbind are idempotent: a double bind delivers once, a double unbind is fine', async () => {
      const ch = await channel(session.conn);
      const q = await tempQueue(ch);
      const key = uniq('twice');
      await ch.bindQueue(q, 'amq.direct', key);
      await ch.bindQueue(q, 'amq.direct', key);
      ch.publish('amq.direct', key, Buffer.from('once'));
      expect(await drain(ch, q)).to.deep.equal(['once']);
      await ch.unbindQueue(q, 'amq.direct', key);
      await ch.unbindQueue(q, 'amq.direct', key);
      ch.publish('amq.direct', key, Buffer.from('unbound'));
      expect(await drain(ch, q)).to.deep.equal([]);
    });

    it('a queue matched by several bindings of one exchange gets one copy', async () => {
      const ch = await channel(session.conn);
      const q = await tempQueue(ch);
      const key = uniq('multi');
      await ch.bindQueue(q, 'amq.topic', `${key}.x`);
      await ch.bindQueue(q, 'amq.topic', `${key}.*`);
      await ch.bindQueue(q, 'amq.topic', '#');
      ch.publish('amq.topic', `${key}.x`, Buffer.from('one copy'));
      expect(await drain(ch, q)).to.deep.equal(['one copy']);
      await ch.unbindQueue(q, 'amq.topic', '#');
    });

    it('headers bindings with different arguments are different bindings; unbind removes only the matching one', async () => {
      const ch = await channel(session.conn);
      const q = await tempQueue(ch);
      const x = uniq('hdr-args');
      await ch.assertExchange(x, 'headers', { durable: false, autoDelete: true });
      await ch.bindQueue(q, x, '', { a: 1 });
      await ch.bindQueue(q, x, '', { b: 2 });
      ch.publish(x, '', Buffer.from('ab'), { headers: { a: 1, b: 2 } });
      ch.publish(x, '', Buffer.from('b'), { headers: { b: 2 } });
      expect(await drain(ch, q)).to.deep.equal(['ab', 'b']);
      await ch.unbindQueue(q, x, '', { a: 1 });
      ch.publish(x, '', Buffer.from('a'), { headers: { a: 1 } });
      ch.publish(x, '', Buffer.from('b2'), { headers: { b: 2 } });
      expect(await drain(ch, q)).to.deep.equal(['b2']);
    });
  });

  describe('exchange-to-exchange bindings (RabbitMQ e2e guide)', () => {
    it('binding to or from the default exchange is 403; a missing source or destination is 404', async () => {
      let ch = await channel(session.conn);
      expect(await closedWith(ch.bindExchange('', 'amq.fanout', 'k'))).to.deep.equal({
        code: 403, text: 'ACCESS_REFUSED - operation not permitted on the default exchange', classId: 40, methodId: 30,
      });
      ch = await channel(session.conn);
      expect((await closedWith(ch.bindExchange('amq.fanout', '', 'k'))).code).to.equal(403);
      ch = await channel(session.conn);
      expect(await closedWith(ch.bindExchange('amq.fanout', 'no-such-src', 'k'))).to.deep.equal({
        code: 404, text: "NOT_FOUND - no exchange 'no-such-src' in vhost '/'", classId: 40, methodId: 30,
      });
      ch = await channel(session.conn);
      expect((await closedWith(ch.bindExchange('no-such-dst', 'amq.fanout', 'k'))).text).to.equal("NOT_FOUND - no exchange 'no-such-dst' in vhost '/'");
      ch = await channel(session.conn);
      await ch.unbindExchange('amq.topic', 'amq.fanout', 'never-bound');
    });

    it('routes through chains and cycles, and every queue gets the message once', async () => {
      const ch = await channel(session.conn);
      const e1 = uniq('e2e-1');
      const e2 = uniq('e2e-2');
      const e3 = uniq('e2e-3');
      await ch.assertExchange(e1, 'fanout', { durable: false });
      await ch.assertExchange(e2, 'fanout', { durable: false });
      await ch.assertExchange(e3, 'topic', { durable: false });
      await ch.bindExchange(e2, e1, '');
      await ch.bindExchange(e1, e2, '');
      await ch.bindExchange(e3, e1, '');
      await ch.bindExchange(e1, e3, '#');
      const q1 = await tempQueue(ch);
      const q2 = await tempQueue(ch);
      const q3 = await tempQueue(ch);
      await ch.bindQueue(q1, e1, '');
      await ch.bindQueue(q2, e2, '');
      await ch.bindQueue(q2, e3, 'k');
      await ch.bindQueue(q3, e3, '#');
      ch.publish(e1, 'k', Buffer.from('m'));
      const expected = [{ body: 'm', exchange: e1, routingKey: 'k', headers: {} }];
      expect(await drainFull(ch, q1)).to.deep.equal(expected);
      expect(await drainFull(ch, q2)).to.deep.equal(expected);
      expect(await drainFull(ch, q3)).to.deep.equal(expected);

      await ch.unbindExchange(e2, e1, '');
      await ch.unbindExchange(e3, e1, '');
      ch.publish(e1, 'k', Buffer.from('after unbind'));
      expect(await drain(ch, q1)).to.deep.equal(['after unbind']);
      expect(await drain(ch, q2)).to.deep.equal([]);
      expect(await drain(ch, q3)).to.deep.equal([]);
      for (const e of [e1, e2, e3]) await ch.deleteExchange(e);
    });

    it('an exchange bound to itself delivers once', async () => {
      const ch = await channel(session.conn);
      const x = uniq('self');
      await ch.assertExchange(x, 'fanout', { durable: false });
      await ch.bindExchange(x, x, '');
      const q = await tempQueue(ch);
      await ch.bindQueue(q, x, '');
      ch.publish(x, 'k', Buffer.from('once'));
      expect(await drain(ch, q)).to.deep.equal(['once']);
      await ch.deleteExchange(x);
    });
  });

  describe('topic exchange edge cases through the broker (RabbitMQ tutorial 5; rabbit_exchange_type_topic)', () => {
    // Routing keys published to one topic exchange, and for each binding key the ones RabbitMQ 3.10 delivered.
    const keys = ['', 'a', 'a.b', 'a..b', 'a.x.b', 'a.x.y.b', '.', '..', 'b', 'a.b.c', 'a.', '.b'];
    const all = keys;
    const expected: Record<string, string[]> = {
      '#': all,
      '#.#': all,
      'a.#.b': ['a.b', 'a..b', 'a.x.b', 'a.x.y.b'],
      'a.#.#.b': ['a.b', 'a..b', 'a.x.b', 'a.x.y.b'],
      'a.*.b': ['a..b', 'a.x.b'],
      'a..b': ['a..b'],
      '': [''],
      '*': ['a', 'b'],
      '..': ['..'],
      '.': ['.'],
      'a.#': ['a', 'a.b', 'a..b', 'a.x.b', 'a.x.y.b', 'a.b.c', 'a.'],
      '#.b': ['a.b', 'a..b', 'a.x.b', 'a.x.y.b', 'b', '.b'],
      '*.*': ['a.b', '.', 'a.', '.b'],
      'a.*': ['a.b', 'a.'],
      '#.*.#': keys.filter((k) => k !== ''),
      '*.#': keys.filter((k) => k !== ''),
    };

    it('matches #, #.#, a.#.b, a..b, the empty key and keys of only dots exactly as RabbitMQ', async () => {
      const ch = await channel(session.conn);
      const x = uniq('topic-matrix');
      await ch.assertExchange(x, 'topic', { durable: false, autoDelete: true });
      const queues: Record<string, string> = {};
      for (const binding of Object.keys(expected)) {
        queues[binding] = await tempQueue(ch);
        await ch.bindQueue(queues[binding] as string, x, binding);
      }
      for (const k of keys) ch.publish(x, k, Buffer.from(k));
      const got: Record<string, string[]> = {};
      for (const [binding, q] of Object.entries(queues)) got[binding] = await drain(ch, q);
      expect(got).to.deep.equal(expected);
    });
  });

  describe('headers exchange (RabbitMQ exchanges guide: headers)', () => {
    it('x-match all / any / all-with-x / any-with-x, value types and void, as RabbitMQ matches them', async () => {
      const ch = await channel(session.conn);
      const x = uniq('headers-matrix');
      await ch.assertExchange(x, 'headers', { durable: false, autoDelete: true });
      const bindings: Record<string, Record<string, unknown>> = {
        all: { 'x-match': 'all', a: 1, b: '2' },
        any: { 'x-match': 'any', a: 1, b: '2' },
        default: { a: 1, b: '2' },
        allWithX: { 'x-match': 'all-with-x', a: 1, 'x-k': 'v' },
        anyWithX: { 'x-match': 'any-with-x', 'x-k': 'v', z: 'z' },
        allIgnoresX: { 'x-match': 'all', a: 1, 'x-k': 'v' },
        anyIgnoresX: { 'x-match': 'any', 'x-k': 'v' },
        allEmpty: { 'x-match': 'all' },
        anyEmpty: { 'x-match': 'any' },
        void: { 'x-match': 'all', v: null },
        number: { 'x-match': 'all', n: 1 },
        string: { 'x-match': 'all', n: '1' },
      };
      const queues: Record<string, string> = {};
      for (const [name, args] of Object.entries(bindings)) {
        queues[name] = await tempQueue(ch);
        await ch.bindQueue(queues[name] as string, x, 'ignored', args);
      }
      const messages: Record<string, Record<string, unknown> | undefined> = {
        ab: { a: 1, b: '2' }, a: { a: 1 }, b: { b: '2' }, none: {}, axk: { a: 1, 'x-k': 'v' }, xk: { 'x-k': 'v' },
        wrongType: { a: '1', b: '2' }, extra: { a: 1, b: '2', c: 3 }, v: { v: null }, n1: { n: 1 }, nstr: { n: '1' }, noHeaders: undefined,
      };
      for (const [name, headers] of Object.entries(messages)) ch.publish(x, 'rk', Buffer.from(name), headers ? { headers } : {});
      const got: Record<string, string[]> = {};
      for (const [name, q] of Object.entries(queues)) got[name] = await drain(ch, q);
      expect(got).to.deep.equal({
        all: ['ab', 'extra'],
        any: ['ab', 'a', 'b', 'axk', 'wrongType', 'extra'],
        default: ['ab', 'extra'],
        allWithX: ['axk'],
        anyWithX: ['axk', 'xk'],
        allIgnoresX: ['ab', 'a', 'axk', 'extra'],
        anyIgnoresX: [],
        allEmpty: Object.keys(messages),
        anyEmpty: [],
        void: ['v'],
        number: ['n1'],
        string: ['nstr'],
      });
    });

    it('an invalid x-match value is 406 with RabbitMQ wording', async () => {
      const ch = await channel(session.conn);
      const q = await tempQueue(ch);
      const err = await closedWith(ch.bindQueue(q, 'amq.headers', '', { 'x-match': 'some' }));
      expect(err).to.deep.equal({
        code: 406, text: 'PRECONDITION_FAILED - Invalid x-match field value <<"some">>; expected all, any, all-with-x, or any-with-x', classId: 50, methodId: 20,
      });
    });
  });

  describe('alternate exchanges (RabbitMQ ae guide)', () => {
    it('unroutable messages follow a chain of alternate exchanges, keeping exchange and routing key', async () => {
      const ch = await channel(session.conn);
      const ae2 = uniq('ae2');
      const ae1 = uniq('ae1');
      const main = uniq('main');
      await ch.assertExchange(ae2, 'fanout', { durable: false });
      await ch.assertExchange(ae1, 'direct', { durable: false, alternateExchange: ae2 });
      await ch.assertExchange(main, 'direct', { durable: false, alternateExchange: ae1 });
      const q1 = await tempQueue(ch);
      const q2 = await tempQueue(ch);
      const q3 = await tempQueue(ch);
      await ch.bindQueue(q1, main, 'k1');
      await ch.bindQueue(q2, ae1, 'k2');
      await ch.bindQueue(q3, ae2, '');
      for (const k of ['k1', 'k2', 'k3']) ch.publish(main, k, Buffer.from(k), { headers: { h: 1 } });
      expect(await drainFull(ch, q1)).to.deep.equal([{ body: 'k1', exchange: main, routingKey: 'k1', headers: { h: 1 } }]);
      expect(await drainFull(ch, q2)).to.deep.equal([{ body: 'k2', exchange: main, routingKey: 'k2', headers: { h: 1 } }]);
      expect(await drainFull(ch, q3)).to.deep.equal([{ body: 'k3', exchange: main, routingKey: 'k3', headers: { h: 1 } }]);
      for (const e of [main, ae1, ae2]) await ch.deleteExchange(e);
    });

    it('a mandatory message the AE cannot route either comes back (312 NO_ROUTE) before its confirm; once the AE routes it, no return', async () => {
      const ch = await confirmChannel(session.conn);
      const ae = uniq('ae-dead-end');
      const main = uniq('main-m');
      await ch.assertExchange(ae, 'direct', { durable: false });
      await ch.assertExchange(main, 'direct', { durable: false, alternateExchange: ae });
      const events: string[] = [];
      const returns: ConsumeMessage[] = [];
      ch.on('return', (m: ConsumeMessage) => {
        events.push(`return ${m.content.toString()}`);
        returns.push(m);
      });
      await new Promise<void>((resolve) => ch.publish(main, 'nok', Buffer.from('m1'), { mandatory: true }, () => { events.push('ack m1'); resolve(); }));
      const q = await tempQueue(ch);
      await ch.bindQueue(q, ae, 'nok');
      await new Promise<void>((resolve) => ch.publish(main, 'nok', Buffer.from('m2'), { mandatory: true }, () => { events.push('ack m2'); resolve(); }));
      expect(events).to.deep.equal(['return m1', 'ack m1', 'ack m2']);
      expect(returns[0]!.fields).to.include({ replyCode: 312, replyText: 'NO_ROUTE', exchange: main, routingKey: 'nok' });
      expect(await drain(ch, q)).to.deep.equal(['m2']);
      await ch.deleteExchange(main);
      await ch.deleteExchange(ae);
    });

    it('a missing alternate exchange, or a cycle of them, leaves the message unroutable (mandatory return)', async () => {
      const ch = await confirmChannel(session.conn);
      const missing = uniq('ae-missing');
      const c1 = uniq('ae-cycle-1');
      const c2 = uniq('ae-cycle-2');
      await ch.assertExchange(missing, 'direct', { durable: false, alternateExchange: 'no-such-ae' });
      await ch.assertExchange(c1, 'direct', { durable: false, alternateExchange: c2 });
      await ch.assertExchange(c2, 'direct', { durable: false, alternateExchange: c1 });
      const returned: string[] = [];
      ch.on('return', (m: ConsumeMessage) => {
        const f = m.fields as unknown as { replyCode: number; replyText: string };
        returned.push(`${f.replyCode} ${f.replyText} ${m.content.toString()}`);
      });
      ch.publish(missing, 'k', Buffer.from('missing'), { mandatory: true });
      ch.publish(c1, 'k', Buffer.from('cycle'), { mandatory: true });
      await ch.waitForConfirms();
      expect(returned).to.deep.equal(['312 NO_ROUTE missing', '312 NO_ROUTE cycle']);
      for (const e of [missing, c1, c2]) await ch.deleteExchange(e);
    });

    it('an internal exchange can serve as alternate exchange', async () => {
      const ch = await channel(session.conn);
      const ae = uniq('ae-internal');
      const main = uniq('main-i');
      await ch.assertExchange(ae, 'fanout', { durable: false, internal: true });
      await ch.assertExchange(main, 'direct', { durable: false, alternateExchange: ae });
      const q = await tempQueue(ch);
      await ch.bindQueue(q, ae, '');
      ch.publish(main, 'zz', Buffer.from('via internal ae'));
      expect(await drainFull(ch, q)).to.deep.equal([{ body: 'via internal ae', exchange: main, routingKey: 'zz', headers: {} }]);
      await ch.deleteExchange(main);
      await ch.deleteExchange(ae);
    });
  });

  describe('sender-selected distribution: CC and BCC (RabbitMQ sender-selected guide)', () => {
    it('routes with the CC and BCC keys too; CC is delivered, BCC is removed before delivery', async () => {
      const ch = await channel(session.conn);
      const [a, b, c] = [uniq('cc-a'), uniq('cc-b'), uniq('cc-c')];
      const qa = await tempQueue(ch);
      const qb = await tempQueue(ch);
      const qc = await tempQueue(ch);
      await ch.bindQueue(qa, 'amq.direct', a);
      await ch.bindQueue(qb, 'amq.direct', b);
      await ch.bindQueue(qc, 'amq.direct', c);
      ch.publish('amq.direct', a, Buffer.from('m1'), { headers: { CC: [b], BCC: [c, a], other: 'o' } });
      ch.publish('amq.direct', 'nowhere', Buffer.from('m2'), { headers: { BCC: [c] } });
      ch.publish('amq.direct', 'nowhere', Buffer.from('m3'), { headers: { CC: [b, c] } });
      ch.publish('amq.direct', 'nowhere', Buffer.from('m4'), { headers: { cc: [b] } });
      const m1 = { body: 'm1', exchange: 'amq.direct', routingKey: a, headers: { CC: [b], other: 'o' } };
      expect(await drainFull(ch, qa)).to.deep.equal([m1]);
      expect(await drainFull(ch, qb)).to.deep.equal([m1, { body: 'm3', exchange: 'amq.direct', routingKey: 'nowhere', headers: { CC: [b, c] } }]);
      expect(await drainFull(ch, qc)).to.deep.equal([
        m1,
        { body: 'm2', exchange: 'amq.direct', routingKey: 'nowhere', headers: {} },
        { body: 'm3', exchange: 'amq.direct', routingKey: 'nowhere', headers: { CC: [b, c] } },
      ]);
    });

    it('a mandatory message routed only by BCC is not returned; an unroutable one is returned without its BCC header', async () => {
      const ch = await confirmChannel(session.conn);
      const key = uniq('bcc-only');
      const q = await tempQueue(ch);
      await ch.bindQueue(q, 'amq.direct', key);
      const events: unknown[] = [];
      ch.on('return', (m: ConsumeMessage) => events.push(['return', m.fields.routingKey, m.properties.headers]));
      await new Promise<void>((resolve) => ch.publish('amq.direct', 'zzz', Buffer.from('r'), { mandatory: true, headers: { BCC: [key] } }, () => { events.push('ack'); resolve(); }));
      await new Promise<void>((resolve) => ch.publish('amq.direct', 'zzz', Buffer.from('u'), { mandatory: true, headers: { BCC: ['nobody'] } }, () => { events.push('ack'); resolve(); }));
      expect(events).to.deep.equal(['ack', ['return', 'zzz', {}], 'ack']);
      expect(await drain(ch, q)).to.deep.equal(['r']);
    });

    it('a CC or BCC header that is not an array is 406 "invalid message" (RabbitMQ rabbit_basic)', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ CC: 'b' }, 'PRECONDITION_FAILED - invalid message: {unacceptable_type_in_header,"CC",longstr}'],
        [{ BCC: 'b' }, 'PRECONDITION_FAILED - invalid message: {unacceptable_type_in_header,"BCC",longstr}'],
        [{ CC: { a: 1 } }, 'PRECONDITION_FAILED - invalid message: {unacceptable_type_in_header,"CC",table}'],
      ];
      for (const [headers, text] of cases) {
        const ch = await channel(session.conn);
        expect(await publishRefused(ch, 'amq.direct', 'k', { headers })).to.deep.equal({ code: 406, text, classId: 60, methodId: 40 });
      }
    });
  });

  describe('mandatory and confirms (RabbitMQ confirms guide; spec 1.8.3.9)', () => {
    it('basic.return of an unroutable mandatory message arrives before the publisher confirm', async () => {
      const ch = await confirmChannel(session.conn);
      const events: string[] = [];
      ch.on('return', (m: ConsumeMessage) => events.push(`return ${m.content.toString()}`));
      ch.publish('amq.fanout', 'k', Buffer.from('1'), { mandatory: true }, () => events.push('ack 1'));
      ch.publish('amq.fanout', 'k', Buffer.from('2'), { mandatory: false }, () => events.push('ack 2'));
      await ch.waitForConfirms();
      expect(events).to.deep.equal(['return 1', 'ack 1', 'ack 2']);
    });
  });

  describe('x-consistent-hash exchange (rabbitmq_consistent_hash_exchange README)', () => {
    /** Declares the exchange and binds fixed-name queues with the given weights (the ring depends on the names). */
    async function ring(ch: Channel, name: string, args: Record<string, unknown>, weights: string[]): Promise<string[]> {
      await ch.assertExchange(name, 'x-consistent-hash', { durable: false, arguments: args });
      const queues: string[] = [];
      for (let i = 0; i < weights.length; i++) {
        const q = `chq-${name}-${i}`;
        await ch.assertQueue(q, { exclusive: true });
        await ch.bindQueue(q, name, weights[i] as string);
        queues.push(q);
      }
      return queues;
    }

    it('hashes the routing key onto weighted buckets: the same key always lands in the same queue (exact RabbitMQ placement)', async () => {
      const ch = await channel(session.conn);
      const qs = await ring(ch, 'ch1', {}, ['1', '2', '3']);
      for (let i = 0; i < 60; i++) ch.publish('ch1', `k${i}`, Buffer.from(`k${i}`));
      for (let i = 0; i < 5; i++) ch.publish('ch1', 'k7', Buffer.from(`again${i}`));
      const got = [];
      for (const q of qs) got.push(await drain(ch, q));
      expect(got).to.deep.equal([
        ['k15', 'k16', 'k18', 'k25', 'k36', 'k39', 'k43', 'k54'],
        ['k0', 'k3', 'k4', 'k6', 'k9', 'k12', 'k13', 'k14', 'k19', 'k23', 'k29', 'k30', 'k32', 'k35', 'k38', 'k41', 'k42', 'k44', 'k45', 'k49', 'k50', 'k51', 'k55', 'k57', 'k59'],
        ['k1', 'k2', 'k5', 'k7', 'k8', 'k10', 'k11', 'k17', 'k20', 'k21', 'k22', 'k24', 'k26', 'k27', 'k28', 'k31', 'k33', 'k34', 'k37', 'k40', 'k46', 'k47', 'k48', 'k52', 'k53', 'k56', 'k58', 'again0', 'again1', 'again2', 'again3', 'again4'],
      ]);
      await ch.deleteExchange('ch1');
    });

    it('hash-header hashes a header value (a missing header hashes like undefined)', async () => {
      const ch = await channel(session.conn);
      const qs = await ring(ch, 'ch2', { 'hash-header': 'user' }, ['10', '10']);
      for (let i = 0; i < 20; i++) ch.publish('ch2', 'same', Buffer.from(`u${i}`), { headers: { user: `u${i}` } });
      ch.publish('ch2', 'same', Buffer.from('nohdr'), {});
      ch.publish('ch2', 'same', Buffer.from('numhdr'), { headers: { user: 5 } });
      const got = [];
      for (const q of qs) got.push(await drain(ch, q));
      expect(got).to.deep.equal([
        ['u0', 'u5', 'u6', 'u7', 'u8', 'u10', 'u11', 'u16', 'u17', 'nohdr', 'numhdr'],
        ['u1', 'u2', 'u3', 'u4', 'u9', 'u12', 'u13', 'u14', 'u15', 'u18', 'u19'],
      ]);
      await ch.deleteExchange('ch2');
    });

    it('hash-property hashes a message property (message_id, timestamp)', async () => {
      const ch = await channel(session.conn);
      const byId = await ring(ch, 'ch3', { 'hash-property': 'message_id' }, ['5', '5']);
      for (let i = 0; i < 20; i++) ch.publish('ch3', 'same', Buffer.from(`m${i}`), { messageId: `m${i}` });
      ch.publish('ch3', 'same', Buffer.from('noprop'), {});
      const got = [];
      for (const q of byId) got.push(await drain(ch, q));
      expect(got).to.deep.equal([
        ['m0', 'm4', 'm6', 'm9', 'm11', 'm14', 'noprop'],
        ['m1', 'm2', 'm3', 'm5', 'm7', 'm8', 'm10', 'm12', 'm13', 'm15', 'm16', 'm17', 'm18', 'm19'],
      ]);
      const byTs = await ring(ch, 'ch4', { 'hash-property': 'timestamp' }, ['5', '5']);
      for (let i = 0; i < 20; i++) ch.publish('ch4', 'same', Buffer.from(`m${i}`), { timestamp: 1000 + i });
      const got2 = [];
      for (const q of byTs) got2.push(await drain(ch, q));
      expect(got2).to.deep.equal([
        ['m0', 'm3', 'm4', 'm7', 'm8', 'm11', 'm13', 'm16', 'm17', 'm18', 'm19'],
        ['m1', 'm2', 'm5', 'm6', 'm9', 'm10', 'm12', 'm14', 'm15'],
      ]);
      await ch.deleteExchange('ch3');
      await ch.deleteExchange('ch4');
    });

    it('refuses a non-integer weight, both hash-header and hash-property, and an unknown property (406)', async () => {
      let ch = await channel(session.conn);
      await ch.assertExchange('ch5', 'x-consistent-hash', { durable: false });
      const q = await tempQueue(ch);
      expect(await closedWith(ch.bindQueue(q, 'ch5', 'abc'))).to.deep.equal({
        code: 406, text: 'PRECONDITION_FAILED - The binding key must be an integer: <<"abc">>', classId: 50, methodId: 20,
      });
      ch = await channel(session.conn);
      expect((await closedWith(ch.assertExchange('ch6', 'x-consistent-hash', { durable: false, arguments: { 'hash-header': 'a', 'hash-property': 'message_id' } }))).text).to.equal(
        'PRECONDITION_FAILED - hash-header and hash-property are mutually exclusive',
      );
      ch = await channel(session.conn);
      expect((await closedWith(ch.assertExchange('ch7', 'x-consistent-hash', { durable: false, arguments: { 'hash-property': 'nope' } }))).text).to.equal(
        'PRECONDITION_FAILED - Unsupported property: nope',
      );
      ch = await channel(session.conn);
      await ch.deleteExchange('ch5');
    });
  });
});

describe('x-delayed-message exchange (rabbitmq-delayed-message-exchange plugin README)', () => {
  // The reference RabbitMQ 3.10 here has no delayed-message plugin: these follow the plugin's README.
  const clock = new FakeClock();
  const broker = useBroker({ clock, heartbeat: 0 });
  const session = useSession(broker);

  async function delayed(ch: Channel, name: string, delayedType: string): Promise<string> {
    await ch.assertExchange(name, 'x-delayed-message', { durable: false, autoDelete: false, arguments: { 'x-delayed-type': delayedType } });
    const q = (await ch.assertQueue('', { exclusive: true })).queue;
    return q;
  }

  it('declaring without x-delayed-type is 406 "Invalid argument, \'x-delayed-type\' must be an existing exchange type"', async () => {
    const ch = await channel(session.conn);
    expect(await closedWith(ch.assertExchange('delayed-no-type', 'x-delayed-message', { durable: false }))).to.deep.equal({
      code: 406, text: "PRECONDITION_FAILED - Invalid argument, 'x-delayed-type' must be an existing exchange type", classId: 40, methodId: 10,
    });
  });

  it('holds a message with an x-delay header for that many milliseconds, then routes it by the x-delayed-type', async () => {
    const ch = await channel(session.conn);
    const q = await delayed(ch, 'delayed-direct', 'direct');
    await ch.bindQueue(q, 'delayed-direct', 'rk');
    ch.publish('delayed-direct', 'rk', Buffer.from('later'), { headers: { 'x-delay': 5000 } });
    ch.publish('delayed-direct', 'other', Buffer.from('unroutable later'), { headers: { 'x-delay': 5000 } });
    await ch.checkQueue(q);
    clock.advance(4999);
    expect(await drain(ch, q)).to.deep.equal([]);
    clock.advance(1);
    const m = await ch.get(q, { noAck: true });
    expect(m && [m.content.toString(), m.fields.exchange, m.fields.routingKey]).to.deep.equal(['later', 'delayed-direct', 'rk']);
    expect(await drain(ch, q)).to.deep.equal([]);
    await ch.deleteExchange('delayed-direct');
  });

  it('routes at once without x-delay, or with x-delay 0 or negative', async () => {
    const ch = await channel(session.conn);
    const q = await delayed(ch, 'delayed-now', 'fanout');
    await ch.bindQueue(q, 'delayed-now', '');
    ch.publish('delayed-now', '', Buffer.from('none'));
    ch.publish('delayed-now', '', Buffer.from('zero'), { headers: { 'x-delay': 0 } });
    ch.publish('delayed-now', '', Buffer.from('negative'), { headers: { 'x-delay': -100 } });
    expect(await drain(ch, q)).to.deep.equal(['none', 'zero', 'negative']);
    await ch.deleteExchange('delayed-now');
  });

  it('delivers in due-time order, not publish order, and honours the delayed type\'s binding patterns (topic)', async () => {
    const ch = await channel(session.conn);
    const q = await delayed(ch, 'delayed-topic', 'topic');
    await ch.bindQueue(q, 'delayed-topic', 'orders.#');
    ch.publish('delayed-topic', 'orders.eu.new', Buffer.from('slow'), { headers: { 'x-delay': 2000 } });
    ch.publish('delayed-topic', 'orders.us', Buffer.from('fast'), { headers: { 'x-delay': 1000 } });
    ch.publish('delayed-topic', 'invoices.x', Buffer.from('elsewhere'), { headers: { 'x-delay': 500 } });
    await ch.checkQueue(q);
    clock.advance(1000);
    expect(await drain(ch, q)).to.deep.equal(['fast']);
    clock.advance(1000);
    expect(await drain(ch, q)).to.deep.equal(['slow']);
    await ch.deleteExchange('delayed-topic');
  });

  it('a message still waiting when its exchange is deleted is never delivered', async () => {
    const ch = await channel(session.conn);
    const q = await delayed(ch, 'delayed-gone', 'fanout');
    await ch.bindQueue(q, 'delayed-gone', '');
    ch.publish('delayed-gone', '', Buffer.from('orphan'), { headers: { 'x-delay': 1000 } });
    await ch.deleteExchange('delayed-gone');
    clock.advance(1000);
    expect(await drain(ch, q)).to.deep.equal([]);
  });
});
