// Admin › Definitions: export (GET /api/definitions[/{vhost}], downloaded as JSON) and import
// (POST the chosen file's JSON), with a summary of what the file holds.

import { api, path } from '../api.js';
import { h, fill, toast, showError } from '../dom.js';
import { num } from '../format.js';
import { card, field, button, busy } from '../widgets.js';

const KINDS = [
  ['users', 'user', 'users'],
  ['vhosts', 'vhost', 'vhosts'],
  ['permissions', 'permission', 'permissions'],
  ['topic_permissions', 'topic permission', 'topic permissions'],
  ['policies', 'policy', 'policies'],
  ['parameters', 'parameter', 'parameters'],
  ['queues', 'queue', 'queues'],
  ['exchanges', 'exchange', 'exchanges'],
  ['bindings', 'binding', 'bindings'],
];

function summary(defs) {
  return h(
    'ul',
    { class: 'def-summary' },
    KINDS.filter(([k]) => Array.isArray(defs[k])).map(([k, one, many]) => h('li', {}, h('strong', {}, num(defs[k].length)), ` ${defs[k].length === 1 ? one : many}`)),
  );
}

export async function mount(root, { ctx }) {
  const scopeOptions = () => [h('option', { value: '' }, 'Everything (all vhosts, users, permissions)'), ctx.vhosts.map((v) => h('option', { value: v.name }, `Only vhost ${v.name}`))];
  const exportScope = h('select', { name: 'export_scope' }, scopeOptions());
  const exportInfo = h('div', { class: 'def-info', role: 'status' });
  const exportBtn = button('Download definitions', async () => {
    await busy(exportBtn, async () => {
      try {
        const scope = exportScope.value;
        const defs = await api.get(scope ? path('definitions', scope) : '/definitions');
        const text = JSON.stringify(defs, null, 2);
        const stamp = new Date().toISOString().slice(0, 10);
        const file = `definitions${scope ? `_${scope.replace(/[^A-Za-z0-9._-]+/g, '_')}` : ''}_${stamp}.json`;
        const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
        const a = h('a', { href: url, download: file, hidden: true });
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(url), 10000);
        fill(exportInfo, h('p', {}, `Downloaded ${file}:`), summary(defs));
      } catch (e) {
        showError(e, 'Exporting definitions');
      }
    });
  }, { kind: 'primary' });

  const importScope = h('select', { name: 'import_scope' }, scopeOptions());
  const file = h('input', { type: 'file', name: 'file', accept: '.json,application/json' });
  const importInfo = h('div', { class: 'def-info', role: 'status' });
  const importBtn = button('Import definitions', null, { kind: 'primary', type: 'submit', disabled: true });
  let chosen = null;
  file.addEventListener('change', async () => {
    chosen = null;
    importBtn.disabled = true;
    const f = file.files?.[0];
    if (!f) return fill(importInfo);
    const text = await f.text();
    try {
      const defs = JSON.parse(text);
      if (!defs || typeof defs !== 'object' || Array.isArray(defs)) throw new Error('the file is not a JSON object');
      chosen = text;
      importBtn.disabled = false;
      fill(importInfo, h('p', {}, `${f.name} holds:`), summary(defs));
    } catch (e) {
      fill(importInfo, h('p', { class: 'result-error' }, `${f.name} is not a definitions file: ${e.message}`));
    }
  });
  const importForm = h(
    'form',
    {
      class: 'form',
      onsubmit: async (ev) => {
        ev.preventDefault();
        if (!chosen) return;
        await busy(importBtn, async () => {
          try {
            const scope = importScope.value;
            await api.post(scope ? path('definitions', scope) : '/definitions', chosen);
            toast('Definitions imported');
            fill(importInfo, h('p', { class: 'result-ok' }, '✓ Imported. Import only adds and updates: nothing was deleted.'));
            await ctx.reloadVhosts();
          } catch (e) {
            fill(importInfo, h('p', { class: 'result-error' }, `Import failed: ${e.message}`));
            showError(e, 'Importing definitions');
          }
        });
      },
    },
    field('Definitions file', file),
    field('Into', importScope),
    h('div', { class: 'form-actions' }, importBtn),
    importInfo,
  );

  fill(
    root,
    h(
      'div',
      { class: 'grid-2' },
      card('Export', h('p', { class: 'muted small' }, 'Users, vhosts, permissions, policies, parameters, queues, exchanges and bindings, in RabbitMQ’s definitions format: load it with --definitions, or import it into RabbitMQ.'), h('div', { class: 'form' }, field('What', exportScope), h('div', { class: 'form-actions' }, exportBtn)), exportInfo),
      card('Import', h('p', { class: 'muted small' }, 'A definitions file exported from Warren or RabbitMQ. Objects that exist are updated; nothing is deleted.'), importForm),
    ),
  );
  return {};
}
