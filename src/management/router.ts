/**
 * The segment router. A path is split on '/' as received (still percent-encoded), each
 * segment decoded on its own, so a vhost named "/" arrives as one segment "%2F"; one trailing
 * slash is tolerated. Routes are tried in order and the first whose pattern matches wins, as in
 * cowboy_router (RabbitMQ's dispatcher lists them in the same order).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Broker } from '../broker.js';
import type { ManagementAuth, ManagementUser } from './auth.js';
import type { Reply } from './http.js';
import type { MessageStatsSource } from './stats.js';

export type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

/** Who may call a route (rabbit_mgmt_util's is_authorized_* variants). */
export type Access =
  /** No credentials needed (GET /api/auth). */
  | 'none'
  /** Any user with a management tag (is_authorized). */
  | 'management'
  /** Administrators, or users who may open the path's vhost (is_authorized_vhost). */
  | 'vhost'
  /** administrator or monitoring (is_authorized_monitor). */
  | 'monitor'
  /** administrator (is_authorized_admin). */
  | 'admin'
  /** administrator, or policymaker who may open the path's vhost (is_authorized_policies). */
  | 'policymaker';

export interface RequestContext {
  readonly broker: Broker;
  readonly auth: ManagementAuth;
  readonly stats: MessageStatsSource;
  readonly method: Method;
  /** Decoded path parameters by name (':vhost' → params.vhost). */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** The path as received, percent-encoding included. */
  readonly rawPath: string;
  /** The authenticated user (a placeholder with no tags on routes with access 'none'). */
  readonly user: ManagementUser;
  /** The request body decoded as RabbitMQ decodes it (a JSON object; {} when empty). */
  body(): Promise<Record<string, unknown>>;
  /** The request body as received (definitions import reads it itself). */
  rawBody(): Promise<Buffer>;
  /** Names of the vhosts the user may list objects of (rabbit_mgmt_util:filter_vhost). */
  objectVhosts(): Set<string>;
  /** Names of the vhosts the user may see (list_visible_vhosts: monitors see every one). */
  visibleVhosts(): Set<string>;
}

export type Handler = (ctx: RequestContext) => Reply | Promise<Reply>;

export interface Route {
  /** '/api/queues/:vhost/:queue/get' */
  readonly path: string;
  /** Who may call it: one rule, or one per method (GET /api/vhosts/:vhost and PUT differ). */
  readonly access: Access | Readonly<Partial<Record<Method, Access>>>;
  readonly GET?: Handler;
  readonly PUT?: Handler;
  readonly POST?: Handler;
  readonly DELETE?: Handler;
  /**
   * false where RabbitMQ's resource provides one content type or none (vhost and user limits,
   * operator policies, topic permissions, purge, rebalance): cowboy then leaves accept out of
   * the Vary header it sends ("accept-encoding, origin"). Others provide JSON and BERT
   * (rabbit_mgmt_util:responder_map): "accept, accept-encoding, origin".
   */
  readonly varyOnAccept?: false;
}

interface CompiledRoute {
  route: Route;
  segments: string[];
}

export class Router {
  private readonly routes: CompiledRoute[] = [];

  /**
   * Adds routes in matching order. A path added again gains the new route's methods (and their
   * access rules): a later module may add PUT and DELETE to a path another answers GET on.
   */
  add(...routes: Route[]): this {
    for (const route of routes) {
      const i = this.routes.findIndex((r) => r.route.path === route.path);
      if (i < 0) {
        this.routes.push({ route, segments: route.path.split('/').slice(1) });
        continue;
      }
      const old = this.routes[i]!.route;
      const merged: Route = { ...old, ...route, access: { ...accessByMethod(old), ...accessByMethod(route) } };
      this.routes[i] = { route: merged, segments: this.routes[i]!.segments };
    }
    return this;
  }

  /** The routes, in matching order. */
  list(): Route[] {
    return this.routes.map((r) => r.route);
  }

  /** The first route matching the decoded segments, with its parameters. */
  match(segments: readonly string[]): { route: Route; params: Record<string, string> } | undefined {
    for (const { route, segments: pattern } of this.routes) {
      if (pattern.length !== segments.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < pattern.length && ok; i++) {
        const p = pattern[i]!;
        if (p.startsWith(':')) params[p.slice(1)] = segments[i]!;
        else ok = p === segments[i];
      }
      if (ok) return { route, params };
    }
    return undefined;
  }
}

/** The access rule of each method a route answers. */
function accessByMethod(route: Route): Partial<Record<Method, Access>> {
  if (typeof route.access !== 'string') return route.access;
  const out: Partial<Record<Method, Access>> = {};
  for (const m of ['GET', 'PUT', 'POST', 'DELETE'] as const) if (route[m]) out[m] = route.access;
  return out;
}

/** Who may call method on route. */
export function accessFor(route: Route, method: Method): Access {
  return typeof route.access === 'string' ? route.access : route.access[method] ?? 'admin';
}

/** The methods a route answers, as RabbitMQ lists them in `allow` (HEAD with GET; OPTIONS always). */
export function allowedMethods(route: Route): string[] {
  const out: string[] = [];
  if (route.GET) out.push('HEAD', 'GET');
  if (route.PUT) out.push('PUT');
  if (route.POST) out.push('POST');
  if (route.DELETE) out.push('DELETE');
  out.push('OPTIONS');
  return out;
}

/**
 * The raw path's segments, each percent-decoded; one trailing slash is dropped. Undefined when a
 * segment does not decode.
 */
export function splitPath(rawPath: string): { raw: string[]; decoded: string[] } | undefined {
  const raw = rawPath.split('/').slice(1);
  if (raw.length > 1 && raw[raw.length - 1] === '') raw.pop();
  try {
    return { raw, decoded: raw.map((s) => decodeURIComponent(s)) };
  } catch {
    return undefined;
  }
}
