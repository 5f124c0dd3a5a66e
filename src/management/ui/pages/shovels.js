// Shovels: the dynamic shovels (/api/shovels) with their state — a terminated one says why —
// and, on Warren, their message counts (/api/warren/shovels; RabbitMQ has no counts, the columns
// then stay empty). Add a shovel (a `shovel` runtime parameter), restart one, delete one.

import { api, path } from '../api.js';
import { h, fill, toast, showError } from '../dom.js';
import { num } from '../format.js';
import { dataTable } from '../table.js';
import { actionForm, badge, busy, button, card, confirmDialog, field, pageHeader } from '../widgets.js';

const STATE_KIND = { running: 'ok', starting: 'warn', terminated: 'danger' };

function endpoint(uri, parts) {
  if (uri === undefined) return h('span', { class: 'muted' }, '–');
  const where = parts.filter(([, v]) => v !== undefined).map(([k, v]) => h('span', { class: 'muted' }, ` ${k} `, h('code', {}, v || '""')));
  return h('span', { class: 'shovel-end' }, h('code', {}, uri), h('br'), ...where);
}

export async function mount(root, { ctx }) {
  const vhost = ctx.vhost;
  let counts = new Map();
  const countCell = (key) => (s) => {
    const c = counts.get(`${s.vhost}\u0000${s.name}`);
    return c ? num(c[key]) : h('span', { class: 'muted' }, '–');
  };
  const table = dataTable({
    id: 'shovels',
    columns: [
      { key: 'name', label: 'Name', render: (s) => h('span', { class: 'name' }, s.name) },
      vhost === null ? { key: 'vhost', label: 'Vhost', cls: 'opt' } : null,
      {
        key: 'state',
        label: 'State',
        render: (s) => h('span', {}, badge(s.state, STATE_KIND[s.state] ?? 'muted', s.reason), s.reason ? h('div', { class: 'muted shovel-reason' }, s.reason) : null),
      },
      { key: 'src_uri', label: 'Source', sortable: false, render: (s) => endpoint(s.src_uri, [['queue', s.src_queue], ['exchange', s.src_exchange], ['key', s.src_exchange_key]]) },
      { key: 'dest_uri', label: 'Destination', sortable: false, render: (s) => endpoint(s.dest_uri, [['queue', s.dest_queue], ['exchange', s.dest_exchange], ['key', s.dest_exchange_key]]) },
      { key: 'forwarded', label: 'Forwarded', num: true, get: (s) => counts.get(`${s.vhost}\u0000${s.name}`)?.forwarded ?? -1, render: countCell('forwarded') },
      { key: 'acked', label: 'Acked', num: true, get: (s) => counts.get(`${s.vhost}\u0000${s.name}`)?.acked ?? -1, render: countCell('acked') },
      { key: 'pending', label: 'Pending', num: true, cls: 'opt', get: (s) => counts.get(`${s.vhost}\u0000${s.name}`)?.pending ?? -1, render: countCell('pending') },
      { key: 'restarts', label: 'Restarts', num: true, cls: 'opt', get: (s) => counts.get(`${s.vhost}\u0000${s.name}`)?.restarts ?? -1, render: countCell('restarts') },
      { key: 'timestamp', label: 'Since', cls: 'opt' },
      {
        key: 'actions',
        label: '',
        sortable: false,
        render: (s) =>
          h(
            'span',
            { class: 'features' },
            button('Restart', (ev) => act(s, ev.target, 'restart'), { kind: 'small', title: `Restart ${s.name}` }),
            button('Delete', (ev) => act(s, ev.target, 'delete'), { kind: 'small danger', title: `Delete ${s.name}` }),
          ),
      },
    ].filter(Boolean),
    rowKey: (s) => `${s.vhost}\u0000${s.name}`,
    filterOn: (s) => `${s.name} ${s.src_queue ?? s.src_exchange ?? ''} ${s.dest_queue ?? s.dest_exchange ?? ''}`,
    emptyText: 'No shovel. Add one to move messages from a queue or exchange to another broker (Warren or RabbitMQ).',
  });

  async function act(s, btn, what) {
    if (what === 'delete') {
      const ok = await confirmDialog({ title: 'Delete shovel', message: `Deleting “${s.name}” stops it and deletes its parameter. Messages it has not moved stay where they are.`, confirmLabel: 'Delete shovel', danger: true });
      if (!ok) return;
    }
    await busy(btn, async () => {
      try {
        await api.del(what === 'delete' ? path('shovels', 'vhost', s.vhost, s.name) : path('shovels', 'vhost', s.vhost, s.name, 'restart'));
        toast(what === 'delete' ? `Shovel ${s.name} deleted` : `Shovel ${s.name} restarted`);
        await refresh();
      } catch (e) {
        showError(e, what === 'delete' ? 'Deleting the shovel' : 'Restarting the shovel');
      }
    });
  }

  const input = (name, attrs = {}) => h('input', { type: 'text', name, autocomplete: 'off', spellcheck: 'false', ...attrs });
  const name = input('name', { required: true });
  const srcUri = input('src-uri', { value: 'amqp://', required: true });
  const srcQueue = input('src-queue', { required: true });
  const destUri = input('dest-uri', { required: true, placeholder: 'amqp://user:password@host:5672/vhost' });
  const destQueue = input('dest-queue', { required: true });
  const ackMode = h('select', { name: 'ack-mode' }, ['on-confirm', 'on-publish', 'no-ack'].map((m) => h('option', { value: m }, m)));
  const deleteAfter = h('select', { name: 'src-delete-after' }, [['never', 'never'], ['queue-length', 'once the queue is drained (queue-length)']].map(([v, l]) => h('option', { value: v }, l)));
  const form = actionForm(
    'Add shovel',
    'Adding the shovel',
    async () => {
      const value = { 'src-uri': srcUri.value, 'src-queue': srcQueue.value, 'dest-uri': destUri.value, 'dest-queue': destQueue.value, 'ack-mode': ackMode.value, 'src-delete-after': deleteAfter.value };
      await api.put(path('parameters', 'shovel', vhost ?? '/', name.value), { value });
      toast(`Shovel ${name.value} added`);
      name.value = '';
      await refresh();
    },
    field('Name', name),
    field('Source URI', srcUri, 'amqp:// is this broker'),
    field('Source queue', srcQueue),
    field('Destination URI', destUri),
    field('Destination queue', destQueue),
    field('Acknowledge', ackMode, 'on-confirm: at the source once the destination confirmed'),
    field('Delete', deleteAfter),
  );

  fill(
    root,
    pageHeader('Shovels', { sub: vhost !== null ? ['vhost ', h('code', {}, vhost)] : 'all vhosts' }),
    h('div', { class: 'stack' }, card(null, table.el), card(`Add a shovel${vhost !== null ? '' : ' (in vhost /)'}`, h('div', { class: 'shovel-form' }, form))),
  );

  async function refresh() {
    const list = (await api.get(vhost === null ? '/shovels' : path('shovels', vhost))) ?? [];
    // Warren's counts; RabbitMQ answers 404 here.
    const c = await api.get('/warren/shovels').catch(() => null);
    counts = new Map((Array.isArray(c) ? c : []).map((x) => [`${x.vhost}\u0000${x.name}`, x]));
    table.update(list);
  }
  try {
    await refresh();
  } catch (e) {
    showError(e, 'Loading shovels');
    table.error(e.message);
  }
  return { refresh };
}
