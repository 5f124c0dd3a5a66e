/**
 * Generates src/frame/generated/{methods,properties}.ts from the spec XML (npm run gen).
 *
 * The output is deterministic; test/frame/codegen.test.ts fails when the committed files differ
 * from what this produces. Decoders follow RabbitMQ 3.10's generated rabbit_framing_amqp_0_9_1:
 * the argument bytes must match the method's layout exactly (no short or trailing bytes) or it is
 * "FRAME_ERROR - cannot decode <<...>>"; then, field by field in order, tables are parsed and the
 * shortstrs of methods without content are checked for UTF-8.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSpec, type ClassSpec, type FieldSpec, type MethodSpec, type WireType } from './spec-model.js';

const HEADER = '// GENERATED — DO NOT EDIT (npm run gen)';

const camel = (s: string): string => s.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const pascal = (s: string): string => camel(s).replace(/^[a-z]/, (c) => c.toUpperCase());
const hex8 = (n: number): string => '0x' + n.toString(16).padStart(8, '0');

const fullName = (m: MethodSpec): string => `${m.className}.${m.name}`;
const typeName = (m: MethodSpec): string => `${pascal(m.className)}${pascal(m.name)}Args`;
const fnSuffix = (m: MethodSpec): string => `${pascal(m.className)}${pascal(m.name)}`;

const TS_TYPE: Record<WireType, string> = {
  octet: 'number',
  short: 'number',
  long: 'number',
  longlong: 'number',
  timestamp: 'number',
  shortstr: 'string',
  longstr: 'Buffer',
  bit: 'boolean',
  table: 'FieldTable',
};

const FIXED: Partial<Record<WireType, number>> = { octet: 1, short: 2, long: 4, longlong: 8, timestamp: 8 };

/** Fields grouped as RabbitMQ packs them: runs of up to 8 bits share one octet. */
type Packed = { kind: 'field'; f: FieldSpec; i: number } | { kind: 'bits'; fields: Array<{ f: FieldSpec; i: number }>; i: number };

function pack(fields: FieldSpec[]): Packed[] {
  const out: Packed[] = [];
  let bits: Extract<Packed, { kind: 'bits' }> | undefined;
  fields.forEach((f, i) => {
    if (f.type === 'bit') {
      if (!bits || bits.fields.length === 8) {
        bits = { kind: 'bits', fields: [], i };
        out.push(bits);
      }
      bits.fields.push({ f, i });
    } else {
      bits = undefined;
      out.push({ kind: 'field', f, i });
    }
  });
  return out;
}

function docComment(m: MethodSpec): string {
  const lines = [`${fullName(m)} (${m.classId}.${m.methodId})`];
  const flags = [m.synchronous ? 'synchronous' : '', m.content ? 'carries content' : ''].filter(Boolean);
  if (flags.length) lines[0] += ` — ${flags.join(', ')}`;
  if (m.addedBecause) lines.push(`Not in the spec XML: ${m.addedBecause}.`);
  return lines.length === 1 ? `/** ${lines[0]} */` : `/**\n${lines.map((l) => ` * ${l}`).join('\n')}\n */`;
}

// --- methods.ts --------------------------------------------------------------------------------

function genInterface(m: MethodSpec): string {
  const name = typeName(m);
  if (m.fields.length === 0) return `${docComment(m)}\nexport type ${name} = Record<string, never>;`;
  const body = m.fields.map((f) => `  ${camel(f.name)}: ${TS_TYPE[f.type]};`).join('\n');
  return `${docComment(m)}\nexport interface ${name} {\n${body}\n}`;
}

