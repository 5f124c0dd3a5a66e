/**
 * /api/definitions and /api/definitions/{vhost} (rabbit_mgmt_wm_definitions), administrators
 * only: GET exports (`?download=f` as an attachment), POST imports a JSON body or, as RabbitMQ's
 * own web UI sends it, a multipart form whose `file` part holds the JSON.
 */
import { brokerTarget, definitionsDocument, vhostDefinitionsDocument } from '../definitions/broker-definitions.js';
import { DefinitionsError, parseDefinitions } from '../definitions/format.js';
import { importDefinitions, importVhostDefinitions } from '../definitions/import.js';
import { badRequest, HttpError, noContent, ok, type Reply } from '../http.js';
import type { Json, JsonDocument } from '../json.js';
import { objectReply } from '../query.js';
import type { RequestContext, Route } from '../router.js';

/** The document written a part a turn; as a whole only when the query picks columns of it. */
function reply(ctx: RequestContext, doc: JsonDocument): Reply {
  const download = ctx.query.get('download');
  const r = ok(ctx.query.has('columns') ? objectReply(doc.toJson(), ctx.query) : doc);
  return download ? { ...r, headers: { 'content-disposition': `attachment; filename=${download}` } } : r;
}

async function importBody(ctx: RequestContext, apply: (defs: ReturnType<typeof parseDefinitions>) => void): Promise<Reply> {
  const raw = await ctx.rawBody();
  const type = ctx.headers['content-type'] ?? '';
  const text = type.startsWith('multipart/form-data') ? multipartFile(raw, type) : raw;
  try {
    apply(parseDefinitions(text ?? ''));
  } catch (err) {
    if (err instanceof DefinitionsError) throw new HttpError(err.status, err.error, err.reason as Json);
    throw err;
  }
  return noContent();
}

/** The `file` part of a multipart/form-data body, or undefined when there is none. */
function multipartFile(body: Buffer, contentType: string): Buffer | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const mark = boundary ? `--${boundary[1] ?? boundary[2]}` : undefined;
  if (!mark) return undefined;
  const text = body.toString('latin1');
  for (const part of text.split(mark)) {
    const end = part.indexOf('\r\n\r\n');
    if (end < 0 || !/name="file"/i.test(part.slice(0, end))) continue;
    const content = part.slice(end + 4).replace(/\r\n$/, '');
    return Buffer.from(content, 'latin1');
  }
  return undefined;
}

export const definitionsRoutes: Route[] = [
  {
    path: '/api/definitions',
    access: 'admin',
    GET: (ctx) => reply(ctx, definitionsDocument(ctx.broker)),
    POST: (ctx) => importBody(ctx, (defs) => importDefinitions(brokerTarget(ctx.broker, ctx.user.name), defs)),
  },
  {
    path: '/api/definitions/:vhost',
    access: 'admin',
    GET: (ctx) => {
      const vhost = ctx.params['vhost']!;
      if (!ctx.broker.vhosts.has(vhost)) throw badRequest('vhost_not_found');
      return reply(ctx, vhostDefinitionsDocument(ctx.broker, vhost));
    },
    POST: (ctx) => importBody(ctx, (defs) => importVhostDefinitions(brokerTarget(ctx.broker, ctx.user.name), ctx.params['vhost']!, defs)),
  },
];
