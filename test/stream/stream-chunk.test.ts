import { expect } from 'chai';
import { DecodedChunk, encodeChunk, encodedSize, type StreamMessage } from '../../src/stream/stream-chunk.js';

describe('stream chunk records', () => {
  const messages: StreamMessage[] = [
    { exchange: '', routingKey: 'q', header: Buffer.from([0, 60, 0, 0]), body: Buffer.alloc(0) },
    { exchange: 'ex.ü', routingKey: 'a.b.ç', header: Buffer.from('header'), body: Buffer.from('body one') },
    { exchange: 'x'.repeat(255), routingKey: 'k'.repeat(255), header: Buffer.alloc(0), body: Buffer.alloc(70_000, 7) },
  ];
  const size = messages.reduce((n, m) => n + encodedSize(m), 0);

  it('decodes every message at its offset as it was appended, as views of the record', () => {
    const record = encodeChunk(messages, size);
    const chunk = new DecodedChunk(1002, 7, record);
    expect(chunk.count).to.equal(3);
    expect(chunk.first).to.equal(1000);
    for (let i = 0; i < 3; i++) {
      const m = chunk.message(1000 + i);
      expect(m).to.include({ offset: 1000 + i, id: 7, chunkEnd: 1002 });
      expect(m.exchange).to.equal(messages[i]!.exchange);
      expect(m.routingKey).to.equal(messages[i]!.routingKey);
      expect(m.header.equals(messages[i]!.header)).to.equal(true);
      expect(m.body.equals(messages[i]!.body)).to.equal(true);
      expect(m.body.buffer).to.equal(record.buffer);
    }
  });

  it('refuses a record of another format or with bytes left over', () => {
    const record = encodeChunk(messages, size);
    expect(() => new DecodedChunk(2, 1, Buffer.concat([record, Buffer.from([1])]))).to.throw('1 bytes left over after 3 messages');
    const other = Buffer.from(record);
    other[0] = 9;
    expect(() => new DecodedChunk(2, 1, other)).to.throw('unknown format 9');
  });
});
