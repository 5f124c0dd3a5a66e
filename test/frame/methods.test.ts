import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { ConnectionError, ReplyCode } from '../../src/errors.js';
import { loadSpec, type MethodSpec } from '../../src/frame/codegen/spec-model.js';
import { encodeTable, type FieldTable } from '../../src/frame/field-table.js';
import { AbruptClose } from '../../src/frame/frame-errors.js';
import {
  decodeMethod,
  encodeMethodFrame,
  METHODS,
  methodNameOf,
  type MethodArgsInput,
  type MethodName,
} from '../../src/frame/generated/methods.js';
import { camel, sampleArgs } from '../support/random-methods.js';
import { int, mutate, rng } from './helpers.js';

const SPEC = loadSpec(readFileSync('spec/amqp0-9-1.stripped.extended.xml', 'utf8'));
const ALL: MethodSpec[] = SPEC.flatMap((c) => c.methods);

/** JSON-comparable form: Buffers as hex, tables as their encoding. */
function norm(args: Record<string, unknown>, m: MethodSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of m.fields) {
    const v = args[camel(f.name)];
    if (f.type === 'table') out[camel(f.name)] = encodeTable(v as FieldTable).toString('hex');
    else if (f.type === 'longstr') out[camel(f.name)] = Buffer.from(v as Buffer | string).toString('hex');
    else out[camel(f.name)] = v;
  }
  return out;
}

const fullName = (m: MethodSpec): MethodName => `${m.className}.${m.name}` as MethodName;
const encode = (ch: number, name: MethodName, args: Record<string, unknown>): Buffer =>
  encodeMethodFrame(ch, name, args as unknown as MethodArgsInput<MethodName>);

/** A method frame's payload built by hand: class, method, raw argument bytes. */
function payload(classId: number, methodId: number, ...args: Array<number[] | Buffer>): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(classId, 0);
  head.writeUInt16BE(methodId, 2);
  return Buffer.concat([head, ...args.map((a) => Buffer.from(a))]);
}
const sstr = (b: number[] | string): Buffer => {
  const d = typeof b === 'string' ? Buffer.from(b) : Buffer.from(b);
  return Buffer.concat([Buffer.from([d.length]), d]);
};

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('did not throw');
}

