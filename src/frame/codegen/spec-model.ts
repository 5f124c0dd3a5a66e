/**
 * The AMQP 0-9-1 spec as the generator sees it: classes, methods and fields with domains resolved
 * to wire types, plus the methods RabbitMQ 3.10's framing knows that the XML lacks.
 */
import { parseXml, type XmlElement } from './xml.js';

export type WireType = 'octet' | 'short' | 'long' | 'longlong' | 'shortstr' | 'longstr' | 'bit' | 'table' | 'timestamp';
const WIRE_TYPES = new Set<string>(['octet', 'short', 'long', 'longlong', 'shortstr', 'longstr', 'bit', 'table', 'timestamp']);

export interface FieldSpec {
  /** spec name, e.g. "routing-key" */
  name: string;
  type: WireType;
  domain: string;
  reserved: boolean;
}

export interface MethodSpec {
  className: string;
  classId: number;
  name: string;
  methodId: number;
  synchronous: boolean;
  content: boolean;
  fields: FieldSpec[];
  /** local names of the response methods, e.g. ["get-ok", "get-empty"] */
  responses: string[];
  /** why the generator added it, when it is not in the XML */
  addedBecause?: string;
}

export interface ClassSpec {
  name: string;
  classId: number;
  methods: MethodSpec[];
  properties: FieldSpec[];
}

interface Extension {
  className: string;
  classId: number;
  /** insert a new class after this one */
  after?: string;
  because: string;
  methods: Array<{
    name: string;
    methodId: number;
    synchronous?: boolean;
    responses?: string[];
    fields: Array<[string, WireType, 'reserved'?]>;
  }>;
}

/** Methods RabbitMQ 3.10's rabbit_framing_amqp_0_9_1 decodes that the stripped XML lacks. */
const EXTENSIONS: Extension[] = [
  {
    className: 'connection',
    classId: 10,
    because: 'RabbitMQ extension: https://www.rabbitmq.com/connection-blocked.html',
    methods: [
      { name: 'blocked', methodId: 60, fields: [['reason', 'shortstr']] },
      { name: 'unblocked', methodId: 61, fields: [] },
    ],
  },
  {
    className: 'connection',
    classId: 10,
    because: 'RabbitMQ extension: connection.update-secret (OAuth 2 token refresh)',
    methods: [
      {
        name: 'update-secret',
        methodId: 70,
        synchronous: true,
        responses: ['update-secret-ok'],
        fields: [
          ['new-secret', 'longstr'],
          ['reason', 'shortstr'],
        ],
      },
      { name: 'update-secret-ok', methodId: 71, synchronous: true, fields: [] },
    ],
  },
  {
    className: 'access',
    classId: 30,
    after: 'channel',
    because: 'AMQP 0-9 access class, still decoded (and answered) by RabbitMQ 3.10',
    methods: [
      {
        name: 'request',
        methodId: 10,
        synchronous: true,
        responses: ['request-ok'],
        fields: [
          ['realm', 'shortstr'],
          ['exclusive', 'bit'],
          ['passive', 'bit'],
          ['active', 'bit'],
          ['write', 'bit'],
          ['read', 'bit'],
        ],
      },
      { name: 'request-ok', methodId: 11, synchronous: true, fields: [['reserved-1', 'short', 'reserved']] },
    ],
  },
  {
    className: 'basic',
    classId: 60,
    because: 'RabbitMQ extension (credit flow for AMQP 1.0 links), decoded by RabbitMQ 3.10',
    methods: [
      {
        name: 'credit',
        methodId: 200,
        synchronous: true,
        responses: ['credit-ok'],
        fields: [
          ['consumer-tag', 'shortstr'],
          ['credit', 'long'],
          ['drain', 'bit'],
        ],
      },
      { name: 'credit-ok', methodId: 201, synchronous: true, fields: [['available', 'long']] },
      {
        name: 'credit-drained',
        methodId: 202,
        fields: [
          ['consumer-tag', 'shortstr'],
          ['credit-drained', 'long'],
        ],
      },
    ],
  },
];

function children(el: XmlElement, name: string): XmlElement[] {
  return el.children.filter((c) => c.name === name);
}

function attr(el: XmlElement, name: string): string {
  const v = el.attrs[name];
  if (v === undefined) throw new Error(`<${el.name}> lacks ${name}`);
  return v;
}

export function loadSpec(specXml: string): ClassSpec[] {
  const doc = parseXml(specXml);
  const amqp = children(doc, 'amqp')[0];
  if (!amqp) throw new Error('no <amqp> element');
  const domains = new Map<string, string>();
  for (const d of children(amqp, 'domain')) domains.set(attr(d, 'name'), attr(d, 'type'));
  const resolve = (domain: string): WireType => {
    let t = domain;
    for (let i = 0; i < 10 && !WIRE_TYPES.has(t); i++) {
      const next = domains.get(t);
      if (next === undefined) throw new Error(`unknown domain ${t}`);
      if (next === t && !WIRE_TYPES.has(t)) throw new Error(`domain ${t} is not a wire type`);
      t = next;
    }
    if (!WIRE_TYPES.has(t)) throw new Error(`cannot resolve domain ${domain}`);
    return t as WireType;
  };
  const field = (f: XmlElement): FieldSpec => {
    const domain = f.attrs['domain'] ?? f.attrs['type'];
    if (!domain) throw new Error(`field ${f.attrs['name']} has no domain or type`);
    return { name: attr(f, 'name'), type: resolve(domain), domain, reserved: f.attrs['reserved'] === '1' };
  };

  const classes: ClassSpec[] = children(amqp, 'class').map((c) => {
    const name = attr(c, 'name');
    const classId = Number(attr(c, 'index'));
    return {
      name,
      classId,
      properties: children(c, 'field').map(field),
      methods: children(c, 'method').map((m) => ({
        className: name,
        classId,
        name: attr(m, 'name'),
        methodId: Number(attr(m, 'index')),
        synchronous: m.attrs['synchronous'] === '1',
        content: m.attrs['content'] === '1',
        fields: children(m, 'field').map(field),
        responses: children(m, 'response').map((r) => attr(r, 'name')),
      })),
    };
  });

  for (const ext of EXTENSIONS) {
    let cls = classes.find((c) => c.name === ext.className);
    if (!cls) {
      cls = { name: ext.className, classId: ext.classId, methods: [], properties: [] };
      const at = ext.after ? classes.findIndex((c) => c.name === ext.after) + 1 : classes.length;
      classes.splice(at, 0, cls);
    }
    for (const m of ext.methods) {
      if (cls.methods.some((x) => x.methodId === m.methodId)) continue; // the XML has it after all
      cls.methods.push({
        className: cls.name,
        classId: cls.classId,
        name: m.name,
        methodId: m.methodId,
        synchronous: m.synchronous ?? false,
        content: false,
        fields: m.fields.map(([n, t, r]) => ({ name: n, type: t, domain: t, reserved: r === 'reserved' })),
        responses: m.responses ?? [],
        addedBecause: ext.because,
      });
    }
  }
  return classes;
}
