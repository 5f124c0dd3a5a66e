// Connections: the list, one connection's details and channels, and closing one (DELETE with an
// X-Reason header: the client sees 320 CONNECTION_FORCED with that reason).

import { api, path, ApiError } from '../api.js';
import { h, fill, toast, showError } from '../dom.js';
import { num, bytes, when, value as fmtValue, count } from '../format.js';
import { dataTable, tableFilter } from '../table.js';
import { card, badge, props, field, button, confirmDialog, pageHeader } from '../widgets.js';
import { setQuery, refreshNow } from '../app.js';
import { channelColumns } from './channels.js';

function client(c) {
  if (c.type === 'direct') return c.protocol;
  const p = c.client_properties ?? {};
  return [p.product, p.version].filter(Boolean).join(' ') || (p.platform ?? '–');
}

/**
 * The name a person gave the connection: the client's connection_name (user_provided_name); a
 * direct connection (a shovel's) has none, only its client properties' connection_name.
 */
function givenName(c) {
  return c.user_provided_name || (c.type === 'direct' ? c.client_properties?.connection_name : undefined);
}

/** A direct connection has no state of its own (RabbitMQ lists none): it is shown as direct. */
function stateBadge(c) {
  if (c.type === 'direct') return badge('direct', 'info');
  return badge(c.state ?? '–', c.state === 'running' ? 'ok' : 'warn');
}

/** Asks for a reason and closes the connection. Resolves true when it was closed. */
export async function closeConnection(c) {
  const reason = h('input', { type: 'text', name: 'reason', value: 'Closed via management UI', spellcheck: 'false' });
  const ok = await confirmDialog({
    title: 'Close connection',
    message: `Close ${givenName(c) ? `“${givenName(c)}” (${c.name})` : c.name}? The client gets a connection.close with code 320 and this reason.`,
    confirmLabel: 'Close connection',
    danger: true,
    body: field('Reason', reason),
  });
  if (!ok) return false;
  try {
    await api.del(path('connections', c.name), { 'X-Reason': reason.value });
    toast('Connection closed');
    return true;
  } catch (e) {
    showError(e, 'Closing the connection');
    return false;
  }
}

export async function mount(root, { ctx, query }) {
  const vhost = ctx.vhost;
  const counter = h('span', { class: 'count', 'aria-live': 'polite' });
  const table = dataTable({
    id: 'connections',
    columns: [
      {
        key: 'name',
        label: 'Connection',
        get: (c) => givenName(c) || c.name,
        render: (c) => (givenName(c) ? [h('span', { class: 'name' }, givenName(c)), h('span', { class: 'sub-name' }, c.name)] : h('span', { class: 'name' }, c.name)),
      },
      { key: 'user', label: 'User' },
      vhost === null && ctx.vhosts.length > 1 ? { key: 'vhost', label: 'Vhost', cls: 'opt' } : null,
      { key: 'client', label: 'Client', cls: 'opt', get: client, render: client },
      { key: 'state', label: 'State', get: (c) => (c.type === 'direct' ? 'direct' : c.state), render: stateBadge },
      { key: 'ssl', label: 'TLS', cls: 'opt', get: (c) => (c.ssl ? 1 : 0), render: (c) => (c.ssl ? badge('TLS', 'info') : '–') },
      { key: 'channels', label: 'Channels', num: true },
      { key: 'recv_oct', label: 'Received', num: true, cls: 'opt', render: (c) => bytes(c.recv_oct) },
      { key: 'send_oct', label: 'Sent', num: true, cls: 'opt', render: (c) => bytes(c.send_oct) },
      { key: 'connected_at', label: 'Connected', num: true, cls: 'opt', render: (c) => when(c.connected_at) },
      {
        key: 'actions',
        label: '',
        sortable: false,
        render: (c) =>
          button('Close', async () => {
            if (await closeConnection(c)) await refreshNow();
          }, { kind: 'small', title: `Close ${c.name}` }),
      },
    ].filter(Boolean),
    rowKey: (c) => c.name,
    rowHref: (c) => `#${path('connections', c.name)}`,
    filterOn: (c) => `${givenName(c) ?? ''} ${c.name} ${c.user}`,
    emptyText: 'No client is connected.',
  });
  table.el.addEventListener('shown', (ev) => {
    counter.textContent = count(ev.detail.shown, 'connection', ev.detail.total);
  });
  const filter = tableFilter(table, { placeholder: 'Filter by name, address or user', query, setQuery });
  fill(root, pageHeader('Connections', { sub: vhost !== null ? ['vhost ', h('code', {}, vhost)] : 'all vhosts' }), h('div', { class: 'toolbar' }, filter.el, counter), table.el);

  async function refresh() {
    table.update((await api.get(vhost === null ? '/connections' : path('vhosts', vhost, 'connections'))) ?? []);
  }
  try {
    await refresh();
  } catch (e) {
    showError(e, 'Loading connections');
    table.error(e.message);
  }
  return { refresh };
}

