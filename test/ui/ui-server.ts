import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';

/** The UI's folder: what Warren's management server serves at `/`. */
export const UI_ROOT = fileURLToPath(new URL('../../src/management/ui/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

export interface UiServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves the UI's files and proxies /api/* to a management API (Warren's or a reference
 * RabbitMQ's), so the browser sees one origin as it does when Warren serves the UI itself.
 */
export async function serveUi(apiUrl: string): Promise<UiServer> {
  const target = new URL(apiUrl);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/api' || url.pathname.startsWith('/api/')) return proxy(req, res, target);
    void serveFile(url.pathname, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function serveFile(pathname: string, res: ServerResponse): Promise<void> {
  const rel = pathname === '/' ? 'index.html' : decodeURIComponent(pathname.slice(1));
  const file = normalize(join(UI_ROOT, rel));
  if (!file.startsWith(UI_ROOT.endsWith(sep) ? UI_ROOT : UI_ROOT + sep)) {
    res.writeHead(403).end();
    return;
  }
  try {
    const body = await readFile(file);
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' }).end(body);
  } catch {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  }
}

function proxy(req: IncomingMessage, res: ServerResponse, target: URL): void {
  // The target's base path (…/api) replaces ours.
  const base = target.pathname.replace(/\/$/, '');
  const headers = { ...req.headers, host: target.host };
  const upstream = request(
    { host: target.hostname, port: target.port, method: req.method, path: base + (req.url ?? '').replace(/^\/api/, ''), headers },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    },
  );
  upstream.on('error', (e) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'bad_gateway', reason: e.message }));
  });
  req.pipe(upstream);
}
