// GENERATED — DO NOT EDIT (npm run gen)

/**
 * basic content properties and content headers (spec 4.2.6.1), generated from
 * spec/amqp0-9-1.stripped.extended.xml by src/frame/codegen/generate.ts.
 */
import type { FieldTable } from '../field-table.js';
import { AbruptClose } from '../frame-errors.js';
import { parseTable, tableSize, writeTable, wrapRange } from '../field-table.js';
import { propertiesCrash, unknownFrameError } from '../frame-errors.js';
import { readU64, shortstrLength, writeShortstr, writeU64 } from '../wire.js';

export interface BasicProperties {
  contentType?: string;
  contentEncoding?: string;
  headers?: FieldTable;
  deliveryMode?: number;
  priority?: number;
  correlationId?: string;
  replyTo?: string;
  expiration?: string;
  messageId?: string;
  timestamp?: number;
  type?: string;
  userId?: string;
  appId?: string;
  clusterId?: string;
}

export interface ContentHeader {
  classId: number;
  weight: number;
  bodySize: number;
  properties: BasicProperties;
}

/** Property flag bits (the first property is the most significant bit). */
export const PROPERTY_FLAGS: Record<keyof BasicProperties, number> = {
  contentType: 0x8000,
  contentEncoding: 0x4000,
  headers: 0x2000,
  deliveryMode: 0x1000,
  priority: 0x0800,
  correlationId: 0x0400,
  replyTo: 0x0200,
  expiration: 0x0100,
  messageId: 0x0080,
  timestamp: 0x0040,
  type: 0x0020,
  userId: 0x0010,
  appId: 0x0008,
  clusterId: 0x0004,
};

/**
 * Decodes a content header frame's payload. As in RabbitMQ 3.10 (which decodes properties in the
 * channel process): the two low flag bits (continuation) are ignored, shortstrs are not checked
 * for UTF-8, and properties that do not parse (short, trailing bytes, bad headers table) answer
 * 541 INTERNAL_ERROR. A payload shorter than 12 octets is a 501 frame error.
 */
export function decodeContentHeader(payload: Buffer): ContentHeader {
  const p = payload;
  const n = p.length;
  if (n < 12) throw unknownFrameError(2, p);
  if (n < 14) throw propertiesCrash();
  const flags = p.readUInt16BE(12);
  const properties: BasicProperties = {};
  let o = 14;
  if (flags & 0x8000) {
    if (o + 1 > n) throw propertiesCrash();
    const s = o + 1;
    o = s + p[o]!;
    if (o > n) throw propertiesCrash();
    properties.contentType = p.toString('utf8', s, o);
  }
  if (flags & 0x4000) {
    if (o + 1 > n) throw propertiesCrash();
    const s = o + 1;
    o = s + p[o]!;
    if (o > n) throw propertiesCrash();
    properties.contentEncoding = p.toString('utf8', s, o);
  }
  if (flags & 0x2000) {
    if (o + 4 > n) throw propertiesCrash();
    const s = o + 4;
    o = s + p.readUInt32BE(o);
    if (o > n) throw propertiesCrash();
    properties.headers = propertiesTable(p, s, o);
  }
  if (flags & 0x1000) {
    if (o + 1 > n) throw propertiesCrash();
    properties.deliveryMode = p[o]!;
    o += 1;
  }
  if (flags & 0x0800) {
    if (o + 1 > n) throw propertiesCrash();
    properties.priority = p[o]!;
    o += 1;
  }
  if (flags & 0x0400) {
    if (o + 1 > n) throw propertiesCrash();
    const s = o + 1;
    o = s + p[o]!;
    if (o > n) throw propertiesCrash();
    properties.correlationId = p.toString('utf8', s, o);
  }
  if (flags & 0x0200) {
    if (o + 1 > n) throw propertiesCrash();
    const s = o + 1;
    o = s + p[o]!;
    if (o > n) throw propertiesCrash();
    properties.replyTo = p.toString('utf8', s, o);
  }
  if (flags & 0x0100) {
    if (o + 1 > n) throw propertiesCrash();
    const s = o + 1;
    o = s + p[o]!;
    if (o > n) throw propertiesCrash();
    properties.expiration = p.toString('utf8', s, o);
  }
  if (flags & 0x0080) {
    if (o + 1 > n) throw propertiesCrash();
    const s = o + 1;
    o = s + p[o]!;
    if (o > n) throw propertiesCrash();
    properties.messageId = p.toString('utf8', s, o);
  }
  if (flags & 0x0040) {
    if (o + 8 > n) throw propertiesCrash();
    properties.timestamp = readU64(p, o);
    o += 8;
  }
  if (flags & 0x0020) {
    if (o + 1 > n) throw propertiesCrash();
    const s = o + 1;
    o = s + p[o]!;
    if (o > n) throw propertiesCrash();
    properties.type = p.toString('utf8', s, o);
  }
  if (flags & 0x0010) {
    if (o + 1 > n) throw propertiesCrash();
    const s = o + 1;
    o = s + p[o]!;
    if (o > n) throw propertiesCrash();
    properties.userId = p.toString('utf8', s, o);
  }
  if (flags & 0x0008) {
    if (o + 1 > n) throw propertiesCrash();
    const s = o + 1;
    o = s + p[o]!;
    if (o > n) throw propertiesCrash();
    properties.appId = p.toString('utf8', s, o);
  }
  if (flags & 0x0004) {
    if (o + 1 > n) throw propertiesCrash();
    const s = o + 1;
    o = s + p[o]!;
    if (o > n) throw propertiesCrash();
    properties.clusterId = p.toString('utf8', s, o);
  }
  if (o !== n) throw propertiesCrash();
  return { classId: p.readUInt16BE(0), weight: p.readUInt16BE(2), bodySize: readU64(p, 4), properties };
}