export async function mountDetail(root, { segments }) {
  const name = segments[1];
  const crumbs = h('a', { href: '#/connections' }, '← Connections');
  let c;
  try {
    c = await api.get(path('connections', name));
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      fill(root, pageHeader(name, { crumbs }), card(null, h('p', {}, 'This connection is closed.'), h('p', {}, h('a', { href: '#/connections' }, 'Back to the connections'))));
      return {};
    }
    throw e;
  }
  const details = h('div');
  const clientProps = h('div');
  const channels = dataTable({ id: 'connection-channels', columns: channelColumns(false), rowKey: (ch) => ch.name, emptyText: 'No channel is open.' });
  const closeBtn = button('Close connection', async () => {
    if (await closeConnection(c)) location.hash = '#/connections';
  }, { kind: 'danger' });
  fill(
    root,
    pageHeader(h('span', { class: 'name' }, givenName(c) || c.name), { crumbs, sub: givenName(c) ? h('code', {}, c.name) : null, actions: [closeBtn] }),
    h('div', { class: 'grid-main' }, h('div', { class: 'stack' }, card('Channels', channels.el)), h('div', { class: 'stack' }, card('Details', details), card('Client properties', clientProps))),
  );

  function render() {
    fill(
      details,
      props([
        ['User', c.user],
        ['Vhost', h('code', {}, c.vhost)],
        ['State', stateBadge(c)],
        ['Protocol', c.protocol],
        ['Client address', c.peer_host !== undefined ? `${c.peer_host}:${c.peer_port}` : null],
        ['Server address', c.host !== undefined ? `${c.host}:${c.port}` : null],
        ['TLS', c.type === 'direct' ? null : c.ssl ? `${c.ssl_protocol ?? 'yes'}` : 'no'],
        ['Auth mechanism', c.auth_mechanism],
        ['Heartbeat', c.timeout !== undefined ? `${c.timeout} s` : null],
        ['Frame max', c.frame_max !== undefined ? num(c.frame_max) : null],
        ['Channel max', c.channel_max !== undefined ? num(c.channel_max) : null],
        ['Connected', when(c.connected_at)],
        ['Received', c.recv_oct !== undefined ? `${bytes(c.recv_oct)} (${num(c.recv_cnt)} packets)` : null],
        ['Sent', c.send_oct !== undefined ? `${bytes(c.send_oct)} (${num(c.send_cnt)} packets)` : null],
      ]),
    );
    const p = c.client_properties ?? {};
    fill(
      clientProps,
      props(
        Object.entries(p).map(([k, v]) => [
          k,
          k === 'capabilities' && v && typeof v === 'object'
            ? h('span', { class: 'features' }, Object.entries(v).filter(([, on]) => on).map(([cap]) => badge(cap, 'muted')))
            : typeof v === 'object' ? h('code', {}, fmtValue(v)) : String(v),
        ]),
      ),
    );
  }

  async function refresh() {
    try {
      c = await api.get(path('connections', name));
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        toast('The connection closed', 'warn');
        location.hash = '#/connections';
        return;
      }
      throw e;
    }
    render();
    channels.update((await api.get(path('connections', name, 'channels'))) ?? []);
  }
  render();
  try {
    channels.update((await api.get(path('connections', name, 'channels'))) ?? []);
  } catch (e) {
    showError(e, 'Loading channels');
    channels.error(e.message);
  }
  return { refresh };
}