describe('methods (generated codec, spec 4.2.4 method frames)', () => {
  it('knows every method of the spec plus RabbitMQ 3.10 extensions', () => {
    expect(Object.keys(METHODS)).to.have.length(ALL.length);
    for (const name of ['connection.blocked', 'connection.unblocked', 'connection.update-secret', 'connection.update-secret-ok', 'access.request', 'basic.credit'] as const) {
      expect(METHODS[name], name).to.exist;
    }
    expect(METHODS['basic.publish']).to.deep.equal({ classId: 60, methodId: 40, hasContent: true, synchronous: false, responses: [] });
    expect(METHODS['basic.get'].responses).to.deep.equal(['basic.get-ok', 'basic.get-empty']);
    expect(METHODS['connection.update-secret']).to.include({ classId: 10, methodId: 70, synchronous: true });
    expect(methodNameOf(40, 51)).to.equal('exchange.unbind-ok');
    expect(methodNameOf(10, 60)).to.equal('connection.blocked');
    expect(methodNameOf(99, 1)).to.equal(undefined);
  });

  for (const m of ALL) {
    it(`round-trips ${fullName(m)} (${m.classId}.${m.methodId}) through encodeMethodFrame/decodeMethod`, () => {
      const r = rng(m.classId * 1000 + m.methodId);
      for (const mode of ['min', 'max', 'random', 'random', 'random'] as const) {
        const args = sampleArgs(m, r, mode);
        const ch = int(r, 65536);
        const frame = encode(ch, fullName(m), args);
        expect(frame[0]).to.equal(1);
        expect(frame.readUInt16BE(1)).to.equal(ch);
        expect(frame.readUInt32BE(3)).to.equal(frame.length - 8);
        expect(frame[frame.length - 1]).to.equal(0xce);
        const decoded = decodeMethod(frame.subarray(7, frame.length - 1));
        expect(decoded.name).to.equal(fullName(m));
        expect([decoded.classId, decoded.methodId]).to.deep.equal([m.classId, m.methodId]);
        expect(norm(decoded.args as Record<string, unknown>, m)).to.deep.equal(norm(args, m));
      }
    });
  }

  it('packs consecutive bits into one octet (spec 4.2.5.2)', () => {
    const f = encodeMethodFrame(1, 'queue.declare', {
      queue: 'q', passive: true, durable: false, exclusive: true, autoDelete: false, noWait: true, arguments: {},
    });
    expect(f.subarray(7, f.length - 1)).to.deep.equal(payload(50, 10, [0, 0], sstr('q'), [0b10101], [0, 0, 0, 0]));
  });

  it('fills in reserved fields and empty arguments when left out', () => {
    const f = encodeMethodFrame(1, 'queue.declare', { queue: '', passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false });
    expect(f.subarray(7, f.length - 1)).to.deep.equal(payload(50, 10, [0, 0, 0, 0, 0, 0, 0, 0]));
  });

  it('accepts longstrs as strings and decodes them as zero-copy Buffers', () => {
    const f = encodeMethodFrame(0, 'connection.secure-ok', { response: '\u0000guest\u0000guest' });
    const p = f.subarray(7, f.length - 1);
    const m = decodeMethod(p);
    if (m.name !== 'connection.secure-ok') throw new Error(m.name);
    expect(m.args.response.toString()).to.equal('\u0000guest\u0000guest');
    expect(m.args.response.buffer).to.equal(f.buffer);
  });

  it("cuts a reply-text over 255 octets to 252 + '...' as RabbitMQ does", () => {
    const f = encodeMethodFrame(0, 'connection.close', { replyCode: 501, replyText: 'x'.repeat(300), classId: 0, methodId: 0 });
    const m = decodeMethod(f.subarray(7, f.length - 1));
    if (m.name !== 'connection.close') throw new Error(m.name);
    expect(m.args.replyText).to.equal('x'.repeat(252) + '...');
  });

  describe('decode errors, as RabbitMQ 3.10.8 answers them', () => {
    it("answers arguments too short with 501 'cannot decode <<...>>' naming the method", () => {
      const e = thrown(() => decodeMethod(payload(60, 10, [0, 0, 0, 0, 0]))) as ConnectionError;
      expect(e).to.be.instanceOf(ConnectionError);
      expect(e.replyCode).to.equal(ReplyCode.FRAME_ERROR);
      expect(e.replyText).to.equal('FRAME_ERROR - cannot decode <<0,0,0,0,0>>');
      expect([e.classId, e.methodId]).to.deep.equal([60, 10]);
    });

    it('answers trailing bytes the same way (the argument layout must match exactly)', () => {
      const e = thrown(() => decodeMethod(payload(60, 80, [0, 0, 0, 0, 0, 0, 0, 0, 0, 7]))) as ConnectionError;
      expect(e.replyText).to.equal('FRAME_ERROR - cannot decode <<0,0,0,0,0,0,0,0,0,7>>');
      const e2 = thrown(() => decodeMethod(payload(90, 10, [1]))) as ConnectionError;
      expect(e2.replyText).to.equal('FRAME_ERROR - cannot decode <<1>>');
      expect([e2.classId, e2.methodId]).to.deep.equal([90, 10]);
    });

    it('cuts a long argument dump (the reply-text is cut to 255 octets when sent)', () => {
      const e = thrown(() => decodeMethod(payload(60, 80, Buffer.alloc(310, 7)))) as ConnectionError;
      const f = encodeMethodFrame(0, 'connection.close', { replyCode: e.replyCode, replyText: e.replyText, classId: 60, methodId: 80 });
      const m = decodeMethod(f.subarray(7, f.length - 1));
      if (m.name !== 'connection.close') throw new Error(m.name);
      expect(m.args.replyText).to.have.length(255);
      expect(m.args.replyText.startsWith('FRAME_ERROR - cannot decode <<7,7,7,')).to.equal(true);
      expect(m.args.replyText.endsWith(',7,7,7,...')).to.equal(true);
    });

    it('answers an unknown class or method by crashing the connection (AbruptClose), as RabbitMQ does', () => {
      for (const [c, m] of [[99, 1], [60, 999], [10, 99]] as const) {
        const e = thrown(() => decodeMethod(payload(c, m))) as AbruptClose;
        expect(e).to.be.instanceOf(AbruptClose);
        expect(e).to.be.instanceOf(ConnectionError);
        expect(e.reason).to.equal(`{unknown_method_id,{${c},${m}}}`);
      }
    });

    it('answers a payload under 4 octets as an unknown frame (501)', () => {
      const e = thrown(() => decodeMethod(Buffer.from([0, 60]))) as ConnectionError;
      expect(e.replyText).to.equal('FRAME_ERROR - type 1, all octets = <<0,60>>: unknown_frame');
    });

    it("answers malformed UTF-8 in a shortstr with 501 'Malformed UTF-8 in shortstr' (no method named)", () => {
      for (const bad of [[0xc0, 0x80], [0xe0, 0x80, 0xaf], [0x80], [0xc2], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xff]]) {
        const p = payload(50, 10, [0, 0], sstr([0x78, ...bad]), [8], [0, 0, 0, 0]);
        const e = thrown(() => decodeMethod(p)) as ConnectionError;
        expect(e.replyText, JSON.stringify(bad)).to.equal('FRAME_ERROR - Malformed UTF-8 in shortstr');
        expect([e.classId, e.methodId]).to.deep.equal([0, 0]);
      }
    });

    it("accepts what RabbitMQ's lenient UTF-8 check accepts (surrogates, up to 0x1FFFFF, NUL)", () => {
      for (const ok of [[0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf7, 0xbf, 0xbf, 0xbf], [0xef, 0xbf, 0xbe], [0x61, 0], [0xc2, 0x80]]) {
        expect(decodeMethod(payload(50, 10, [0, 0], sstr(ok), [8], [0, 0, 0, 0])).name).to.equal('queue.declare');
      }
    });

    it('does not check UTF-8 in methods that carry content (basic.publish)', () => {
      const m = decodeMethod(payload(60, 40, [0, 0], sstr([0xff]), sstr([0xc0, 0x80]), [0]));
      expect(m.name).to.equal('basic.publish');
    });

    it('answers an unparseable arguments table with AbruptClose, after checking earlier shortstrs', () => {
      const badTable = [0, 0, 0, 3, 1, 0x6b, 0x5a];
      expect(() => decodeMethod(payload(50, 10, [0, 0], sstr('q'), [0], badTable))).to.throw(AbruptClose);
      const e = thrown(() => decodeMethod(payload(50, 10, [0, 0], sstr([0xc0, 0x80]), [0], badTable))) as ConnectionError;
      expect(e.replyText).to.equal('FRAME_ERROR - Malformed UTF-8 in shortstr');
    });

    it('only ever throws ConnectionError on truncated or mutated frames (fuzz)', () => {
      const r = rng(42);
      let errors = 0;
      for (let i = 0; i < 20000; i++) {
        const m = ALL[int(r, ALL.length)]!;
        const f = encode(1, fullName(m), sampleArgs(m, r, 'random'));
        const p = mutate(f.subarray(7, f.length - 1), r);
        try {
          decodeMethod(p);
        } catch (e) {
          expect(e).to.be.instanceOf(ConnectionError);
          errors++;
        }
      }
      expect(errors).to.be.greaterThan(1000);
    });
  });

  describe('encode errors (broker bugs) are 541 ConnectionErrors, never RangeError', () => {
    it('rejects a shortstr over 255 octets', () => {
      expect(() => encodeMethodFrame(1, 'basic.consume-ok', { consumerTag: 'x'.repeat(256) })).to.throw(ConnectionError);
    });
    it('rejects out-of-range numbers', () => {
      expect(() => encodeMethodFrame(1, 'basic.ack', { deliveryTag: -1, multiple: false })).to.throw(ConnectionError);
      expect(() => encodeMethodFrame(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 70000, global: false })).to.throw(ConnectionError);
      expect(() => encodeMethodFrame(0, 'connection.start', {
        versionMajor: 256, versionMinor: 9, serverProperties: {}, mechanisms: '', locales: '',
      })).to.throw(ConnectionError);
    });
  });
});
