// Overview: totals, live queue depths and message rates (charted from the sampler's history),
// the busiest queues, the node (memory, disk, alarms) and the listeners.

import { api, path } from '../api.js';
import { h, fill, showError } from '../dom.js';
import { num, bytes, duration, rate } from '../format.js';
import { lineChart, sparkline } from '../chart.js';
import { card, badge, pageHeader } from '../widgets.js';
import { sampler, RATE_KEYS } from '../stats.js';

export async function mount(root, { ctx }) {
  const sub = h('span');
  const tiles = h('div', { class: 'tiles' });
  const depth = lineChart({ title: 'Queued messages', ariaLabel: 'Queued messages chart' });
  const rates = lineChart({ title: 'Message rates', format: (v) => rate(v), ariaLabel: 'Message rates chart' });
  const busiest = h('div');
  const node = h('div');
  const listeners = h('div');

  fill(
    root,
    pageHeader('Overview', { sub }),
    tiles,
    h('div', { class: 'grid-2' }, card(null, depth.el), card(null, rates.el)),
    h('div', { class: 'grid-2' }, card('Busiest queues', busiest), card('Node', node)),
    card('Listeners', listeners),
  );

  function tile(label, value, href, { spark, hint, kind } = {}) {
    return h(
      'a',
      { class: `tile ${kind ?? ''}`, href, dataset: { tile: label.toLowerCase() } },
      h('span', { class: 'tile-label' }, label),
      h('span', { class: 'tile-value' }, value),
      spark ?? (hint ? h('span', { class: 'tile-hint' }, hint) : null),
    );
  }

  function renderSample() {
    const latest = sampler.latest;
    if (!latest) return;
    const o = latest.overview;
    const t = o.object_totals ?? {};
    const q = o.queue_totals ?? {};
    const hist = sampler.history;
    fill(
      sub,
      `${o.product_name ?? 'RabbitMQ'} ${o.product_version ?? o.rabbitmq_version ?? ''}`,
      o.warren_version ? ` (Warren ${o.warren_version})` : '',
      ' · node ',
      h('code', {}, o.node ?? '–'),
      o.cluster_name ? [' · cluster ', h('code', {}, o.cluster_name)] : '',
    );
    fill(
      tiles,
      tile('Connections', num(t.connections), '#/connections'),
      tile('Channels', num(t.channels), '#/channels'),
      tile('Exchanges', num(t.exchanges), '#/exchanges'),
      tile('Queues', num(t.queues), '#/queues'),
      tile('Consumers', num(t.consumers), '#/queues'),
      tile('Ready', num(q.messages_ready ?? 0), '#/queues', { kind: 'tile-ready', spark: sparkline(hist.map((x) => x.overview.queue_totals?.messages_ready ?? 0)) }),
      tile('Unacked', num(q.messages_unacknowledged ?? 0), '#/queues', { kind: 'tile-unacked', spark: sparkline(hist.map((x) => x.overview.queue_totals?.messages_unacknowledged ?? 0)) }),
      tile('Publish rate', rate(latest.rates.publish), '#/exchanges', { spark: sparkline(hist.map((x) => x.rates.publish)) }),
    );
    depth.update([
      { label: 'Ready', points: hist.map((x) => ({ t: x.t, v: x.overview.queue_totals?.messages_ready ?? 0 })) },
      { label: 'Unacked', points: hist.map((x) => ({ t: x.t, v: x.overview.queue_totals?.messages_unacknowledged ?? 0 })) },
    ]);
    rates.update(RATE_KEYS.map(([key, label]) => ({ label, points: hist.map((x) => ({ t: x.t, v: x.rates[key] ?? 0 })) })));
    renderListeners(o.listeners ?? []);
  }

  function renderListeners(list) {
    fill(
      listeners,
      list.length
        ? h(
            'table',
            { class: 'data compact' },
            h('thead', {}, h('tr', {}, h('th', {}, 'Protocol'), h('th', {}, 'Bound to'), h('th', { class: 'num' }, 'Port'), h('th', { class: 'opt' }, 'Node'))),
            h(
              'tbody',
              {},
              list.map((l) => h('tr', {}, h('td', {}, badge(l.protocol, 'info')), h('td', {}, h('code', {}, l.ip_address)), h('td', { class: 'num' }, String(l.port)), h('td', { class: 'opt' }, h('code', {}, l.node)))),
            ),
          )
        : h('p', { class: 'muted' }, 'No listeners reported.'),
    );
  }

  async function renderQueues() {
    const vhost = ctx.vhost;
    const queues = (await api.get(vhost === null ? '/queues' : path('queues', vhost))) ?? [];
    const top = [...queues].sort((a, b) => (b.messages ?? 0) - (a.messages ?? 0)).slice(0, 8);
    fill(
      busiest,
      top.length
        ? h(
            'table',
            { class: 'data compact' },
            h('thead', {}, h('tr', {}, h('th', {}, 'Queue'), h('th', { class: 'num' }, 'Ready'), h('th', { class: 'num' }, 'Unacked'), h('th', { class: 'num' }, 'Consumers'))),
            h(
              'tbody',
              {},
              top.map((q) =>
                h(
                  'tr',
                  {},
                  h('td', {}, h('a', { href: `#${path('queues', q.vhost, q.name)}` }, q.name), ctx.vhosts.length > 1 ? h('span', { class: 'muted' }, ` ${q.vhost}`) : null),
                  h('td', { class: 'num' }, num(q.messages_ready ?? 0)),
                  h('td', { class: 'num' }, num(q.messages_unacknowledged ?? 0)),
                  h('td', { class: 'num' }, num(q.consumers ?? 0)),
                ),
              ),
            ),
          )
        : h('p', { class: 'muted' }, 'No queues yet. Declare one over AMQP, or ', h('a', { href: '#/queues' }, 'add one'), '.'),
    );
  }

  function meter(label, used, limit, alarm, fmt) {
    const frac = limit ? Math.min(1, used / limit) : 0;
    return h(
      'div',
      { class: `meter ${alarm ? 'meter-alarm' : ''}` },
      h('div', { class: 'meter-head' }, h('span', {}, label), h('span', { class: 'muted' }, fmt)),
      h('div', { class: 'meter-bar', role: 'meter', 'aria-label': label, 'aria-valuemin': '0', 'aria-valuemax': String(limit ?? 0), 'aria-valuenow': String(used ?? 0) }, h('div', { class: 'meter-fill', style: `width:${(frac * 100).toFixed(1)}%` })),
    );
  }

  async function renderNode() {
    if (!ctx.canMonitor()) {
      fill(node, h('p', { class: 'muted' }, 'Node details need the monitoring or administrator tag.'));
      return;
    }
    const nodes = (await api.get('/nodes')) ?? [];
    fill(
      node,
      nodes.map((n) => {
        const alarms = [];
        if (n.mem_alarm) alarms.push(badge('memory alarm', 'danger'));
        if (n.disk_free_alarm) alarms.push(badge('disk alarm', 'danger'));
        return h(
          'div',
          { class: 'node', dataset: { node: n.name } },
          h('div', { class: 'node-head' }, h('code', {}, n.name), n.running === false ? badge('down', 'danger') : badge('running', 'ok'), alarms.length ? alarms : badge('no alarms', 'ok')),
          meter('Memory', n.mem_used, n.mem_limit, n.mem_alarm, `${bytes(n.mem_used)} of ${bytes(n.mem_limit)} high watermark`),
          meter('Disk (alarm limit against free space)', n.disk_free_limit, n.disk_free, n.disk_free_alarm, `${bytes(n.disk_free)} free, alarm below ${bytes(n.disk_free_limit)}`),
          h(
            'dl',
            { class: 'props props-inline' },
            h('dt', {}, 'Uptime'),
            h('dd', {}, duration(n.uptime)),
            h('dt', {}, 'File descriptors'),
            h('dd', {}, `${num(n.fd_used)} / ${num(n.fd_total)}`),
            h('dt', {}, 'Sockets'),
            h('dd', {}, `${num(n.sockets_used)} / ${num(n.sockets_total)}`),
            h('dt', {}, 'Cores'),
            h('dd', {}, num(n.processors)),
          ),
        );
      }),
    );
  }

  const unsubscribe = sampler.subscribe(renderSample);
  renderSample();

  async function refresh() {
    const results = await Promise.allSettled([sampler.latest ? Promise.resolve() : sampler.sample(), renderQueues(), renderNode()]);
    for (const r of results) if (r.status === 'rejected') showError(r.reason);
  }
  await refresh();

  return {
    refresh: () => Promise.all([renderQueues(), renderNode()]),
    destroy: unsubscribe,
  };
}

