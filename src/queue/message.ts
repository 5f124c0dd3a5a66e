import type { FieldTable, FieldValue } from '../frame/field-table.js';
import { decodeContentHeader, encodeContentHeaderPayload, type BasicProperties } from '../frame/generated/properties.js';

/**
 * One published message. A routed message is one object shared by every queue it lands in
 * (DESIGN.md, convention 4): fanout copies nothing. The content-header payload is kept exactly as
 * received and re-sent on delivery. What a queue needs of the properties (delivery mode,
 * priority, whether a BCC header is there) is read once, when the message is made, into plain
 * fields; the decoded properties themselves are not kept: a header of many small fields decodes
 * to dozens of times its size in JS objects (a 128 KiB header to about 8 MiB), and a queue of
 * such messages would hold all of them. `properties` decodes on demand (see lastHeader).
 */
export class Message {
  /** delivery-mode 2. */
  readonly persistent: boolean;
  /** The priority property (undefined when absent); PriorityReadyList reads it. */
  readonly priority: number | undefined;
  /** The headers hold a BCC entry, which delivery must strip (withoutBcc). */
  private readonly hasBcc: boolean;
  /** Per-message TTL in ms from the expiration property (parsed at publish). */
  ttl: number | undefined;
  /**
   * The BCC routing keys of the message as published, on the copy withoutBcc made (the header is
   * gone, RabbitMQ still lists them in its routing keys): the firehose tracer shows them
   * (src/trace). Not stored: a message read back from the store has none.
   */
  bccRoutingKeys: string[] | undefined;

  constructor(
    /** Broker-wide unique id (also the store key of a persisted message). */
    readonly id: number,
    readonly exchange: string,
    readonly routingKey: string,
    /** Raw content-header frame payload (class-id, weight, body-size, flags, properties). */
    readonly header: Buffer,
    readonly body: Buffer,
    /** The decoded header, when the caller has it already (publish): saves decoding it again. */
    properties?: BasicProperties,
  ) {
    const props = properties ? remember(header, properties) : decodeProperties(header);
    this.persistent = props.deliveryMode === 2;
    this.priority = props.priority;
    this.hasBcc = props.headers !== undefined && props.headers['BCC'] !== undefined;
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
    return this.body.length;
  }

  /** A copy of this message with other properties (x-death, CC/BCC removal); the body is shared. */
  withProperties(id: number, exchange: string, routingKey: string, properties: BasicProperties): Message {
    const header = encodeContentHeaderPayload(60, this.body.length, properties);
    const copy = new Message(id, exchange, routingKey, header, this.body, properties);
    copy.ttl = this.ttl;
    return copy;
  }

  /** This message as delivered: without the BCC header (RabbitMQ's sender-selected distribution). */
  withoutBcc(): Message {
    if (!this.hasBcc) return this;
    const properties = this.properties;
    const { BCC: bcc, ...rest } = properties.headers as FieldTable;
    const copy = this.withProperties(this.id, this.exchange, this.routingKey, { ...properties, headers: rest });
    const keys: string[] = [];
    headerRoutingKeys(bcc, keys);
    copy.bccRoutingKeys = keys;
    return copy;
  }

  /**
   * Bodies arrive as views into socket chunks. A message that is kept (queued) must not pin a
   * large chunk for a small body, so it is compacted into its own memory once.
   */
  static compact(buf: Buffer): Buffer {
    return keepsView(buf.buffer, buf.byteOffset, buf.length) ? buf : copyOf(buf, 0, buf.length);
  }

  /** compact(buf.subarray(start, end)) without making the view when it would copy. */
  static compactRange(buf: Buffer, start: number, end: number): Buffer {
    // Under half of buf is under half of its memory: copied, without reading buf.buffer (slow).
    const n = end - start;
    if (n * 2 < buf.length || !keepsView(buf.buffer, buf.byteOffset + start, n)) return copyOf(buf, start, end);
    return start === 0 && end === buf.length ? buf : buf.subarray(start, end);
  }
}

/** A view of length octets at offset in memory may be kept: it is all of it, or at least half. */
function keepsView(memory: ArrayBufferLike, offset: number, length: number): boolean {
  return (offset === 0 && memory.byteLength === length) || memory.byteLength <= length * 2;
}

/** buf[start, end) in memory of its own (small ones in a slice of Node's pool, as Buffer.from makes). */
function copyOf(buf: Buffer, start: number, end: number): Buffer {
  const n = end - start;
  const out = Buffer.allocUnsafe(n);
  if (n <= 64) for (let i = 0; i < n; i++) out[i] = buf[start + i]!;
  else buf.copy(out, 0, start, end);
  return out;
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
