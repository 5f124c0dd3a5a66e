import { expect } from 'chai';
import { ConnectionError } from '../../src/errors.js';
import {
  copyTable,
  decodeFieldValue,
  decodeTable,
  encodeTable,
  F,
  fromJS,
  MAX_DEPTH,
  tableFromJS,
  tableSize,
  tableToJS,
  toJS,
  writeTable,
  type FieldTable,
  type FieldValue,
} from '../../src/frame/field-table.js';
import { AbruptClose } from '../../src/frame/frame-errors.js';
import { rng, mutate } from './helpers.js';

/** One value of every tag RabbitMQ knows (errata: t b B s u I i l f d D S A T F V x). */
export function everyType(): FieldTable {
  return {
    bool: F.bool(true),
    no: F.bool(false),
    int8: F.int8(-128),
    uint8: F.uint8(255),
    int16: F.int16(-32768),
    uint16: F.uint16(65535),
    int32: F.int32(-2147483648),
    uint32: F.uint32(4294967295),
    int64: F.int64(-(2n ** 63n)),
    int64max: F.int64(2n ** 63n - 1n),
    float: F.float(1.5),
    double: F.double(-2.25e300),
    decimal: F.decimal(2, 4294967295),
    str: F.str('héllo'),
    raw: F.str(Buffer.from([0xff, 0xfe, 0])),
    array: F.array([F.int32(1), F.str('two'), F.array([F.void(), F.bool(true)]), F.table({ k: F.uint8(3) })]),
    timestamp: F.timestamp(1700000000),
    table: F.table({ nested: F.table({ deeper: F.str('x') }), empty: F.table({}) }),
    void: F.void(),
    bytes: F.bytes(Buffer.from([1, 2, 3])),
    '': F.str('empty key'),
    'ключ': F.int8(1),
  };
}

function roundTrip(t: FieldTable): FieldTable {
  const buf = encodeTable(t);
  expect(buf.length).to.equal(tableSize(t));
  const { table, offset } = decodeTable(buf, 0);
  expect(offset).to.equal(buf.length);
  return table;
}

function plain(t: FieldTable): unknown {
  // Compare structurally (decoded tables have no prototype).
  return JSON.parse(JSON.stringify(t, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : Buffer.isBuffer(v) ? v.toString('hex') : v)));
}

