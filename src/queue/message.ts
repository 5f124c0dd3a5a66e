import type { FieldTable, FieldValue } from '../frame/field-table.js';
import { KEEP_TAIL, type WireCache } from '../frame/frame-writer.js';
import { decodeContentHeader, encodeContentHeaderPayload, type BasicProperties } from '../frame/generated/properties.js';
import type { PersistedMessage } from '../store/message-store.js';
import type { BodyRange } from './kept-body.js';

/**
 * One published message. A routed message is one object shared by every queue it lands in
 * (DESIGN.md, convention 4): fanout copies nothing. The content-header payload is kept exactly as
 * received and re-sent on delivery. What a queue needs of the properties (delivery mode,
 * priority, whether a BCC header is there) is read once, when the message is made, into one
 * number; the decoded properties themselves are not kept: a header of many small fields decodes
 * to dozens of times its size in JS objects (a 128 KiB header to about 8 MiB), and a queue of
 * such messages would hold all of them. `properties` decodes on demand (see lastHeader).
 */
export class Message implements BodyRange, WireCache {
  /** delivery-mode 2, a BCC header, and the priority property + 1 (0 when absent): see BITS. */
  private readonly bits: number;
  /** What few messages have: a TTL, BCC routing keys (undefined for most: one field, not two). */
  private extra: MessageExtra | undefined;
  /**
   * The memory holding the body, which is bodyMemory[bodyOffset, bodyOffset + bodySize) (see
   * kept-body.ts: small bodies share a slab, so a message holds no Buffer of its own).
   */
  readonly bodyMemory: Buffer;
  readonly bodyOffset: number;
  readonly bodySize: number;
  /**
   * WireCache: KEEP_TAIL once keepFrames() asked for its frames, then the tail its first
   * delivery kept while it is one of the TAILS_KEPT, else undefined. A field of its own, read
   * on every delivery (8 octets per message; kept tails are bounded by TAILS_KEPT).
   */
  wireTail: Buffer | undefined;

  constructor(
    /** Broker-wide unique id (also the store key of a persisted message). */
    readonly id: number,
    readonly exchange: string,
    readonly routingKey: string,
    /** Raw content-header frame payload (class-id, weight, body-size, flags, properties). */
    readonly header: Buffer,
    /** The body's memory: all of it is the body unless bodyOffset and bodySize say which part. */
    bodyMemory: Buffer,
    /** The decoded header, when the caller has it already (publish): saves decoding it again. */
    properties?: BasicProperties,
    bodyOffset = 0,
    bodySize = bodyMemory.length - bodyOffset,
  ) {
    const props = properties ? remember(header, properties) : decodeProperties(header);
    let bits = props.deliveryMode === 2 ? BITS.persistent : 0;
    if (props.headers !== undefined && props.headers['BCC'] !== undefined) bits |= BITS.bcc;
    if (props.priority !== undefined) bits |= (props.priority + 1) << BITS.priorityShift;
    this.bits = bits;
    this.extra = undefined;
    this.bodyMemory = bodyMemory;
    this.bodyOffset = bodyOffset;
    this.bodySize = bodySize;
    this.wireTail = undefined;
  }

  /**
   * It will be delivered several times (routed to several queues): its next delivery keeps its
   * encoded frames for the others (WireCache).
   */
  keepFrames(): void {
    if (this.wireTail === undefined) this.wireTail = KEEP_TAIL;
  }

  /** WireCache: keeps the tail its first delivery encoded (one of at most TAILS_KEPT messages that do). */
  keepTail(tail: Buffer | undefined): void {
    this.wireTail = tail;
    if (tail !== undefined) rememberTail(this);
  }

  /** Forgets its kept tail: a newer one took its place among the TAILS_KEPT. */
  dropTail(): void {
    this.wireTail = undefined;
  }

  /** delivery-mode 2. */
  get persistent(): boolean {
    return (this.bits & BITS.persistent) !== 0;
  }

  /** The priority property (undefined when absent); PriorityReadyList reads it. */
  get priority(): number | undefined {
    const p = this.bits >>> BITS.priorityShift;
    return p === 0 ? undefined : p - 1;
  }

  /** Per-message TTL in ms from the expiration property (parsed at publish). */
  get ttl(): number | undefined {
    return this.extra?.ttl;
  }

  set ttl(ttl: number | undefined) {
    if (ttl === undefined && this.extra === undefined) return;
    this.extras().ttl = ttl;
  }

  /**
   * The BCC routing keys of the message as published, on the copy withoutBcc made (the header is
   * gone, RabbitMQ still lists them in its routing keys): the firehose tracer shows them
   * (src/trace). Stored with the message (PersistedMessage.bccRoutingKeys) and read back with it.
   */
  get bccRoutingKeys(): string[] | undefined {
    return this.extra?.bccRoutingKeys;
  }

