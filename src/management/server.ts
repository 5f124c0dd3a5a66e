/**
 * The management HTTP server (RabbitMQ's rabbitmq_management on port 15672): node:http, the
 * segment router, basic auth through the ManagementAuth seam, and RabbitMQ's response
 * conventions. Endpoints live in routes/; they use the broker's public operations only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { SecureContextOptions, TlsOptions } from 'node:tls';
import type { Broker } from '../broker.js';
import type { Logger } from '../log.js';
import { writeInTurns } from '../write-in-turns.js';
import { apiReferencePage } from './api-reference.js';
import { isAdmin, isManagementUser, isMonitor, type ManagementAuth, type ManagementUser } from './auth.js';
import { AUTH_REALM, HttpError, decodeBody, loginFailed, notAuthorised, objectNotFound, type Reply } from './http.js';
import { WARREN_VERSION } from './identity.js';
import { encodeJson, JsonDocument, JsonItems, type Json } from './json.js';
import { allowedMethods, accessFor, splitPath, Router, type Access, type Method, type RequestContext, type Route } from './router.js';
import { managementRoutes } from './routes/index.js';
import { sendRedirect, sendStatic } from './static-files.js';
import { NO_STATS, type MessageStatsSource } from './stats.js';

export interface ManagementServerOptions {
  auth: ManagementAuth;
  /** Message and churn counters (src/metrics); without one, message_stats are left out. */
  stats?: MessageStatsSource;
  /** Routes besides Warren's own (users, permissions, policies): added after them. */
  routes?: Route[];
  /**
   * Answers requests outside /api (the web UI's files); returns false to let the server answer
   * 404 as RabbitMQ does for a missing file.
   */
  fallback?: (req: IncomingMessage, res: ServerResponse, segments: readonly string[]) => boolean;
}

/** Headers RabbitMQ's management listener puts on every response. */
const COMMON_HEADERS = {
  'content-security-policy': "script-src 'self' 'unsafe-eval' 'unsafe-inline'; object-src 'self'",
};
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** A user for routes anyone may call. */
const ANONYMOUS: ManagementUser = { name: '', tags: [] };

/** Items of a long list reply written per turn (about 8 ms of queues). */
const ITEMS_PER_TURN = 200;

export class ManagementServer {
  readonly router = new Router();
  /** Who may call (replaceable until the first request: a user database replaces the config's users). */
  auth: ManagementAuth;
  /** Where message_stats and churn counters come from. */
  stats: MessageStatsSource;
  /** Answers requests outside /api (the web UI); see ManagementServerOptions.fallback. */
  fallback: ManagementServerOptions['fallback'];
  private readonly servers: Array<Server | HttpsServer> = [];
  private readonly log: Logger;
  /** Largest request body read: a base64 payload of the largest message, and room for the rest. */
  private readonly maxBody: number;

  constructor(
    private readonly broker: Broker,
    options: ManagementServerOptions,
  ) {
    this.log = broker.log.child({ component: 'management' });
    this.auth = options.auth;
    this.stats = options.stats ?? NO_STATS;
    this.fallback = options.fallback;
    this.maxBody = Math.ceil((broker.config.maxMessageSize * 4) / 3) + 1024 * 1024;
    this.router.add(...managementRoutes(), ...(options.routes ?? []));
  }

