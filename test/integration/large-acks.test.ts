import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { ACK_CHUNK } from '../../src/connection/channel.js';
import { MARK_CHUNK, REMOVE_CHUNK } from '../../src/queue/queue.js';
import { channel, connect, type Channel, type ChannelModel, type ConsumeMessage } from '../support/amqp.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/**
 * A consumer with thousands of persistent messages unacknowledged can settle them all with one
 * frame: a basic.ack (multiple), a basic.nack (multiple) that drops them, or closing its channel,
 * which requeues them. All used to be done in one turn, every other client waiting: 0.57 s each
 * for 100,000 persistent messages (bench/event-loop-holds.ts). Now an ack settles ACK_CHUNK
 * deliveries a turn and a drop REMOVE_CHUNK while its connection reads nothing more, and a
 * requeue puts the messages back at once but writes their redelivered marks to the store
 * MARK_CHUNK a turn. What the client observes is as if all of it were done at once.
 */
describe('large acks and requeues spread over turns', function () {
  this.timeout(60000);
  const N = 3 * ACK_CHUNK + 500;
  let dataDir: string;
  let broker: RunningBroker;
  let turns: number;
  let atFirstTurn: (() => void) | undefined;

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

  /** Counts the turns broker.later is asked for, and runs atFirstTurn in the first one. */
  function spyOnLaterTurns(): void {
    const later = broker.broker.later;
    const schedule = later.schedule;
    turns = 0;
    atFirstTurn = undefined;
    later.schedule = (fn) => {
      if (turns++ === 0) atFirstTurn?.();
      schedule.call(later, fn);
    };
  }

  const unacked = (q: string): number => broker.inspect.queue(q)!.unacked;
  const ready = (q: string): number => broker.inspect.queue(q)!.ready;

  /**
   * Fills durable queue q with N persistent messages and has them all delivered to a new
   * channel, unacknowledged; `until(n)` resolves once n deliveries arrived on it.
   */
  async function deliveredUnacked(conn: ChannelModel, q: string, args: Record<string, unknown> = {}): Promise<{ consumer: Channel; got: ConsumeMessage[]; until: (n: number) => Promise<void> }> {
    const ch = await channel(conn);
    await ch.assertQueue(q, { durable: true, arguments: args });
    for (let i = 0; i < N; i++) ch.sendToQueue(q, Buffer.from(`m${i}`), { persistent: true });
    await ch.checkQueue(q); // a round trip: every publish is in
    const consumer = await channel(conn);
    const got: ConsumeMessage[] = [];
    const waiting: Array<{ n: number; resolve: () => void }> = [];
    const until = (n: number): Promise<void> => (got.length >= n ? Promise.resolve() : new Promise((resolve) => waiting.push({ n, resolve })));
    await consumer.consume(q, (m) => {
      got.push(m!);
      for (const w of waiting.filter((x) => got.length >= x.n)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    });
    await until(N);
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
    const closed = new Promise((resolve) => conn.once('close', resolve));
    // The socket is reset right after the ack frame is handled, before the ack's later turns
    // ran: what is left of the ack is settled before the channel requeues.
    broker.faults.dropConnection(() => true, { afterFrames: 1 });
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
