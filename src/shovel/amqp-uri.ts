/**
 * The `amqp://` and `amqps://` URIs a shovel connects to, read as RabbitMQ's amqp_uri reads them
 * (scheme, userinfo, host, port, vhost path; `amqp://` with no host is the local broker), the
 * error terms it gives for a URI it cannot use, and the form /api/shovels shows (credentials
 * left out, as rabbit_amqp091_shovel reports its URIs).
 */
import { atom, charList, tuple, type ErlTerm } from '../erlang/term.js';

export interface ParsedAmqpUri {
  /** As written (what the connection is opened with, after the local mapping). */
  uri: string;
  tls: boolean;
  /** Undefined: the local broker (RabbitMQ's direct connection). */
  host: string | undefined;
  port: number | undefined;
  username: string | undefined;
  password: string | undefined;
  vhost: string;
  /** The query string (heartbeat, frame_max, ...), passed on to the client. */
  query: string;
}

/** Why amqp_uri:parse refuses a URI: the Erlang term RabbitMQ prints after "not a valid URI: ". */
export type UriError = { term: ErlTerm };

/**
 * Parses a shovel URI. Returns the error term RabbitMQ prints for a scheme other than amqp or
 * amqps ({{unexpected_uri_scheme,"http"},"http://..."}); other malformed URIs get
 * {unable_to_parse_uri,"..."} (RabbitMQ's term for those carries an Erlang stack trace).
 */
export function parseAmqpUri(uri: string): ParsedAmqpUri | UriError {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?$/.exec(uri);
  if (!m) return { term: tuple(tuple(atom('unable_to_parse_uri'), charList(uri)), charList(uri)) };
  const scheme = m[1]!;
  const lower = scheme.toLowerCase();
  if (lower !== 'amqp' && lower !== 'amqps') return { term: tuple(tuple(atom('unexpected_uri_scheme'), charList(scheme)), charList(uri)) };
  const authority = m[2]!;
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at) : undefined;
  const hostport = at >= 0 ? authority.slice(at + 1) : authority;
  const hp = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(hostport)!;
  const host = hp[1] === '' ? undefined : hp[1]!.replace(/^\[|\]$/g, '');
  let port: number | undefined;
  if (hp[2] !== undefined && hp[2] !== '') {
    if (!/^\d+$/.test(hp[2]) || Number(hp[2]) > 65535) return { term: tuple(atom('unable_to_parse_uri'), charList(uri)) };
    port = Number(hp[2]);
  }
  let username: string | undefined;
  let password: string | undefined;
  try {
    if (userinfo !== undefined) {
      const colon = userinfo.indexOf(':');
      username = decodeURIComponent(colon >= 0 ? userinfo.slice(0, colon) : userinfo);
      password = colon >= 0 ? decodeURIComponent(userinfo.slice(colon + 1)) : undefined;
    }
    const path = m[3]!;
    if (path.length > 1 && path.indexOf('/', 1) >= 0) return { term: tuple(atom('unable_to_parse_uri'), charList(uri)) };
    const vhost = path.length > 1 ? decodeURIComponent(path.slice(1)) : '/';
    return { uri, tls: lower === 'amqps', host, port, username, password, vhost, query: m[4] ?? '' };
  } catch {
    return { term: tuple(atom('unable_to_parse_uri'), charList(uri)) };
  }
}

export function isUriError(p: ParsedAmqpUri | UriError): p is UriError {
  return 'term' in p;
}

/**
 * The URI as /api/shovels shows it: without userinfo (RabbitMQ: "amqp://guest:guest@h:5705" →
 * "amqp://h:5705"), the rest as written.
 */
export function displayUri(uri: string): string {
  return uri.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#@]*@/, '$1');
}
