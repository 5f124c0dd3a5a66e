/**
 * Transactions through amqplib, which has none in its API: its channel's rpc, with the method ids
 * of tx.select and tx.commit and their -ok replies (amqplib/lib/defs.js, which its package does
 * not export). Used by bench/event-loop-holds.ts and the large-acks integration test.
 */
import type { Channel } from 'amqplib';

const rpc = (ch: Channel, method: number, ok: number): Promise<unknown> =>
  (ch as unknown as { rpc(method: number, fields: object, expect: number): Promise<unknown> }).rpc(method, {}, ok);

/** tx.select, resolved on tx.select-ok. */
export const txSelect = (ch: Channel): Promise<unknown> => rpc(ch, 5898250, 5898251);

/** tx.commit, resolved on tx.commit-ok (rejected when the broker closes the channel instead). */
export const txCommit = (ch: Channel): Promise<unknown> => rpc(ch, 5898260, 5898261);
