import { expect } from 'chai';
import { F } from '../../src/frame/field-table.js';
import { encodeContentHeaderPayload } from '../../src/frame/generated/properties.js';
import { ChunkBuilder, DecodedChunk } from '../../src/stream/stream-chunk.js';
import { withOffsetHeader } from '../../src/stream/stream-header.js';

/** A message as ChunkBuilder.add takes it. */
interface StreamMessage {
  exchange: string;
  routingKey: string;
  header: Buffer;
  body: Buffer;
}

/** A content header as a stream delivers it (a message read back decodes its properties). */
const HEADER = encodeContentHeaderPayload(60, 0, {});

describe('stream chunk records', () => {
  const messages: StreamMessage[] = [
    { exchange: '', routingKey: 'q', header: encodeContentHeaderPayload(60, 0, {}), body: Buffer.alloc(0) },
    { exchange: 'ex.ü', routingKey: 'a.b.ç', header: encodeContentHeaderPayload(60, 8, { type: 'header' }), body: Buffer.from('body one') },
    { exchange: 'x'.repeat(255), routingKey: 'k'.repeat(255), header: encodeContentHeaderPayload(60, 70_000, { deliveryMode: 2 }), body: Buffer.alloc(70_000, 7) },
  ];
  /** The messages as one record, from a builder that starts small (it grows as they are added). */
  function encode(): Buffer {
    const b = new ChunkBuilder(8);
    for (const m of messages) b.add(m.exchange, m.routingKey, m.header, m.body);
    return b.finish();
  }

  it('decodes every message at its offset as it was appended, as views of the record', () => {
    const record = encode();
    const chunk = new DecodedChunk(1002, 7, record);
    expect(chunk.count).to.equal(3);
    expect(chunk.first).to.equal(1000);
    for (let i = 0; i < 3; i++) {
      const { offset, chunkEnd, msg } = chunk.message(1000 + i);
      expect([offset, chunkEnd, msg.id]).to.deep.equal([1000 + i, 1002, 7]);
      expect(msg.exchange).to.equal(messages[i]!.exchange);
      expect(msg.routingKey).to.equal(messages[i]!.routingKey);
      expect(msg.header.equals(messages[i]!.header)).to.equal(true);
      expect(msg.body.equals(messages[i]!.body)).to.equal(true);
      // The body is a range of the record itself: no Buffer of its own.
      expect(msg.bodyMemory).to.equal(record);
      expect(msg.header.buffer).to.equal(record.buffer);
    }
  });

  it('builds record after record in the same memory: each record its own copy, as a fresh builder makes it', () => {
    const b = new ChunkBuilder(128 * 1024); // room for every round: the same memory throughout
    const records: Buffer[] = [];
    for (let round = 0; round < 3; round++) {
      b.reset();
      const these = round === 0 ? messages : round === 1 ? messages.slice(1) : [...messages].reverse();
      for (const m of these) b.add(m.exchange, m.routingKey, m.header, m.body);
      records.push(b.finish());
    }
    // Later records did not write over earlier ones.
    expect(records[0]!.equals(encode())).to.equal(true);
    expect(new DecodedChunk(1, 1, records[1]!).message(1).msg.routingKey).to.equal(messages[2]!.routingKey);
    expect(new DecodedChunk(2, 1, records[2]!).message(0).msg.routingKey).to.equal(messages[2]!.routingKey);
    expect(b.reset().size).to.equal(5);
    // Memory grown past four times the initial capacity is let go at the next record.
    const small = new ChunkBuilder(64);
    small.add('', 'q', HEADER, Buffer.alloc(1000));
    const grown = small.finish();
    small.reset().add('', 'q', HEADER, Buffer.from('x'));
    expect(new DecodedChunk(0, 1, grown).message(0).msg.body.length).to.equal(1000);
    expect(new DecodedChunk(0, 1, small.finish()).message(0).msg.body.toString()).to.equal('x');
  });

  it('decodes each exchange and routing key right when it reuses the previous message\'s string', () => {
    // message() reuses the last decoded string when the bytes are the same: keys of the same
    // length with other bytes, other lengths, an empty exchange between, and reads out of order.
    const keys = [['ex', 'orders'], ['ex', 'orders'], ['', 'orderz'], ['ex', 'orders'], ['ey', 'order'], ['ex', ''], ['ex', 'orders']];
    const b = new ChunkBuilder();
    for (const [ex, rk] of keys) b.add(ex!, rk!, HEADER, Buffer.from(rk!));
    const chunk = new DecodedChunk(keys.length - 1, 1, b.finish());
    for (const order of [[0, 1, 2, 3, 4, 5, 6], [6, 2, 1, 5, 0, 4, 3]]) {
      const read = order.map((o) => chunk.message(o).msg);
      expect(read.map((m) => [m.exchange, m.routingKey])).to.deep.equal(order.map((o) => keys[o]));
    }
  });

  it('refuses a record of another format or with bytes left over', () => {
    const record = encode();
    expect(() => new DecodedChunk(2, 1, Buffer.concat([record, Buffer.from([1])]))).to.throw('1 bytes left over after 3 messages');
    const other = Buffer.from(record);
    other[0] = 9;
    expect(() => new DecodedChunk(2, 1, other)).to.throw('unknown format 9');
  });

  it('writes a published header with its x-stream-offset in place, and a body from a range of shared memory', () => {
    const published = encodeContentHeaderPayload(60, 5, { contentType: 'text/plain', headers: {} });
    const slab = Buffer.from('..hello..');
    const b = new ChunkBuilder();
    expect(b.addWithOffset('ex', 'rk', published, 41, slab, 2, 5)).to.equal(true);
    // A message with headers is left to the full re-encoding: nothing added.
    const withHeaders = encodeContentHeaderPayload(60, 1, { headers: { a: F.int64(1) } });
    expect(b.addWithOffset('ex', 'rk', withHeaders, 42, slab, 0, 1)).to.equal(false);
    b.add('', 'q', withHeaders, slab, 2, 5);
    const chunk = new DecodedChunk(42, 1, b.finish());
    expect(chunk.count).to.equal(2);
    const first = chunk.message(41).msg;
    expect(first.header.equals(withOffsetHeader(published, 41)!)).to.equal(true);
    expect([first.exchange, first.routingKey, first.body.toString()]).to.deep.equal(['ex', 'rk', 'hello']);
    const second = chunk.message(42).msg;
    expect(second.header.equals(withHeaders)).to.equal(true);
    expect(second.body.toString()).to.equal('hello');
  });
});
