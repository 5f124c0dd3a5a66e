// The publish form (exchange page and queue page): routing key, payload, the common properties
// and headers; POST /api/exchanges/{vhost}/{exchange}/publish tells whether it was routed.

import { api, path } from './api.js';
import { h, fill, toast, showError } from './dom.js';
import { field, button, busy, kvEditor } from './widgets.js';

/**
 * publishForm({ vhost, exchange, routingKey, fixedKey }) → element. `exchange` '' is the default
 * exchange (amq.default in the API's path); with fixedKey the routing key is not editable.
 */
export function publishForm({ vhost, exchange, routingKey = '', fixedKey = false }) {
  const key = h('input', { type: 'text', name: 'routing_key', value: routingKey, readonly: fixedKey, spellcheck: 'false', autocomplete: 'off' });
  const payload = h('textarea', { name: 'payload', rows: 5, spellcheck: 'false', placeholder: '{"hello": "world"}' });
  const encoding = h('select', { name: 'payload_encoding' }, h('option', { value: 'string' }, 'Text'), h('option', { value: 'base64' }, 'Base64'));
  const persistent = h('input', { type: 'checkbox', name: 'persistent' });
  const contentType = h('input', { type: 'text', name: 'content_type', placeholder: 'application/json', list: 'content-types', spellcheck: 'false' });
  const headers = kvEditor({ keyLabel: 'Header', name: 'headers' });
  const more = {};
  const moreFields = [
    ['correlation_id', 'Correlation id'],
    ['message_id', 'Message id'],
    ['reply_to', 'Reply to'],
    ['expiration', 'Expiration (ms)'],
    ['priority', 'Priority'],
    ['type', 'Type'],
    ['app_id', 'App id'],
    ['content_encoding', 'Content encoding'],
  ].map(([k, label]) => {
    more[k] = h('input', { type: 'text', name: k, spellcheck: 'false', autocomplete: 'off' });
    return field(label, more[k]);
  });
  const result = h('div', { class: 'publish-result', role: 'status', 'aria-live': 'polite' });
  const submit = button('Publish message', null, { kind: 'primary', type: 'submit' });

  const form = h(
    'form',
    {
      class: 'form publish-form',
      onsubmit: async (ev) => {
        ev.preventDefault();
        await busy(submit, async () => {
          let properties;
          try {
            properties = { delivery_mode: persistent.checked ? 2 : 1 };
            if (contentType.value) properties.content_type = contentType.value;
            const hdrs = headers.value();
            if (Object.keys(hdrs).length) properties.headers = hdrs;
            for (const [k, input] of Object.entries(more)) {
              if (!input.value) continue;
              properties[k] = k === 'priority' ? Number(input.value) : input.value;
            }
          } catch (e) {
            showError(e);
            return;
          }
          try {
            const res = await api.post(path('exchanges', vhost, exchange === '' ? 'amq.default' : exchange, 'publish'), {
              routing_key: key.value,
              payload: payload.value,
              payload_encoding: encoding.value,
              properties,
            });
            const when = new Date().toLocaleTimeString();
            if (res?.routed) {
              fill(result, h('span', { class: 'result-ok' }, '✓ Message published and routed'), h('span', { class: 'muted' }, ` · ${when}`));
              toast('Message published and routed');
            } else {
              fill(result, h('span', { class: 'result-warn' }, '✗ Message published but not routed'), h('span', { class: 'muted' }, ` — no queue is bound for routing key “${key.value}” · ${when}`));
              toast('Message published but not routed', 'warn');
            }
          } catch (e) {
            fill(result, h('span', { class: 'result-error' }, `Not published: ${e.message}`));
            showError(e, 'Publishing');
          }
        });
      },
    },
    h('datalist', { id: 'content-types' }, ['application/json', 'text/plain', 'application/octet-stream', 'application/xml'].map((v) => h('option', { value: v }))),
    h('div', { class: 'form-row' }, field('Routing key', key), field('Content type', contentType), field('Payload encoding', encoding)),
    field('Payload', payload),
    h('div', { class: 'form-row checks' }, h('label', { class: 'check' }, persistent, ' Persistent (delivery mode 2)')),
    h('details', { class: 'more' }, h('summary', {}, 'Headers and more properties'), field('Headers', headers.el), h('div', { class: 'form-grid' }, moreFields)),
    h('div', { class: 'form-actions' }, submit, result),
  );
  return form;
}
