// The shell: login, the top bar (navigation, vhost and refresh pickers, user), hash routing
// (#/queues/%2F/orders), the refresh tick, and keyboard shortcuts.

import { api, ApiError, login, forget, loggedIn, currentUser, whenUnauthorized } from './api.js';
import { h, fill, showError } from './dom.js';
import { field, confirmDialog } from './widgets.js';
import { sampler } from './stats.js';

const NAV = [
  ['overview', 'Overview', 'o'],
  ['connections', 'Connections', 'c'],
  ['channels', 'Channels', 'h'],
  ['exchanges', 'Exchanges', 'e'],
  ['queues', 'Queues', 'q'],
  ['shovels', 'Shovels', 's'],
  ['tracing', 'Tracing', 't'],
  ['admin', 'Admin', 'a'],
];

const REFRESH_CHOICES = [
  [2000, 'every 2 s'],
  [5000, 'every 5 s'],
  [10000, 'every 10 s'],
  [30000, 'every 30 s'],
  [0, 'paused'],
];

const app = document.getElementById('app');

/** What pages know of the session: who is logged in, the vhosts, the selected vhost. */
export const ctx = {
  me: null,
  vhosts: [],
  get vhost() {
    const v = sessionStorage.getItem('warren.vhost');
    return v !== null && this.vhosts.some((x) => x.name === v) ? v : null;
  },
  set vhost(v) {
    if (v === null) sessionStorage.removeItem('warren.vhost');
    else sessionStorage.setItem('warren.vhost', v);
  },
  get refreshMs() {
    const v = sessionStorage.getItem('warren.refresh');
    return v === null ? 5000 : Number(v);
  },
  isAdmin() {
    return !!this.me?.tags?.includes('administrator');
  },
  canPolicies() {
    return this.isAdmin() || !!this.me?.tags?.includes('policymaker');
  },
  canMonitor() {
    return this.isAdmin() || !!this.me?.tags?.includes('monitoring');
  },
  async reloadVhosts() {
    try {
      this.vhosts = (await api.get('/vhosts')) ?? [];
    } catch (e) {
      this.vhosts = [];
      if (!(e instanceof ApiError && e.status === 401)) showError(e, 'Loading vhosts');
    }
    renderVhostPicker();
  },
  /** Re-renders the current page from scratch (after a vhost switch, say). */
  remount: () => route(),
};

let page = null; // { refresh, destroy } of the mounted page
let pageKey = '';
let mountSeq = 0;
let shell = null; // { main, vhostSelect, nav }
let timer = null;

// ---- routing ----------------------------------------------------------------------------------

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [p, q = ''] = raw.split('?');
  const segments = p.split('/').filter((s) => s !== '').map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  return { segments, query: new URLSearchParams(q) };
}

async function loadPage(segments) {
  const [top, a, b] = segments;
  switch (top ?? 'overview') {
    case 'overview':
      return [await import('./pages/overview.js'), 'mount', 'Overview'];
    case 'connections':
      return a !== undefined ? [await import('./pages/connections.js'), 'mountDetail', a] : [await import('./pages/connections.js'), 'mount', 'Connections'];
    case 'channels':
      return [await import('./pages/channels.js'), 'mount', 'Channels'];
    case 'exchanges':
      return a !== undefined && b !== undefined ? [await import('./pages/exchange.js'), 'mount', b === 'amq.default' ? '(AMQP default)' : b] : [await import('./pages/exchanges.js'), 'mount', 'Exchanges'];
    case 'queues':
      return a !== undefined && b !== undefined ? [await import('./pages/queue.js'), 'mount', b] : [await import('./pages/queues.js'), 'mount', 'Queues'];
    case 'shovels':
      return [await import('./pages/shovels.js'), 'mount', 'Shovels'];
    case 'tracing':
      return [await import('./pages/tracing.js'), 'mount', 'Tracing'];
    case 'admin':
      return [await import('./pages/admin.js'), 'mount', 'Admin'];
    default:
      return null;
  }
}