  /** A message read back from the store (paged in or recovered), with the BCC keys it was stored with. */
  static fromStored(stored: PersistedMessage): Message {
    const msg = new Message(stored.id, stored.exchange, stored.routingKey, stored.header, stored.body);
    if (stored.bccRoutingKeys !== undefined) msg.extras().bccRoutingKeys = stored.bccRoutingKeys;
    return msg;
  }

  /** The body as a Buffer: its memory itself, or a view made on each call (hot paths use the range). */
  get body(): Buffer {
    const { bodyMemory, bodyOffset, bodySize } = this;
    return bodyOffset === 0 && bodySize === bodyMemory.length ? bodyMemory : bodyMemory.subarray(bodyOffset, bodyOffset + bodySize);
  }

  /**
   * The decoded properties, decoded again on each call for another message (a one-message
   * cache serves the calls of one publish: routing, BCC removal, dead-lettering). Treat the
   * result as read-only: it may be shared with the next caller.
   */
  get properties(): BasicProperties {
    return decodeProperties(this.header);
  }

  get size(): number {
    return this.bodySize;
  }

  /** A copy of this message with other properties (x-death, CC/BCC removal); the body is shared. */
  withProperties(id: number, exchange: string, routingKey: string, properties: BasicProperties): Message {
    const header = encodeContentHeaderPayload(60, this.bodySize, properties);
    const copy = new Message(id, exchange, routingKey, header, this.bodyMemory, properties, this.bodyOffset, this.bodySize);
    copy.ttl = this.ttl;
    return copy;
  }

  /** This message as delivered: without the BCC header (RabbitMQ's sender-selected distribution). */
  withoutBcc(): Message {
    if ((this.bits & BITS.bcc) === 0) return this;
    const properties = this.properties;
    const { BCC: bcc, ...rest } = properties.headers as FieldTable;
    const copy = this.withProperties(this.id, this.exchange, this.routingKey, { ...properties, headers: rest });
    const keys: string[] = [];
    headerRoutingKeys(bcc, keys);
    copy.extras().bccRoutingKeys = keys;
    return copy;
  }

  private extras(): MessageExtra {
    return (this.extra ??= { ttl: undefined, bccRoutingKeys: undefined });
  }
}

/** Message.bits: flags, then the priority property + 1 above them. */
const BITS = { persistent: 1, bcc: 2, priorityShift: 2 } as const;

interface MessageExtra {
  ttl: number | undefined;
  bccRoutingKeys: string[] | undefined;
}

/**
 * How many messages keep a tail at once. A tail repays itself while the message's other
 * deliveries follow its first one closely (a fanout's consumers keeping up); a message waiting
 * in a queue that lags behind would hold it for nothing, so each new tail drops the oldest: at
 * most this many tails (each at most MAX_TAIL octets) are held however long the queues are.
 * The ring also keeps its messages alive until their tails are dropped (small ones: a body
 * over MAX_TAIL keeps no tail).
 */
export const TAILS_KEPT = 8192;
const keptTails: Array<Message | undefined> = new Array<Message | undefined>(TAILS_KEPT).fill(undefined);
let nextTail = 0;

function rememberTail(m: Message): void {
  keptTails[nextTail]?.dropTail();
  keptTails[nextTail] = m;
  nextTail = (nextTail + 1) % TAILS_KEPT;
}

/**
 * The last header decoded and its properties: one publish reads the properties several times
 * (checks, routing, BCC removal), and a message read back from the store is decoded for its
 * fields and then for routing a dead-letter. Keyed by the Buffer itself, so it holds at most one
 * decoded header however many messages are queued; decoding is a pure function of the bytes,
 * so brokers sharing a process may share it.
 */
let lastHeader: Buffer | undefined;
let lastProperties: BasicProperties = {};

function decodeProperties(header: Buffer): BasicProperties {
  if (header === lastHeader) return lastProperties;
  return remember(header, decodeContentHeader(header).properties);
}

function remember(header: Buffer, properties: BasicProperties): BasicProperties {
  lastHeader = header;
  lastProperties = properties;
  return properties;
}

/** Adds the routing keys a CC or BCC header names (RabbitMQ's sender-selected distribution). */
export function headerRoutingKeys(value: FieldValue | undefined, into: string[]): void {
  if (!value || value.type !== 'A') return;
  for (const v of value.value) if (v.type === 'S') into.push(v.value.toString('utf8'));
}

/** The CC then BCC routing keys of a message, or undefined when it names none. */
export function senderSelectedRoutingKeys(headers: FieldTable | undefined): string[] | undefined {
  if (!headers || (!headers['CC'] && !headers['BCC'])) return undefined;
  const keys: string[] = [];
  headerRoutingKeys(headers['CC'], keys);
  headerRoutingKeys(headers['BCC'], keys);
  return keys;
}
