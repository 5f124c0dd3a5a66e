/**
 * Reads along with amqplib: every chunk amqplib reads from its socket is also fed to our frame
 * decoder, so a case can see what a client library hides — the class and method ids of a
 * connection.close, the exact wire types in a delivered message's headers. It only reads.
 */
import type { Socket } from 'node:net';
import type { ChannelModel } from 'amqplib';
import { FrameReader } from '../../src/frame/frame-reader.js';
import { decodeMethod, type Method } from '../../src/frame/generated/methods.js';
import { decodeContentHeader, type ContentHeader } from '../../src/frame/generated/properties.js';
import { closeInfo, type CloseInfo } from './raw-client.js';

export interface TappedMessage {
  channel: number;
  method: Method;
  header?: ContentHeader;
}

export class WireTap {
  readonly methods: Array<{ channel: number; method: Method }> = [];
  readonly messages: TappedMessage[] = [];
  connectionClose: CloseInfo | undefined;
  readonly channelCloses = new Map<number, CloseInfo>();
  private reader = new FrameReader(0);
  private pending = new Map<number, TappedMessage>();
  private broken = false;

  static attach(conn: ChannelModel): WireTap {
    const tap = new WireTap();
    const sock = (conn as unknown as { connection: { stream: Socket } }).connection.stream;
    const read = sock.read.bind(sock);
    sock.read = ((n?: number) => {
      const chunk = read(n) as Buffer | string | null;
      if (chunk && Buffer.isBuffer(chunk)) tap.feed(chunk);
      return chunk;
    }) as typeof sock.read;
    return tap;
  }

  feed(chunk: Buffer): void {
    if (this.broken) return;
    try {
      this.reader.feed(Buffer.from(chunk), (type, channel, payload) => this.onFrame(type, channel, payload));
    } catch {
      this.broken = true;
    }
  }

  private onFrame(type: number, channel: number, payload: Buffer): void {
    if (type === 1) {
      const method = decodeMethod(payload);
      this.methods.push({ channel, method });
      if (method.name === 'connection.close') this.connectionClose = closeInfo(method);
      if (method.name === 'channel.close') this.channelCloses.set(channel, closeInfo(method));
      if (method.name === 'basic.deliver' || method.name === 'basic.get-ok' || method.name === 'basic.return') {
        const m: TappedMessage = { channel, method };
        this.messages.push(m);
        this.pending.set(channel, m);
      }
    } else if (type === 2) {
      const m = this.pending.get(channel);
      if (m) {
        m.header = decodeContentHeader(payload);
        this.pending.delete(channel);
      }
    }
  }

  /** The content header of the delivery with this tag on this channel (deliver or get-ok). */
  delivery(channel: number, deliveryTag: number): TappedMessage | undefined {
    return this.messages.find(
      (m) => m.channel === channel && (m.method.args as { deliveryTag?: number }).deliveryTag === deliveryTag && m.method.name !== 'basic.return',
    );
  }
}
