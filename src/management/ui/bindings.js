// Bindings of a queue or an exchange: the list (with unbind) and the form to add one.

import { api, path } from './api.js';
import { h, fill, toast, showError } from './dom.js';
import { value as fmtValue } from './format.js';
import { field, button, busy, kvEditor, confirmDialog, badge } from './widgets.js';

const DEST = { queue: 'q', exchange: 'e' };

/**
 * bindingsPanel({ vhost, queue }) — bindings into a queue;
 * bindingsPanel({ vhost, exchange }) — bindings from an exchange, and into it from other exchanges.
 * Returns { el, refresh }.
 */
export function bindingsPanel({ vhost, queue, exchange }) {
  const list = h('div', { class: 'bindings-list' });
  const incoming = h('div', { class: 'bindings-list' });
  const forQueue = queue !== undefined;

  function bindingRow(b, { showSource }) {
    const implicit = b.source === '';
    const other = showSource
      ? h('a', { href: `#${path('exchanges', vhost, b.source === '' ? 'amq.default' : b.source)}` }, b.source === '' ? '(AMQP default)' : b.source)
      : h('a', { href: `#${path(b.destination_type === 'queue' ? 'queues' : 'exchanges', vhost, b.destination)}` }, b.destination);
    const args = b.arguments && Object.keys(b.arguments).length ? h('code', {}, Object.entries(b.arguments).map(([k, v]) => `${k}=${fmtValue(v)}`).join(', ')) : h('span', { class: 'muted' }, '–');
    return h(
      'tr',
      { dataset: { binding: `${b.source}→${b.destination}:${b.routing_key}` } },
      h('td', {}, other, showSource ? null : h('span', { class: 'muted' }, ` ${b.destination_type}`)),
      h('td', {}, h('code', {}, b.routing_key === '' ? '""' : b.routing_key)),
      h('td', { class: 'opt' }, args),
      h(
        'td',
        { class: 'actions' },
        implicit
          ? badge('implicit', 'muted', 'Every queue is bound to the default exchange by its name; this binding cannot be removed.')
          : button('Unbind', async (ev) => {
              const ok = await confirmDialog({
                title: 'Remove binding',
                message: `Unbind ${b.destination_type} “${b.destination}” from exchange “${b.source}” (routing key “${b.routing_key}”)?`,
                confirmLabel: 'Unbind',
                danger: true,
              });
              if (!ok) return;
              await busy(ev.target, async () => {
                try {
                  await api.del(path('bindings', vhost, 'e', b.source, DEST[b.destination_type], b.destination, b.properties_key));
                  toast('Binding removed');
                  await refresh();
                } catch (e) {
                  showError(e, 'Unbinding');
                }
              });
            }, { kind: 'small' }),
      ),
    );
  }

  function table(rows, showSource) {
    if (!rows.length) return h('p', { class: 'muted' }, showSource ? 'No bindings.' : 'Nothing is bound to this exchange.');
    return h(
      'table',
      { class: 'data compact' },
      h('thead', {}, h('tr', {}, h('th', {}, showSource ? 'From exchange' : 'To'), h('th', {}, 'Routing key'), h('th', { class: 'opt' }, 'Arguments'), h('th', {}, h('span', { class: 'sr-only' }, 'Actions')))),
      h('tbody', {}, rows.map((b) => bindingRow(b, { showSource }))),
    );
  }

  async function refresh() {
    if (forQueue) {
      fill(list, table((await api.get(path('queues', vhost, queue, 'bindings'))) ?? [], true));
    } else {
      const [out, into] = await Promise.all([api.get(path('exchanges', vhost, exchange, 'bindings', 'source')), api.get(path('exchanges', vhost, exchange, 'bindings', 'destination'))]);
      fill(list, table(out ?? [], false));
      fill(incoming, (into ?? []).length ? [h('h3', {}, 'Bound into this exchange'), table(into, true)] : null);
    }
  }

  // The add form.
  const exchangesList = `exchanges-${Math.random().toString(36).slice(2, 8)}`;
  const datalist = h('datalist', { id: exchangesList });
  const destType = h('select', { name: 'destination_type' }, h('option', { value: 'queue' }, 'queue'), h('option', { value: 'exchange' }, 'exchange'));
  const other = h('input', { type: 'text', name: forQueue ? 'source' : 'destination', required: true, list: exchangesList, spellcheck: 'false', autocomplete: 'off' });
  const key = h('input', { type: 'text', name: 'routing_key', spellcheck: 'false', autocomplete: 'off' });
  const args = kvEditor({ keyLabel: 'Argument', name: 'binding-args', suggestions: ['x-match'] });
  const submit = button('Bind', null, { kind: 'primary', type: 'submit' });
  const form = h(
    'form',
    {
      class: 'form bind-form',
      onsubmit: async (ev) => {
        ev.preventDefault();
        await busy(submit, async () => {
          try {
            const body = { routing_key: key.value, arguments: args.value() };
            if (forQueue) await api.post(path('bindings', vhost, 'e', other.value, 'q', queue), body);
            else await api.post(path('bindings', vhost, 'e', exchange, DEST[destType.value], other.value), body);
            toast('Binding added');
            key.value = '';
            args.set({});
            await refresh();
          } catch (e) {
            showError(e, 'Binding');
          }
        });
      },
    },
    datalist,
    h(
      'div',
      { class: 'form-row' },
      forQueue ? field('From exchange', other) : [field('To', destType), field('Name', other)],
      field('Routing key', key),
    ),
    h('details', { class: 'more' }, h('summary', {}, 'Arguments (headers exchanges)'), args.el),
    h('div', { class: 'form-actions' }, submit),
  );

  async function loadNames() {
    try {
      const names = forQueue ? ((await api.get(path('exchanges', vhost))) ?? []).map((x) => x.name).filter((n) => n !== '') : [];
      const refill = async () => {
        const pool = destType.value === 'queue' ? ((await api.get(path('queues', vhost))) ?? []).map((q) => q.name) : ((await api.get(path('exchanges', vhost))) ?? []).map((x) => x.name).filter((n) => n !== '');
        fill(datalist, pool.map((n) => h('option', { value: n })));
      };
      if (forQueue) fill(datalist, names.map((n) => h('option', { value: n })));
      else {
        destType.addEventListener('change', refill);
        await refill();
      }
    } catch {
      /* suggestions only */
    }
  }
  loadNames();

  const el = h('div', { class: 'bindings' }, list, incoming, h('h3', {}, forQueue ? 'Add a binding to this queue' : 'Add a binding from this exchange'), form);
  return { el, refresh };
}
