// Admin: tabs for users, vhosts, permissions, policies and definitions (#/admin/<section>).

import { h, fill } from '../dom.js';
import { tabs, pageHeader, card } from '../widgets.js';

const SECTIONS = [
  ['users', 'Users', () => import('./admin-users.js'), 'admin'],
  ['vhosts', 'Virtual hosts', () => import('./admin-vhosts.js'), 'admin'],
  ['permissions', 'Permissions', () => import('./admin-permissions.js'), 'admin'],
  ['policies', 'Policies', () => import('./admin-policies.js'), 'policies'],
  ['definitions', 'Definitions', () => import('./admin-definitions.js'), 'admin'],
];

export async function mount(root, params) {
  const { ctx, segments } = params;
  const allowed = SECTIONS.filter(([, , , need]) => (need === 'admin' ? ctx.isAdmin() : ctx.canPolicies()));
  if (!allowed.length) {
    fill(root, pageHeader('Admin'), card(null, h('p', {}, 'Administration needs the administrator (or, for policies, the policymaker) tag.')));
    return {};
  }
  const wanted = segments[1] ?? allowed[0][0];
  const section = allowed.find(([id]) => id === wanted);
  const body = h('div', { class: 'admin-body' });
  fill(root, pageHeader('Admin'), tabs(allowed.map(([id, label]) => [`#/admin/${id}`, label]), `#/admin/${section?.[0] ?? ''}`), body);
  if (!section) {
    fill(body, card(null, h('p', {}, `No admin section “${wanted}”.`)));
    return {};
  }
  document.title = `${section[1]} · Admin · Warren`;
  const mod = await section[2]();
  return mod.mount(body, params);
}
