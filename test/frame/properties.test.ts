import { expect } from 'chai';
import { ConnectionError, ReplyCode } from '../../src/errors.js';
import { encodeTable, F } from '../../src/frame/field-table.js';
import {
  decodeContentHeader,
  encodeContentHeaderFrame,
  encodeContentHeaderPayload,
  PROPERTY_FLAGS,
  readBodySize,
  type BasicProperties,
} from '../../src/frame/generated/properties.js';
import { mutate, rng } from './helpers.js';

const ALL: Required<BasicProperties> = {
  contentType: 'application/json',
  contentEncoding: 'gzip',
  headers: { 'x-death': F.array([F.table({ count: F.int64(1n) })]), n: F.int32(5) },
  deliveryMode: 2,
  priority: 9,
  correlationId: 'c-1',
  replyTo: 'amq.rabbitmq.reply-to',
  expiration: '60000',
  messageId: 'm-1',
  timestamp: 1700000000,
  type: 'order.created',
  userId: 'guest',
  appId: 'warren-test',
  clusterId: 'legacy',
};

function norm(p: BasicProperties): Record<string, unknown> {
  const out: Record<string, unknown> = { ...p };
  if (p.headers) out['headers'] = encodeTable(p.headers).toString('hex');
  return out;
}

function header(flags: number, props: number[], bodySize = 0): Buffer {
  const b = Buffer.alloc(14);
  b.writeUInt16BE(60, 0);
  b.writeBigUInt64BE(BigInt(bodySize), 4);
  b.writeUInt16BE(flags, 12);
  return Buffer.concat([b, Buffer.from(props)]);
}

function expectCrash(p: Buffer): void {
  try {
    decodeContentHeader(p);
  } catch (e) {
    expect(e).to.be.instanceOf(ConnectionError);
    expect((e as ConnectionError).replyCode).to.equal(ReplyCode.INTERNAL_ERROR);
    expect((e as ConnectionError).replyText).to.equal('INTERNAL_ERROR');
    return;
  }
  throw new Error('did not throw');
}

describe('content header and basic properties (spec 4.2.6.1)', () => {
  it('round-trips all 14 properties', () => {
    const p = encodeContentHeaderPayload(60, 123456789012, ALL);
    const h = decodeContentHeader(p);
    expect(h).to.include({ classId: 60, weight: 0, bodySize: 123456789012 });
    expect(norm(h.properties)).to.deep.equal(norm(ALL));
    expect(p.readUInt16BE(12)).to.equal(0xfffc);
    expect(readBodySize(p)).to.equal(123456789012);
  });

  it('round-trips no properties at all (flags 0)', () => {
    const p = encodeContentHeaderPayload(60, 0, {});
    expect(p).to.deep.equal(header(0, []));
    expect(decodeContentHeader(p)).to.deep.equal({ classId: 60, weight: 0, bodySize: 0, properties: {} });
  });

  it('round-trips each property alone, with its own flag bit', () => {
    for (const key of Object.keys(ALL) as Array<keyof BasicProperties>) {
      const props = { [key]: ALL[key] } as BasicProperties;
      const p = encodeContentHeaderPayload(60, 1, props);
      expect(p.readUInt16BE(12), key).to.equal(PROPERTY_FLAGS[key]);
      expect(norm(decodeContentHeader(p).properties)).to.deep.equal(norm(props));
    }
  });

  it('treats null like an absent property', () => {
    const p = encodeContentHeaderPayload(60, 1, { contentType: null as unknown as string, priority: 0 });
    expect(p.readUInt16BE(12)).to.equal(PROPERTY_FLAGS.priority);
  });

  it('frames a header (type 2) equal to the payload encoder', () => {
    const f = encodeContentHeaderFrame(7, 60, 5, ALL);
    expect([f[0], f.readUInt16BE(1), f.readUInt32BE(3), f[f.length - 1]]).to.deep.equal([2, 7, f.length - 8, 0xce]);
    expect(f.subarray(7, f.length - 1)).to.deep.equal(encodeContentHeaderPayload(60, 5, ALL));
  });

  describe('malformed headers, as RabbitMQ 3.10.8 answers them', () => {
    it('answers a payload under 12 octets as an unknown frame (501)', () => {
      expect(() => decodeContentHeader(Buffer.from([0, 60, 0, 0, 0, 0]))).to.throw(
        ConnectionError,
        'FRAME_ERROR - type 2, all octets = <<0,60,0,0,0,0>>: unknown_frame',
      );
    });
    it('answers missing flags, short properties or trailing bytes with 541 INTERNAL_ERROR (channel crash)', () => {
      expectCrash(header(0, []).subarray(0, 12));
      expectCrash(header(0x8000, []));
      expectCrash(header(0x8000, [5, 0x61]));
      expectCrash(header(0, [1]));
      expectCrash(header(0x2000, [0, 0, 0, 3, 1, 0x6b, 0x5a]));
      expectCrash(header(0x0200, [0, 0, 0, 0, 0, 0, 0]));
    });
    it('ignores the continuation bit and does not check UTF-8, like RabbitMQ', () => {
      expect(decodeContentHeader(header(0x0001, [])).properties).to.deep.equal({});
      expect(decodeContentHeader(header(0x8000, [1, 0xff])).properties.contentType).to.be.a('string');
    });
    it('only ever throws ConnectionError on truncated or mutated headers (fuzz)', () => {
      const r = rng(7);
      const good = encodeContentHeaderPayload(60, 99, ALL);
      let errors = 0;
      for (let i = 0; i < 5000; i++) {
        const p = mutate(good, r);
        try {
          decodeContentHeader(p);
        } catch (e) {
          expect(e).to.be.instanceOf(ConnectionError);
          errors++;
        }
      }
      expect(errors).to.be.greaterThan(500);
    });
  });

  it('rejects properties the wire cannot carry with a 541 ConnectionError', () => {
    expect(() => encodeContentHeaderPayload(60, 0, { messageId: 'x'.repeat(256) })).to.throw(ConnectionError);
    expect(() => encodeContentHeaderPayload(60, 0, { priority: 256 })).to.throw(ConnectionError);
    expect(() => encodeContentHeaderPayload(60, -1, {})).to.throw(ConnectionError);
  });
});
