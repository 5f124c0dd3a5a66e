/**
 * A binding's `properties_key`, the path segment naming one binding in
 * /api/bindings/{vhost}/e/{source}/{q|e}/{destination}/{props}, exactly as
 * rabbit_mgmt_format:pack_binding_props/2 builds it: "~" for no key and no arguments, the
 * routing key quote_plus'ed (with "~" as %7E) when there are no arguments, else that, "~" and
 * base64url(<<erlang:phash2(Args, 2^32):32>>), Args being the arguments as RabbitMQ holds them
 * ([{Key, Type, Value}] in the table's order).
 */
import { phash2Range } from '../erlang/phash2.js';
import { fieldTableTerm } from '../frame/field-term.js';
import type { FieldTable } from '../frame/field-table.js';

/** rabbit_http_util:quote_plus over UTF-8 bytes: [A-Za-z0-9.~_-] kept, space as '+', the rest %XX. */
export function quotePlus(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9.\-~_]/.test(c)) out += c;
    else if (byte === 0x20) out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** rabbit_http_util:unquote: '+' is a space, %XX a byte, anything else itself. */
export function unquote(s: string): string {
  const bytes: number[] = [];
  const raw = Buffer.from(s, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (b === 0x2b) bytes.push(0x20);
    else if (b === 0x25 && i + 2 < raw.length && isHex(raw[i + 1]!) && isHex(raw[i + 2]!)) {
      bytes.push(parseInt(String.fromCharCode(raw[i + 1]!, raw[i + 2]!), 16));
      i += 2;
    } else bytes.push(b);
  }
  return Buffer.from(bytes).toString('utf8');
}

function isHex(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
}

function quoteBinding(s: string): string {
  return quotePlus(s).replace(/~/g, '%7E');
}

/** rabbit_mgmt_format:args_hash. */
export function argsHash(args: FieldTable): string {
  const word = Buffer.alloc(4);
  word.writeUInt32BE(phash2Range(fieldTableTerm(args), 2 ** 32));
  return word.toString('base64url');
}

export function packBindingProps(routingKey: string, args: FieldTable): string {
  const hasArgs = Object.keys(args).length > 0;
  if (!hasArgs) return routingKey === '' ? '~' : quoteBinding(routingKey);
  return `${quoteBinding(routingKey)}~${quoteBinding(argsHash(args))}`;
}

/**
 * rabbit_mgmt_wm_binding's reading of a (already percent-decoded) props segment: the routing
 * key, and the arguments hash when there is one; 'too-many' for more than one '~'.
 */
export function unpackBindingProps(props: string): { routingKey: string; hash?: string } | 'too-many' {
  const tokens = tokenise(props);
  if (tokens.length > 2) return 'too-many';
  const [key = '', hash] = tokens;
  return hash === undefined ? { routingKey: unquote(key) } : { routingKey: unquote(key), hash: unquote(hash) };
}

/** rabbit_mgmt_format:tokenise: split on '~', a trailing '~' adding no token. */
function tokenise(s: string): string[] {
  const out: string[] = [];
  let rest = s;
  while (rest !== '') {
    const i = rest.indexOf('~');
    if (i < 0) {
      out.push(rest);
      break;
    }
    out.push(rest.slice(0, i));
    rest = rest.slice(i + 1);
  }
  return out;
}

/**
 * rabbit_web_dispatch_util:relativise: the Location of a binding just created, relative to the
 * path it was POSTed to ("q1/order.%252A").
 */
export function relativise(from: string, to: string): string {
  const rel = (f: string[], t: string[]): string[] => {
    if (f.length === 1 && t.length > 0 && f[0] === t[0]) return t;
    if (f.length > 0 && t.length > 0 && f[0] === t[0]) return rel(f.slice(1), t.slice(1));
    if (t.length === 0) return Array<string>(f.length).fill('..');
    if (f.length > 0) return [...Array<string>(f.length - 1).fill('..'), ...t];
    return t;
  };
  return rel(from.split('/').filter((s) => s !== ''), to.split('/').filter((s) => s !== '')).join('/');
}
