/**
 * Acknowledgements at the shovel's source, coalesced as rabbit_amqp091_shovel sends them: the
 * destination's confirms (or, in on-publish mode, the publishes) settle deliveries one by one,
 * and once per turn of the event loop the longest settled prefix of the source's deliveries goes
 * back as one basic.ack with multiple=true. Deliveries on a channel are in delivery-tag order,
 * so the prefix is exactly what a multiple ack covers; a delivery the destination nacked is
 * nacked (requeued) on its own once the prefix reaches it, after the acks before it.
 */
import type { Channel, ConsumeMessage } from 'amqplib';

const PENDING = 0;
const ACK = 1;
const NACK = 2;

export class SourceAcks {
  /** Deliveries not yet acked or nacked at the source, in delivery order, from `head`. */
  private readonly messages: ConsumeMessage[] = [];
  private readonly outcomes: number[] = [];
  private head = 0;
  private scheduled = false;

  /**
   * @param onAcked called after each flush with the number of deliveries it acked (not those
   *   nacked), once the frames are handed to the channel
   */
  constructor(
    private readonly channel: Channel,
    private readonly onAcked: (n: number) => void,
  ) {}

  /** A delivery taken from the source that will be settled later; in delivery order. */
  track(msg: ConsumeMessage): number {
    this.messages.push(msg);
    this.outcomes.push(PENDING);
    return this.messages.length - 1 + this.offset;
  }

  /** The delivery `ref` (from track) was confirmed (ok) or refused by the destination. */
  settle(ref: number, ok: boolean): void {
    this.outcomes[ref - this.offset] = ok ? ACK : NACK;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  /** Deliveries tracked and not yet acked or nacked at the source. */
  get outstanding(): number {
    return this.messages.length - this.head;
  }

  /** Refs already dropped from the front of the arrays (they are compacted as they drain). */
  private offset = 0;

  /** Send what is settled now rather than at the end of this turn (before closing the channel). */
  flushNow(): void {
    this.flush();
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    let acked = 0;
    let last: ConsumeMessage | undefined;
    try {
      while (this.head < this.messages.length) {
        const outcome = this.outcomes[this.head]!;
        if (outcome === PENDING) break;
        const msg = this.messages[this.head]!;
        this.head++;
        if (outcome === ACK) {
          last = msg;
          acked++;
          continue;
        }
        if (last !== undefined) this.channel.ack(last, true);
        last = undefined;
        this.channel.nack(msg, false, true);
      }
      if (last !== undefined) this.channel.ack(last, true);
    } catch {
      // the source channel is gone: what it had not acked is requeued there
      return;
    }
    this.compact();
    if (acked > 0) this.onAcked(acked);
  };

  private compact(): void {
    if (this.head < 1024 && this.head * 2 < this.messages.length) return;
    this.messages.splice(0, this.head);
    this.outcomes.splice(0, this.head);
    this.offset += this.head;
    this.head = 0;
  }
}
