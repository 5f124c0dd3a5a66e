import amqp from 'amqplib';
import { setTimeout as sleep } from 'node:timers/promises';
import { messageBody, parseBody, type Delivery, type History } from './checker.js';

/**
 * The chaos workload: confirming publishers and manually acking consumers on durable queues,
 * each on its own connection, reconnecting after every fault. Publishers send persistent
 * messages to classic queues and transient ones to quorum queues (which keep every message:
 * a confirm means it is on disk either way). With `deadLetters`, one quorum queue dead-letters
 * at least once: a rejecting Consumer nacks everything it gets from it, into a bounded quorum
 * queue whose consumers record the deliveries, so that what is dead-lettered is sometimes
 * refused and held.
 */

export interface WorkloadOptions {
  url: string;
  queues: string[];
  /** Those of `queues` declared as quorum queues. */
  quorum: string[];
  publishers: number;
  consumersPerQueue: number;
  /** Client heartbeat in seconds: how fast a frozen broker is noticed. */
  heartbeat: number;
  /** Unconfirmed publishes in flight per publisher. */
  window: number;
  /** Messages per second per publisher (the machine is shared). */
  rate: number;
  prefetch: number;
  bodySize: number;
  /**
   * `source` (one of `queues`, a quorum queue) dead-letters at least once, through the default
   * exchange, to `target`: a quorum queue of at most `targetMaxLength` ready messages that refuses
   * more (x-overflow reject-publish), so dead-letters are held and forwarded again.
   */
  deadLetters?: { source: string; target: string; targetMaxLength: number };
}

/** Connection lifecycle events the fault schedule waits on and counts. */
export interface WorkerEvents {
  connected(worker: string): void;
  disconnected(worker: string, reason: string): void;
  blocked(worker: string, reason: string): void;
  unblocked(worker: string): void;
}

/** Declares the worker's queue as the workload has it. */
function declare(ch: amqp.Channel, queue: string, opts: WorkloadOptions): Promise<unknown> {
  const dl = opts.deadLetters;
  if (dl?.source === queue) {
    return ch.assertQueue(queue, {
      durable: true,
      arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dl.target, 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' },
    });
  }
  if (dl?.target === queue) {
    return ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-max-length': dl.targetMaxLength, 'x-overflow': 'reject-publish' } });
  }
  return ch.assertQueue(queue, { durable: true, arguments: opts.quorum.includes(queue) ? { 'x-queue-type': 'quorum' } : {} });
}

abstract class Worker {
  protected stopping = false;
  connection: amqp.ChannelModel | undefined;
  connected = false;
  sessions = 0;
  private done: Promise<void> | undefined;

  constructor(
    readonly name: string,
    protected readonly opts: WorkloadOptions,
    protected readonly history: History,
    protected readonly events: WorkerEvents,
  ) {}

  start(): void {
    this.done = this.loop();
  }

  /** Ends the worker: publishers wait (bounded) for their confirms, consumers just close. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.done;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let conn: amqp.ChannelModel;
      try {
        conn = await amqp.connect(`${this.opts.url}?heartbeat=${this.opts.heartbeat}`, { noDelay: true, timeout: 5000 });
      } catch {
        await sleep(100 + Math.random() * 200);
        continue;
      }
      this.connection = conn;
      this.connected = true;
      this.sessions++;
      const closed = new Promise<string>((resolve) => {
        conn.on('close', (err?: Error) => resolve(err?.message ?? 'closed'));
        conn.on('error', () => {});
      });
      conn.on('blocked', (reason: string) => this.events.blocked(this.name, reason));
      conn.on('unblocked', () => this.events.unblocked(this.name));
      this.events.connected(this.name);
      let reason: string;
      try {
        reason = await this.session(conn, closed);
      } catch (err) {
        reason = (err as Error).message;
      }
      this.connected = false;
      if (!this.stopping) this.events.disconnected(this.name, reason);
      await conn.close().catch(() => undefined);
      (conn as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      if (!this.stopping) await sleep(50 + Math.random() * 100);
    }
  }

  /** Works on one connection until it closes (resolves with why) or the worker stops. */
  protected abstract session(conn: amqp.ChannelModel, closed: Promise<string>): Promise<string>;

  protected wake(): void {}
}

export class Publisher extends Worker {
  private seq = 0;
  private wakeUp: (() => void) | undefined;

  constructor(
    readonly id: number,
    readonly queue: string,
    opts: WorkloadOptions,
    history: History,
    events: WorkerEvents,
  ) {
    super(`publisher-${id}`, opts, history, events);
  }

  /** Confirms seen so far (progress after a fault). */
  confirms = 0;

  protected override wake(): void {
    this.wakeUp?.();
  }

