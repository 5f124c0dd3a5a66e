import { expect } from 'chai';
import { txCommit, txSelect } from '../../bench/lib/amqplib-tx.js';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { ACK_CHUNK, TX_CHUNK } from '../../src/connection/channel.js';
import { MARK_CHUNK, REMOVE_CHUNK, RETURN_CHUNK } from '../../src/queue/queue.js';
import { channel, connect, type Channel, type ChannelModel, type ConsumeMessage } from '../support/amqp.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/**
 * A consumer with thousands of persistent messages unacknowledged can settle them all with one
 * frame: a basic.ack (multiple), a basic.nack (multiple) that drops them, or closing its channel,
 * which requeues them. All used to be done in one turn, every other client waiting: 0.57 s each
 * for 100,000 persistent messages (bench/event-loop-holds.ts). Now an ack settles ACK_CHUNK
 * deliveries a turn and a drop REMOVE_CHUNK while its connection reads nothing more, and a
 * requeue writes their redelivered marks to the store MARK_CHUNK a turn, and puts them back
 * RETURN_CHUNK a turn when there are more, delivering nothing from the queue meanwhile. A
 * tx.commit applies TX_CHUNK publishes and acknowledgements a turn, its connection reading
 * nothing more. What the client observes is as if all of it were done at once.
 */
