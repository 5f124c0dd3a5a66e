// Admin › Policies: list, add or replace (the same name replaces), delete.

import { api, path } from '../api.js';
import { h, fill, toast, showError } from '../dom.js';
import { value as fmtValue } from '../format.js';
import { dataTable } from '../table.js';
import { actionForm, badge, busy, button, card, confirmDialog, field, kvEditor } from '../widgets.js';

const KEYS = [
  'message-ttl',
  'expires',
  'max-length',
  'max-length-bytes',
  'overflow',
  'dead-letter-exchange',
  'dead-letter-routing-key',
  'alternate-exchange',
  'delivery-limit',
  'queue-mode',
  'max-priority',
  'ha-mode',
  'ha-params',
  'ha-sync-mode',
];

export async function mount(root, { ctx }) {
  const vhostSel = h('select', { name: 'vhost' }, ctx.vhosts.map((v) => h('option', { value: v.name, selected: v.name === (ctx.vhost ?? '/') }, v.name)));
  const name = h('input', { type: 'text', name: 'name', required: true, spellcheck: 'false', autocomplete: 'off' });
  const pattern = h('input', { type: 'text', name: 'pattern', required: true, spellcheck: 'false', placeholder: '^orders\\.' });
  const applyTo = h('select', { name: 'apply-to' }, ['all', 'queues', 'exchanges'].map((v) => h('option', { value: v }, v)));
  const priority = h('input', { type: 'number', name: 'priority', value: '0' });
  const definition = kvEditor({ suggestions: KEYS, keyLabel: 'Key', name: 'policy-definition' });

  const table = dataTable({
    id: 'policies',
    columns: [
      { key: 'name', label: 'Name', render: (p) => h('span', { class: 'name' }, p.name) },
      { key: 'vhost', label: 'Vhost', render: (p) => h('code', {}, p.vhost) },
      { key: 'pattern', label: 'Pattern', render: (p) => h('code', {}, p.pattern) },
      { key: 'apply-to', label: 'Applies to', render: (p) => badge(p['apply-to'], 'muted') },
      { key: 'priority', label: 'Priority', num: true },
      { key: 'definition', label: 'Definition', sortable: false, render: (p) => h('span', { class: 'features' }, Object.entries(p.definition ?? {}).map(([k, v]) => badge(`${k}: ${fmtValue(v)}`, 'info'))) },
      {
        key: 'actions',
        label: '',
        sortable: false,
        render: (p) =>
          h(
            'span',
            { class: 'row-actions' },
            button('Edit', () => {
              vhostSel.value = p.vhost;
              name.value = p.name;
              pattern.value = p.pattern;
              applyTo.value = p['apply-to'];
              priority.value = String(p.priority ?? 0);
              definition.set(p.definition);
              pattern.focus();
            }, { kind: 'small' }),
            button('Delete', async (ev) => {
              const ok = await confirmDialog({ title: 'Delete policy', message: `Delete policy “${p.name}” in vhost ${p.vhost}? Queues and exchanges it matched lose its settings at once.`, confirmLabel: 'Delete policy', danger: true });
              if (!ok) return;
              await busy(ev.target, async () => {
                try {
                  await api.del(path('policies', p.vhost, p.name));
                  toast(`Policy ${p.name} deleted`);
                  await refresh();
                } catch (e) {
                  showError(e, 'Deleting the policy');
                }
              });
            }, { kind: 'small danger' }),
          ),
      },
    ],
    rowKey: (p) => `${p.vhost}\u0000${p.name}`,
    emptyText: 'No policies.',
  });

  const form = actionForm(
    'Save policy',
    'Saving the policy',
    async () => {
      await api.put(path('policies', vhostSel.value, name.value), { pattern: pattern.value, 'apply-to': applyTo.value, priority: Number(priority.value) || 0, definition: definition.value() });
      toast(`Policy ${name.value} saved`);
      await refresh();
    },
    h('div', { class: 'form-row' }, field('Vhost', vhostSel), field('Name', name)),
    h('div', { class: 'form-row' }, field('Pattern', pattern, 'A regular expression matched against queue or exchange names.'), field('Apply to', applyTo), field('Priority', priority)),
    field('Definition', definition.el),
  );

  fill(root, card('Policies', h('p', { class: 'muted small' }, 'The matching policy with the highest priority applies to a queue or exchange; definitions are not merged.'), table.el), card('Add or replace a policy', form));

  async function refresh() {
    table.update((await api.get(ctx.vhost === null ? '/policies' : path('policies', ctx.vhost))) ?? []);
  }
  try {
    await refresh();
  } catch (e) {
    showError(e, 'Loading policies');
    table.error(e.message);
  }
  return { refresh };
}