  /**
   * Starts listening on host:port (0: any free port), over HTTPS when given TLS options (RabbitMQ's
   * management.ssl listener); resolves with the bound port. A server may listen on both.
   */
  listen(port: number, host: string, tls?: TlsOptions): Promise<number> {
    return new Promise((resolve, reject) => {
      const handler = (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res);
      const server = tls ? createHttpsServer(tls, handler) : createServer(handler);
      this.servers.push(server);
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        server.on('error', (err) => this.log.error({ err: err.message }, 'management listener error'));
        resolve((server.address() as AddressInfo).port);
      });
    });
  }

  /** Stops listening and drops open connections (idle keep-alive ones included). */
  async close(): Promise<void> {
    await Promise.all(this.servers.map((server) => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    })));
  }

  /** Reads the HTTPS listener's certificate files again (Broker.reloadTls). */
  reloadTls(tls: SecureContextOptions): void {
    for (const server of this.servers) if (server instanceof HttpsServer) server.setSecureContext(tls);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const reply = await this.dispatch(req, res);
      if (reply) this.write(req, res, reply);
    } catch (err) {
      if (err instanceof HttpError) {
        this.writeError(req, res, err);
        return;
      }
      this.log.error({ err, method: req.method, url: req.url }, 'management request failed');
      if (!res.headersSent) this.writeError(req, res, new HttpError(500, null));
      else res.destroy();
    }
  }

  /** Routes and authorises a request; undefined when the response was written already. */
  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<Reply | undefined> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const split = splitPath(rawPath);
    if (!split) throw new HttpError(400, null);
    if (split.decoded[0] !== 'api') {
      if (this.fallback?.(req, res, split.decoded)) return undefined;
      throw notFoundPath(split.decoded);
    }
    // The API's reference page, a static resource to HTTP (no credentials), where /api redirects.
    if (split.decoded.length === 1) {
      sendRedirect(res, '/api/index.html');
      return undefined;
    }
    if (split.decoded.length === 2 && split.decoded[1] === 'index.html') {
      sendStatic(req, res, Buffer.from(apiReferencePage(this.router.list(), WARREN_VERSION)), 'text/html; charset=utf-8');
      return undefined;
    }
    const match = this.router.match(split.decoded);
    if (!match) throw notFoundPath(split.decoded);
    const { route, params } = match;
    const method = req.method ?? 'GET';
    if (!KNOWN_METHODS.has(method)) throw new HttpError(501, null);
    const allow = allowedMethods(route).join(', ');
    if (method === 'OPTIONS') return { status: 200, headers: { allow } };
    const name = (method === 'HEAD' ? 'GET' : method) as Method;
    const handler = route[name];
    if (!handler) throw new HttpError(405, null, '', { allow });
    const access = accessFor(route, name);
    const user = access === 'none' ? ANONYMOUS : this.authenticate(req, access, params);
    // cowboy_rest's content negotiation: the API provides application/json only.
    if (!acceptsJson(req.headers.accept)) throw new HttpError(406, null);
    let raw: Promise<Buffer> | undefined;
    const rawBody = () => (raw ??= this.readBody(req));
    const ctx: RequestContext = {
      broker: this.broker,
      auth: this.auth,
      stats: this.stats,
      method: name,
      params,
      query,
      headers: req.headers,
      rawPath,
      user,
      body: () => rawBody().then((b) => decodeBody(b.toString('utf8'))),
      rawBody,
      objectVhosts: () => this.objectVhosts(user),
      visibleVhosts: () => this.visibleVhosts(user),
    };
    // After cowboy_rest's negotiation (variances), replies and errors carry the whole Vary header.
    const vary = route.varyOnAccept === false ? 'accept-encoding, origin' : 'accept, accept-encoding, origin';
    try {
      const reply = await handler(ctx);
      return { ...reply, headers: { vary, ...reply.headers } };
    } catch (err) {
      // (A 500 is a crashed handler: cowboy's bare reply, without one.)
      if (err instanceof HttpError && err.status !== 500 && err.headers['vary'] === undefined) {
        throw new HttpError(err.status, err.error, err.reason, { ...err.headers, vary });
      }
      throw err;
    }
  }

  /**
   * rabbit_mgmt_util:is_authorized: basic auth through the seam, a management tag, then the
   * route's rule. Failures are 401s worded as RabbitMQ words them.
   */
  private authenticate(req: IncomingMessage, access: Access, params: Record<string, string>): ManagementUser {
    const header = req.headers.authorization;
    if (header === undefined) throw new HttpError(401, null, '', { 'www-authenticate': AUTH_REALM });
    const credentials = basicCredentials(header);
    if (credentials === 'bearer') {
      // A token is a login to RabbitMQ (rabbitmq_auth_backend_oauth2 would take it): it fails.
      this.broker.metrics.authAttempt('http', false);
      throw loginFailed();
    }
    // cowboy_req:parse_header fails on anything else: a bare 400.
    if (credentials === undefined) throw new HttpError(400, null, '', { vary: '' });
    const result = this.auth.login(credentials.name, credentials.password, req.socket.remoteAddress ?? '');
    // rabbit_mgmt_util:is_authorized counts every request with credentials as a login attempt
    // over 'http' (rabbitmq_auth_attempts_total): failed when any check refuses it.
    const deny = (message: string): never => {
      this.broker.metrics.authAttempt('http', false);
      this.log.warn({ user: credentials.name }, `HTTP access denied: user '${credentials.name}' - ${message}`);
      throw notAuthorised(message);
    };
    if ('refusal' in result) {
      if (result.refusal === 'loopback') deny('User can only log in via localhost');
      this.broker.metrics.authAttempt('http', false);
      this.log.warn({ user: credentials.name }, `HTTP access denied: user '${credentials.name}' - invalid credentials`);
      throw loginFailed();
    }
    const { user } = result as { user: ManagementUser };
    if (!isManagementUser(user)) deny('Not management user');
    switch (access) {
      case 'monitor':
        if (!isMonitor(user)) deny('Not monitor user');
        break;
      case 'admin':
        if (!isAdmin(user)) deny('Not administrator user');
        break;
      case 'policymaker': {
        if (isAdmin(user)) break;
        const vhost = params['vhost'];
        const matches = vhost === undefined || !this.broker.vhosts.has(vhost) || this.auth.mayAccessVhost(user, vhost);
        if (!user.tags.includes('policymaker') || !matches) deny('User not authorised to access object');
        break;
      }
      case 'vhost': {
        const vhost = params['vhost'] ?? vhostHeader(req);
        if (vhost === undefined || !this.broker.vhosts.has(vhost) || isAdmin(user)) break;
        if (!this.auth.mayAccessVhost(user, vhost)) deny('User not authorised to access virtual host');
        break;
      }
      default:
        break;
    }
    this.broker.metrics.authAttempt('http', true);
    return user;
  }

  /** Vhosts the user may open (list_login_vhosts). */
  private loginVhosts(user: ManagementUser): Set<string> {
    return new Set([...this.broker.vhosts.keys()].filter((v) => this.auth.mayAccessVhost(user, v)));
  }

  /** list_visible_vhosts: monitors see every vhost. */
  private visibleVhosts(user: ManagementUser): Set<string> {
    return isMonitor(user) ? new Set(this.broker.vhosts.keys()) : this.loginVhosts(user);
  }

  /** filter_vhost: administrators list every vhost's objects, others those of vhosts they may open. */
  private objectVhosts(user: ManagementUser): Set<string> {
    return isAdmin(user) ? new Set(this.broker.vhosts.keys()) : this.loginVhosts(user);
  }

  private readBody(req: IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > this.maxBody) {
          reject(new HttpError(413, 'bad_request', 'request body too large'));
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => resolve(Buffer.concat(chunks)));
      req.on('error', reject);
    });
  }

  private write(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
    const headers: Record<string, string | number> = { ...COMMON_HEADERS, vary: 'origin', ...reply.headers };
    let body = reply.body;
    // Small enough for one turn: sent whole, with a content-length.
    if (body instanceof JsonItems && body.length <= ITEMS_PER_TURN) body = body.items(0, body.length);
    else if (body instanceof JsonDocument && body.itemCount <= ITEMS_PER_TURN) body = body.toJson();
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['cache-control'] = 'no-cache';
    }
    if (body instanceof JsonItems) this.writeParts(req, res, reply.status, headers, itemsText(body));
    else if (body instanceof JsonDocument) this.writeParts(req, res, reply.status, headers, documentText(body));
    else this.send(req, res, reply.status, headers, body === undefined ? '' : encodeJson(body));
  }

  /**
   * A long JSON text written a part a turn (chunked transfer encoding, so no content-length),
   * each part made as it is written (writeInTurns): a JsonItems array ITEMS_PER_TURN items at a
   * time. 100,000 queues held the event loop for 13 s when made and written at once.
   */
  private writeParts(req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string | number>, parts: Iterator<string>): void {
    res.writeHead(status, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    writeInTurns(
      res,
      () => {
        const next = parts.next();
        return next.done ? undefined : next.value;
      },
      {
        stopped: () => res.destroyed,
        failed: (err) => {
          this.log.error({ err, method: req.method, url: req.url }, 'management request failed while its reply was written');
          res.destroy();
        },
      },
    );
  }

  /** rabbit_mgmt_util:halt_response: {"error","reason"} without cache-control; empty for a bare status. */
  private writeError(req: IncomingMessage, res: ServerResponse, err: HttpError): void {
    const headers: Record<string, string | number> = { ...COMMON_HEADERS, vary: 'origin', ...err.headers };
    // An empty vary: cowboy answered before any (a header it could not parse); a bare 500: a crash.
    if (headers['vary'] === '' || (err.status === 500 && err.error === null)) delete headers['vary'];
    let text = '';
    if (err.error !== null) {
      text = encodeJson({ error: err.error, reason: err.reason });
      headers['content-type'] = 'application/json';
    }
    // The request may not have been read (an error before its body was needed).
    this.send(req, res, err.status, headers, text);
  }

  private send(req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string | number>, text: string): void {
    const body = Buffer.from(text, 'utf8');
    if (status !== 204 && status !== 304) headers['content-length'] = body.length;
    res.writeHead(status, headers);
    res.end(req.method === 'HEAD' || status === 204 ? undefined : body);
  }
}

