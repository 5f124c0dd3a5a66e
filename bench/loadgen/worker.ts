/**
 * A load generator process (one role: publisher or consumer), started by the bench with its spec
 * in BENCH_WORKER and driven over IPC exactly like bench/worker.ts (see lib/protocol.ts):
 * 'ready' once connected and set up; 'start', 'mark' (twice), 'credit', 'stop' → 'done'.
 *
 * A publisher process may hold several connections (spec.connections); its count is the sum.
 * What the amqplib worker can do and this one cannot (paced rates, timestamps for latency, drain
 * mode) is refused with an error rather than approximated.
 */
import { performance } from 'node:perf_hooks';
import { processCpuMs, systemBusyMs } from '../lib/proc.js';
import type { ConsumeSpec, FromWorker, PublishSpec, Sample, ToWorker, WorkerResult, WorkerSpec } from '../lib/protocol.js';
import { LoadClient } from './client.js';
import { benchBody, encodePublishRing } from './wire.js';

const spec = JSON.parse(process.env['BENCH_WORKER'] ?? 'null') as WorkerSpec | null;
if (!spec || !process.send) {
  process.stderr.write('bench/loadgen/worker.ts is started by bench/run.ts\n');
  process.exit(2);
}

const errors: string[] = [];
const send = (msg: FromWorker): void => {
  process.send?.(msg);
};
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const sample = (count: number, brokerPid: number): Sample => ({
  t: performance.now(), count, cpuMs: cpuMs(), brokerCpuMs: brokerPid > 0 ? processCpuMs(brokerPid) : NaN, systemMs: systemBusyMs(),
});
const noteError = (text: string): void => {
  if (errors.length < 20 && !errors.includes(text)) errors.push(text);
};

const handlers: Partial<Record<ToWorker['cmd'], (m: ToWorker) => void>> = {};
process.on('message', (m: ToWorker) => handlers[m.cmd]?.(m));
process.on('disconnect', () => process.exit(0));

async function finish(result: Omit<WorkerResult, 'errors'>, clients: LoadClient[]): Promise<void> {
  for (const c of clients) if (c.failure) noteError(c.failure);
  send({ ev: 'done', result: { ...result, errors } });
  await Promise.race([
    Promise.allSettled(clients.map((c) => (c.socket.destroyed ? undefined : c.close()))),
    new Promise((r) => setTimeout(r, 3000)),
  ]);
  process.exit(0);
}

// ---- publisher ---------------------------------------------------------------------------------

async function publisher(s: PublishSpec): Promise<void> {
  if (s.rate > 0 || s.timestamp) throw new Error('the load generator does not pace or timestamp publishes (use the amqplib worker)');
  const n = Math.max(1, s.connections ?? 1);
  const keys = s.routingKey === 'topic10k' ? Array.from({ length: 10000 }, (_, i) => `t.${i}.e`) : [s.routingKey];
  const ring = encodePublishRing(1, s.exchange, keys, benchBody(s.size), s.persistent ? { deliveryMode: 2 } : {}, 1024);
  const clients = await Promise.all(Array.from({ length: n }, () => LoadClient.open({ url: s.url, raw: s.raw === true })));
  const limit = s.fill > 0 ? s.fill : s.maxMessages;
  for (const c of clients) {
    if (s.confirmWindow > 0) await c.confirmSelect(s.confirmWindow);
    c.setRing(ring, s.batchBytes ?? 64 * 1024);
    // The total limit is shared out between the connections.
    c.maxMessages = Math.ceil(limit / n);
    c.aheadLimit = s.aheadLimit > 0 ? Math.max(1, Math.floor(s.aheadLimit / n)) : 0;
  }
  const published = () => clients.reduce((a, c) => a + c.published, 0);
  const confirmed = () => clients.reduce((a, c) => a + c.confirmed, 0);
  const nacked = () => clients.reduce((a, c) => a + c.nacked, 0);
  if (s.fill > 0) {
    let left = clients.length;
    for (const c of clients) c.onLimit = () => {
      if (--left > 0) return;
      void Promise.all(clients.map((x) => x.settleAll(60000))).then(() => send({ ev: 'filled', count: published() }));
    };
  }
  handlers.start = () => {
    for (const c of clients) c.startPublishing();
  };
  handlers.credit = (m) => {
    if (m.cmd !== 'credit') return;
    // Consumers report deliveries; the connections share the messages they stand for evenly.
    const perConnection = m.consumed / s.deliveriesPerMessage / clients.length;
    for (const c of clients) {
      c.consumedMessages = perConnection;
      c.kick();
    }
  };
  handlers.mark = () => send({ ev: 'mark', sample: sample(s.confirmWindow > 0 ? confirmed() : published(), s.brokerPid) });
  handlers.stop = () => {
    for (const c of clients) c.stopPublishing();
    const settle = s.raw ? Promise.all(clients.map((c) => c.flushed())) : Promise.all(clients.map((c) => c.settleAll(10000)));
    void settle.then(() => {
      if (s.raw) for (const c of clients) c.endRaw();
      return finish({ total: published(), confirmed: confirmed(), nacked: nacked() }, s.raw ? [] : clients);
    });
  };
  send({ ev: 'ready' });
}

// ---- consumer ----------------------------------------------------------------------------------

async function consumer(s: ConsumeSpec): Promise<void> {
  if (s.latency || s.expect > 0) throw new Error('the load generator has no latency or drain mode (use the amqplib worker)');
  // Acks go out once ackEvery deliveries are unacknowledged: more than the prefetch would never come.
  if (!s.noAck && s.prefetch > 0 && s.ackEvery > s.prefetch) throw new Error(`ack every ${s.ackEvery} with a prefetch of ${s.prefetch} would stall`);
  const c = await LoadClient.open({ url: s.url });
  if (!s.noAck && s.prefetch > 0) await c.qos(s.prefetch);
  for (const [i, q] of s.queues.entries()) await c.consume(q, `lg-${process.pid}-${i}`, s.noAck, s.ackEvery);
  let progress: NodeJS.Timeout | undefined;
  if (s.progress) {
    let last = -1;
    progress = setInterval(() => {
      if (c.delivered !== last) send({ ev: 'progress', count: (last = c.delivered) });
    }, 10);
  }
  handlers.start = () => {};
  handlers.mark = () => send({ ev: 'mark', sample: sample(c.delivered, s.brokerPid) });
  handlers.stop = () => {
    if (progress) clearInterval(progress);
    void finish({ total: c.delivered }, [c]);
  };
  send({ ev: 'ready' });
}

const roles = { publish: publisher, consume: consumer } as const;
const role = roles[spec.role as keyof typeof roles] as ((s: WorkerSpec) => Promise<void>) | undefined;
(role ? role(spec) : Promise.reject(new Error(`the load generator has no role '${spec.role}'`))).catch((err: unknown) => {
  send({ ev: 'error', message: (err as Error)?.message ?? String(err) });
  setTimeout(() => process.exit(1), 100);
});
