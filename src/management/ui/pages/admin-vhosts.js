// Admin › Virtual hosts: list with message counts, add (optionally granting yourself access),
// delete (typing the name to confirm: it deletes everything in it).

import { api, path, currentUser } from '../api.js';
import { h, fill, toast, showError } from '../dom.js';
import { num } from '../format.js';
import { dataTable } from '../table.js';
import { actionForm, badge, busy, button, card, confirmDialog, field } from '../widgets.js';

export async function mount(root, { ctx }) {
  const table = dataTable({
    id: 'vhosts',
    columns: [
      { key: 'name', label: 'Name', render: (v) => h('span', { class: 'name' }, v.name) },
      { key: 'description', label: 'Description', cls: 'opt', render: (v) => v.description || v.metadata?.description || h('span', { class: 'muted' }, '–') },
      { key: 'tags', label: 'Tags', cls: 'opt', sortable: false, render: (v) => h('span', { class: 'features' }, (v.tags ?? v.metadata?.tags ?? []).map((t) => badge(t, 'muted'))) },
      { key: 'messages_ready', label: 'Ready', num: true, render: (v) => num(v.messages_ready ?? 0) },
      { key: 'messages_unacknowledged', label: 'Unacked', num: true, render: (v) => num(v.messages_unacknowledged ?? 0) },
      { key: 'messages', label: 'Total', num: true, render: (v) => num(v.messages ?? 0) },
      {
        key: 'actions',
        label: '',
        sortable: false,
        render: (v) => button('Delete', (ev) => deleteVhost(v, ev.target), { kind: 'small danger', title: `Delete ${v.name}` }),
      },
    ],
    rowKey: (v) => v.name,
    emptyText: 'No virtual hosts.',
  });

  async function deleteVhost(v, btn) {
    const ok = await confirmDialog({
      title: 'Delete virtual host',
      message: `Deleting “${v.name}” deletes all its queues (with ${num(v.messages ?? 0)} messages), exchanges, bindings, permissions and policies, and closes its connections.`,
      confirmLabel: 'Delete vhost',
      danger: true,
      confirmText: v.name,
    });
    if (!ok) return;
    await busy(btn, async () => {
      try {
        await api.del(path('vhosts', v.name));
        toast(`Vhost ${v.name} deleted`);
        await ctx.reloadVhosts();
        await refresh();
      } catch (e) {
        showError(e, 'Deleting the vhost');
      }
    });
  }

  const name = h('input', { type: 'text', name: 'vhost', required: true, autocomplete: 'off', spellcheck: 'false' });
  const description = h('input', { type: 'text', name: 'description' });
  const tags = h('input', { type: 'text', name: 'tags', placeholder: 'comma-separated', spellcheck: 'false' });
  const grant = h('input', { type: 'checkbox', name: 'grant', checked: true });
  const form = actionForm(
    'Add vhost',
    'Adding the vhost',
    async () => {
      const body = {};
      if (description.value) body.description = description.value;
      if (tags.value) body.tags = tags.value;
      await api.put(path('vhosts', name.value), body);
      if (grant.checked) await api.put(path('permissions', name.value, currentUser()), { configure: '.*', write: '.*', read: '.*' });
      toast(`Vhost ${name.value} added`);
      name.value = '';
      description.value = '';
      tags.value = '';
      await ctx.reloadVhosts();
      await refresh();
    },
    field('Name', name),
    field('Description', description),
    field('Tags', tags),
    h('label', { class: 'check' }, grant, ` Give me (${currentUser()}) full permissions on it`),
  );

  fill(root, h('div', { class: 'grid-main' }, h('div', { class: 'stack' }, card('Virtual hosts', table.el)), h('div', { class: 'stack' }, card('Add a virtual host', form))));

  async function refresh() {
    table.update((await api.get('/vhosts')) ?? []);
  }
  try {
    await refresh();
  } catch (e) {
    showError(e, 'Loading vhosts');
    table.error(e.message);
  }
  return { refresh };
}
