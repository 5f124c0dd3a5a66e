import type { Clock, Timer } from '../clock.js';
import type { Message } from '../queue/message.js';
import type { DelayedRecord, MetadataStore } from '../store/metadata-store.js';
import type { Exchange } from './exchange.js';

/** Routes a delayed message through its exchange once it is due. */
export type ReleaseDelayed = (exchange: Exchange, msg: Message, ccRoutingKeys: string[] | undefined) => void;

interface Pending {
  timer: Timer;
  /** The store record of a persisted delayed message (deleted when it fires or is dropped). */
  record: DelayedRecord | undefined;
}

/**
 * Messages held back by x-delayed-message exchanges in one vhost: one timer each, keyed by
 * exchange so deleting an exchange drops its messages. Every message on a durable exchange is
 * stored with its absolute due time, so it survives a restart: the plugin writes every delayed
 * message to its disc_copies table whatever its delivery mode (rabbit_delayed_message 3.10.2,
 * internal_delay_message), and amqplib publishes transient messages by default. (A non-durable
 * exchange is gone after a restart, and its messages with it, there too.)
 */
export class DelayedMessages {
  private readonly pending = new Map<Exchange, Map<number, Pending>>();

  constructor(
    private readonly vhost: string,
    private readonly clock: Clock,
    private readonly metadata: MetadataStore,
    private readonly release: ReleaseDelayed,
  ) {}

  /** Holds msg back for delayMs; returns true when a store commit holds it. */
  hold(exchange: Exchange, msg: Message, ccRoutingKeys: string[] | undefined, delayMs: number): boolean {
    const persisted = exchange.durable;
    const record: DelayedRecord = { vhost: this.vhost, exchange: exchange.name, dueAt: this.clock.now() + delayMs, seq: msg.id };
    if (persisted) this.metadata.putDelayed(record, msg);
    this.schedule(exchange, msg, ccRoutingKeys, record, persisted);
    return persisted;
  }

  /** Arms the timer of a delayed message recovered from the store. */
  recover(exchange: Exchange, msg: Message, ccRoutingKeys: string[] | undefined, record: DelayedRecord): void {
    this.schedule(exchange, msg, ccRoutingKeys, record, true);
  }

  /** Arms the timer of a delayed message; a persisted one is deleted from the store when it fires. */
  private schedule(exchange: Exchange, msg: Message, ccRoutingKeys: string[] | undefined, record: DelayedRecord, persisted: boolean): void {
    let timers = this.pending.get(exchange);
    if (!timers) this.pending.set(exchange, (timers = new Map()));
    const timer = this.clock.setTimeout(() => {
      timers.delete(record.seq);
      if (persisted) this.metadata.deleteDelayed(record);
      if (!exchange.deleted) this.release(exchange, msg, ccRoutingKeys);
    }, record.dueAt - this.clock.now());
    timers.set(record.seq, { timer, record: persisted ? record : undefined });
  }

  /**
   * The broker is closing: every timer stops. The persisted messages stay in the store, armed
   * again by the next start (recover); transient ones on a non-durable exchange go with it.
   */
  stop(): void {
    for (const timers of this.pending.values()) for (const { timer } of timers.values()) timer.cancel();
    this.pending.clear();
  }

  /** The exchange is gone: its held messages are dropped, and deleted from the store. */
  drop(exchange: Exchange): void {
    const timers = this.pending.get(exchange);
    if (!timers) return;
    for (const { timer, record } of timers.values()) {
      timer.cancel();
      if (record) this.metadata.deleteDelayed(record);
    }
    this.pending.delete(exchange);
  }
}
