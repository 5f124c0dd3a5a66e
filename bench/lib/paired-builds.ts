/**
 * A/B comparisons of builds (bench/publish-burst.ts, bench/ack-burst.ts): a broker of one
 * build started on a fresh data dir with the bench's flags and an amqplib connection to it,
 * and the rounds that alternate the builds and print each build's median.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp from 'amqplib';
import type { ChannelModel } from 'amqplib';
import { freePort, warrenEntry } from './brokers.js';

export interface BuildBroker {
  proc: ChildProcess;
  url: string;
  /** An amqplib connection (heartbeats off). */
  conn: ChannelModel;
  /** conn's socket, for writing pre-encoded frames straight to it. */
  socket: Socket;
}

/**
 * Runs f with the broker of the checkout `dir` (its built dist/, with the bench's
 * --max-semi-space-size=64) on a fresh data dir; kills it and removes the data dir afterwards.
 */
export async function withBuild<T>(dir: string, tag: string, f: (b: BuildBroker) => Promise<T>): Promise<T> {
  const port = await freePort();
  const data = mkdtempSync(join(tmpdir(), `${tag}-`));
  const args = ['--max-semi-space-size=64', warrenEntry(dir), '--port', String(port), '--host', '127.0.0.1', '--data-dir', data,
    '--log-level', 'warn', '--prometheus-port', 'off', '--management-port', 'off'];
  const proc = spawn(process.execPath, args, { stdio: 'ignore' });
  const url = `amqp://guest:guest@127.0.0.1:${port}`;
  try {
    let conn: ChannelModel | undefined;
    for (let i = 0; conn === undefined; i++) {
      try {
        conn = await amqp.connect(`${url}?heartbeat=0`);
      } catch (err) {
        if (i >= 300) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const socket = (conn.connection as unknown as { stream: Socket }).stream;
    try {
      return await f({ proc, url, conn, socket });
    } finally {
      await conn.close().catch(() => {});
    }
  } finally {
    proc.kill('SIGKILL');
    rmSync(data, { recursive: true, force: true });
  }
}

/** Writes buf `times` times to socket, waiting for 'drain' when it asks. */
export async function writeRepeatedly(socket: Socket, buf: Buffer, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    if (!socket.write(buf)) await new Promise((r) => socket.once('drain', r));
  }
}

/** `rounds` rounds of round(dir) for each of dirs in turn; prints each figure and each build's median, then exits. */
export async function pairedRounds(dirs: string[], rounds: number, round: (dir: string) => Promise<number>): Promise<never> {
  const results = new Map<string, number[]>(dirs.map((d) => [d, []]));
  for (let r = 0; r < rounds; r++) {
    for (const dir of dirs) {
      const us = await round(dir);
      results.get(dir)!.push(us);
      console.log(`${dir} round ${r + 1}: ${us.toFixed(3)} µs/msg`);
    }
  }
  for (const [dir, v] of results) {
    const sorted = [...v].sort((a, b) => a - b);
    console.log(`median ${dir} ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} µs/msg (${sorted.map((x) => x.toFixed(2)).join(' ')})`);
  }
  process.exit(0);
}