  private waitForWake(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wakeUp = done;
    });
  }

  protected async session(conn: amqp.ChannelModel, closed: Promise<string>): Promise<string> {
    let isClosed = false;
    let why = '';
    void closed.then((r) => {
      isClosed = true;
      why = r;
      this.wake();
    });
    const ch = await conn.createConfirmChannel();
    ch.on('error', () => {});
    await declare(ch, this.queue, this.opts);
    const persistent = !this.opts.quorum.includes(this.queue);
    let outstanding = 0;
    const interval = 1000 / this.opts.rate;
    let next = performance.now();
    while (!isClosed && !this.stopping) {
      if (outstanding >= this.opts.window) {
        await this.waitForWake(1000);
        continue;
      }
      const wait = next - performance.now();
      if (wait > 0) {
        await this.waitForWake(wait);
        continue;
      }
      next = Math.max(next + interval, performance.now() - 1000);
      const seq = ++this.seq;
      this.history.publish(this.id, seq);
      outstanding++;
      ch.sendToQueue(this.queue, messageBody(this.id, seq, this.opts.bodySize), { persistent }, (err: unknown) => {
        outstanding--;
        if (!err) {
          this.history.confirm(this.id, seq);
          this.confirms++;
        } else if (String((err as Error)?.message ?? err).includes('closed')) this.history.unknown++;
        else this.history.nacked++;
        this.wake();
      });
    }
    if (this.stopping && !isClosed) {
      // Let the last confirms arrive (bounded), so the run ends with few unknown outcomes.
      const deadline = performance.now() + 5000;
      while (outstanding > 0 && !isClosed && performance.now() < deadline) await this.waitForWake(100);
    }
    return why || 'stopped';
  }
}

export class Consumer extends Worker {
  /** Deliveries seen so far (progress after a fault). */
  received = 0;

  constructor(
    name: string,
    readonly queue: string,
    opts: WorkloadOptions,
    history: History,
    events: WorkerEvents,
    /**
     * Nacks everything without requeue and records nothing (the at-least-once source: each
     * message counts as delivered once it comes out of the dead-letter queue).
     */
    private readonly rejects = false,
  ) {
    super(name, opts, history, events);
  }

  private stopNow: (() => void) | undefined;

  protected override wake(): void {
    this.stopNow?.();
  }

  protected async session(conn: amqp.ChannelModel, closed: Promise<string>): Promise<string> {
    const ch = await conn.createChannel();
    ch.on('error', () => {});
    await declare(ch, this.queue, this.opts);
    await ch.prefetch(this.opts.prefetch);
    const session = `${this.name}#${this.sessions}`;
    await ch.consume(this.queue, (msg) => {
      if (!msg) return;
      if (this.rejects) {
        ch.nack(msg, false, false);
        return;
      }
      this.history.deliver(delivery(msg, session, this.queue, this.queue === this.opts.deadLetters?.target));
      this.received++;
      ch.ack(msg);
    });
    const stopped = new Promise<string>((resolve) => (this.stopNow = () => resolve('stopped')));
    if (this.stopping) return 'stopped';
    return Promise.race([closed, stopped]);
  }
}

/**
 * The end of the run for the dead-letter target: consumes it without acknowledgements (so the
 * target refuses nothing) until nothing has come for `quietMs`, long enough for the source to
 * forward again what it still holds. Returns how many came.
 */
export async function drainDeadLetters(url: string, target: string, history: History, quietMs: number): Promise<number> {
  const conn = await amqp.connect(url);
  conn.on('error', () => {});
  let n = 0;
  try {
    const ch = await conn.createChannel();
    let last = performance.now();
    await ch.consume(target, (msg) => {
      if (!msg) return;
      history.deliver(delivery(msg, 'drain-dead-letters', target, true));
      n++;
      last = performance.now();
    }, { noAck: true });
    while (performance.now() - last < quietMs) await sleep(100);
  } finally {
    await conn.close().catch(() => undefined);
  }
  return n;
}

/**
 * Takes every message left in the queues (basic.get) into the history, as the consumer "drain"
 * (those of `deadLetterTarget` as dead-lettered).
 */
export async function drain(url: string, queues: string[], history: History, deadLetterTarget?: string): Promise<number> {
  const conn = await amqp.connect(url);
  conn.on('error', () => {});
  let n = 0;
  try {
    const ch = await conn.createChannel();
    for (const queue of queues) {
      for (;;) {
        const msg = await ch.get(queue, { noAck: true });
        if (!msg) break;
        history.deliver(delivery(msg, 'drain', queue, queue === deadLetterTarget));
        n++;
      }
    }
  } finally {
    await conn.close().catch(() => undefined);
  }
  return n;
}

/** What a consumer session saw of msg, out of queue, for the history. */
function delivery(msg: amqp.Message, consumer: string, queue: string, deadLettered: boolean): Delivery {
  const parsed = parseBody(msg.content);
  return {
    consumer,
    publisher: parsed?.publisher ?? -1,
    seq: parsed?.seq ?? -1,
    redelivered: msg.fields.redelivered,
    queue,
    intact: parsed?.intact ?? false,
    deadLettered,
  };
}