function genDecoder(m: MethodSpec): string {
  const c = m.classId;
  const id = m.methodId;
  const L: string[] = [];
  const fail = `return fail(p, ${c}, ${id});`;
  L.push(`function decode${fnSuffix(m)}(p: Buffer): Method {`);
  const packed = pack(m.fields);
  if (packed.length === 0) {
    L.push(`  if (p.length !== 4) ${fail}`);
  } else {
    L.push('  const n = p.length;');
    L.push('  let o = 4;');
    // Structural pass: group runs of fixed-size items under one bounds check.
    let k = 0;
    while (k < packed.length) {
      const run: Packed[] = [];
      let size = 0;
      while (k < packed.length) {
        const q = packed[k]!;
        const s = q.kind === 'bits' ? 1 : FIXED[q.f.type];
        if (s === undefined) break;
        run.push(q);
        size += s;
        k++;
      }
      if (run.length > 0) {
        L.push(`  if (o + ${size} > n) ${fail}`);
        let off = 0;
        for (const q of run) {
          const at = off === 0 ? 'o' : `o + ${off}`;
          if (q.kind === 'bits') {
            L.push(`  const b${q.i} = p[${at}]!;`);
            off += 1;
          } else {
            const t = q.f.type;
            const read =
              t === 'octet' ? `p[${at}]!` : t === 'short' ? `p.readUInt16BE(${at})` : t === 'long' ? `p.readUInt32BE(${at})` : `readU64(p, ${at})`;
            L.push(`  const v${q.i} = ${read};`);
            off += FIXED[t]!;
          }
        }
        L.push(`  o += ${size};`);
        continue;
      }
      const q = packed[k++]! as Extract<Packed, { kind: 'field' }>;
      const i = q.i;
      if (q.f.type === 'shortstr') {
        L.push(`  if (o + 1 > n) ${fail}`);
        L.push(`  const s${i} = o + 1;`);
        L.push(`  o = s${i} + p[o]!;`);
      } else {
        L.push(`  if (o + 4 > n) ${fail}`);
        L.push(`  const s${i} = o + 4;`);
        L.push(`  o = s${i} + p.readUInt32BE(o);`);
      }
      L.push(`  const e${i} = o;`);
    }
    L.push(`  if (o !== n) ${fail}`);
    // Second pass, in field order, as rabbit_framing_amqp_0_9_1 does after the match.
    for (const q of packed) {
      if (q.kind !== 'field') continue;
      const i = q.i;
      if (q.f.type === 'table') L.push(`  const v${i} = parseTable(p, s${i}, e${i});`);
      if (q.f.type === 'shortstr' && !m.content) L.push(`  if (!isRabbitUtf8(p, s${i}, e${i})) throw malformedUtf8Error();`);
    }
  }
  const args: string[] = [];
  for (const q of packed) {
    if (q.kind === 'bits') {
      q.fields.forEach(({ f }, bit) => args.push(`${camel(f.name)}: (b${q.i} & ${1 << bit}) !== 0`));
    } else {
      const { f, i } = q;
      const v =
        f.type === 'shortstr' ? `p.toString('utf8', s${i}, e${i})` : f.type === 'longstr' ? `p.subarray(s${i}, e${i})` : `v${i}`;
      args.push(`${camel(f.name)}: ${v}`);
    }
  }
  const argsObj = args.length === 0 ? '{}' : `{\n      ${args.join(',\n      ')},\n    }`;
  L.push(`  return {\n    name: '${fullName(m)}',\n    classId: ${c},\n    methodId: ${id},\n    args: ${argsObj},\n  };`);
  L.push('}');
  return L.join('\n');
}

function genEncoder(m: MethodSpec): string {
  const L: string[] = [];
  const a = m.fields.length === 0 ? '_a' : 'a';
  L.push(`function encode${fnSuffix(m)}(ch: number, ${a}: MethodArgsInput<'${fullName(m)}'>): Buffer {`);
  const packed = pack(m.fields);
  let fixed = 4;
  const dyn: string[] = [];
  for (const q of packed) {
    if (q.kind === 'bits') {
      fixed += 1;
      continue;
    }
    const { f, i } = q;
    const v = `a.${camel(f.name)}`;
    switch (f.type) {
      case 'shortstr':
        if (f.domain === 'reply-text') {
          L.push(`  const x${i} = replyTextBytes(${v});`);
          dyn.push(`x${i}.length`);
        } else {
          L.push(`  const l${i} = shortstrLength(${f.reserved ? `${v} ?? ''` : v});`);
          dyn.push(`l${i}`);
        }
        fixed += 1;
        break;
      case 'longstr':
        L.push(`  const x${i} = longstrBytes(${f.reserved ? `${v} ?? ''` : v});`);
        dyn.push(`x${i}.length`);
        fixed += 4;
        break;
      case 'table':
        L.push(`  const t${i} = ${v} ?? EMPTY_TABLE;`);
        L.push(`  const l${i} = tableSize(t${i});`);
        dyn.push(`l${i}`);
        break;
      default:
        fixed += FIXED[f.type]!;
    }
  }
  L.push(`  const size = ${[String(fixed), ...dyn].join(' + ')};`);
  L.push('  const b = Buffer.allocUnsafe(size + 8);');
  L.push('  b[0] = 1;');
  L.push('  b.writeUInt16BE(ch, 1);');
  L.push('  b.writeUInt32BE(size, 3);');
  L.push(`  b.writeUInt32BE(${hex8((m.classId << 16) | m.methodId)}, 7);`);
  if (packed.length > 0) L.push('  let o = 11;');
  for (const q of packed) {
    if (q.kind === 'bits') {
      const expr = q.fields.map(({ f }, bit) => `(a.${camel(f.name)} ? ${1 << bit} : 0)`).join(' | ');
      L.push(`  b[o++] = ${expr};`);
      continue;
    }
    const { f, i } = q;
    const v = f.reserved ? `a.${camel(f.name)} ?? 0` : `a.${camel(f.name)}`;
    switch (f.type) {
      case 'octet':
        L.push(`  b.writeUInt8(${v}, o);`);
        L.push('  o += 1;');
        break;
      case 'short':
        L.push(`  b.writeUInt16BE(${v}, o);`);
        L.push('  o += 2;');
        break;
      case 'long':
        L.push(`  b.writeUInt32BE(${v}, o);`);
        L.push('  o += 4;');
        break;
      case 'longlong':
      case 'timestamp':
        L.push(`  writeU64(b, o, ${v});`);
        L.push('  o += 8;');
        break;
      case 'shortstr':
        if (f.domain === 'reply-text') {
          L.push(`  b[o] = x${i}.length;`);
          L.push(`  o = writeBytes(b, o + 1, x${i});`);
        } else {
          L.push(`  o = writeShortstr(b, o, ${f.reserved ? `a.${camel(f.name)} ?? ''` : `a.${camel(f.name)}`}, l${i});`);
        }
        break;
      case 'longstr':
        L.push(`  b.writeUInt32BE(x${i}.length, o);`);
        L.push(`  o = writeBytes(b, o + 4, x${i});`);
        break;
      case 'table':
        L.push(`  o = writeTable(b, o, t${i});`);
        break;
      case 'bit':
        break;
    }
  }
  L.push(`  b[${packed.length > 0 ? 'o' : '11'}] = 0xce;`);
  L.push('  return b;');
  L.push('}');
  return L.join('\n');
}

