// Tracing: RabbitMQ's firehose for one vhost. Turning it on sets the vhost's "tracing" (PUT
// /api/vhosts/{vhost}, sending its description and tags back so they stay) and declares a queue
// bound to amq.rabbitmq.trace with '#' that keeps only the latest messages (x-max-length,
// drop-head: bounded, whatever the traffic). The page reads that queue with the get endpoint
// (requeueing, so nothing is lost between refreshes) and shows each publish and delivery.
// Turning it off clears the vhost's "tracing" and deletes the queue. Public API calls only, so
// it works against RabbitMQ as well.

import { api, path } from '../api.js';
import { h, fill, toast, showError } from '../dom.js';
import { exchangeName } from '../format.js';
import { dataTable } from '../table.js';
import { badge, busy, button, card, field, pageHeader } from '../widgets.js';

/** The queue the page reads, in the traced vhost. */
export const TRACE_QUEUE = 'warren.ui.trace';
/** How many traced messages it keeps: the latest ones (older ones are dropped from its head). */
export const TRACE_KEEP = 100;
/** Payload bytes shown per message. */
const PREVIEW_BYTES = 200;

/** A traced message (as the get endpoint shows it) as a row of the table. */
function traceRow(m, seq) {
  const h0 = m.properties?.headers ?? {};
  const [kind, ...rest] = m.routing_key.split('.');
  const target = rest.join('.');
  return {
    seq,
    kind,
    exchange: h0.exchange_name ?? '',
    routingKeys: Array.isArray(h0.routing_keys) ? h0.routing_keys : [],
    // publish: the queues it was routed to; deliver: the queue it came from.
    queues: kind === 'publish' ? (Array.isArray(h0.routed_queues) ? h0.routed_queues : []) : [target],
    user: h0.user ?? '',
    connection: h0.connection ?? '',
    channel: h0.channel,
    redelivered: h0.redelivered === 1,
    payload: m.payload ?? '',
    encoding: m.payload_encoding,
    bytes: m.payload_bytes ?? 0,
  };
}

function preview(r) {
  const text = r.encoding === 'base64' ? `base64: ${r.payload}` : r.payload;
  const cut = r.bytes > PREVIEW_BYTES ? ' …' : '';
  return h('code', { class: 'payload-preview', title: `${r.bytes} bytes` }, text + cut);
}