function propertiesTable(p: Buffer, s: number, e: number): FieldTable {
  try {
    return parseTable(p, s, e);
  } catch (err) {
    if (err instanceof AbruptClose) throw propertiesCrash();
    throw err;
  }
}

/** The body-size of a content header payload, without decoding properties. */
export function readBodySize(payload: Buffer): number {
  return readU64(payload, 4);
}

function encodeHeader(framed: boolean, channel: number, classId: number, bodySize: number, props: BasicProperties): Buffer {
  let flags = 0;
  let size = 14;
  const l0 = props.contentType == null ? -1 : shortstrLength(props.contentType);
  if (l0 >= 0) {
    flags |= 0x8000;
    size += 1 + l0;
  }
  const l1 = props.contentEncoding == null ? -1 : shortstrLength(props.contentEncoding);
  if (l1 >= 0) {
    flags |= 0x4000;
    size += 1 + l1;
  }
  const l2 = props.headers == null ? -1 : tableSize(props.headers);
  if (l2 >= 0) {
    flags |= 0x2000;
    size += l2;
  }
  if (props.deliveryMode != null) {
    flags |= 0x1000;
    size += 1;
  }
  if (props.priority != null) {
    flags |= 0x0800;
    size += 1;
  }
  const l5 = props.correlationId == null ? -1 : shortstrLength(props.correlationId);
  if (l5 >= 0) {
    flags |= 0x0400;
    size += 1 + l5;
  }
  const l6 = props.replyTo == null ? -1 : shortstrLength(props.replyTo);
  if (l6 >= 0) {
    flags |= 0x0200;
    size += 1 + l6;
  }
  const l7 = props.expiration == null ? -1 : shortstrLength(props.expiration);
  if (l7 >= 0) {
    flags |= 0x0100;
    size += 1 + l7;
  }
  const l8 = props.messageId == null ? -1 : shortstrLength(props.messageId);
  if (l8 >= 0) {
    flags |= 0x0080;
    size += 1 + l8;
  }
  if (props.timestamp != null) {
    flags |= 0x0040;
    size += 8;
  }
  const l10 = props.type == null ? -1 : shortstrLength(props.type);
  if (l10 >= 0) {
    flags |= 0x0020;
    size += 1 + l10;
  }
  const l11 = props.userId == null ? -1 : shortstrLength(props.userId);
  if (l11 >= 0) {
    flags |= 0x0010;
    size += 1 + l11;
  }
  const l12 = props.appId == null ? -1 : shortstrLength(props.appId);
  if (l12 >= 0) {
    flags |= 0x0008;
    size += 1 + l12;
  }
  const l13 = props.clusterId == null ? -1 : shortstrLength(props.clusterId);
  if (l13 >= 0) {
    flags |= 0x0004;
    size += 1 + l13;
  }
  const base = framed ? 7 : 0;
  const b = Buffer.allocUnsafe(size + (framed ? 8 : 0));
  if (framed) {
    b[0] = 2;
    b.writeUInt16BE(channel, 1);
    b.writeUInt32BE(size, 3);
    b[size + 7] = 0xce;
  }
  b.writeUInt16BE(classId, base);
  b.writeUInt16BE(0, base + 2);
  writeU64(b, base + 4, bodySize);
  b.writeUInt16BE(flags, base + 12);
  let o = base + 14;
  if (l0 >= 0) o = writeShortstr(b, o, props.contentType!, l0);
  if (l1 >= 0) o = writeShortstr(b, o, props.contentEncoding!, l1);
  if (l2 >= 0) o = writeTable(b, o, props.headers!);
  if (props.deliveryMode != null) {
    b.writeUInt8(props.deliveryMode, o);
    o += 1;
  }
  if (props.priority != null) {
    b.writeUInt8(props.priority, o);
    o += 1;
  }
  if (l5 >= 0) o = writeShortstr(b, o, props.correlationId!, l5);
  if (l6 >= 0) o = writeShortstr(b, o, props.replyTo!, l6);
  if (l7 >= 0) o = writeShortstr(b, o, props.expiration!, l7);
  if (l8 >= 0) o = writeShortstr(b, o, props.messageId!, l8);
  if (props.timestamp != null) {
    writeU64(b, o, props.timestamp);
    o += 8;
  }
  if (l10 >= 0) o = writeShortstr(b, o, props.type!, l10);
  if (l11 >= 0) o = writeShortstr(b, o, props.userId!, l11);
  if (l12 >= 0) o = writeShortstr(b, o, props.appId!, l12);
  if (l13 >= 0) o = writeShortstr(b, o, props.clusterId!, l13);
  return b;
}

/** A content header payload (class-id, weight 0, body-size, flags, properties), allocated once. */
export function encodeContentHeaderPayload(classId: number, bodySize: number, props: BasicProperties): Buffer {
  return wrapRange(() => encodeHeader(false, 0, classId, bodySize, props));
}

/** A complete content header frame (type 2), allocated once. */
export function encodeContentHeaderFrame(channel: number, classId: number, bodySize: number, props: BasicProperties): Buffer {
  return wrapRange(() => encodeHeader(true, channel, classId, bodySize, props));
}
