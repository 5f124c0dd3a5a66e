/**
 * Serves the web UI (src/management/ui/, copied to dist/management/ui/ by the build) at `/` on
 * the management port: GET and HEAD of a file by its path, `/` = index.html. The files are read
 * once, on the first request, and kept in memory (a few dozen small files): the broker's start
 * does not pay for them. Anything else is left to the server's 404.
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
};

/**
 * The UI folder beside this module: src/management/ui with tsx, dist/management/ui when built.
 * Named from the parent folder, so that the bundle (dist/bundle/main.cjs, one level below dist/
 * too) finds dist/management/ui as well.
 */
export const UI_DIR = fileURLToPath(new URL('../management/ui/', import.meta.url));

/** A fallback for ManagementServer: answers requests for the UI's files, false for the rest. */
export function uiFiles(dir = UI_DIR): (req: IncomingMessage, res: ServerResponse, segments: readonly string[]) => boolean {
  let files: Map<string, Buffer> | undefined;
  return (req, res, segments) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    files ??= readTree(dir);
    const path = segments.length === 0 || (segments.length === 1 && segments[0] === '') ? 'index.html' : segments.join('/');
    const body = files.get(path);
    if (!body) return false;
    res.writeHead(200, {
      'content-type': CONTENT_TYPES[extname(path)]!,
      'content-length': body.length,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
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
      else if (CONTENT_TYPES[extname(name)]) out.set(relative(dir, full).split(sep).join('/'), readFileSync(full));
    }
  };
  walk(dir);
  return out;
}
