// Exchanges: the list with a filter, and the form to add one.

import { api, path } from '../api.js';
import { h, fill, toast, showError } from '../dom.js';
import { num, rate, exchangeName, count } from '../format.js';
import { dataTable, tableFilter } from '../table.js';
import { actionForm, badge, card, collapsible, field, kvEditor, pageHeader } from '../widgets.js';
import { setQuery } from '../app.js';

function features(x) {
  const out = [];
  if (x.durable) out.push(badge('D', 'muted', 'durable'));
  if (x.auto_delete) out.push(badge('AD', 'muted', 'auto-delete'));
  if (x.internal) out.push(badge('I', 'warn', 'internal'));
  if (x.arguments?.['alternate-exchange'] !== undefined) out.push(badge('AE', 'info', `alternate-exchange: ${x.arguments['alternate-exchange']}`));
  if (x.policy) out.push(badge(x.policy, 'policy', `policy ${x.policy}`));
  return h('span', { class: 'features' }, out);
}

export async function mount(root, { ctx, query }) {
  const vhost = ctx.vhost;
  const showVhost = vhost === null && ctx.vhosts.length > 1;
  const counter = h('span', { class: 'count', 'aria-live': 'polite' });
  const table = dataTable({
    id: 'exchanges',
    columns: [
      { key: 'name', label: 'Name', get: (x) => x.name, render: (x) => h('span', { class: x.name === '' ? 'name muted-name' : 'name' }, exchangeName(x.name)) },
      showVhost ? { key: 'vhost', label: 'Vhost', cls: 'opt' } : null,
      { key: 'type', label: 'Type', render: (x) => badge(x.type, 'type') },
      { key: 'features', label: 'Features', sortable: false, render: features },
      { key: 'rate_in', label: 'In', num: true, cls: 'opt', title: 'Sort by messages published in', get: (x) => x.message_stats?.publish_in_details?.rate ?? 0, render: (x) => rate(x.message_stats?.publish_in_details?.rate ?? 0) },
      { key: 'rate_out', label: 'Out', num: true, cls: 'opt', title: 'Sort by messages routed out', get: (x) => x.message_stats?.publish_out_details?.rate ?? 0, render: (x) => rate(x.message_stats?.publish_out_details?.rate ?? 0) },
    ].filter(Boolean),
    rowKey: (x) => `${x.vhost}\u0000${x.name}`,
    rowHref: (x) => `#${path('exchanges', x.vhost, x.name === '' ? 'amq.default' : x.name)}`,
    filterOn: (x) => exchangeName(x.name),
  });
  table.el.addEventListener('shown', (ev) => {
    counter.textContent = count(ev.detail.shown, 'exchange', ev.detail.total);
  });
  const filter = tableFilter(table, { placeholder: 'Filter exchanges by name', query, setQuery, regex: true });

  const { button: addBtn, box: addBox } = collapsible('Add exchange');

  fill(root, pageHeader('Exchanges', { sub: vhost !== null ? ['vhost ', h('code', {}, vhost)] : 'all vhosts', actions: [addBtn] }), addBox, h('div', { class: 'toolbar' }, filter.el, counter), table.el);

  const types = (await api.get('/overview').catch(() => null))?.exchange_types?.map((t) => t.name) ?? ['direct', 'fanout', 'topic', 'headers'];
  buildAddForm(addBox, ctx, types, () => refresh());

  async function refresh() {
    table.update((await api.get(vhost === null ? '/exchanges' : path('exchanges', vhost))) ?? []);
  }
  try {
    await refresh();
  } catch (e) {
    showError(e, 'Loading exchanges');
    table.error(e.message);
  }
  if (!filter.input.value) filter.input.focus();
  return { refresh };
}

function buildAddForm(box, ctx, types, done) {
  const vhostSel = h('select', { name: 'vhost' }, ctx.vhosts.map((v) => h('option', { value: v.name, selected: v.name === (ctx.vhost ?? '/') }, v.name)));
  const name = h('input', { type: 'text', name: 'name', required: true, spellcheck: 'false', autocomplete: 'off' });
  const type = h('select', { name: 'type' }, types.map((t) => h('option', { value: t }, t)));
  const durable = h('input', { type: 'checkbox', name: 'durable', checked: true });
  const autoDelete = h('input', { type: 'checkbox', name: 'auto_delete' });
  const internal = h('input', { type: 'checkbox', name: 'internal' });
  const args = kvEditor({ suggestions: ['alternate-exchange', 'x-delayed-type', 'x-cache-size', 'x-cache-ttl', 'x-cache-persistence'], keyLabel: 'Argument', name: 'exchange-args' });
  const form = actionForm(
    'Add exchange',
    'Adding the exchange',
    async () => {
      await api.put(path('exchanges', vhostSel.value, name.value), { type: type.value, durable: durable.checked, auto_delete: autoDelete.checked, internal: internal.checked, arguments: args.value() });
      toast(`Exchange ${name.value} declared`);
      name.value = '';
      args.set({});
      await done();
    },
    h('div', { class: 'form-row' }, field('Vhost', vhostSel), field('Name', name), field('Type', type)),
    h('div', { class: 'form-row checks' }, h('label', { class: 'check' }, durable, ' Durable'), h('label', { class: 'check' }, autoDelete, ' Auto-delete'), h('label', { class: 'check' }, internal, ' Internal')),
    field('Arguments', args.el),
  );
  fill(box, card('Add an exchange', form));
}