describe('large acks, requeues and transactions spread over turns', function () {
  this.timeout(60000);
  const N = 3 * ACK_CHUNK + 500;
  let dataDir: string;
  let broker: RunningBroker;
  let turns: number;
  /** Turns of a queue putting requeued messages back (its `nextReturns`), and of a channel applying a tx.commit (`commitOn`). */
  let returnTurns: number;
  let commitTurns: number;
  let atFirstTurn: (() => void) | undefined;
  /** Runs at the start of the next such turn (before the chunk goes back). */
  let beforeReturnTurn: (() => void) | undefined;
  /** The next such turn is asked for once this resolves. */
  let holdReturnTurn: Promise<void> | undefined;

  const start = (): Promise<RunningBroker> => startBroker({ port: 0, logLevel: 'silent', dataDir, heartbeat: 0 });
  beforeEach(async () => {
    dataDir = makeTmpDir('warren-large-acks-');
    broker = await start();
    spyOnLaterTurns();
  });
  afterEach(async () => {
    await broker.close();
    removeDir(dataDir);
  });

  /** Counts the turns broker.later is asked for (and the queues' return turns), and runs atFirstTurn in the first one. */
  function spyOnLaterTurns(): void {
    const later = broker.broker.later;
    const schedule = later.schedule;
    turns = 0;
    returnTurns = 0;
    commitTurns = 0;
    atFirstTurn = undefined;
    beforeReturnTurn = undefined;
    holdReturnTurn = undefined;
    later.schedule = (fn) => {
      if (turns++ === 0) atFirstTurn?.();
      if (fn.name === 'commitOn') commitTurns++;
      if (fn.name !== 'nextReturns') return schedule.call(later, fn);
      returnTurns++;
      const turn = (): void => {
        const before = beforeReturnTurn;
        beforeReturnTurn = undefined;
        before?.();
        fn();
      };
      const held = holdReturnTurn;
      holdReturnTurn = undefined;
      if (held === undefined) schedule.call(later, turn);
      else void held.then(() => schedule.call(later, turn));
    };
  }

  const unacked = (q: string): number => broker.inspect.queue(q)!.unacked;
  const ready = (q: string): number => broker.inspect.queue(q)!.ready;

  /**
   * Fills durable queue q with n (N) persistent messages and has them all delivered to a new
   * channel, unacknowledged; `until(k)` resolves once k deliveries arrived on it.
   */
  async function deliveredUnacked(conn: ChannelModel, q: string, args: Record<string, unknown> = {}, n = N): Promise<{ consumer: Channel; got: ConsumeMessage[]; until: (k: number) => Promise<void> }> {
    const ch = await channel(conn);
    await ch.assertQueue(q, { durable: true, arguments: args });
    for (let i = 0; i < n; i++) ch.sendToQueue(q, Buffer.from(`m${i}`), { persistent: true });
    await ch.checkQueue(q); // a round trip: every publish is in
    const consumer = await channel(conn);
    const got: ConsumeMessage[] = [];
    const waiting: Array<{ n: number; resolve: () => void }> = [];
    const until = (k: number): Promise<void> => (got.length >= k ? Promise.resolve() : new Promise((resolve) => waiting.push({ n: k, resolve })));
    await consumer.consume(q, (m) => {
      got.push(m!);
      for (const w of waiting.filter((x) => got.length >= x.n)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    });
    await until(n);
    return { consumer, got, until };
  }

  const bodies = (ms: ConsumeMessage[]): string[] => ms.map((m) => m.content.toString());
  const expected = Array.from({ length: N }, (_, i) => `m${i}`);

  /**
   * Has N persistent messages of durable queue q (with args) delivered unacknowledged, settles
   * them all with one frame (`settle`), then asks the channel to recover: read after the
   * settling, basic.recover finds nothing to give back. Checks that `chunk` of them were settled
   * in the frame's own turn and the rest in later turns, that nothing came back, and that the
   * queue is empty.
   */
  async function settledInTurns(conn: ChannelModel, q: string, chunk: number, settle: (consumer: Channel, last: ConsumeMessage) => void, args: Record<string, unknown> = {}): Promise<void> {
    const { consumer, got } = await deliveredUnacked(conn, q, args);
    let unackedAtFirstTurn = -1;
    atFirstTurn = () => (unackedAtFirstTurn = unacked(q));
    settle(consumer, got.at(-1)!);
    await consumer.recover();
    await broker.broker.settle();
    expect(unackedAtFirstTurn, 'unacknowledged once the frame was handled').to.equal(N - chunk);
    expect(turns).to.be.at.least(Math.ceil(N / chunk) - 1);
    expect(got.length, 'nothing redelivered').to.equal(N);
    expect(broker.inspect.queue(q)!.messages).to.equal(0);
  }

  /** The socket of conn is reset right after the broker handles its next frame; resolves once conn is closed. */
  function lostAfterNextFrame(conn: ChannelModel): Promise<unknown> {
    const closed = new Promise((resolve) => conn.once('close', resolve));
    broker.faults.dropConnection(() => true, { afterFrames: 1 });
    return closed;
  }

  /** The first n messages a new channel of conn consumes from q, without acknowledgements. */
  async function consumeAll(conn: ChannelModel, q: string, n: number): Promise<ConsumeMessage[]> {
    const got: ConsumeMessage[] = [];
    let all!: () => void;
    const done = new Promise<void>((resolve) => (all = resolve));
    await (await channel(conn)).consume(q, (m) => {
      got.push(m!);
      if (got.length === n) all();
    }, { noAck: true });
    await done;
    return got;
  }

  it('an ack (multiple) of thousands settles ACK_CHUNK a turn, and the frames after it see all of it settled', async () => {
    const conn = await connect(broker.url);
    try {
      await settledInTurns(conn, 'acked', ACK_CHUNK, (consumer, last) => consumer.ack(last, true));
      expect(broker.broker.store.messages.countEntries('/\u0000acked').messages, 'nothing left in the store').to.equal(0);
    } finally {
      await conn.close();
    }
  });

  it('a nack (multiple, requeue=false) of thousands drops REMOVE_CHUNK a turn, each dead-lettered once and in order, and the frames after it see all of it settled', async () => {
    const conn = await connect(broker.url);
    try {
      await (await channel(conn)).assertQueue('dropped-dead', { durable: true });
      const deadLetters = { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'dropped-dead' };
      await settledInTurns(conn, 'dropped', REMOVE_CHUNK, (consumer, last) => consumer.nack(last, true, false), deadLetters);
      const dead = await consumeAll(conn, 'dropped-dead', N);
      expect(bodies(dead)).to.deep.equal(expected);
      expect(dead.every((m) => (m.properties.headers?.['x-death'] as Array<{ reason: string }>)[0]!.reason === 'rejected')).to.equal(true);
    } finally {
      await conn.close();
    }
  });

  it('a connection lost while its ack is being settled requeues none of what it acknowledged', async () => {
    const conn = await connect(broker.url);
    conn.on('error', () => {});
    const { consumer, got } = await deliveredUnacked(conn, 'gone');
    // Right after the ack frame, before the ack's later turns ran: what is left of the ack is
    // settled before the channel requeues.
    const closed = lostAfterNextFrame(conn);
    consumer.ack(got.at(-2)!, true);
    await closed;
    await broker.broker.settle();
    expect(ready('gone'), 'only the last delivery, never acknowledged, is back').to.equal(1);
    const other = await connect(broker.url);
    try {
      const back = await (await channel(other)).get('gone', { noAck: true });
      expect(back && back.content.toString()).to.equal(`m${N - 1}`);
      expect(back && back.fields.redelivered).to.equal(true);
    } finally {
      await other.close();
    }
  });

  it('a channel closed with thousands unacknowledged requeues them at once and writes their redelivered marks over several turns', async () => {
    let conn = await connect(broker.url);
    const { consumer } = await deliveredUnacked(conn, 'closed');
    let readyAtFirstTurn = -1;
    atFirstTurn = () => (readyAtFirstTurn = ready('closed'));
    await consumer.close();
    await broker.broker.settle();
    expect(readyAtFirstTurn, 'ready once the channel was closed').to.equal(N);
    expect(turns).to.be.at.least(Math.ceil(N / MARK_CHUNK) - 1);
    await conn.close();

    // The marks are in the store: after a clean restart every message comes back redelivered, in order.
    await broker.close();
    broker = await start();
    conn = await connect(broker.url);
    try {
      const again = await consumeAll(conn, 'closed', N);
      expect(bodies(again)).to.deep.equal(expected);
      expect(again.filter((m) => !m.fields.redelivered).map((m) => m.content.toString()), 'not marked redelivered').to.deep.equal([]);
    } finally {
      await conn.close();
    }
  });

  /** More than two chunks of returns. */
  const MANY = 2 * RETURN_CHUNK + 500;
  const manyExpected = Array.from({ length: MANY }, (_, i) => `m${i}`);

  it('a channel closed with more than RETURN_CHUNK unacknowledged puts them back a chunk a turn, and another consumer gets them all in order before what was published after', async () => {
    let conn = await connect(broker.url);
    const other = await connect(broker.url);
    try {
      const { consumer } = await deliveredUnacked(conn, 'returned', {}, MANY);
      // A second consumer, attached while the queue has nothing ready, and a publisher on the
      // same connection (a round trip on it follows what it delivers).
      const watcher = await channel(other);
      const seen: ConsumeMessage[] = [];
      let all!: () => void;
      const allSeen = new Promise<void>((resolve) => (all = resolve));
      await watcher.consume('returned', (m) => {
        seen.push(m!);
        if (seen.length === MANY + 3) all();
      }, { noAck: true });
      const publisher = await channel(other);
      let unackedAtFirstTurn = -1;
      let readyAtFirstTurn = -1;
      atFirstTurn = () => {
        unackedAtFirstTurn = unacked('returned');
        readyAtFirstTurn = ready('returned');
      };
      // The second chunk waits until three more messages are in the queue, behind the first.
      let goOn!: () => void;
      holdReturnTurn = new Promise((resolve) => (goOn = resolve));
      await consumer.close();
      for (const body of ['late0', 'late1', 'late2']) publisher.sendToQueue('returned', Buffer.from(body), { persistent: true });
      await publisher.checkQueue('returned');
      expect(seen.length, 'delivered while some are still going back').to.equal(0);
      goOn();
      await allSeen;
      await broker.broker.settle();
      expect(returnTurns, 'turns putting messages back').to.be.at.least(Math.ceil(MANY / RETURN_CHUNK) - 1);
      expect(unackedAtFirstTurn, 'unacknowledged once the channel was closed').to.equal(0);
      expect(readyAtFirstTurn, 'ready (those still going back included) once the channel was closed').to.equal(MANY);
      expect(bodies(seen)).to.deep.equal([...manyExpected, 'late0', 'late1', 'late2']);
      expect(seen.slice(0, MANY).every((m) => m.fields.redelivered), 'requeued ones redelivered').to.equal(true);
      expect(seen.slice(MANY).some((m) => m.fields.redelivered), 'late ones not redelivered').to.equal(false);
      await conn.close();
    } finally {
      await other.close();
    }
  });

  it('a basic.get or a purge right behind such a close, or a policy applied while they go back, sees every requeued message back', async () => {
    const conn = await connect(broker.url);
    try {
      const ch = await channel(conn);
      // Sent right behind the close: read while the requeued messages are still going back.
      const { consumer } = await deliveredUnacked(conn, 'got', {}, MANY);
      const closed = consumer.close();
      const head = await ch.get('got', { noAck: true });
      await closed;
      expect(head && head.content.toString(), 'the head').to.equal('m0');
      expect(head && head.fields.redelivered).to.equal(true);
      expect(head && head.fields.messageCount, 'the rest, ready').to.equal(MANY - 1);

      const { consumer: purged } = await deliveredUnacked(conn, 'purged', {}, MANY);
      const closedToo = purged.close();
      expect((await ch.purgeQueue('purged')).messageCount).to.equal(MANY);
      await closedToo;

      // A max-length policy applied between two chunks drops from the head of all of them.
      const { consumer: capped } = await deliveredUnacked(conn, 'capped', {}, MANY);
      beforeReturnTurn = () => void broker.broker.policies.put('policy', '/', 'cap', { pattern: '^capped$', definition: { 'max-length': 10 }, applyTo: 'queues' });
      await capped.close();
      await broker.broker.settle();
      expect(beforeReturnTurn, 'applied while they went back').to.equal(undefined);
      expect(broker.inspect.queue('capped')!.messages).to.equal(10);
      const left = await consumeAll(conn, 'capped', 10);
      expect(bodies(left)).to.deep.equal(manyExpected.slice(MANY - 10));
    } finally {
      await conn.close();
    }
  });

  it('a nack (multiple, requeue) and a basic.recover of more than RETURN_CHUNK give them back to the consumer in order, redelivered', async () => {
    const conn = await connect(broker.url);
    try {
      const { consumer, got, until } = await deliveredUnacked(conn, 'nacked', {}, MANY);
      consumer.nack(got.at(-1)!, true, true);
      await until(2 * MANY);
      expect(returnTurns, 'turns putting messages back').to.be.at.least(Math.ceil(MANY / RETURN_CHUNK) - 1);
      expect(bodies(got.slice(MANY))).to.deep.equal(manyExpected);
      expect(got.slice(MANY).every((m) => m.fields.redelivered)).to.equal(true);
      await consumer.recover();
      await until(3 * MANY);
      expect(bodies(got.slice(2 * MANY))).to.deep.equal(manyExpected);
      consumer.ack(got.at(-1)!, true);
      await consumer.checkQueue('nacked');
      await broker.broker.settle();
      expect(broker.inspect.queue('nacked')!.messages).to.equal(0);
    } finally {
      await conn.close();
    }
  });

  /**
   * A transactional channel of conn holding MANY persistent publishes to durable queue
   * `published` (with args) and an ack of all N deliveries of queue `acked`, not committed yet.
   */
  async function heldTransaction(conn: ChannelModel, acked: string, published: string, args: Record<string, unknown> = {}): Promise<Channel> {
    const { consumer, got } = await deliveredUnacked(conn, acked);
    await consumer.assertQueue(published, { durable: true, arguments: args });
    await txSelect(consumer);
    for (let i = 0; i < MANY; i++) consumer.sendToQueue(published, Buffer.from(`m${i}`), { persistent: true });
    consumer.ack(got.at(-1)!, true);
    return consumer;
  }

  it('a tx.commit of more than TX_CHUNK publishes and acknowledgements applies them a chunk a turn, and the frames after it find all of it applied', async () => {
    const conn = await connect(broker.url);
    try {
      const consumer = await heldTransaction(conn, 'tx-acked', 'tx-published');
      await txCommit(consumer);
      // Read once the commit is applied: everything is in, and everything acknowledged gone.
      expect((await consumer.checkQueue('tx-published')).messageCount).to.equal(MANY);
      expect([ready('tx-acked'), unacked('tx-acked')]).to.deep.equal([0, 0]);
      expect(commitTurns, 'turns applying the commit').to.be.at.least(Math.ceil((MANY + N) / TX_CHUNK) - 1);
      await broker.broker.settle();
      expect(bodies(await consumeAll(conn, 'tx-published', MANY))).to.deep.equal(manyExpected);
    } finally {
      await conn.close();
    }
  });

  it('such a tx.commit refused by a queue applies all of it, then closes the channel with 406 partial tx completion', async () => {
    const conn = await connect(broker.url);
    try {
      const consumer = await heldTransaction(conn, 'tx-acked-too', 'tx-limited', { 'x-max-length': MANY - 10, 'x-overflow': 'reject-publish' });
      const refused = await txCommit(consumer).then(() => undefined, (err: Error) => err.message);
      expect(refused).to.match(/PRECONDITION_FAILED - partial tx completion/);
      expect(commitTurns, 'turns applying the commit').to.be.at.least(Math.ceil((MANY + N) / TX_CHUNK) - 1);
      const other = await channel(conn);
      expect((await other.checkQueue('tx-limited')).messageCount).to.equal(MANY - 10);
      expect([ready('tx-acked-too'), unacked('tx-acked-too')], 'acknowledged, not requeued by the close').to.deep.equal([0, 0]);
    } finally {
      await conn.close();
    }
  });

  it('a connection lost while such a tx.commit is being applied applies all of it: nothing committed is lost, nothing acknowledged requeued', async () => {
    const conn = await connect(broker.url);
    conn.on('error', () => {});
    const consumer = await heldTransaction(conn, 'tx-gone', 'tx-gone-published');
    await consumer.checkQueue('tx-gone-published'); // a round trip: all of it is held
    // Right after the tx.commit frame, before its later turns ran.
    const closed = lostAfterNextFrame(conn);
    void txCommit(consumer).catch(() => {});
    await closed;
    await broker.broker.settle();
    expect(commitTurns, 'the commit was spread over turns').to.be.at.least(1);
    expect(broker.inspect.queue('tx-gone-published')!.ready).to.equal(MANY);
    expect([ready('tx-gone'), unacked('tx-gone')], 'acknowledged, not requeued').to.deep.equal([0, 0]);
  });

  it('the same channel goes on delivering, in order, what it requeues after a large ack', async () => {
    const conn = await connect(broker.url);
    try {
      const { consumer, got, until } = await deliveredUnacked(conn, 'order');
      // Ack the first half, requeue the rest (nack multiple): the requeued ones come back to the
      // consumer in their order, marked redelivered, and nothing acknowledged comes back.
      const half = Math.floor(N / 2);
      consumer.ack(got[half - 1]!, true);
      consumer.nack(got.at(-1)!, true, true);
      await until(2 * N - half);
      const back = got.slice(N);
      expect(bodies(back)).to.deep.equal(expected.slice(half));
      expect(back.every((m) => m.fields.redelivered)).to.equal(true);
      consumer.ack(got.at(-1)!, true);
      await consumer.checkQueue('order');
      await broker.broker.settle();
      expect(broker.inspect.queue('order')!.messages).to.equal(0);
      expect(got.length, 'nothing acknowledged came back').to.equal(2 * N - half);
    } finally {
      await conn.close();
    }
  });
});
