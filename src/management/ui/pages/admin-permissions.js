// Admin › Permissions: who may configure, write and read what in each vhost; set and clear.

import { api, path } from '../api.js';
import { h, fill, toast, showError } from '../dom.js';
import { dataTable } from '../table.js';
import { actionForm, busy, button, card, confirmDialog, field } from '../widgets.js';

export async function mount(root, { ctx }) {
  const userSel = h('select', { name: 'user', required: true });
  const vhostSel = h('select', { name: 'vhost', required: true }, ctx.vhosts.map((v) => h('option', { value: v.name, selected: v.name === (ctx.vhost ?? '/') }, v.name)));
  const configure = h('input', { type: 'text', name: 'configure', value: '.*', spellcheck: 'false' });
  const write = h('input', { type: 'text', name: 'write', value: '.*', spellcheck: 'false' });
  const read = h('input', { type: 'text', name: 'read', value: '.*', spellcheck: 'false' });

  const table = dataTable({
    id: 'permissions',
    columns: [
      { key: 'user', label: 'User', render: (p) => h('span', { class: 'name' }, p.user) },
      { key: 'vhost', label: 'Vhost', render: (p) => h('code', {}, p.vhost) },
      { key: 'configure', label: 'Configure', render: (p) => h('code', {}, p.configure || '""') },
      { key: 'write', label: 'Write', render: (p) => h('code', {}, p.write || '""') },
      { key: 'read', label: 'Read', render: (p) => h('code', {}, p.read || '""') },
      {
        key: 'actions',
        label: '',
        sortable: false,
        render: (p) =>
          h(
            'span',
            { class: 'row-actions' },
            button('Edit', () => {
              userSel.value = p.user;
              vhostSel.value = p.vhost;
              configure.value = p.configure;
              write.value = p.write;
              read.value = p.read;
              configure.focus();
            }, { kind: 'small' }),
            button('Clear', async (ev) => {
              const ok = await confirmDialog({ title: 'Clear permissions', message: `Take away ${p.user}'s access to vhost ${p.vhost}?`, confirmLabel: 'Clear', danger: true });
              if (!ok) return;
              await busy(ev.target, async () => {
                try {
                  await api.del(path('permissions', p.vhost, p.user));
                  toast(`Permissions of ${p.user} on ${p.vhost} cleared`);
                  await refresh();
                } catch (e) {
                  showError(e, 'Clearing permissions');
                }
              });
            }, { kind: 'small danger' }),
          ),
      },
    ],
    rowKey: (p) => `${p.vhost}\u0000${p.user}`,
    filterOn: (p) => `${p.user} ${p.vhost}`,
    emptyText: 'No permissions are set.',
  });

  const form = actionForm(
    'Set permissions',
    'Setting permissions',
    async () => {
      await api.put(path('permissions', vhostSel.value, userSel.value), { configure: configure.value, write: write.value, read: read.value });
      toast(`Permissions of ${userSel.value} on ${vhostSel.value} set`);
      await refresh();
    },
    h('div', { class: 'form-row' }, field('User', userSel), field('Vhost', vhostSel)),
    field('Configure', configure, 'Regular expression over the names of resources the user may declare and delete.'),
    field('Write', write, 'Names of exchanges the user may publish to, and bind from.'),
    field('Read', read, 'Names of queues the user may consume from, and bind to.'),
  );

  fill(root, h('div', { class: 'grid-main' }, h('div', { class: 'stack' }, card('Permissions', table.el)), h('div', { class: 'stack' }, card('Set permissions', form))));

  async function refresh() {
    const [perms, users] = await Promise.all([api.get('/permissions'), api.get('/users')]);
    const selected = userSel.value;
    fill(userSel, (users ?? []).map((u) => h('option', { value: u.name, selected: u.name === selected }, u.name)));
    table.update(perms ?? []);
  }
  try {
    await refresh();
  } catch (e) {
    showError(e, 'Loading permissions');
    table.error(e.message);
  }
  return { refresh };
}
