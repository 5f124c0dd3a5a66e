/**
 * The load generator's framing: a cheap incoming-frame scanner and the pre-encoded outgoing frames.
 *
 * Encoding goes through Warren's own codec (src/frame), once, before traffic starts: a publisher
 * writes slices of a pre-encoded ring of messages, a consumer writes one 21-octet basic.ack now
 * and then. Decoding on the hot path does not decode: FrameScanner walks frame headers, reads the
 * delivery tag of basic.deliver and the tag/multiple of basic.ack/nack in place, and skips
 * content frames without copying them. Only the rare other methods (handshake and set-up replies,
 * closes) are handed over as payload views, for decodeMethod.
 */
import { encodeMethodFrame, METHODS, type MethodName } from '../../src/frame/generated/methods.js';
import { encodeContentHeaderFrame, type BasicProperties } from '../../src/frame/generated/properties.js';
import { encodeFrame } from '../../src/frame/frame-writer.js';
import { readU64 } from '../../src/frame/wire.js';

/** class-id << 16 | method-id, from the codec's method table. */
const cm = (name: MethodName): number => (METHODS[name].classId << 16) | METHODS[name].methodId;

/** The methods the load generator and its sinks look at. */
export const CM = {
  connectionStart: cm('connection.start'),
  connectionStartOk: cm('connection.start-ok'),
  connectionTune: cm('connection.tune'),
  connectionTuneOk: cm('connection.tune-ok'),
  connectionOpen: cm('connection.open'),
  connectionOpenOk: cm('connection.open-ok'),
  connectionClose: cm('connection.close'),
  connectionCloseOk: cm('connection.close-ok'),
  connectionBlocked: cm('connection.blocked'),
  connectionUnblocked: cm('connection.unblocked'),
  channelOpen: cm('channel.open'),
  channelOpenOk: cm('channel.open-ok'),
  channelClose: cm('channel.close'),
  channelCloseOk: cm('channel.close-ok'),
  basicQos: cm('basic.qos'),
  basicQosOk: cm('basic.qos-ok'),
  basicConsume: cm('basic.consume'),
  basicConsumeOk: cm('basic.consume-ok'),
  basicCancel: cm('basic.cancel'),
  basicPublish: cm('basic.publish'),
  basicDeliver: cm('basic.deliver'),
  basicAck: cm('basic.ack'),
  basicNack: cm('basic.nack'),
  confirmSelect: cm('confirm.select'),
  confirmSelectOk: cm('confirm.select-ok'),
};

/** What a FrameScanner reports. Payload views are only valid during the call. */
export interface ScanHandler {
  onDeliver(channel: number, deliveryTag: number): void;
  onAck(channel: number, deliveryTag: number, multiple: boolean): void;
  onNack(channel: number, deliveryTag: number, multiple: boolean): void;
  onPublish(channel: number): void;
  /** Any other method: payload from class-id to the last argument octet. */
  onMethod(channel: number, classMethod: number, payload: Buffer): void;
  onHeartbeat(): void;
}

/**
 * Walks a byte stream frame by frame. A method frame split across chunks is joined (method frames
 * are small); a content frame split across chunks is skipped without being assembled.
 */
export class FrameScanner {
  private carry: Buffer | null = null;
  private skip = 0;
  /** Octets read in total. */
  bytes = 0;

  constructor(private readonly h: ScanHandler) {}

  feed(chunk: Buffer): void {
    this.bytes += chunk.length;
    let b = chunk;
    let o = 0;
    if (this.skip > 0) {
      if (this.skip >= b.length) {
        this.skip -= b.length;
        return;
      }
      o = this.skip;
      this.skip = 0;
    } else if (this.carry) {
      b = Buffer.concat([this.carry, chunk]);
      this.carry = null;
    }
    const len = b.length;
    const h = this.h;
    while (o < len) {
      if (len - o < 7) {
        this.carry = b.subarray(o);
        return;
      }
      const type = b[o] as number;
      const end = o + 8 + b.readUInt32BE(o + 3);
      if (type === 1) {
        if (end > len) {
          this.carry = b.subarray(o);
          return;
        }
        if (b[end - 1] !== 0xce) throw new Error(`frame-end octet ${b[end - 1]} at ${end - 1}`);
        const channel = b.readUInt16BE(o + 1);
        const cm = b.readUInt32BE(o + 7);
        if (cm === CM.basicDeliver) h.onDeliver(channel, readU64(b, o + 12 + (b[o + 11] as number)));
        else if (cm === CM.basicAck) h.onAck(channel, readU64(b, o + 11), ((b[o + 19] as number) & 1) === 1);
        else if (cm === CM.basicNack) h.onNack(channel, readU64(b, o + 11), ((b[o + 19] as number) & 1) === 1);
        else if (cm === CM.basicPublish) h.onPublish(channel);
        else h.onMethod(channel, cm, b.subarray(o + 7, end - 1));
      } else if (type === 2 || type === 3) {
        if (end > len) {
          this.skip = end - len;
          return;
        }
      } else if (type === 8) {
        if (end > len) {
          this.carry = b.subarray(o);
          return;
        }
        h.onHeartbeat();
      } else {
        throw new Error(`unexpected frame type ${type}`);
      }
      o = end;
    }
  }
}

/** One message's frames (basic.publish, content header, one body frame), concatenated. */
export function encodePublish(channel: number, exchange: string, routingKey: string, body: Buffer, props: BasicProperties): Buffer {
  return Buffer.concat([
    encodeMethodFrame(channel, 'basic.publish', { exchange, routingKey, mandatory: false, immediate: false }),
    encodeContentHeaderFrame(channel, 60, body.length, props),
    encodeFrame(3, channel, body),
  ]);
}

/**
 * A ring of pre-encoded messages (one per routing key, repeated up to at least `minMessages`),
 * with the offset of every message, so that any run of consecutive messages is one zero-copy
 * subarray.
 */
export interface PublishRing {
  buf: Buffer;
  /** offsets[i] is where message i starts; offsets[count] is buf.length. */
  offsets: Uint32Array;
  count: number;
}

export function encodePublishRing(channel: number, exchange: string, keys: string[], body: Buffer, props: BasicProperties, minMessages: number): PublishRing {
  const one = keys.map((k) => encodePublish(channel, exchange, k, body, props));
  const repeat = Math.max(1, Math.ceil(minMessages / keys.length));
  const parts: Buffer[] = [];
  for (let r = 0; r < repeat; r++) parts.push(...one);
  const offsets = new Uint32Array(parts.length + 1);
  let o = 0;
  parts.forEach((p, i) => {
    offsets[i] = o;
    o += p.length;
  });
  offsets[parts.length] = o;
  return { buf: Buffer.concat(parts, o), offsets, count: parts.length };
}

/** The bodies the generator sends: `size` octets of 'a'. */
export function benchBody(size: number): Buffer {
  return Buffer.alloc(size, 0x61);
}
