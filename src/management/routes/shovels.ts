/**
 * /api/shovels (rabbitmq_shovel_management's rabbit_shovel_mgmt): the dynamic shovels and their
 * state, from broker.shovels (src/shovel). GET lists them (a missing vhost: 404); DELETE
 * /api/shovels/vhost/{vhost}/{name} deletes the shovel's parameter, .../restart restarts it.
 * GET /api/warren/shovels is Warren's own: the message counts the web UI shows.
 */
import { SHOVEL_COMPONENT } from '../../shovel/shovel-parameters.js';
import { noContent, objectNotFound, ok } from '../http.js';
import type { Json } from '../json.js';
import { listReply } from '../query.js';
import type { RequestContext, Route } from '../router.js';

function list(ctx: RequestContext, vhost?: string) {
  if (vhost !== undefined && !ctx.broker.vhosts.has(vhost)) throw objectNotFound();
  const visible = ctx.visibleVhosts();
  const items = ctx.broker.shovels.status((v) => visible.has(v) && (vhost === undefined || v === vhost));
  return ok(listReply(items as unknown as Json[], ctx.query, []));
}

function existing(ctx: RequestContext): { vhost: string; name: string } {
  const vhost = ctx.params['vhost']!;
  const name = ctx.params['name']!;
  if (!ctx.broker.vhosts.has(vhost) || !ctx.broker.shovels.get(vhost, name)) throw objectNotFound();
  return { vhost, name };
}

export const shovelRoutes: Route[] = [
  { path: '/api/shovels', access: 'monitor', GET: (ctx) => list(ctx) },
  { path: '/api/shovels/:vhost', access: 'monitor', GET: (ctx) => list(ctx, ctx.params['vhost']!) },
  {
    path: '/api/shovels/vhost/:vhost/:name',
    access: 'monitor',
    GET: (ctx) => list(ctx, existing(ctx).vhost),
    DELETE: (ctx) => {
      const { vhost, name } = existing(ctx);
      ctx.broker.parameters.delete(SHOVEL_COMPONENT, vhost, name);
      return noContent();
    },
  },
  {
    path: '/api/shovels/vhost/:vhost/:name/restart',
    access: 'monitor',
    DELETE: (ctx) => {
      const { vhost, name } = existing(ctx);
      ctx.broker.shovels.restart(vhost, name);
      return noContent();
    },
  },
  {
    path: '/api/warren/shovels',
    access: 'monitor',
    GET: (ctx) => {
      const visible = ctx.visibleVhosts();
      return ok(ctx.broker.shovels.counts((v) => visible.has(v)) as unknown as Json);
    },
  },
];
