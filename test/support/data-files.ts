import { readFileSync, writeFileSync } from 'node:fs';
import { confirmChannel, connect } from './amqp.js';

/** Publishes persistent messages to a (declared) durable queue and waits for their confirms. */
export async function publishDurable(url: string, queue: string, bodies: Buffer[]): Promise<void> {
  const conn = await connect(url);
  const ch = await confirmChannel(conn);
  await ch.assertQueue(queue, { durable: true });
  for (const body of bodies) ch.sendToQueue(queue, body, { persistent: true });
  await ch.waitForConfirms();
  await conn.close();
}

/**
 * Flips one bit (mask) of byte `at` in every copy of marker in file: LMDB is copy-on-write, so
 * stale copies may sit in free pages too. Returns how many copies it changed.
 */
export function flipBitInEveryCopy(file: string, marker: string, at = 3, mask = 0x04): number {
  const data = readFileSync(file);
  const needle = Buffer.from(marker);
  let flipped = 0;
  for (let i = data.indexOf(needle); i >= 0; i = data.indexOf(needle, i + needle.length)) {
    data[i + at]! ^= mask;
    flipped++;
  }
  writeFileSync(file, data);
  return flipped;
}
