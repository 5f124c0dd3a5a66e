// Queues: the list (instant filter, sortable columns, message counts) and the form to add one.

import { api, path } from '../api.js';
import { h, fill, toast, showError } from '../dom.js';
import { num, rate, count } from '../format.js';
import { dataTable, tableFilter } from '../table.js';
import { actionForm, badge, card, collapsible, field, kvEditor, pageHeader } from '../widgets.js';
import { setQuery } from '../app.js';

export const QUEUE_ARGS = [
  'x-message-ttl',
  'x-expires',
  'x-max-length',
  'x-max-length-bytes',
  'x-overflow',
  'x-dead-letter-exchange',
  'x-dead-letter-routing-key',
  'x-max-priority',
  'x-single-active-consumer',
  'x-queue-mode',
  'x-delivery-limit',
  'x-queue-master-locator',
  'x-message-deduplication',
  'x-last-value-key',
  'x-last-value-version',
];

/** Short badges for what is special about a queue: durability, exclusivity, arguments, policy. */
export function queueFeatures(q) {
  const a = q.arguments ?? {};
  const out = [];
  if (q.durable) out.push(badge('D', 'muted', 'durable'));
  if (q.auto_delete) out.push(badge('AD', 'muted', 'auto-delete'));
  if (q.exclusive) out.push(badge('Excl', 'warn', 'exclusive'));
  if (a['x-message-ttl'] !== undefined) out.push(badge('TTL', 'info', `x-message-ttl: ${a['x-message-ttl']} ms`));
  if (a['x-expires'] !== undefined) out.push(badge('Exp', 'info', `x-expires: ${a['x-expires']} ms`));
  if (a['x-dead-letter-exchange'] !== undefined) out.push(badge('DLX', 'info', `x-dead-letter-exchange: ${a['x-dead-letter-exchange']}`));
  if (a['x-max-length'] !== undefined || a['x-max-length-bytes'] !== undefined) out.push(badge('Lim', 'info', `max length ${a['x-max-length'] ?? ''} ${a['x-max-length-bytes'] !== undefined ? `${a['x-max-length-bytes']} bytes` : ''}`.trim()));
  if (a['x-max-priority'] !== undefined) out.push(badge('Pri', 'info', `x-max-priority: ${a['x-max-priority']}`));
  if (a['x-single-active-consumer']) out.push(badge('SAC', 'info', 'single active consumer'));
  if (a['x-message-deduplication'] !== undefined && a['x-message-deduplication'] !== false) out.push(badge('Dedup', 'info', 'x-message-deduplication'));
  if (a['x-last-value-key'] !== undefined) out.push(badge('LV', 'info', `last value by ${a['x-last-value-key']}${a['x-last-value-version'] !== undefined ? `, version ${a['x-last-value-version']}` : ''}`));
  if (q.policy) out.push(badge(q.policy, 'policy', `policy ${q.policy}`));
  if (q.operator_policy) out.push(badge(q.operator_policy, 'policy', `operator policy ${q.operator_policy}`));
  return h('span', { class: 'features' }, out);
}