describe('field-table (spec 4.2.5.5, RabbitMQ errata field types)', () => {
  it('round-trips every field type tag with its wire type kept', () => {
    const t = everyType();
    const back = roundTrip(t);
    expect(plain(back)).to.deep.equal(plain(t));
    expect(back['uint32']).to.deep.equal({ type: 'i', value: 4294967295 });
    expect(back['int64']!.type).to.equal('l');
    expect(Buffer.compare(encodeTable(back), encodeTable(t))).to.equal(0);
  });

  it('round-trips each tag alone, in a table and in an array', () => {
    for (const [k, v] of Object.entries(everyType())) {
      expect(plain(roundTrip({ [k]: v }))).to.deep.equal(plain({ [k]: v }));
      expect(plain(roundTrip({ a: F.array([v, v]) }))).to.deep.equal(plain({ a: F.array([v, v]) }));
    }
  });

  it('decodes longstr and byte-array values as zero-copy views', () => {
    const buf = encodeTable({ s: F.str('abc'), x: F.bytes('def') });
    const { table } = decodeTable(buf, 0);
    expect((table['s']!.value as Buffer).buffer).to.equal(buf.buffer);
    expect((table['x']!.value as Buffer).buffer).to.equal(buf.buffer);
  });

  it('reads at an offset and returns the offset after the table', () => {
    const t = encodeTable({ a: F.int8(1) });
    const buf = Buffer.concat([Buffer.from([9, 9, 9]), t, Buffer.from([7])]);
    const r = decodeTable(buf, 3);
    expect(r.offset).to.equal(3 + t.length);
    expect(r.table['a']).to.deep.equal({ type: 'b', value: 1 });
    const w = Buffer.alloc(t.length + 2);
    expect(writeTable(w, 2, { a: F.int8(1) })).to.equal(w.length);
    expect(w.subarray(2)).to.deep.equal(t);
  });

  it("reads 'L' as a signed 64-bit long, as rabbit_binary_parser does", () => {
    const buf = Buffer.from([0, 0, 0, 11, 1, 0x6b, 0x4c, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]);
    expect(decodeTable(buf, 0).table['k']).to.deep.equal({ type: 'l', value: -2n });
  });

  it('encodes keys and short strings octet for octet as Buffer does: ASCII, UTF-8 and the 255-octet key limit', () => {
    const table: FieldTable = { clé: F.str('v'), 'ключ-ü': F.str('wert-ß'), ['k'.repeat(255)]: F.str('x'.repeat(70)), e: F.str('') };
    const buf = encodeTable(table);
    expect(buf.length).to.equal(tableSize(table));
    // The key's length octet counts UTF-8 octets, not UTF-16 units.
    expect(buf.indexOf(Buffer.concat([Buffer.from([Buffer.byteLength('clé')]), Buffer.from('clé')]))).to.equal(4);
    expect(toJS({ type: 'F', value: decodeTable(buf, 0).table })).to.deep.equal({ clé: 'v', 'ключ-ü': 'wert-ß', ['k'.repeat(255)]: 'x'.repeat(70), e: '' });
    expect(() => encodeTable({ ['k'.repeat(256)]: F.str('v') })).to.throw(/longer than 255 bytes/);
    expect(() => encodeTable({ ['é'.repeat(128)]: F.str('v') })).to.throw(/longer than 255 bytes/);
  });

  it('keeps a __proto__ key as data', () => {
    const buf = encodeTable(tableFromJS(JSON.parse('{"__proto__": 1}') as Record<string, unknown>));
    const { table } = decodeTable(buf, 0);
    expect(Object.keys(table)).to.deep.equal(['__proto__']);
    expect(Object.keys(copyTable(table))).to.deep.equal(['__proto__']);
    expect(encodeTable(copyTable(table)).equals(buf)).to.equal(true);
    expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
  });

  it('decodes every key to what Buffer#toString gives, however keys share the cache of short keys (2,000 keys, 256 slots; invalid UTF-8 too)', () => {
    const keys: Buffer[] = [];
    for (let i = 0; i < 2000; i++) keys.push(Buffer.from(`k-${i.toString(36)}-${'é'.repeat(i % 4)}`));
    keys.push(Buffer.from([0x6b, 0xff, 0xfe]), Buffer.from([0x6b, 0xc3]), Buffer.alloc(40, 0x61), Buffer.alloc(0));
    for (let round = 0; round < 3; round++) {
      for (const k of keys) {
        const buf = Buffer.concat([Buffer.from([0, 0, 0, k.length + 2, k.length]), k, Buffer.from('V')]);
        expect(Object.keys(decodeTable(buf, 0).table)).to.deep.equal([k.toString('utf8')]);
      }
    }
  });

  it('gives a table only its own keys: nothing inherited answers for an absent header (toString, constructor)', () => {
    const decoded = decodeTable(encodeTable(tableFromJS({ a: 1 })), 0).table;
    for (const t of [decoded, tableFromJS({ a: 1 }), copyTable(decoded)]) {
      expect(t['toString']).to.equal(undefined);
      expect(t['constructor']).to.equal(undefined);
      expect('hasOwnProperty' in t).to.equal(false);
      expect(Object.keys(t)).to.deep.equal(['a']);
    }
  });

  describe('hostile input (RabbitMQ parse_table fails: its reader crashes)', () => {
    const bad = (bytes: number[]): void => {
      const buf = Buffer.from([0, 0, 0, bytes.length, ...bytes]);
      expect(() => decodeTable(buf, 0)).to.throw(AbruptClose);
    };
    it('rejects an unknown tag', () => bad([1, 0x6b, 0x5a]));
    it('rejects a key running past the end', () => bad([5, 0x6b]));
    it('rejects a key with no value', () => bad([1, 0x6b]));
    it('rejects a value running past the end', () => bad([1, 0x6b, 0x49, 0, 0]));
    it('rejects a longstr length past the end', () => bad([1, 0x6b, 0x53, 0, 0, 0, 100, 0x61]));
    it('rejects NaN and Infinity (Erlang floats cannot hold them)', () => {
      bad([1, 0x6b, 0x64, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0]);
      bad([1, 0x6b, 0x66, 0x7f, 0x80, 0, 0]);
    });
    it('rejects a table length past the buffer', () => {
      expect(() => decodeTable(Buffer.from([0, 0, 1, 0, 1]), 0)).to.throw(AbruptClose);
      expect(() => decodeTable(Buffer.from([0, 0]), 0)).to.throw(AbruptClose);
    });
    it(`rejects nesting deeper than ${MAX_DEPTH} levels without overflowing the stack`, () => {
      let inner = Buffer.alloc(0);
      for (let i = 0; i < MAX_DEPTH + 5; i++) {
        const len = Buffer.alloc(4);
        len.writeUInt32BE(inner.length);
        inner = Buffer.concat([Buffer.from([1, 0x6b, 0x46]), len, inner]);
      }
      const len = Buffer.alloc(4);
      len.writeUInt32BE(inner.length);
      expect(() => decodeTable(Buffer.concat([len, inner]), 0)).to.throw(AbruptClose);
    });
    it('accepts nesting of MAX_DEPTH levels', () => {
      let t: FieldTable = { leaf: F.bool(true) };
      for (let i = 0; i < MAX_DEPTH; i++) t = { k: F.table(t) };
      expect(() => roundTrip(t)).not.to.throw();
    });

    it('only ever throws ConnectionError on random truncation and mutation (fuzz)', () => {
      const r = rng(1);
      const good = encodeTable(everyType());
      let threw = 0;
      for (let i = 0; i < 5000; i++) {
        const buf = mutate(good, r);
        try {
          decodeTable(buf, 0);
        } catch (e) {
          expect(e).to.be.instanceOf(ConnectionError);
          threw++;
        }
      }
      expect(threw).to.be.greaterThan(100);
    });
  });

  describe('builders and plain JS', () => {
    it('toJS gives plain values', () => {
      const js = tableToJS(everyType());
      expect(js['str']).to.equal('héllo');
      expect(js['int64']).to.equal(-(2n ** 63n));
      expect(js['uint32']).to.equal(4294967295);
      expect(js['decimal']).to.deep.equal({ places: 2, digits: 4294967295 });
      expect(js['void']).to.equal(null);
      expect(js['bytes']).to.deep.equal(Buffer.from([1, 2, 3]));
      expect(js['array']).to.deep.equal([1, 'two', [null, true], { k: 3 }]);
      expect(toJS(F.int64(5))).to.equal(5);
      expect(toJS(F.timestamp(7))).to.equal(7);
    });

    it('fromJS infers types as amqplib 2.x does', () => {
      const cases: Array<[unknown, FieldValue['type']]> = [
        ['s', 'S'], [true, 't'], [0, 'b'], [-128, 'b'], [127, 'b'], [128, 's'], [-32768, 's'], [32768, 'I'],
        [2147483647, 'I'], [2147483648, 'l'], [-2147483649, 'l'], [1.5, 'd'], [2 ** 51 + 0.5, 'l'], [2 ** 64, 'd'],
        [null, 'V'], [undefined, 'V'], [Buffer.from('x'), 'x'], [[1], 'A'], [{ a: 1 }, 'F'], [5n, 'l'],
      ];
      for (const [v, type] of cases) expect(fromJS(v).type, String(v)).to.equal(type);
    });

    it("fromJS honours the explicit {'!': type, value} form", () => {
      expect(fromJS({ '!': 'timestamp', value: 10 })).to.deep.equal({ type: 'T', value: 10 });
      expect(fromJS({ '!': 'decimal', value: { places: 1, digits: 5 } })).to.deep.equal({ type: 'D', value: { places: 1, digits: 5 } });
      expect(fromJS({ '!': 'float', value: 1 })).to.deep.equal({ type: 'f', value: 1 });
      expect(fromJS({ '!': 'uint32', value: 1 })).to.deep.equal({ type: 'i', value: 1 });
      expect(fromJS({ '!': 'long', value: 1 })).to.deep.equal({ type: 'l', value: 1n });
      expect(() => fromJS({ '!': 'nonsense', value: 1 })).to.throw(ConnectionError);
    });

    it('tableFromJS leaves out undefined members and round-trips', () => {
      const t = tableFromJS({ a: 'x', b: undefined, c: { d: [1, 'e'] } });
      expect(Object.keys(t)).to.deep.equal(['a', 'c']);
      expect(tableToJS(roundTrip(t))).to.deep.equal({ a: 'x', c: { d: [1, 'e'] } });
    });

    it('decodeFieldValue decodes one tagged value', () => {
      expect(decodeFieldValue(Buffer.from([0x73, 0xff, 0xfe]), 0)).to.deep.equal({ value: { type: 's', value: -2 }, offset: 3 });
    });

    it('reports unencodable values as ConnectionError (541), not RangeError', () => {
      expect(() => encodeTable({ a: F.int8(1000) })).to.throw(ConnectionError);
      expect(() => encodeTable({ ['k'.repeat(256)]: F.void() })).to.throw(ConnectionError);
    });
  });
});
