// Getting messages from a queue (POST /api/queues/{vhost}/{queue}/get) and showing them: payload
// (JSON pretty-printed when it parses), properties, headers, redelivered.

import { api, path } from './api.js';
import { h, fill, toast, showError } from './dom.js';
import { num, bytes } from './format.js';
import { field, button, busy, badge, argsTable } from './widgets.js';

const MODES = [
  ['ack_requeue_true', 'Peek (requeue)', 'Messages go back to the queue, marked redelivered.'],
  ['ack_requeue_false', 'Take (ack)', 'Messages are acknowledged: removed from the queue.'],
  ['reject_requeue_true', 'Reject, requeue', 'Messages are rejected and go back to the queue.'],
  ['reject_requeue_false', 'Reject, drop', 'Messages are rejected without requeue: dead-lettered, or dropped.'],
];

export function getMessagesPanel({ vhost, queue, onTaken }) {
  const count = h('input', { type: 'number', name: 'count', min: '1', max: '1000', value: '5' });
  const mode = h('select', { name: 'ackmode' }, MODES.map(([v, label]) => h('option', { value: v }, label)));
  const modeHint = h('span', { class: 'field-hint' }, MODES[0][2]);
  mode.addEventListener('change', () => (modeHint.textContent = MODES.find(([v]) => v === mode.value)[2]));
  const encoding = h('select', { name: 'encoding', title: 'Auto shows UTF-8 payloads as text, others as base64' }, h('option', { value: 'auto' }, 'Auto'), h('option', { value: 'base64' }, 'Base64'));
  const truncate = h('input', { type: 'number', name: 'truncate', min: '1', placeholder: 'no limit' });
  const results = h('div', { class: 'messages', 'aria-live': 'polite' });
  const submit = button('Get messages', null, { kind: 'primary', type: 'submit' });

  const form = h(
    'form',
    {
      class: 'form get-form',
      onsubmit: async (ev) => {
        ev.preventDefault();
        await busy(submit, async () => {
          const body = { count: Number(count.value) || 1, ackmode: mode.value, encoding: encoding.value };
          if (truncate.value) body.truncate = Number(truncate.value);
          try {
            const msgs = (await api.post(path('queues', vhost, queue, 'get'), body)) ?? [];
            showMessages(results, msgs, mode.value);
            if (mode.value !== 'ack_requeue_true' && msgs.length) onTaken?.();
          } catch (e) {
            fill(results, h('p', { class: 'result-error' }, e.message));
            showError(e, 'Getting messages');
          }
        });
      },
    },
    h('div', { class: 'form-row' }, field('Messages', count), field('Mode', mode), field('Encoding', encoding), field('Truncate at (bytes)', truncate)),
    h('div', { class: 'form-actions' }, submit, modeHint),
  );
  return h('div', { class: 'get-panel' }, form, results);
}

function prettyPayload(m) {
  if (m.payload_encoding !== 'string') return { text: m.payload, kind: m.payload_encoding };
  const t = m.payload ?? '';
  const trimmed = t.trim();
  if (/^[[{]/.test(trimmed)) {
    try {
      return { text: JSON.stringify(JSON.parse(trimmed), null, 2), kind: 'json', raw: t };
    } catch {
      /* not JSON: shown as it is */
    }
  }
  return { text: t, kind: 'text' };
}

function properties(p) {
  // RabbitMQ serialises empty properties as [] rather than {}.
  const props = p && !Array.isArray(p) ? { ...p } : {};
  const headers = props.headers;
  delete props.headers;
  return { props, headers };
}

export function showMessages(box, msgs, mode) {
  if (!msgs.length) {
    fill(box, h('p', { class: 'empty-note' }, 'The queue is empty: no message to get.'));
    return;
  }
  const note = mode === 'ack_requeue_true' ? 'Requeued: they stay in the queue, now marked redelivered.' : mode === 'ack_requeue_false' ? 'Acknowledged: they were removed from the queue.' : mode === 'reject_requeue_true' ? 'Rejected and requeued.' : 'Rejected without requeue: dead-lettered or dropped.';
  fill(
    box,
    h('p', { class: 'muted' }, `${msgs.length} message${msgs.length === 1 ? '' : 's'} · ${note}`),
    msgs.map((m, i) => {
      const pl = prettyPayload(m);
      const { props, headers } = properties(m.properties);
      const pre = h('pre', { class: `payload payload-${pl.kind}`, tabindex: '0' }, pl.text);
      const copy = button('Copy', async () => {
        try {
          await navigator.clipboard.writeText(pl.raw ?? pl.text);
          toast('Payload copied');
        } catch {
          toast('The browser did not allow copying', 'warn');
        }
      }, { kind: 'ghost' });
      const truncated = m.payload_bytes !== undefined && pl.kind !== 'base64' && new TextEncoder().encode(m.payload ?? '').length < m.payload_bytes;
      return h(
        'article',
        { class: 'message', dataset: { message: String(i + 1) } },
        h(
          'header',
          { class: 'message-head' },
          h('span', { class: 'message-no' }, `#${i + 1}`),
          h('span', {}, 'routing key ', h('code', {}, m.routing_key === '' ? '""' : m.routing_key)),
          h('span', {}, 'exchange ', h('code', {}, m.exchange === '' ? '(AMQP default)' : m.exchange)),
          h('span', { class: 'muted' }, bytes(m.payload_bytes)),
          m.redelivered ? badge('redelivered', 'warn') : badge('first delivery', 'muted'),
          truncated ? badge('truncated', 'warn') : null,
          badge(pl.kind, 'muted'),
          h('span', { class: 'muted' }, `${num(m.message_count)} left`),
          h('span', { class: 'spacer' }),
          copy,
        ),
        pre,
        Object.keys(props).length || headers
          ? h(
              'div',
              { class: 'message-props' },
              Object.keys(props).length ? h('div', {}, h('h3', {}, 'Properties'), argsTable(props)) : null,
              headers && Object.keys(headers).length ? h('div', {}, h('h3', {}, 'Headers'), argsTable(headers)) : null,
            )
          : h('p', { class: 'muted small' }, 'No properties.'),
      );
    }),
  );
}

