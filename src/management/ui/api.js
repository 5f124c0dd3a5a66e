// The management HTTP API client: basic auth from sessionStorage, JSON in and out, errors carrying
// the API's own `reason`. Paths are given already encoded: build them with `path`.

const AUTH_KEY = 'warren.auth';
const USER_KEY = 'warren.user';

/** An HTTP error from the API, with RabbitMQ's `{error, reason}` when the body has them. */
export class ApiError extends Error {
  constructor(status, error, reason) {
    super(reason || error || `HTTP ${status}`);
    this.status = status;
    this.error = error;
    this.reason = reason;
  }
}

/** `path('queues', '/', 'orders')` → `/queues/%2F/orders`: every segment percent-encoded. */
export function path(...segments) {
  return '/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
}

function basic(user, password) {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

export function currentUser() {
  return sessionStorage.getItem(USER_KEY);
}

export function forget() {
  sessionStorage.removeItem(AUTH_KEY);
  sessionStorage.removeItem(USER_KEY);
}

let onUnauthorized = () => {};
/** Called when a request made with the stored credentials is refused (401): the session ended. */
export function whenUnauthorized(fn) {
  onUnauthorized = fn;
}

/** Logs in: checks the credentials against /api/whoami and remembers them for this tab. */
export async function login(user, password) {
  const auth = basic(user, password);
  const me = await request('GET', '/whoami', undefined, {}, auth);
  sessionStorage.setItem(AUTH_KEY, auth);
  sessionStorage.setItem(USER_KEY, me.name);
  return me;
}

export function loggedIn() {
  return sessionStorage.getItem(AUTH_KEY) !== null;
}

function reasonText(reason) {
  if (reason === undefined || reason === null) return '';
  return typeof reason === 'string' ? reason : JSON.stringify(reason);
}

async function request(method, apiPath, body, headers = {}, auth = sessionStorage.getItem(AUTH_KEY)) {
  const h = { ...headers };
  if (auth) h.Authorization = `Basic ${auth}`;
  const init = { method, headers: h, credentials: 'omit', cache: 'no-store' };
  if (body !== undefined) {
    h['Content-Type'] = 'application/json';
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch('api' + apiPath, init);
  } catch (e) {
    throw new ApiError(0, 'network', `Cannot reach the management API (${e.message})`);
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) {
    const reason = data && typeof data === 'object' ? reasonText(data.reason) : '';
    const error = data && typeof data === 'object' ? reasonText(data.error) : '';
    const err = new ApiError(res.status, error, reason || (typeof data === 'string' ? data.slice(0, 300) : '') || `${res.status} ${res.statusText}`);
    // 401 not_authorized: the credentials no longer work. 401 not_authorised ("Not administrator
    // user"): they work, but not for this endpoint, so the session goes on.
    if (res.status === 401 && error !== 'not_authorised' && auth && auth === sessionStorage.getItem(AUTH_KEY)) onUnauthorized(err);
    throw err;
  }
  return data;
}

export const api = {
  get: (p) => request('GET', p),
  put: (p, body = {}) => request('PUT', p, body),
  post: (p, body = {}) => request('POST', p, body),
  del: (p, headers) => request('DELETE', p, undefined, headers),
};
