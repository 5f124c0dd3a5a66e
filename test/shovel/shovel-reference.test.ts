/**
 * Shovels against the reference RabbitMQ 3.10 (test/support/reference-rabbitmq.ts; skipped,
 * saying why, where there is none): persistent messages go Warren → RabbitMQ through Warren's
 * shovel while RabbitMQ is restarted twice midway (rabbitmqctl stop_app / start_app), then back
 * RabbitMQ → Warren through the shovel of a second Warren while the destination Warren is
 * restarted twice midway (closed and started again on its data directory and port). Every
 * message arrives exactly once. (RabbitMQ's own shovel, run the same way into a restarted Warren,
 * delivered some messages twice: its worker can see the destination's connection close before
 * the confirms that came ahead of it.)
 *
 * npm test moves 10,000 messages; `npm run test:shovel` moves 100,000
 * (WARREN_SHOVEL_MESSAGES).
 */
import amqp from 'amqplib';
import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { call } from '../support/management.js';
import { referenceOrSkip, type Reference } from '../support/reference-rabbitmq.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const N = Number(process.env['WARREN_SHOVEL_MESSAGES'] ?? 10_000);
const guest = { user: 'guest', password: 'guest' };

async function until(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A queue's message count through a passive declare (exact, unlike the management API's sampled stats). */
async function depth(url: string, queue: string): Promise<number> {
  const c = await amqp.connect(url);
  try {
    const ch = await c.createChannel();
    return (await ch.checkQueue(queue)).messageCount;
  } finally {
    await c.close().catch(() => {});
  }
}

describe(`shovels against the reference RabbitMQ: ${N} persistent messages there and back, the destination restarted twice each way`, function () {
  this.timeout(600_000);
  let ref: Reference;
  before(async function () {
    ref = await referenceOrSkip(this);
  });

  it('loses and duplicates nothing', async () => {
    const dir = makeTmpDir('warren-shovel-ref-');
    let a: RunningBroker = await startBroker({ port: 0, managementPort: 0, dataDir: dir, logLevel: 'silent' });
    const port = a.port;
    let host: RunningBroker | undefined;
    try {
      for (const q of ['bulk-ref']) await call(ref.mgmt, 'DELETE', `/api/queues/%2F/${q}`, guest);
      // N persistent messages in a durable Warren queue.
      const c = await amqp.connect(a.url);
      const ch = await c.createConfirmChannel();
      await ch.assertQueue('bulk', { durable: true });
      await ch.assertQueue('bulk-back', { durable: true });
      for (let i = 0; i < N; i++) {
        if (!ch.sendToQueue('bulk', Buffer.from(String(i)), { persistent: true })) await new Promise((r) => ch.once('drain', r));
      }
      await ch.waitForConfirms();
      await c.close();

      // Warren → RabbitMQ, Warren's shovel; RabbitMQ stopped and started at a third and at two thirds.
      const put = await call(a.managementUrl!, 'PUT', '/api/parameters/shovel/%2F/bulk-out', {
        body: { value: { 'src-uri': 'amqp://', 'src-queue': 'bulk', 'dest-uri': ref.amqpUrl, 'dest-queue': 'bulk-ref', 'reconnect-delay': 1 } },
      });
      expect(put.status).to.equal(201);
      const worker = () => a.broker.shovels.get('/', 'bulk-out')!;
      for (const share of [1 / 3, 2 / 3]) {
        await until(`${Math.round(share * N)} messages confirmed by RabbitMQ`, () => worker().counts.acked >= share * N);
        // Synchronous: Warren (in this process) is frozen mid-transfer while RabbitMQ stops.
        ref.ctl('stop_app');
        expect(a.inspect.queue('bulk')!.messages, 'messages still to move when RabbitMQ stopped').to.be.greaterThan(0);
        await a.broker.shovels.whenState('/', 'bulk-out', 'terminated');
        ref.ctl('start_app');
        await a.broker.shovels.whenState('/', 'bulk-out', 'running', 120_000);
      }
      await a.until.queueDrained('bulk', { timeout: 300_000 });
      await until('the last confirms', () => worker().counts.pending === 0);
      expect(worker().counts.restarts).to.be.at.least(2);
      expect(await depth(ref.amqpUrl, 'bulk-ref'), 'messages in RabbitMQ (none lost, none twice)').to.equal(N);
      await call(a.managementUrl!, 'DELETE', '/api/parameters/shovel/%2F/bulk-out');

      // RabbitMQ → Warren, the shovel of another Warren; the destination Warren closed and started
      // again at a third and at two thirds.
      host = await startBroker({ port: 0, managementPort: 0, logLevel: 'silent' });
      const back = await call(host.managementUrl!, 'PUT', '/api/parameters/shovel/%2F/bulk-back', {
        body: { value: { 'src-uri': ref.amqpUrl, 'src-queue': 'bulk-ref', 'dest-uri': `amqp://guest:guest@127.0.0.1:${port}`, 'dest-queue': 'bulk-back', 'reconnect-delay': 1 } },
      });
      expect(back.status, back.text).to.equal(201);
      for (const share of [1 / 3, 2 / 3]) {
        await until(`${Math.round(share * N)} messages in Warren`, () => (a.inspect.queue('bulk-back')?.messages ?? 0) >= share * N);
        await a.close();
        a = await startBroker({ port, managementPort: 0, dataDir: dir, logLevel: 'silent' });
      }
      await until('every message back in Warren', () => (a.inspect.queue('bulk-back')?.messages ?? 0) >= N, 300_000);
      await until('the last confirms', () => host!.broker.shovels.get('/', 'bulk-back')!.counts.pending === 0);
      expect(host.broker.shovels.get('/', 'bulk-back')!.counts.restarts).to.be.at.least(2);
      await host.close();
      host = undefined;
      expect(await depth(ref.amqpUrl, 'bulk-ref')).to.equal(0);

      const seen = new Uint8Array(N);
      let duplicates = 0;
      let other = 0;
      const rc = await amqp.connect(a.url);
      const rch = await rc.createChannel();
      for (;;) {
        const m = await rch.get('bulk-back', { noAck: true });
        if (!m) break;
        const i = Number(m.content.toString());
        if (!Number.isInteger(i) || i < 0 || i >= N) other++;
        else if (seen[i] === 1) duplicates++;
        else seen[i] = 1;
      }
      await rc.close();
      const lost = seen.reduce((n, v) => n + (v === 0 ? 1 : 0), 0);
      expect({ lost, duplicates, other }).to.deep.equal({ lost: 0, duplicates: 0, other: 0 });
    } finally {
      await host?.close();
      await a.close();
      removeDir(dir);
    }
  });
});