async function route() {
  if (!loggedIn() || !ctx.me) {
    if (loggedIn() && !ctx.me) return resume();
    return showLogin();
  }
  if (!shell) buildShell();
  const { segments, query } = parseHash();
  const seq = ++mountSeq;
  page?.destroy?.();
  page = null;
  pageKey = segments[0] ?? 'overview';
  for (const a of shell.nav.querySelectorAll('a')) {
    const on = a.dataset.page === pageKey;
    a.classList.toggle('active', on);
    if (on) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  let found;
  try {
    found = await loadPage(segments);
  } catch (e) {
    showError(e, 'Loading the page');
    return;
  }
  if (seq !== mountSeq) return;
  const main = shell.main;
  if (!found) {
    fill(main, h('div', { class: 'page' }, h('h1', {}, 'Not found'), h('p', {}, 'No page at this address. ', h('a', { href: '#/' }, 'Go to the overview'), '.')));
    document.title = 'Not found · Warren';
    return;
  }
  const [mod, fn, title] = found;
  document.title = `${title} · Warren`;
  const root = h('div', { class: 'page', dataset: { page: pageKey } });
  fill(main, root);
  try {
    page = (await mod[fn](root, { segments, query, ctx })) ?? {};
  } catch (e) {
    if (seq === mountSeq) showError(e);
  }
  if (seq === mountSeq) main.focus({ preventScroll: true });
}

/** Updates the hash query (filter text and the like) without a new history entry or a remount. */
export function setQuery(params) {
  const { segments } = parseHash();
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const base = '#/' + segments.map(encodeURIComponent).join('/');
  const next = q.toString() ? `${base}?${q}` : base;
  if (next !== location.hash) history.replaceState(null, '', next);
}

// ---- refresh ----------------------------------------------------------------------------------

let ticking = false;
let lastTickError = '';
async function tick() {
  if (ticking || document.hidden || !ctx.me) return;
  ticking = true;
  try {
    const results = await Promise.allSettled([sampler.sample(), page?.refresh?.()]);
    const e = results.find((r) => r.status === 'rejected')?.reason;
    // A failing refresh is reported once, not on every tick until it recovers.
    if (e && !(e instanceof ApiError && e.status === 401) && e.message !== lastTickError) showError(e, 'Refreshing');
    lastTickError = e?.message ?? '';
  } finally {
    ticking = false;
  }
}

function restartTimer() {
  clearInterval(timer);
  timer = null;
  if (ctx.refreshMs > 0) timer = setInterval(tick, ctx.refreshMs);
}

/** Refreshes the current page now (after an action changed what it shows). */
export function refreshNow() {
  return tick();
}

// ---- login ------------------------------------------------------------------------------------

function showLogin(message, kind = 'error') {
  shell = null;
  clearInterval(timer);
  page?.destroy?.();
  page = null;
  document.title = 'Log in · Warren';
  const user = h('input', { type: 'text', name: 'username', autocomplete: 'username', required: true, value: sessionStorage.getItem('warren.lastUser') ?? '' });
  const pass = h('input', { type: 'password', name: 'password', autocomplete: 'current-password' });
  const error = h('p', { class: kind === 'error' ? 'login-error' : 'login-note', role: 'alert' }, message ?? '');
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Log in');
  const form = h(
    'form',
    {
      class: 'login-card',
      onsubmit: async (ev) => {
        ev.preventDefault();
        submit.disabled = true;
        error.textContent = '';
        error.className = 'login-error';
        try {
          ctx.me = await login(user.value, pass.value);
          sessionStorage.setItem('warren.lastUser', user.value);
          await ctx.reloadVhosts();
          sampler.reset();
          route();
        } catch (e) {
          error.textContent = e instanceof ApiError && e.status === 401 ? `${e.message}` : e.message;
          pass.select();
        } finally {
          submit.disabled = false;
        }
      },
    },
    h('div', { class: 'login-brand' }, logo(), h('span', {}, 'Warren')),
    h('p', { class: 'login-sub' }, 'Log in with a user that has a management tag.'),
    field('Username', user),
    field('Password', pass),
    error,
    submit,
  );
  fill(app, h('main', { class: 'login' }, form));
  (user.value ? pass : user).focus();
}

async function resume() {
  try {
    ctx.me = await api.get('/whoami');
    await ctx.reloadVhosts();
    route();
  } catch (e) {
    forget();
    showLogin(e instanceof ApiError && e.status === 401 ? '' : e.message);
  }
}

async function logout() {
  forget();
  ctx.me = null;
  sampler.reset();
  showLogin('You are logged out.', 'note');
}

whenUnauthorized((err) => {
  forget();
  ctx.me = null;
  showLogin(`Your session ended: ${err.message}`);
});

// ---- shell ------------------------------------------------------------------------------------

function logo() {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 32 32');
  svg.setAttribute('class', 'logo');
  svg.setAttribute('aria-hidden', 'true');
  const rect = document.createElementNS(svg.namespaceURI, 'rect');
  rect.setAttribute('width', '32');
  rect.setAttribute('height', '32');
  rect.setAttribute('rx', '7');
  const p = document.createElementNS(svg.namespaceURI, 'path');
  p.setAttribute('d', 'M8 23V11l4 6 4-6 4 6 4-6v12');
  svg.append(rect, p);
  return svg;
}

function renderVhostPicker() {
  if (!shell) return;
  const sel = shell.vhostSelect;
  const current = ctx.vhost;
  fill(
    sel,
    h('option', { value: '' }, 'All vhosts'),
    ctx.vhosts.map((v) => h('option', { value: v.name, selected: v.name === current }, v.name)),
  );
  sel.value = current ?? '';
}

function buildShell() {
  const nav = h(
    'nav',
    { class: 'nav', 'aria-label': 'Main' },
    NAV.filter(([id]) => (id !== 'admin' || ctx.canPolicies()) && (id !== 'tracing' || ctx.isAdmin())).map(([id, label, key]) =>
      h('a', { href: `#/${id === 'overview' ? '' : id}`, dataset: { page: id }, title: `${label} (g ${key})` }, label),
    ),
  );
  const vhostSelect = h('select', {
    class: 'vhost-select',
    'aria-label': 'Virtual host',
    onchange: () => {
      ctx.vhost = vhostSelect.value === '' ? null : vhostSelect.value;
      route();
    },
  });
  const refreshSelect = h(
    'select',
    {
      class: 'refresh-select',
      'aria-label': 'Refresh',
      onchange: () => {
        sessionStorage.setItem('warren.refresh', refreshSelect.value);
        restartTimer();
      },
    },
    REFRESH_CHOICES.map(([ms, label]) => h('option', { value: String(ms), selected: ms === ctx.refreshMs }, `Refresh ${label}`)),
  );
  const user = h(
    'div',
    { class: 'user' },
    h('span', { class: 'user-name', title: (ctx.me.tags ?? []).join(', ') || 'no tags' }, currentUser()),
    h('button', { type: 'button', class: 'btn btn-ghost', onclick: logout }, 'Log out'),
  );
  const main = h('main', { class: 'main', id: 'main', tabindex: '-1' });
  const bar = h(
    'header',
    { class: 'topbar' },
    h('a', { class: 'brand', href: '#/' }, logo(), h('span', {}, 'Warren')),
    nav,
    h('div', { class: 'topbar-tools' }, h('label', { class: 'tool' }, h('span', { class: 'tool-label' }, 'Vhost'), vhostSelect), refreshSelect, user),
  );
  // As RabbitMQ's footer: the API's reference page and rabbitmqadmin, both served on this port.
  const footer = h(
    'footer',
    { class: 'footer' },
    h('a', { href: 'api/', target: '_blank', rel: 'noopener' }, 'HTTP API'),
    h('a', { href: 'cli/', target: '_blank', rel: 'noopener' }, 'rabbitmqadmin'),
  );
  fill(app, h('a', { class: 'skip', href: '#main', onclick: (e) => { e.preventDefault(); main.focus(); } }, 'Skip to content'), bar, main, footer);
  shell = { main, vhostSelect, nav };
  renderVhostPicker();
  restartTimer();
}

// ---- keyboard ---------------------------------------------------------------------------------

let pendingG = false;
document.addEventListener('keydown', (ev) => {
  if (!shell || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const t = ev.target;
  if (t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
  if (document.querySelector('dialog[open]')) return;
  if (pendingG) {
    pendingG = false;
    const hit = NAV.find(([, , key]) => key === ev.key);
    if (hit) {
      ev.preventDefault();
      location.hash = `#/${hit[0] === 'overview' ? '' : hit[0]}`;
    }
    return;
  }
  if (ev.key === 'g') {
    pendingG = true;
    setTimeout(() => (pendingG = false), 1500);
  } else if (ev.key === '/') {
    const f = shell.main.querySelector('[data-filter]');
    if (f) {
      ev.preventDefault();
      f.focus();
      f.select();
    }
  } else if (ev.key === 'r') {
    ev.preventDefault();
    tick();
  } else if (ev.key === '?') {
    ev.preventDefault();
    confirmDialog({
      title: 'Keyboard shortcuts',
      confirmLabel: 'Close',
      body: h(
        'table',
        { class: 'kv shortcuts' },
        h(
          'tbody',
          {},
          [
            ['/', 'Focus the filter'],
            ['↓ ↑', 'Move between the filter and rows'],
            ['Enter', 'Open the row (or the first match from the filter)'],
            ['Esc', 'Clear the filter, close a dialog'],
            ['r', 'Refresh now'],
            ...NAV.map(([, label, key]) => [`g ${key}`, `Go to ${label}`]),
          ].map(([k, d]) => h('tr', {}, h('th', {}, h('kbd', {}, k)), h('td', {}, d))),
        ),
      ),
    });
  }
});

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) tick();
});
window.addEventListener('hashchange', () => route());

// ---- start ------------------------------------------------------------------------------------

route();
