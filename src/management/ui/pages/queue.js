// One queue: counts, get messages, publish to it, details and arguments, consumers, bindings,
// purge and delete.

import { api, path, ApiError } from '../api.js';
import { h, fill, toast, showError } from '../dom.js';
import { num, bytes, rate, when, value as fmtValue } from '../format.js';
import { card, badge, props, argsTable, button, busy, confirmDialog, pageHeader } from '../widgets.js';
import { getMessagesPanel } from '../messages.js';
import { publishForm } from '../publish.js';
import { bindingsPanel } from '../bindings.js';
import { queueFeatures } from './queues.js';

export async function mount(root, { segments }) {
  const [, vhost, name] = segments;
  const qPath = path('queues', vhost, name);

  let q;
  try {
    q = await api.get(qPath);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      fill(
        root,
        pageHeader(name, { crumbs: crumbs() }),
        card(null, h('p', {}, `There is no queue “${name}” in vhost “${vhost}”. It may have been deleted, or be auto-deleted or exclusive to a connection that closed.`), h('p', {}, h('a', { href: '#/queues' }, 'Back to the queues'))),
      );
      return {};
    }
    throw e;
  }

  const sub = h('span', { class: 'page-sub-badges' });
  const tiles = h('div', { class: 'tiles tiles-small' });
  const details = h('div');
  const consumers = h('div');
  const bindings = bindingsPanel({ vhost, queue: name });

  const purgeBtn = button('Purge', async () => {
    const ok = await confirmDialog({
      title: 'Purge queue',
      message: `Remove all ${num(q.messages_ready ?? 0)} ready messages from “${name}”? Unacknowledged messages stay with their consumers.`,
      confirmLabel: 'Purge',
      danger: true,
    });
    if (!ok) return;
    await busy(purgeBtn, async () => {
      try {
        await api.del(path('queues', vhost, name, 'contents'));
        toast(`Queue ${name} purged`);
        await refresh();
      } catch (e) {
        showError(e, 'Purging');
      }
    });
  }, { kind: 'warn' });

  const deleteBtn = button('Delete', async () => {
    const ifEmpty = h('input', { type: 'checkbox', name: 'if_empty' });
    const ifUnused = h('input', { type: 'checkbox', name: 'if_unused' });
    const ok = await confirmDialog({
      title: 'Delete queue',
      message: `Delete “${name}” in vhost “${vhost}” with its ${num(q.messages ?? 0)} messages? This cannot be undone.`,
      confirmLabel: 'Delete queue',
      danger: true,
      body: h('div', { class: 'checks' }, h('label', { class: 'check' }, ifEmpty, ' Only if empty'), h('label', { class: 'check' }, ifUnused, ' Only if it has no consumers')),
    });
    if (!ok) return;
    const params = new URLSearchParams();
    if (ifEmpty.checked) params.set('if-empty', 'true');
    if (ifUnused.checked) params.set('if-unused', 'true');
    try {
      await api.del(qPath + (params.toString() ? `?${params}` : ''));
      toast(`Queue ${name} deleted`);
      location.hash = '#/queues';
    } catch (e) {
      showError(e, 'Deleting');
    }
  }, { kind: 'danger' });

  fill(
    root,
    pageHeader(h('span', { class: 'name' }, name), { crumbs: crumbs(), sub, actions: [purgeBtn, deleteBtn] }),
    tiles,
    h(
      'div',
      { class: 'grid-main' },
      h(
        'div',
        { class: 'stack' },
        // In the wide column: a consumer's channel name and tag are long (a table in the
        // narrow one squeezed the tag to a syllable a line).
        card('Consumers', consumers),
        card('Get messages', getMessagesPanel({ vhost, queue: name, onTaken: () => refresh() })),
        card('Publish a message to this queue', h('p', { class: 'muted small' }, 'Published through the default exchange with the queue name as routing key.'), publishForm({ vhost, exchange: '', routingKey: name, fixedKey: true })),
        card('Bindings', bindings.el),
      ),
      h('div', { class: 'stack' }, card('Details', details)),
    ),
  );

  function render() {
    fill(sub, 'vhost ', h('code', {}, vhost), ' ', badge(q.type ?? 'classic', 'info'), ' ', badge(q.state ?? 'running', q.state && q.state !== 'running' ? 'warn' : 'ok'), ' ', queueFeatures(q));
    const st = q.message_stats ?? {};
    fill(
      tiles,
      tileEl('Ready', num(q.messages_ready ?? 0), 'tile-ready'),
      tileEl('Unacked', num(q.messages_unacknowledged ?? 0), 'tile-unacked'),
      tileEl('Total', num(q.messages ?? 0)),
      // A quorum queue's at-least-once dead-letters that no target took yet (in Total too).
      q.type === 'quorum' ? tileEl('Dead-lettered', num(q.messages_dlx ?? 0)) : null,
      tileEl('Consumers', num(q.consumers ?? 0)),
      tileEl('Bytes', bytes(q.message_bytes ?? 0)),
      tileEl('In', rate(st.publish_details?.rate ?? 0)),
      tileEl('Out', rate(st.deliver_get_details?.rate ?? 0)),
    );
    fill(
      details,
      props([
        ['Durable', yesNo(q.durable)],
        ['Auto-delete', yesNo(q.auto_delete)],
        ['Exclusive', yesNo(q.exclusive)],
        ['Node', q.node ? h('code', {}, q.node) : null],
        ['Policy', q.policy ? h('a', { href: '#/admin/policies' }, q.policy) : null],
        q.operator_policy ? ['Operator policy', q.operator_policy] : null,
        ['Effective policy', q.effective_policy_definition && Object.keys(q.effective_policy_definition).length ? argsTable(q.effective_policy_definition) : null],
        ['Arguments', argsTable(q.arguments)],
        ['Consumer utilisation', q.consumer_utilisation !== undefined && q.consumer_utilisation !== null ? `${Math.round(q.consumer_utilisation * 100)}%` : null],
        q.exclusive_consumer_tag ? ['Exclusive consumer', h('code', {}, q.exclusive_consumer_tag)] : null,
        // A quorum queue names its active consumer single_active_consumer_ctag, and has no idle time.
        (q.single_active_consumer_tag ?? q.single_active_consumer_ctag) ? ['Active consumer', h('code', {}, q.single_active_consumer_tag ?? q.single_active_consumer_ctag)] : null,
        q.type === 'quorum' ? ['Leader', q.leader ? h('code', {}, q.leader) : null] : ['Idle since', q.idle_since ? when(q.idle_since) : 'active'],
        ['Memory', q.memory !== undefined ? bytes(q.memory) : null],
        ['Persistent', q.messages_persistent !== undefined ? num(q.messages_persistent) : null],
      ]),
    );
  }

  async function renderConsumers() {
    const all = (await api.get(path('consumers', vhost))) ?? [];
    const mine = all.filter((c) => c.queue?.name === name && c.queue?.vhost === vhost);
    fill(
      consumers,
      mine.length
        ? h(
            'div',
            { class: 'scroll-x' },
            h(
            'table',
            { class: 'data compact' },
            h('thead', {}, h('tr', {}, h('th', {}, 'Channel'), h('th', {}, 'Tag'), h('th', { class: 'num' }, 'Prefetch'), h('th', {}, 'Ack'), h('th', { class: 'opt' }, 'Arguments'))),
            h(
              'tbody',
              {},
              mine.map((c) =>
                h(
                  'tr',
                  {},
                  h('td', {}, c.channel_details?.connection_name ? h('a', { href: `#${path('connections', c.channel_details.connection_name)}` }, c.channel_details.name) : (c.channel_details?.name ?? '–')),
                  h('td', {}, h('code', { class: 'whole' }, c.consumer_tag), c.exclusive ? [' ', badge('exclusive', 'warn')] : null, c.active === false ? [' ', badge('waiting', 'muted')] : null),
                  h('td', { class: 'num' }, num(c.prefetch_count)),
                  h('td', {}, c.ack_required ? 'manual' : 'auto'),
                  h('td', { class: 'opt' }, c.arguments && Object.keys(c.arguments).length ? h('code', {}, Object.entries(c.arguments).map(([k, v]) => `${k}=${fmtValue(v)}`).join(', ')) : '–'),
                ),
              ),
            ),
            ),
          )
        : h('p', { class: 'muted' }, 'No consumers.'),
    );
  }

  async function refresh() {
    try {
      q = await api.get(qPath);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        toast(`Queue ${name} no longer exists`, 'warn');
        location.hash = '#/queues';
        return;
      }
      throw e;
    }
    render();
    await Promise.all([renderConsumers(), bindings.refresh()]);
  }

  render();
  const first = await Promise.allSettled([renderConsumers(), bindings.refresh()]);
  for (const r of first) if (r.status === 'rejected') showError(r.reason);
  document.title = `${name} · Queues · Warren`;
  return { refresh };
}

function crumbs() {
  return h('a', { href: '#/queues' }, '← Queues');
}

function tileEl(label, value, kind = '') {
  return h('div', { class: `tile ${kind}`, dataset: { tile: label.toLowerCase() } }, h('span', { class: 'tile-label' }, label), h('span', { class: 'tile-value' }, value));
}

function yesNo(v) {
  return v ? 'yes' : 'no';
}