function genMethods(classes: ClassSpec[]): string {
  const methods = classes.flatMap((c) => c.methods);
  const out: string[] = [];
  out.push(HEADER);
  out.push(`/**
 * AMQP 0-9-1 methods: argument types, decoders and encoders, generated from
 * spec/amqp0-9-1.stripped.extended.xml by src/frame/codegen/generate.ts.
 */
import type { FieldTable } from '../field-table.js';
import { parseTable, tableSize, writeTable, wrapRange } from '../field-table.js';
import { cannotDecodeError, malformedUtf8Error, unknownFrameError, unknownMethodCrash } from '../frame-errors.js';
import {
  isRabbitUtf8,
  longstrBytes,
  readU64,
  replyTextBytes,
  shortstrLength,
  writeBytes,
  writeShortstr,
  writeU64,
} from '../wire.js';`);
  for (const m of methods) out.push(genInterface(m));
  out.push(
    `export interface MethodArgsByName {\n${methods.map((m) => `  '${fullName(m)}': ${typeName(m)};`).join('\n')}\n}`,
  );
  out.push(`export type MethodName = keyof MethodArgsByName;

export type Method = {
  [N in MethodName]: { name: N; classId: number; methodId: number; args: MethodArgsByName[N] };
}[MethodName];

/** Fields an encoder fills in when left out: reserved ones (0 or '') and method arguments ({}). */
type DefaultedKey = 'reserved1' | 'reserved2' | 'arguments';
type Widen<T> = T extends Buffer ? Buffer | string : T;

/** What encoders accept: longstrs may be strings, reserved fields and arguments may be left out. */
export type MethodArgsInput<N extends MethodName> = {
  [K in keyof MethodArgsByName[N] as K extends DefaultedKey ? never : K]: Widen<MethodArgsByName[N][K]>;
} & {
  [K in keyof MethodArgsByName[N] as K extends DefaultedKey ? K : never]?: Widen<MethodArgsByName[N][K]>;
};

export interface MethodInfo {
  classId: number;
  methodId: number;
  hasContent: boolean;
  synchronous: boolean;
  responses: MethodName[];
}`);
  const info = methods.map((m) => {
    const responses = m.responses.map((r) => `'${m.className}.${r}'`).join(', ');
    return `  '${fullName(m)}': { classId: ${m.classId}, methodId: ${m.methodId}, hasContent: ${m.content}, synchronous: ${m.synchronous}, responses: [${responses}] },`;
  });
  out.push(`export const METHODS: Record<MethodName, MethodInfo> = {\n${info.join('\n')}\n};`);
  out.push(`const NAMES = new Map<number, MethodName>(
  (Object.keys(METHODS) as MethodName[]).map((n) => [METHODS[n].classId * 0x10000 + METHODS[n].methodId, n]),
);

/** The dotted spec name of a class/method id pair, e.g. (60, 40) → 'basic.publish'. */
export function methodNameOf(classId: number, methodId: number): MethodName | undefined {
  return NAMES.get(classId * 0x10000 + methodId);
}

const EMPTY_TABLE: FieldTable = Object.freeze(Object.create(null) as FieldTable);

function fail(p: Buffer, classId: number, methodId: number): never {
  throw cannotDecodeError(p.subarray(4), classId, methodId);
}`);
  for (const m of methods) out.push(genDecoder(m));
  const cases = methods.map((m) => `    case ${hex8((m.classId << 16) | m.methodId)}:\n      return decode${fnSuffix(m)}(p);`);
  out.push(`/**
 * Decodes a method frame's payload (class-id, method-id, arguments). Longstrs are zero-copy views
 * of \`payload\`. Throws, as RabbitMQ 3.10 answers: an unknown class/method → AbruptClose (its
 * reader crashes); arguments of the wrong length → 501 "cannot decode <<...>>" naming the method;
 * a bad UTF-8 shortstr → 501 "Malformed UTF-8 in shortstr"; an unparseable table → AbruptClose.
 */
export function decodeMethod(payload: Buffer): Method {
  const p = payload;
  if (p.length < 4) throw unknownFrameError(1, p);
  switch (p.readUInt32BE(0)) {
${cases.join('\n')}
    default:
      throw unknownMethodCrash(p.readUInt16BE(0), p.readUInt16BE(2));
  }
}`);
  for (const m of methods) out.push(genEncoder(m));
  const encs = methods.map((m) => `  '${fullName(m)}': encode${fnSuffix(m)},`);
  out.push(`const ENCODERS: { [N in MethodName]: (ch: number, a: MethodArgsInput<N>) => Buffer } = {
${encs.join('\n')}
};

/**
 * A complete method frame (type 1, channel, size, payload, frame-end), sized first and allocated
 * once. A reply-text longer than 255 octets is cut to 252 + "..." as RabbitMQ does; any other
 * value the wire cannot carry throws a 541 ConnectionError (a broker bug).
 */
export function encodeMethodFrame<N extends MethodName>(channel: number, name: N, args: MethodArgsInput<N>): Buffer {
  const enc = ENCODERS[name] as (ch: number, a: MethodArgsInput<N>) => Buffer;
  return wrapRange(() => enc(channel, args));
}`);
  return out.join('\n\n') + '\n';
}

