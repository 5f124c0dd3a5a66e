/**
 * The management port's files outside /api, as RabbitMQ's management plugin serves its
 * priv/www: the web UI (src/management/ui/, copied to dist/management/ui/ by the build) at `/`,
 * `/` itself being index.html; and rabbitmqadmin with the page that introduces it
 * (src/management/cli/) at `/cli/`, where RabbitMQ's documentation sends its users to download
 * the tool. `/cli`, `/cli/` and `/doc/stats.html` redirect as RabbitMQ's do (the last to the API
 * reference, which the server writes: api-reference.ts).
 *
 * GET and HEAD of a file by its path; OPTIONS answers what it allows and any other method gets
 * 405 with the same `allow` (RabbitMQ's static handler: sendStatic). Empty segments are skipped,
 * as cowboy does (`/cli//rabbitmqadmin`). The files are read once, on the first request, and
 * kept in memory (a few dozen small files): the broker's start does not pay for them. Anything
 * else is left to the server's 404.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  // rabbitmqadmin: a download, as RabbitMQ types it.
  '': 'application/octet-stream',
};

const ALLOW = 'HEAD, GET, OPTIONS';

/**
 * The folders beside this module: src/management/* with tsx, dist/management/* when built.
 * Named from the parent folder, so that the bundle (dist/bundle/main.cjs, one level below dist/
 * too) finds dist/management/* as well.
 */
export const UI_DIR = fileURLToPath(new URL('../management/ui/', import.meta.url));
export const CLI_DIR = fileURLToPath(new URL('../management/cli/', import.meta.url));

/** Where each folder is served: the first segment of the path (`cli`), '' for the rest (the UI). */
export interface StaticDirs {
  ui?: string;
  cli?: string;
}

/** Paths that redirect (any method), as RabbitMQ's do: '/'-joined segments to where. */
const REDIRECTS: Readonly<Record<string, string>> = { cli: '/cli/index.html', 'doc/stats.html': '/api/index.html' };

/** A fallback for ManagementServer: answers requests for the static files, false for the rest. */
export function staticFiles(dirs: StaticDirs = {}): (req: IncomingMessage, res: ServerResponse, segments: readonly string[]) => boolean {
  const uiDir = dirs.ui ?? UI_DIR;
  const cliDir = dirs.cli ?? CLI_DIR;
  let ui: Map<string, Buffer> | undefined;
  let cli: Map<string, Buffer> | undefined;
  return (req, res, segments) => {
    const parts = segments.filter((s) => s !== '');
    const path = parts.join('/');
    const to = REDIRECTS[path];
    if (to !== undefined) {
      sendRedirect(res, to);
      return true;
    }
    const inCli = parts[0] === 'cli';
    const name = inCli ? parts.slice(1).join('/') : path || 'index.html';
    const body = (inCli ? (cli ??= readTree(cliDir)) : (ui ??= readTree(uiDir))).get(name);
    if (!body) return false;
    sendStatic(req, res, body, CONTENT_TYPES[extname(name)]!);
    return true;
  };
}

/** A static resource: GET and HEAD get it, OPTIONS what is allowed, any other method 405. */
export function sendStatic(req: IncomingMessage, res: ServerResponse, body: Buffer, contentType: string): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(req.method === 'OPTIONS' ? 200 : 405, { allow: ALLOW, 'content-length': 0 }).end();
    return;
  }
  res.writeHead(200, {
    'content-type': contentType,
    'content-length': body.length,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** 301 to location (RabbitMQ's redirects of a folder to its index.html). */
export function sendRedirect(res: ServerResponse, location: string): void {
  res.writeHead(301, { location, 'content-length': 0 }).end();
}

/** Every servable file under dir, by its '/'-separated path (a missing folder serves nothing). */
function readTree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string): void => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (CONTENT_TYPES[extname(name)] !== undefined && !name.startsWith('.')) out.set(relative(dir, full).split(sep).join('/'), readFileSync(full));
    }
  };
  walk(dir);
  return out;
}
