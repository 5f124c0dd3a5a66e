/**
 * A benchmark client process (amqplib), started by bench/run.ts with its spec in the
 * BENCH_WORKER environment variable and driven over IPC (see lib/protocol.ts):
 *
 *   worker → 'ready' once connected and set up
 *   run    → 'start' (begin traffic), 'mark' (record a Sample; twice: window start and end),
 *            'stop' (stop traffic, report 'done' with totals, exit)
 *
 * A drain-mode consumer (expect > 0) and the connections role mark by themselves.
 */
import { performance } from 'node:perf_hooks';
import amqp from 'amqplib';
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { percentile } from './lib/stats.js';
import { processCpuMs, processRssKiB, systemBusyMs } from './lib/proc.js';
import type {
  ConnectionsSpec, ConsumeSpec, FromWorker, PublishSpec, Sample, ToWorker, WorkerResult, WorkerSpec,
} from './lib/protocol.js';

const spec = JSON.parse(process.env['BENCH_WORKER'] ?? 'null') as WorkerSpec | null;
if (!spec || !process.send) {
  process.stderr.write('bench/worker.ts is started by bench/run.ts\n');
  process.exit(2);
}

/** TCP_NODELAY on, as RabbitMQ's own clients (PerfTest, the Java client) set it; amqplib's default is off. */
const CONNECT_OPTIONS = { noDelay: true };
const errors: string[] = [];
function send(msg: FromWorker): void {
  process.send?.(msg);
}
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
function sample(count: number, brokerPid: number): Sample {
  return { t: performance.now(), count, cpuMs: cpuMs(), brokerCpuMs: brokerPid > 0 ? processCpuMs(brokerPid) : NaN, systemMs: systemBusyMs() };
}
function noteError(where: string, err: unknown): void {
  const text = `${where}: ${(err as Error)?.message ?? String(err)}`;
  if (errors.length < 20 && !errors.includes(text)) errors.push(text);
}
function watch(model: ChannelModel, ch: Channel | null): void {
  model.on('error', (err: Error) => noteError('connection error', err));
  model.on('close', (err?: Error) => {
    if (!closing) noteError('connection closed', err ?? 'by broker');
  });
  ch?.on('error', (err: Error) => noteError('channel error', err));
}

let closing = false;
const handlers: Partial<Record<ToWorker['cmd'], (m: ToWorker) => void>> = {};
process.on('message', (m: ToWorker) => handlers[m.cmd]?.(m));
process.on('disconnect', () => process.exit(0));

async function finish(result: Omit<WorkerResult, 'errors'>, models: ChannelModel[]): Promise<void> {
  send({ ev: 'done', result: { ...result, errors } });
  closing = true;
  await Promise.race([
    Promise.allSettled(models.map((m) => m.close())),
    new Promise((r) => setTimeout(r, 3000)),
  ]);
  process.exit(0);
}

// ---- publisher ---------------------------------------------------------------------------------