// --- properties.ts -----------------------------------------------------------------------------

function propName(f: FieldSpec): string {
  return f.name === 'reserved' ? 'clusterId' : camel(f.name);
}

function genProperties(classes: ClassSpec[]): string {
  const basic = classes.find((c) => c.name === 'basic');
  if (!basic) throw new Error('no basic class');
  const props = basic.properties;
  if (props.length > 15) throw new Error('more than 15 properties needs flag continuation');
  const out: string[] = [];
  out.push(HEADER);
  out.push(`/**
 * basic content properties and content headers (spec 4.2.6.1), generated from
 * spec/amqp0-9-1.stripped.extended.xml by src/frame/codegen/generate.ts.
 */
import type { FieldTable } from '../field-table.js';
import { AbruptClose } from '../frame-errors.js';
import { parseTable, tableSize, writeTable, wrapRange } from '../field-table.js';
import { propertiesCrash, unknownFrameError } from '../frame-errors.js';
import { readU64, shortstrLength, writeShortstr, writeU64 } from '../wire.js';`);
  const fields = props.map((f) => `  ${propName(f)}?: ${TS_TYPE[f.type]};`).join('\n');
  out.push(`export interface BasicProperties {\n${fields}\n}

export interface ContentHeader {
  classId: number;
  weight: number;
  bodySize: number;
  properties: BasicProperties;
}`);
  const flagList = props.map((f, i) => `  ${propName(f)}: ${hex4(0x8000 >> i)},`).join('\n');
  out.push(`/** Property flag bits (the first property is the most significant bit). */
export const PROPERTY_FLAGS: Record<keyof BasicProperties, number> = {\n${flagList}\n};`);

  // decoder
  const D: string[] = [];
  D.push(`/**
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
  let o = 14;`);
  for (const f of props) {
    const name = propName(f);
    const flag = hex4(PROPERTY_FLAG(props, f));
    D.push(`  if (flags & ${flag}) {`);
    switch (f.type) {
      case 'shortstr':
        D.push('    if (o + 1 > n) throw propertiesCrash();');
        D.push('    const s = o + 1;');
        D.push('    o = s + p[o]!;');
        D.push('    if (o > n) throw propertiesCrash();');
        D.push(`    properties.${name} = p.toString('utf8', s, o);`);
        break;
      case 'table':
        D.push('    if (o + 4 > n) throw propertiesCrash();');
        D.push('    const s = o + 4;');
        D.push('    o = s + p.readUInt32BE(o);');
        D.push('    if (o > n) throw propertiesCrash();');
        D.push(`    properties.${name} = propertiesTable(p, s, o);`);
        break;
      case 'octet':
        D.push('    if (o + 1 > n) throw propertiesCrash();');
        D.push(`    properties.${name} = p[o]!;`);
        D.push('    o += 1;');
        break;
      case 'timestamp':
      case 'longlong':
        D.push('    if (o + 8 > n) throw propertiesCrash();');
        D.push(`    properties.${name} = readU64(p, o);`);
        D.push('    o += 8;');
        break;
      default:
        throw new Error(`property type ${f.type} not supported`);
    }
    D.push('  }');
  }
  D.push(`  if (o !== n) throw propertiesCrash();
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
}`);
  out.push(D.join('\n'));

  // encoder
  const E: string[] = [];
  E.push(`function encodeHeader(framed: boolean, channel: number, classId: number, bodySize: number, props: BasicProperties): Buffer {
  let flags = 0;
  let size = 14;`);
  props.forEach((f, i) => {
    const name = propName(f);
    const flag = hex4(0x8000 >> i);
    const v = `props.${name}`;
    switch (f.type) {
      case 'shortstr':
        E.push(`  const l${i} = ${v} == null ? -1 : shortstrLength(${v});`);
        E.push(`  if (l${i} >= 0) {\n    flags |= ${flag};\n    size += 1 + l${i};\n  }`);
        break;
      case 'table':
        E.push(`  const l${i} = ${v} == null ? -1 : tableSize(${v});`);
        E.push(`  if (l${i} >= 0) {\n    flags |= ${flag};\n    size += l${i};\n  }`);
        break;
      case 'octet':
        E.push(`  if (${v} != null) {\n    flags |= ${flag};\n    size += 1;\n  }`);
        break;
      default:
        E.push(`  if (${v} != null) {\n    flags |= ${flag};\n    size += 8;\n  }`);
    }
  });
  E.push(`  const base = framed ? 7 : 0;
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
  let o = base + 14;`);
  props.forEach((f, i) => {
    const name = propName(f);
    const v = `props.${name}`;
    switch (f.type) {
      case 'shortstr':
        E.push(`  if (l${i} >= 0) o = writeShortstr(b, o, ${v}!, l${i});`);
        break;
      case 'table':
        E.push(`  if (l${i} >= 0) o = writeTable(b, o, ${v}!);`);
        break;
      case 'octet':
        E.push(`  if (${v} != null) {\n    b.writeUInt8(${v}, o);\n    o += 1;\n  }`);
        break;
      default:
        E.push(`  if (${v} != null) {\n    writeU64(b, o, ${v});\n    o += 8;\n  }`);
    }
  });
  E.push(`  return b;
}

/** A content header payload (class-id, weight 0, body-size, flags, properties), allocated once. */
export function encodeContentHeaderPayload(classId: number, bodySize: number, props: BasicProperties): Buffer {
  return wrapRange(() => encodeHeader(false, 0, classId, bodySize, props));
}

/** A complete content header frame (type 2), allocated once. */
export function encodeContentHeaderFrame(channel: number, classId: number, bodySize: number, props: BasicProperties): Buffer {
  return wrapRange(() => encodeHeader(true, channel, classId, bodySize, props));
}`);
  out.push(E.join('\n'));
  return out.join('\n\n') + '\n';
}

const hex4 = (n: number): string => '0x' + n.toString(16).padStart(4, '0');
function PROPERTY_FLAG(props: FieldSpec[], f: FieldSpec): number {
  return 0x8000 >> props.indexOf(f);
}

/** file name (relative to src/frame/generated) → content */
export function generate(specXml: string): Map<string, string> {
  const classes = loadSpec(specXml);
  return new Map([
    ['methods.ts', genMethods(classes)],
    ['properties.ts', genProperties(classes)],
  ]);
}

export const SPEC_PATH = 'spec/amqp0-9-1.stripped.extended.xml';

function main(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const outDir = join(root, 'src', 'frame', 'generated');
  mkdirSync(outDir, { recursive: true });
  for (const [name, content] of generate(readFileSync(join(root, SPEC_PATH), 'utf8'))) {
    writeFileSync(join(outDir, name), content);
    console.log(`wrote src/frame/generated/${name}`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) main();
