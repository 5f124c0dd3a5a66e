// Channels: every open channel with its mode, prefetch, consumers and unacked messages.

import { api, path } from '../api.js';
import { h, fill, showError } from '../dom.js';
import { num, rate, count } from '../format.js';
import { dataTable, tableFilter } from '../table.js';
import { badge, pageHeader } from '../widgets.js';
import { setQuery } from '../app.js';

function mode(ch) {
  const out = [];
  if (ch.confirm) out.push(badge('confirm', 'info', 'publisher confirms'));
  if (ch.transactional) out.push(badge('tx', 'info', 'transactional'));
  return out.length ? h('span', { class: 'features' }, out) : h('span', { class: 'muted' }, '–');
}

/** The channel columns, shared with the connection page (which leaves out the connection). */
export function channelColumns(withConnection = true, withVhost = false) {
  return [
    {
      key: 'name',
      label: 'Channel',
      get: (ch) => ch.name,
      render: (ch) => (withConnection && ch.connection_details?.name ? h('a', { href: `#${path('connections', ch.connection_details.name)}`, class: 'name' }, ch.name) : h('span', { class: 'name' }, withConnection ? ch.name : `Channel ${ch.number}`)),
    },
    { key: 'user', label: 'User', cls: 'opt' },
    withVhost ? { key: 'vhost', label: 'Vhost', cls: 'opt' } : null,
    { key: 'mode', label: 'Mode', sortable: false, render: mode },
    { key: 'state', label: 'State', render: (ch) => badge(ch.state ?? '–', ch.state === 'running' || ch.state === 'idle' ? 'ok' : 'warn') },
    { key: 'prefetch_count', label: 'Prefetch', num: true, render: (ch) => (ch.prefetch_count ? num(ch.prefetch_count) : h('span', { class: 'muted' }, 'none')) },
    { key: 'consumer_count', label: 'Consumers', num: true, render: (ch) => num(ch.consumer_count ?? 0) },
    { key: 'messages_unacknowledged', label: 'Unacked', num: true, render: (ch) => num(ch.messages_unacknowledged ?? 0) },
    { key: 'messages_unconfirmed', label: 'Unconfirmed', num: true, cls: 'opt', render: (ch) => num(ch.messages_unconfirmed ?? 0) },
    { key: 'rate_pub', label: 'Publish', num: true, cls: 'opt', get: (ch) => ch.message_stats?.publish_details?.rate ?? 0, render: (ch) => rate(ch.message_stats?.publish_details?.rate ?? 0) },
  ].filter(Boolean);
}

export async function mount(root, { ctx, query }) {
  const vhost = ctx.vhost;
  const counter = h('span', { class: 'count', 'aria-live': 'polite' });
  const table = dataTable({
    id: 'channels',
    columns: channelColumns(true, vhost === null && ctx.vhosts.length > 1),
    rowKey: (ch) => ch.name,
    filterOn: (ch) => `${ch.name} ${ch.user}`,
    emptyText: 'No channel is open.',
  });
  table.el.addEventListener('shown', (ev) => {
    counter.textContent = count(ev.detail.shown, 'channel', ev.detail.total);
  });
  const filter = tableFilter(table, { placeholder: 'Filter by connection or user', query, setQuery });
  fill(root, pageHeader('Channels', { sub: vhost !== null ? ['vhost ', h('code', {}, vhost)] : 'all vhosts' }), h('div', { class: 'toolbar' }, filter.el, counter), table.el);

  async function refresh() {
    table.update((await api.get(vhost === null ? '/channels' : path('vhosts', vhost, 'channels'))) ?? []);
  }
  try {
    await refresh();
  } catch (e) {
    showError(e, 'Loading channels');
    table.error(e.message);
  }
  return { refresh };
}