/**
 * An unknown path: RabbitMQ's static-file handler answers it, with 404 Object Not Found, or a
 * bare 400 when a segment decodes to something holding a '/' (cowboy_static refuses those).
 */
function notFoundPath(segments: readonly string[]): HttpError {
  return segments.some((s) => s.includes('/')) ? new HttpError(400, null) : objectNotFound();
}

/** The X-Vhost header RabbitMQ reads when the path names no vhost (blank: all vhosts). */
function vhostHeader(req: IncomingMessage): string | undefined {
  const v = req.headers['x-vhost'];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * An Authorization header as cowboy parses it: Basic credentials (base64 of name:password), a
 * Bearer token, or undefined for what it cannot parse.
 */
function basicCredentials(header: string): { name: string; password: string } | 'bearer' | undefined {
  if (/^bearer\s+\S+\s*$/i.test(header)) return 'bearer';
  const m = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return undefined;
  return { name: text.slice(0, colon), password: text.slice(colon + 1) };
}

/**
 * Whether an Accept header lets the API answer application/json (cowboy_rest's negotiation:
 * absent, or a media range matching it; RabbitMQ answers even where its quality is 0).
 */
function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((range) => {
    const type = range.split(';')[0]!.trim().toLowerCase();
    return type === 'application/json' || type === 'application/*' || type === '*/*';
  });
}

/** The text of a JSON array, ITEMS_PER_TURN items a part, each part's items made when it is asked for. */
function* itemsText(items: JsonItems): Generator<string> {
  if (items.length === 0) {
    yield '[]';
    return;
  }
  for (let at = 0; at < items.length; at += ITEMS_PER_TURN) {
    const to = Math.min(items.length, at + ITEMS_PER_TURN);
    const part = encodeJson(items.items(at, to));
    // The chunk's items without its brackets, after those before it.
    const text = (at === 0 ? '[' : ',') + part.slice(1, -1);
    yield to === items.length ? `${text}]` : text;
  }
}

/** The text of a JsonDocument: its members in order, a JsonItems member as itemsText writes it, the small ones together. */
function* documentText(doc: JsonDocument): Generator<string> {
  let text = '{';
  let comma = '';
  for (const [key, value] of doc.members) {
    text += `${comma}${encodeJson(key)}:`;
    comma = ',';
    if (value instanceof JsonItems && value.length > ITEMS_PER_TURN) {
      yield text;
      yield* itemsText(value);
      text = '';
    } else text += encodeJson(value instanceof JsonItems ? value.items(0, value.length) : (value as Json));
  }
  yield `${text}}`;
}
