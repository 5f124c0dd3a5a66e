/**
 * Whether a stream's broker memory stays flat as the stream grows, measured between full
 * collections (the timed stream scenarios sample RssAnon, which also moves with V8's young
 * generation and with garbage not yet collected). Runs Warren in this process on a fresh data
 * dir, publishes STEPS × PER_STEP confirmed 16 B messages into one stream with amqplib (window
 * 1000), and after each step prints the heap in use, external and ArrayBuffer memory after two
 * full collections, and RssAnon. Run with --expose-gc:
 *
 *   node --expose-gc --import tsx bench/stream-memory.ts [STEPS] [PER_STEP]
 *
 * Prints one JSON line per step: {"messages":N,"heapUsedMiB":H,"externalMiB":E,"arrayBuffersMiB":A,"anonMiB":R}.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp from 'amqplib';
import { startBroker } from '../src/index.js';
import { processAnonKiB } from './lib/proc.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  process.stderr.write('run with node --expose-gc\n');
  process.exit(2);
}
const steps = Number(process.argv[2] ?? 5);
const perStep = Number(process.argv[3] ?? 400_000);
const WINDOW = 1000;
const MiB = 1024 * 1024;

const dataDir = mkdtempSync(join(tmpdir(), 'warren-stream-memory-'));
const broker = await startBroker({ port: 0, dataDir, managementPort: 'off', prometheusPort: 'off' });
try {
  const conn = await amqp.connect(broker.url);
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue('stream-memory', { durable: true, arguments: { 'x-queue-type': 'stream' } });
  const body = Buffer.alloc(16);
  let published = 0;
  for (let step = 1; step <= steps; step++) {
    for (let i = 0; i < perStep; i++) {
      ch.sendToQueue('stream-memory', body, { persistent: true });
      if (++published % WINDOW === 0) await ch.waitForConfirms();
    }
    await ch.waitForConfirms();
    gc!();
    gc!();
    const m = process.memoryUsage();
    const round = (bytes: number): number => Math.round((bytes / MiB) * 10) / 10;
    process.stdout.write(`${JSON.stringify({ messages: published, heapUsedMiB: round(m.heapUsed), externalMiB: round(m.external), arrayBuffersMiB: round(m.arrayBuffers), anonMiB: round(processAnonKiB(process.pid) * 1024) })}\n`);
  }
  await conn.close();
} finally {
  await broker.close();
  rmSync(dataDir, { recursive: true, force: true });
}