async function publisher(s: PublishSpec): Promise<void> {
  const model = await amqp.connect(s.url, CONNECT_OPTIONS);
  const ch: Channel = s.confirmWindow > 0 ? await model.createConfirmChannel() : await model.createChannel();
  watch(model, ch);
  const confirmCh = ch as ConfirmChannel;
  const keys = s.routingKey === 'topic10k' ? Array.from({ length: 10000 }, (_, i) => `t.${i}.e`) : [s.routingKey];
  const body = Buffer.alloc(s.size, 0x61);
  const options = { persistent: s.persistent };
  const limit = s.fill > 0 ? s.fill : s.maxMessages;

  let published = 0;
  let confirmed = 0;
  let nacked = 0;
  let consumed = 0;
  let running = false;
  let blocked = false;
  let scheduled = false;
  let pacedStart = 0;

  const onConfirm = (err: unknown): void => {
    if (err) nacked++;
    else confirmed++;
    if (running) kick();
  };

  const canSend = (): boolean => {
    if (published >= limit) return false;
    if (s.confirmWindow > 0 && published - confirmed - nacked >= s.confirmWindow) return false;
    if (s.aheadLimit > 0 && published - consumed / s.deliveriesPerMessage >= s.aheadLimit) return false;
    if (s.rate > 0 && published >= ((performance.now() - pacedStart) / 1000) * s.rate) return false;
    return true;
  };

  const publishOne = (): boolean => {
    let content = body;
    if (s.timestamp) {
      content = Buffer.alloc(s.size, 0x61);
      content.writeBigUInt64BE(process.hrtime.bigint(), 0);
    }
    const key = keys.length === 1 ? (keys[0] as string) : (keys[published % keys.length] as string);
    const opts = s.dedupHeaders ? { ...options, headers: { 'x-deduplication-header': s.dedupHeaders.offset + published } } : options;
    published++;
    if (s.confirmWindow > 0) return confirmCh.publish(s.exchange, key, content, opts, onConfirm);
    return ch.publish(s.exchange, key, content, opts);
  };

  const pump = (): void => {
    scheduled = false;
    if (!running || blocked) return;
    for (let n = 0; n < 500; n++) {
      if (!canSend()) {
        if (s.fill > 0 && published >= s.fill) {
          running = false;
          void (s.confirmWindow > 0 ? confirmCh.waitForConfirms() : Promise.resolve()).then(() => send({ ev: 'filled', count: published }));
        }
        return;
      }
      if (!publishOne()) {
        blocked = true;
        return;
      }
    }
    kick();
  };
  const kick = (): void => {
    if (!scheduled && running && !blocked) {
      scheduled = true;
      setImmediate(pump);
    }
  };
  ch.on('drain', () => {
    blocked = false;
    kick();
  });

  let pacer: NodeJS.Timeout | undefined;
  handlers.start = () => {
    running = true;
    pacedStart = performance.now();
    if (s.rate > 0) pacer = setInterval(kick, 1);
    kick();
  };
  handlers.credit = (m) => {
    if (m.cmd !== 'credit') return;
    consumed = m.consumed;
    kick();
  };
  handlers.mark = () => send({ ev: 'mark', sample: sample(s.confirmWindow > 0 ? confirmed : published, s.brokerPid) });
  handlers.stop = () => {
    running = false;
    if (pacer) clearInterval(pacer);
    // Give outstanding confirms a moment, so 'confirmed' can be checked against 'published'.
    // Without confirms, a round trip on the same channel (basic.qos → qos-ok) makes sure every
    // publish left amqplib's buffers and reached the broker before the connection closes.
    const flushed = s.confirmWindow > 0
      ? confirmCh.waitForConfirms().catch((e: unknown) => noteError('waitForConfirms', e))
      : ch.prefetch(0).catch((e: unknown) => noteError('flush (basic.qos)', e));
    const wait = Promise.race([flushed, new Promise((r) => setTimeout(r, 10000))]);
    void wait.then(() => finish({ total: published, confirmed, nacked }, [model]));
  };
  send({ ev: 'ready' });
}

// ---- consumer ----------------------------------------------------------------------------------