export async function mount(root, { ctx, query }) {
  const vhost = ctx.vhost;
  const showVhost = vhost === null && ctx.vhosts.length > 1;
  const summary = h('span');
  const counter = h('span', { class: 'count', 'aria-live': 'polite' });

  const columns = [
    { key: 'name', label: 'Name', render: (q) => h('span', { class: 'name' }, q.name) },
    showVhost ? { key: 'vhost', label: 'Vhost', cls: 'opt' } : null,
    { key: 'type', label: 'Type', cls: 'opt', render: (q) => q.type ?? 'classic' },
    { key: 'features', label: 'Features', cls: 'opt', sortable: false, render: queueFeatures },
    { key: 'state', label: 'State', cls: 'opt', render: (q) => badge(q.state ?? 'running', q.state && q.state !== 'running' ? 'warn' : 'ok') },
    { key: 'consumers', label: 'Consumers', num: true, cls: 'opt-xs', get: (q) => q.consumers ?? 0, render: (q) => num(q.consumers ?? 0) },
    { key: 'messages_ready', label: 'Ready', num: true, get: (q) => q.messages_ready ?? 0, render: (q) => num(q.messages_ready ?? 0) },
    { key: 'messages_unacknowledged', label: 'Unacked', num: true, get: (q) => q.messages_unacknowledged ?? 0, render: (q) => num(q.messages_unacknowledged ?? 0) },
    { key: 'messages', label: 'Total', num: true, get: (q) => q.messages ?? 0, render: (q) => h('strong', {}, num(q.messages ?? 0)) },
    { key: 'rate_in', label: 'In', num: true, cls: 'opt', title: 'Sort by publish rate', get: (q) => q.message_stats?.publish_details?.rate ?? 0, render: (q) => rate(q.message_stats?.publish_details?.rate ?? 0) },
    { key: 'rate_out', label: 'Out', num: true, cls: 'opt', title: 'Sort by deliver/get rate', get: (q) => q.message_stats?.deliver_get_details?.rate ?? 0, render: (q) => rate(q.message_stats?.deliver_get_details?.rate ?? 0) },
  ].filter(Boolean);

  const table = dataTable({
    id: 'queues',
    columns,
    rowKey: (q) => `${q.vhost}\u0000${q.name}`,
    rowHref: (q) => `#${path('queues', q.vhost, q.name)}`,
    emptyText: vhost === null ? 'No queues yet.' : `No queues in vhost ${vhost} yet.`,
  });
  table.el.addEventListener('shown', (ev) => {
    counter.textContent = count(ev.detail.shown, 'queue', ev.detail.total);
  });

  const filter = tableFilter(table, { placeholder: 'Filter queues by name', query, setQuery, regex: true });

  const { button: addBtn, box: addForm } = collapsible('Add queue');

  fill(
    root,
    pageHeader('Queues', { sub: summary, actions: [addBtn] }),
    addForm,
    h('div', { class: 'toolbar' }, filter.el, counter),
    table.el,
  );
  buildAddForm(addForm, ctx, () => refresh());

  async function refresh() {
    const list = (await api.get(vhost === null ? '/queues' : path('queues', vhost))) ?? [];
    let ready = 0;
    let unacked = 0;
    for (const q of list) {
      ready += q.messages_ready ?? 0;
      unacked += q.messages_unacknowledged ?? 0;
    }
    fill(summary, `${num(ready)} ready · ${num(unacked)} unacked`, vhost !== null ? [' · vhost ', h('code', {}, vhost)] : '');
    table.update(list);
  }
  try {
    await refresh();
  } catch (e) {
    showError(e, 'Loading queues');
    table.error(e.message);
  }
  if (!filter.input.value) filter.input.focus();
  return { refresh };
}

function buildAddForm(box, ctx, done) {
  const vhostSel = h('select', { name: 'vhost' }, ctx.vhosts.map((v) => h('option', { value: v.name, selected: v.name === (ctx.vhost ?? '/') }, v.name)));
  const name = h('input', { type: 'text', name: 'name', required: true, spellcheck: 'false', autocomplete: 'off' });
  const type = h('select', { name: 'type' }, ['classic', 'quorum', 'stream'].map((t) => h('option', { value: t }, t)));
  const durable = h('input', { type: 'checkbox', name: 'durable', checked: true });
  const autoDelete = h('input', { type: 'checkbox', name: 'auto_delete' });
  const args = kvEditor({ suggestions: QUEUE_ARGS, keyLabel: 'Argument', name: 'queue-args' });
  const form = actionForm(
    'Add queue',
    'Adding the queue',
    async () => {
      const a = args.value();
      if (type.value !== 'classic') a['x-queue-type'] = type.value;
      await api.put(path('queues', vhostSel.value, name.value), { durable: durable.checked, auto_delete: autoDelete.checked, arguments: a });
      toast(`Queue ${name.value} declared`);
      name.value = '';
      args.set({});
      await done();
    },
    h('div', { class: 'form-row' }, field('Vhost', vhostSel), field('Name', name), field('Type', type)),
    h('div', { class: 'form-row checks' }, h('label', { class: 'check' }, durable, ' Durable'), h('label', { class: 'check' }, autoDelete, ' Auto-delete')),
    field('Arguments', args.el),
  );
  fill(box, card('Add a queue', form));
}
