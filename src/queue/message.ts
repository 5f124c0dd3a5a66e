import type { FieldTable, FieldValue } from '../frame/field-table.js';
import { decodeContentHeader, encodeContentHeaderPayload, type BasicProperties } from '../frame/generated/properties.js';

/**
 * One published message. A routed message is one object shared by every queue it lands in
 * (DESIGN.md, convention 4): fanout copies nothing. The content-header payload is kept exactly as
 * received and re-sent on delivery; properties are decoded only when something needs them.
 */
export class Message {
  private decoded: BasicProperties | undefined;
  /** Per-message TTL in ms from the expiration property (parsed at publish). */
  ttl: number | undefined;

  constructor(
    /** Broker-wide unique id (also the store key of a persisted message). */
    readonly id: number,
    readonly exchange: string,
    readonly routingKey: string,
    /** Raw content-header frame payload (class-id, weight, body-size, flags, properties). */
    public header: Buffer,
    readonly body: Buffer,
    properties?: BasicProperties,
  ) {
    this.decoded = properties;
  }

  get properties(): BasicProperties {
    return (this.decoded ??= decodeContentHeader(this.header).properties);
  }

  get persistent(): boolean {
    return this.properties.deliveryMode === 2;
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
    const headers = this.properties.headers;
    if (!headers || headers['BCC'] === undefined) return this;
    const { BCC: _bcc, ...rest } = headers;
    return this.withProperties(this.id, this.exchange, this.routingKey, { ...this.properties, headers: rest });
  }

  /**
   * Bodies arrive as views into socket chunks. A message that is kept (queued) must not pin a
   * large chunk for a small body, so it is compacted into its own memory once.
   */
  static compact(buf: Buffer): Buffer {
    if (buf.byteOffset === 0 && buf.buffer.byteLength === buf.length) return buf;
    if (buf.buffer.byteLength <= buf.length * 2) return buf;
    return Buffer.from(buf);
  }
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