async function consumer(s: ConsumeSpec): Promise<void> {
  const model = await amqp.connect(s.url, CONNECT_OPTIONS);
  const ch = await model.createChannel();
  watch(model, ch);
  if (!s.noAck && s.prefetch > 0) await ch.prefetch(s.prefetch);
  let count = 0;
  let measuring = false;
  let latencies: number[] = [];
  const skip = Math.max(1, Math.floor(s.expect * 0.05));

  const onMessage = (msg: ConsumeMessage | null): void => {
    if (!msg) {
      noteError('consumer', 'cancelled by broker');
      return;
    }
    count++;
    if (measuring && s.latency) {
      const sent = msg.content.readBigUInt64BE(0);
      latencies.push(Number(process.hrtime.bigint() - sent) / 1e6);
    }
    if (!s.noAck && count % s.ackEvery === 0) ch.ack(msg, s.ackEvery > 1);
    if (s.expect > 0) {
      if (count === skip) send({ ev: 'mark', sample: sample(count, s.brokerPid) });
      if (count === s.expect) send({ ev: 'mark', sample: sample(count, s.brokerPid) });
    }
  };
  // Drain mode: a first mark at subscription (CPU is measured from here, the rate from the
  // 5% mark: a no-ack broker may have written everything before the consumer has read 5%).
  if (s.expect > 0) send({ ev: 'mark', sample: sample(0, s.brokerPid) });
  for (const q of s.queues) await ch.consume(q, onMessage, { noAck: s.noAck, arguments: s.arguments });

  let progress: NodeJS.Timeout | undefined;
  if (s.progress) {
    let last = -1;
    progress = setInterval(() => {
      if (count !== last) send({ ev: 'progress', count: (last = count) });
    }, 10);
  }
  handlers.mark = () => {
    measuring = !measuring;
    if (measuring) latencies = [];
    send({ ev: 'mark', sample: sample(count, s.brokerPid) });
  };
  handlers.stop = () => {
    if (progress) clearInterval(progress);
    {
      let latency: WorkerResult['latency'];
      if (s.latency) {
        const sorted = Float64Array.from(latencies).sort();
        latency = {
          p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99),
          p999: percentile(sorted, 99.9), max: sorted.length ? (sorted[sorted.length - 1] as number) : NaN, n: sorted.length,
        };
      }
      void finish({ total: count, ...(latency ? { latency } : {}) }, [model]);
    }
  };
  handlers.start = () => {};
  send({ ev: 'ready' });
}

// ---- many connections --------------------------------------------------------------------------

async function connections(s: ConnectionsSpec): Promise<void> {
  const settle = () => new Promise((r) => setTimeout(r, s.settleMs));
  /** RSS is noisy (allocators grow and give back in steps): the median of 5 readings 200 ms apart. */
  const rss = async (): Promise<number> => {
    const xs: number[] = [];
    for (let i = 0; i < 5; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 200));
      xs.push(processRssKiB(s.brokerPid));
    }
    return xs.sort((a, b) => a - b)[2] as number;
  };
  const models: ChannelModel[] = [];
  handlers.start = () => {
    void (async () => {
      await settle();
      const rssBefore = await rss();
      const cpu0 = cpuMs();
      const broker0 = processCpuMs(s.brokerPid);
      const system0 = systemBusyMs();
      const t0 = performance.now();
      let next = 0;
      const opener = async (): Promise<void> => {
        while (next < s.count) {
          next++;
          const m = await amqp.connect(s.url, CONNECT_OPTIONS);
          m.on('error', (err: Error) => noteError('connection error', err));
          models.push(m);
        }
      };
      await Promise.all(Array.from({ length: s.concurrency }, opener));
      const openMs = performance.now() - t0;
      const clientCpuMs = cpuMs() - cpu0;
      const brokerCpuMs = processCpuMs(s.brokerPid) - broker0;
      const systemMs = systemBusyMs() - system0;
      await settle();
      const rssConns = await rss();
      const channels = await Promise.all(models.map((m) => m.createChannel()));
      await settle();
      const rssChannels = await rss();
      void channels;
      await finish({
        total: models.length,
        connections: {
          opened: models.length, openMs, brokerRssBeforeKiB: rssBefore, brokerRssConnsKiB: rssConns,
          brokerRssChannelsKiB: rssChannels, brokerCpuMs, clientCpuMs, systemMs,
        },
      }, models);
    })().catch((err: unknown) => {
      noteError('connections', err);
      void finish({ total: models.length }, models);
    });
  };
  send({ ev: 'ready' });
}

// ---- main --------------------------------------------------------------------------------------

const roles = { publish: publisher, consume: consumer, connections } as const;
(roles[spec.role] as (s: WorkerSpec) => Promise<void>)(spec).catch((err: unknown) => {
  send({ ev: 'error', message: (err as Error)?.message ?? String(err) });
  setTimeout(() => process.exit(1), 100);
});
