// One exchange: publish a message (routed or not), bindings from and into it, details, delete.

import { api, path, ApiError } from '../api.js';
import { h, fill, toast, showError } from '../dom.js';
import { rate, exchangeName } from '../format.js';
import { card, badge, props, argsTable, button, confirmDialog, pageHeader } from '../widgets.js';
import { publishForm } from '../publish.js';
import { bindingsPanel } from '../bindings.js';

export async function mount(root, { segments }) {
  const [, vhost, urlName] = segments;
  const name = urlName === 'amq.default' ? '' : urlName;
  const xPath = path('exchanges', vhost, urlName);
  const crumbs = h('a', { href: '#/exchanges' }, '← Exchanges');

  let x;
  try {
    x = await api.get(xPath);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      fill(root, pageHeader(exchangeName(name), { crumbs }), card(null, h('p', {}, `There is no exchange “${name}” in vhost “${vhost}”.`), h('p', {}, h('a', { href: '#/exchanges' }, 'Back to the exchanges'))));
      return {};
    }
    throw e;
  }

  const isDefault = name === '';
  const builtin = isDefault || name.startsWith('amq.');
  const details = h('div');
  const sub = h('span', { class: 'page-sub-badges' });
  const bindings = isDefault ? null : bindingsPanel({ vhost, exchange: name });

  const deleteBtn = builtin
    ? null
    : button('Delete', async () => {
        const ok = await confirmDialog({ title: 'Delete exchange', message: `Delete exchange “${name}” in vhost “${vhost}” and its bindings?`, confirmLabel: 'Delete exchange', danger: true });
        if (!ok) return;
        try {
          await api.del(xPath);
          toast(`Exchange ${name} deleted`);
          location.hash = '#/exchanges';
        } catch (e) {
          showError(e, 'Deleting');
        }
      }, { kind: 'danger' });

  fill(
    root,
    pageHeader(h('span', { class: 'name' }, exchangeName(name)), { crumbs, sub, actions: deleteBtn ? [deleteBtn] : [] }),
    h(
      'div',
      { class: 'grid-main' },
      h(
        'div',
        { class: 'stack' },
        card('Publish a message', isDefault ? h('p', { class: 'muted small' }, 'The default exchange routes to the queue named by the routing key.') : null, publishForm({ vhost, exchange: name })),
        bindings ? card('Bindings', bindings.el) : card('Bindings', h('p', { class: 'muted' }, 'Every queue is bound to the default exchange with its own name as the routing key; these bindings are implicit and cannot be changed.')),
      ),
      h('div', { class: 'stack' }, card('Details', details)),
    ),
  );

  function render() {
    fill(sub, 'vhost ', h('code', {}, vhost), ' ', badge(x.type, 'type'), x.internal ? [' ', badge('internal', 'warn')] : null);
    const st = x.message_stats ?? {};
    fill(
      details,
      props([
        ['Type', x.type],
        ['Durable', x.durable ? 'yes' : 'no'],
        ['Auto-delete', x.auto_delete ? 'yes' : 'no'],
        ['Internal', x.internal ? 'yes' : 'no'],
        ['Policy', x.policy ? h('a', { href: '#/admin/policies' }, x.policy) : null],
        ['Arguments', argsTable(x.arguments)],
        ['Publish in', rate(st.publish_in_details?.rate ?? 0)],
        ['Publish out', rate(st.publish_out_details?.rate ?? 0)],
      ]),
    );
  }

  async function refresh() {
    x = await api.get(xPath);
    render();
    await bindings?.refresh();
  }
  render();
  try {
    await bindings?.refresh();
  } catch (e) {
    showError(e, 'Loading bindings');
  }
  return { refresh };
}
