import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline, type Writable } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';
import type { Logger } from '../log.js';
import { writeInTurns } from '../write-in-turns.js';
import { collectParts, type PrometheusSource, type Registry } from './collector.js';
import { CONTENT_TYPE } from './text-format.js';

const REGISTRIES: ReadonlySet<string> = new Set<Registry>(['default', 'per-object', 'detailed']);
const NOT_FOUND = '{"error":"Object Not Found","reason":"Not Found"}';

/**
 * rabbitmq_prometheus's HTTP endpoint on its own port (15692 by default): `/metrics`,
 * `/metrics/per-object` and `/metrics/detailed?family=…&vhost=…`, answered as RabbitMQ 3.10.8
 * answers them: the text format (gzipped when the scraper accepts gzip, as Prometheus does),
 * 404 "Unknown Registry" for another `/metrics/X`, the management plugin's JSON 404 elsewhere,
 * 204 to HEAD and 405 to methods other than GET, HEAD and OPTIONS. No authentication, as in
 * RabbitMQ. A long exposition (a broker of many thousand queues) is written a part per turn
 * with chunked transfer encoding, and gzipped by a zlib stream (off the event loop), so that a
 * scrape does not hold every client for seconds; a short one is sent whole, with its length.
 */
export class PrometheusServer {
  private readonly server: Server;

  constructor(
    private readonly source: PrometheusSource,
    private readonly log: Logger,
  ) {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.on('clientError', (_err, socket) => socket.destroy());
  }

  /** Listens on host:port (0 = any free port); resolves with the port. */
  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        this.server.on('error', (err) => this.log.error({ err: err.message }, 'Prometheus listener error'));
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /** Stops listening and closes the scrapers' connections. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    try {
      this.respond(req, res);
    } catch (err) {
      this.log.error({ err }, 'error answering a Prometheus scrape');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end();
    }
  }

  private respond(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const registry = registryOf(url.pathname);
    if (registry === undefined) {
      send(res, 404, { 'content-type': 'application/json' }, NOT_FOUND);
      return;
    }
    const method = req.method ?? 'GET';
    if (method === 'OPTIONS') {
      send(res, 200, { allow: 'HEAD, GET, OPTIONS' }, '');
      return;
    }
    if (method === 'HEAD') {
      // RabbitMQ's handler writes a response for GET only: cowboy answers HEAD with 204.
      send(res, 204, {}, '');
      return;
    }
    if (method !== 'GET') {
      send(res, 405, { allow: 'HEAD, GET, OPTIONS' }, '');
      return;
    }
    if (!REGISTRIES.has(registry)) {
      send(res, 404, { 'content-type': 'text/plain' }, 'Unknown Registry');
      return;
    }
    const vhosts = url.searchParams.getAll('vhost');
    const parts = collectParts(this.source, registry as Registry, {
      families: new Set(url.searchParams.getAll('family')),
      // Without vhost= every vhost's queues are listed; unknown vhosts select nothing.
      vhosts: vhosts.length > 0 ? new Set(vhosts) : undefined,
    });
    const gzip = acceptsGzip(req.headers['accept-encoding']);
    const headers = { 'content-type': CONTENT_TYPE, 'content-encoding': gzip ? 'gzip' : 'identity' };
    // A part a turn. Up to WHOLE_LENGTH the text is kept and sent whole, with its length; past
    // that it is streamed, gzipped by a zlib stream off the event loop when asked.
    const kept: string[] = [];
    let keptLength = 0;
    const failed = (err: unknown): void => {
      this.log.error({ err }, 'error answering a Prometheus scrape');
      if (res.headersSent) res.destroy();
      else send(res, 500, { 'content-type': 'text/plain' }, '');
    };
    const collect = (): void => {
      if (res.destroyed) return;
      let part: IteratorResult<string>;
      try {
        part = parts.next();
      } catch (err) {
        failed(err);
        return;
      }
      if (part.done) {
        const text = kept.join('');
        send(res, 200, headers, gzip ? gzipSync(text) : text);
        return;
      }
      kept.push(part.value);
      keptLength += part.value.length;
      if (keptLength <= WHOLE_LENGTH) {
        setImmediate(collect);
        return;
      }
      res.writeHead(200, headers);
      let sink: Writable = res;
      if (gzip) {
        const zip = createGzip();
        pipeline(zip, res, () => {}); // a scraper gone: writeInTurns sees res destroyed and stops
        sink = zip;
      }
      let first: string | undefined = kept.join('');
      writeInTurns(
        sink,
        () => {
          const text = first;
          if (text !== undefined) {
            first = undefined;
            return text;
          }
          const next = parts.next();
          return next.done ? undefined : next.value;
        },
        { stopped: () => res.destroyed, failed },
      );
    };
    collect();
  }
}

/** Characters of text sent whole (with content-length, gzipped at once); a longer exposition is streamed. */
const WHOLE_LENGTH = 256 * 1024;

/**
 * The registry a path names: `/metrics` is the default one, `/metrics/X` names X (perhaps
 * unknown, perhaps ''), with or without a trailing slash; undefined for other paths.
 */
function registryOf(pathname: string): string | undefined {
  const path = pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
  if (path === '/metrics') return 'default';
  if (!path.startsWith('/metrics/')) return undefined;
  const rest = path.slice('/metrics/'.length);
  if (rest.includes('/')) return undefined;
  try {
    return decodeURIComponent(rest);
  } catch {
    return rest;
  }
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string | Buffer): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Whether Accept-Encoding lists gzip (or *) with a quality above 0. */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  for (const part of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const [coding, ...params] = part.trim().split(';');
    const name = coding!.trim().toLowerCase();
    if (name !== 'gzip' && name !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}
