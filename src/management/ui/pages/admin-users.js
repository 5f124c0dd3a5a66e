// Admin › Users: list, add (with tags and, optionally, permissions on a vhost), edit tags or
// password, delete.

import { api, path, currentUser } from '../api.js';
import { h, fill, toast, showError } from '../dom.js';
import { dataTable, filterBox } from '../table.js';
import { actionForm, badge, busy, button, card, confirmDialog, field } from '../widgets.js';

export const TAGS = ['administrator', 'monitoring', 'policymaker', 'management', 'impersonator'];

function tagList(tags) {
  return Array.isArray(tags) ? tags : String(tags ?? '').split(',').map((t) => t.trim()).filter(Boolean);
}

function tagPicker(selected = []) {
  const boxes = TAGS.map((t) => h('input', { type: 'checkbox', name: 'tag', value: t, checked: selected.includes(t) }));
  const other = h('input', { type: 'text', name: 'other_tags', placeholder: 'other tags, comma-separated', value: selected.filter((t) => !TAGS.includes(t)).join(', '), spellcheck: 'false' });
  const el = h('div', { class: 'tag-picker' }, h('div', { class: 'checks' }, boxes.map((b) => h('label', { class: 'check' }, b, ` ${b.value}`))), other);
  return {
    el,
    value: () => [...boxes.filter((b) => b.checked).map((b) => b.value), ...other.value.split(',').map((t) => t.trim()).filter(Boolean)],
  };
}

export async function mount(root, { ctx }) {
  let permissions = [];
  const table = dataTable({
    id: 'users',
    columns: [
      { key: 'name', label: 'Name', render: (u) => [h('span', { class: 'name' }, u.name), u.name === currentUser() ? h('span', { class: 'muted' }, ' (you)') : null] },
      { key: 'tags', label: 'Tags', get: (u) => tagList(u.tags).join(','), render: (u) => h('span', { class: 'features' }, tagList(u.tags).map((t) => badge(t, t === 'administrator' ? 'warn' : 'info'))) },
      { key: 'vhosts', label: 'Can access', sortable: false, render: (u) => {
        const vs = permissions.filter((p) => p.user === u.name).map((p) => p.vhost);
        return vs.length ? h('span', { class: 'features' }, vs.map((v) => h('code', {}, v))) : h('span', { class: 'muted' }, 'no vhost');
      } },
      { key: 'password', label: 'Password', cls: 'opt', get: (u) => (u.password_hash ? 1 : 0), render: (u) => (u.password_hash ? 'set' : h('span', { class: 'muted' }, 'none (cannot log in with a password)')) },
      {
        key: 'actions',
        label: '',
        sortable: false,
        render: (u) =>
          h(
            'span',
            { class: 'row-actions' },
            button('Edit', () => editUser(u), { kind: 'small', title: `Edit ${u.name}` }),
            button('Delete', (ev) => deleteUser(u, ev.target), { kind: 'small danger', title: `Delete ${u.name}` }),
          ),
      },
    ],
    rowKey: (u) => u.name,
    emptyText: 'No users.',
  });
  const filter = filterBox({ placeholder: 'Filter users', onChange: (m) => table.setMatcher(m), onDown: () => table.focusFirst() });

  async function editUser(u) {
    const tags = tagPicker(tagList(u.tags));
    const password = h('input', { type: 'password', name: 'new_password', autocomplete: 'new-password', placeholder: 'leave empty to keep it' });
    const ok = await confirmDialog({ title: `Edit user ${u.name}`, confirmLabel: 'Save', body: h('div', { class: 'form' }, field('Tags', tags.el), field('New password', password)) });
    if (!ok) return;
    // A PUT without a password clears it, so an edit that keeps it sends the stored hash back.
    const body = password.value ? { password: password.value, tags: tags.value().join(',') } : { password_hash: u.password_hash ?? '', hashing_algorithm: u.hashing_algorithm, tags: tags.value().join(',') };
    try {
      await api.put(path('users', u.name), body);
      toast(`User ${u.name} updated`);
      await refresh();
    } catch (e) {
      showError(e, 'Updating the user');
    }
  }

  async function deleteUser(u, btn) {
    const ok = await confirmDialog({
      title: 'Delete user',
      message: u.name === currentUser() ? `Delete “${u.name}”? That is you: you will be logged out.` : `Delete user “${u.name}” and its permissions?`,
      confirmLabel: 'Delete user',
      danger: true,
    });
    if (!ok) return;
    await busy(btn, async () => {
      try {
        await api.del(path('users', u.name));
        toast(`User ${u.name} deleted`);
        await refresh();
      } catch (e) {
        showError(e, 'Deleting the user');
      }
    });
  }

  // The add form.
  const name = h('input', { type: 'text', name: 'username', required: true, autocomplete: 'off', spellcheck: 'false' });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'new-password' });
  const tags = tagPicker(['management']);
  const grant = h('select', { name: 'grant' }, h('option', { value: '' }, 'no permissions yet'), ctx.vhosts.map((v) => h('option', { value: v.name }, `full access to ${v.name}`)));
  const form = actionForm(
    'Add user',
    'Adding the user',
    async () => {
      await api.put(path('users', name.value), { password: password.value, tags: tags.value().join(',') });
      if (grant.value) await api.put(path('permissions', grant.value, name.value), { configure: '.*', write: '.*', read: '.*' });
      toast(`User ${name.value} added`);
      name.value = '';
      password.value = '';
      await refresh();
    },
    h('div', { class: 'form-row' }, field('Username', name), field('Password', password, 'Empty: the user cannot log in with a password.'), field('Permissions', grant)),
    field('Tags', tags.el),
  );

  fill(root, h('div', { class: 'grid-main' }, h('div', { class: 'stack' }, card('Users', h('div', { class: 'toolbar' }, filter.el), table.el)), h('div', { class: 'stack' }, card('Add a user', form))));

  async function refresh() {
    const [users, perms] = await Promise.all([api.get('/users'), api.get('/permissions')]);
    permissions = perms ?? [];
    table.update(users ?? []);
  }
  try {
    await refresh();
  } catch (e) {
    showError(e, 'Loading users');
    table.error(e.message);
  }
  return { refresh };
}