export async function mount(root, { ctx }) {
  let vhost = ctx.vhost ?? (ctx.vhosts.some((v) => v.name === '/') ? '/' : ctx.vhosts[0]?.name ?? '/');
  let tracing = false;
  let hasQueue = false;

  const vhostSelect = h(
    'select',
    { name: 'trace-vhost', onchange: () => { vhost = vhostSelect.value; table.update([]); refresh().catch((e) => showError(e, 'Loading tracing')); } },
    ctx.vhosts.map((v) => h('option', { value: v.name, selected: v.name === vhost }, v.name)),
  );
  const status = h('span', { class: 'trace-status' });
  const toggle = button('Start tracing', (ev) => setTracing(!tracing, ev.target), { kind: 'primary' });
  const reload = button('Refresh', (ev) => busy(ev.target, () => refresh().catch((e) => showError(e, 'Loading traced messages'))), { title: 'Read the traced messages now' });
  const note = h('p', { class: 'muted trace-note' });

  const table = dataTable({
    id: 'trace',
    columns: [
      { key: 'seq', label: '#', num: true, render: (r) => String(r.seq) },
      { key: 'kind', label: 'Event', render: (r) => badge(r.kind, r.kind === 'publish' ? 'ok' : 'info', r.redelivered ? 'redelivered' : undefined) },
      { key: 'exchange', label: 'Exchange', render: (r) => h('span', { class: 'name' }, exchangeName(r.exchange)) },
      { key: 'routingKeys', label: 'Routing keys', sortable: false, render: (r) => r.routingKeys.join(', ') },
      { key: 'queues', label: 'Queues', sortable: false, render: (r) => (r.queues.length ? r.queues.join(', ') : h('span', { class: 'muted' }, r.kind === 'publish' ? 'unroutable' : '–')) },
      { key: 'user', label: 'User', cls: 'opt', render: (r) => r.user },
      { key: 'connection', label: 'Connection', cls: 'opt', sortable: false, render: (r) => h('span', { class: 'muted' }, `${r.connection} (${r.channel})`) },
      { key: 'payload', label: 'Payload', sortable: false, render: preview },
    ],
    rowKey: (r) => String(r.seq),
    filterOn: (r) => `${r.kind} ${r.exchange} ${r.routingKeys.join(' ')} ${r.queues.join(' ')} ${r.payload}`,
    emptyText: 'No traced message yet.',
    defaultSort: { key: 'seq', dir: -1 },
  });

  async function setTracing(on, btn) {
    await busy(btn, async () => {
      try {
        const v = await api.get(path('vhosts', vhost));
        await api.put(path('vhosts', vhost), { description: v.description ?? '', tags: v.tags ?? [], tracing: on });
        if (on) {
          await api.put(path('queues', vhost, TRACE_QUEUE), { durable: false, auto_delete: false, arguments: { 'x-max-length': TRACE_KEEP } });
          await api.post(path('bindings', vhost, 'e', 'amq.rabbitmq.trace', 'q', TRACE_QUEUE), { routing_key: '#', arguments: {} });
        } else {
          await api.del(path('queues', vhost, TRACE_QUEUE)).catch(() => {});
        }
        toast(on ? `Tracing ${vhost}` : `Tracing stopped in ${vhost}`);
        await refresh();
      } catch (e) {
        showError(e, on ? 'Starting tracing' : 'Stopping tracing');
      }
    });
  }

  function render() {
    fill(status, tracing ? badge('tracing on', 'ok') : badge('tracing off', 'muted'));
    toggle.textContent = tracing ? 'Stop tracing' : 'Start tracing';
    toggle.className = `btn ${tracing ? 'btn-danger' : 'btn-primary'}`;
    note.textContent = hasQueue
      ? `The latest ${TRACE_KEEP} publishes and deliveries in ${vhost}, kept in the queue ${TRACE_QUEUE} (bound to amq.rabbitmq.trace), newest first.`
      : tracing
        ? `Tracing is on, but no queue ${TRACE_QUEUE} reads amq.rabbitmq.trace here: start tracing from this page to see the messages.`
        : 'Every message published in the vhost and every delivery is copied to amq.rabbitmq.trace while tracing is on (RabbitMQ’s firehose). It costs a copy of each message: turn it off when done.';
  }

  async function refresh() {
    const v = await api.get(path('vhosts', vhost));
    tracing = v.tracing === true;
    const queues = (await api.get(`${path('queues', vhost)}?columns=name`)) ?? [];
    hasQueue = queues.some((q) => q.name === TRACE_QUEUE);
    render();
    if (!hasQueue) {
      table.update([]);
      return;
    }
    const msgs = (await api.post(path('queues', vhost, TRACE_QUEUE, 'get'), { count: TRACE_KEEP, ackmode: 'ack_requeue_true', encoding: 'auto', truncate: PREVIEW_BYTES })) ?? [];
    table.update(msgs.map((m, i) => traceRow(m, i + 1)));
  }

  fill(
    root,
    pageHeader('Tracing', { sub: 'Publishes and deliveries of a vhost, as amq.rabbitmq.trace sees them', actions: [reload] }),
    h('div', { class: 'stack' }, card(null, h('div', { class: 'form-row trace-controls' }, field('Virtual host', vhostSelect), h('div', { class: 'trace-toggle' }, status, toggle)), note), card('Traced messages', table.el)),
  );
  render();
  try {
    await refresh();
  } catch (e) {
    showError(e, 'Loading tracing');
    table.error(e.message);
  }
  return { refresh };
}
