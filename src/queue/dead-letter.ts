import { copyTable, F, fieldInteger, fieldString, newTable, type FieldTable, type FieldValue } from '../frame/field-table.js';
import type { BasicProperties } from '../frame/generated/properties.js';
import { headerRoutingKeys, type Message } from './message.js';
import type { DeadLetterReason } from './queue.js';

export interface DeadLettered {
  message: Message;
  /** The keys to route with: the x-dead-letter-routing-key, or the original key and CC keys. */
  routingKeys: string[];
}

/** Sorts a table by key, as rabbit_misc:sort_field_table does when RabbitMQ rewrites headers. */
function sorted(t: FieldTable): FieldTable {
  // Without a prototype chain: a header named __proto__ is an ordinary key here, as in decodeTable.
  const out = newTable();
  for (const k of Object.keys(t).sort()) out[k] = t[k]!; // one of t's own keys
  return out;
}

/**
 * Builds the message that goes to a dead-letter exchange, with the x-death header updated the
 * way rabbit_dead_letter:make_msg writes it: one entry per (queue, reason), the latest death's
 * first, with count, reason, queue, time, exchange and routing-keys (and original-expiration for a
 * per-message TTL); x-first-death-* on the first death; the expiration property removed.
 */
export function deadLetterMessage(
  msg: Message,
  reason: DeadLetterReason,
  queueName: string,
  dlx: string,
  dlrk: string | undefined,
  nowMs: number,
  newId: number,
): DeadLettered {
  const props = msg.properties;
  const headers = copyTable(props.headers);
  const cc: string[] = [];
  headerRoutingKeys(headers['CC'], cc);
  const originalKeys = [msg.routingKey, ...cc];

  const info: FieldTable = {
    reason: F.str(reason),
    queue: F.str(queueName),
    time: F.timestamp(Math.floor(nowMs / 1000)),
    exchange: F.str(msg.exchange),
    'routing-keys': F.array(originalKeys.map((k) => F.str(k))),
  };
  if (props.expiration !== undefined) info['original-expiration'] = F.str(props.expiration);

  const existing = headers['x-death'];
  let newHeaders: FieldTable;
  if (!existing || existing.type !== 'A') {
    // The first death gets x-first-death-*; an x-death of another type (a client's) is reset.
    if (!existing) {
      headers['x-first-death-reason'] = F.str(reason);
      headers['x-first-death-queue'] = F.str(queueName);
      headers['x-first-death-exchange'] = F.str(msg.exchange);
    }
    headers['x-death'] = F.array([F.table({ count: F.int64(1), ...info })]);
    newHeaders = sorted(headers);
  } else {
    // update_x_death_header: the entries grouped (group_by_queue_and_reason), the one of this
    // queue and reason counted up (the entry kept as it was, time included) or a new one made,
    // and put first.
    const grouped = groupByQueueAndReason(existing.value);
    const [queue, why] = [info['queue'], info['reason']];
    const isThis = (d: FieldValue) => d.type === 'F' && sameDeath(d.value, queue, why);
    const match = grouped.find(isThis);
    const entry = match === undefined ? { count: F.int64(1), ...info } : countedUp((match as { type: 'F'; value: FieldTable }).value);
    headers['x-death'] = F.array([F.table(sorted(entry)), ...grouped.filter((d) => !isThis(d))]);
    newHeaders = sorted(headers);
  }
  if (dlrk !== undefined) delete newHeaders['CC'];

  const newProps: BasicProperties = { ...props, headers: newHeaders };
  delete newProps.expiration;
  const routingKeys = dlrk !== undefined ? [dlrk] : originalKeys;
  const message = msg.withProperties(newId, dlx, dlrk ?? msg.routingKey, newProps);
  message.ttl = undefined;
  return { message, routingKeys };
}

/** An x-death entry's field as rabbit_dead_letter compares it (=:= on the value, whatever its type). */
function deathKey(v: FieldValue | undefined): string {
  if (v === undefined) return 'undefined';
  if (v.type === 'S' || v.type === 'x') return `b:${v.value.toString('latin1')}`;
  const n = fieldInteger(v);
  return n !== undefined ? `i:${n}` : `${v.type}:${JSON.stringify(v.value, (_k, x) => (typeof x === 'bigint' ? x.toString() : x))}`;
}

function sameDeath(entry: FieldTable, queue: FieldValue | undefined, reason: FieldValue | undefined): boolean {
  return deathKey(entry['queue']) === deathKey(queue) && deathKey(entry['reason']) === deathKey(reason);
}

/**
 * group_by_queue_and_reason (3.10.8), kept to the letter because its order is what clients see:
 * one entry per (queue, reason), the first of each, given the number of entries as its count if
 * it had none, in the reverse order of their first appearance (each fold step prepends). A list
 * of one entry is left as it is. (So every later death reverses the older entries: A, B, C dead
 * in turn reads [C, A, B].) Entries that are not tables, which RabbitMQ's queue would crash
 * on, are kept at the end.
 */
function groupByQueueAndReason(deaths: readonly FieldValue[]): FieldValue[] {
  const tables = deaths.filter((d): d is { type: 'F'; value: FieldTable } => d.type === 'F');
  const rest = deaths.filter((d) => d.type !== 'F');
  if (tables.length <= 1) return [...tables, ...rest];
  const keyOf = (t: FieldTable) => `${deathKey(t['queue'])}\u0000${deathKey(t['reason'])}`;
  // How many entries each (queue, reason) has; an entry met first stands for them all.
  const counts = new Map<string, number>();
  for (const t of tables) {
    const key = keyOf(t.value);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const grouped: FieldValue[] = [];
  for (const t of tables) {
    const key = keyOf(t.value);
    const n = counts.get(key);
    if (n === undefined) continue; // not the first of its (queue, reason)
    counts.delete(key);
    grouped.unshift(t.value['count'] === undefined ? F.table({ count: F.int64(n), ...t.value }) : t);
  }
  return [...grouped, ...rest];
}

/**
 * increment_xdeath_event_count: count + 1 (a long), or 1 where there was none. A count that is
 * not an integer (client-made) crashes RabbitMQ's queue process; here it starts again at 1.
 */
function countedUp(entry: FieldTable): FieldTable {
  const n = fieldInteger(entry['count']);
  const out = copyTable(entry);
  if (entry['count'] === undefined) return { count: F.int64(1), ...out };
  out['count'] = F.int64(n === undefined ? 1 : n + 1);
  return out;
}

/**
 * The reason and routing keys of a dead-letter's latest death (the first x-death entry, which
 * deadLetterMessage writes): what a held dead-letter read back from the store is forwarded with,
 * as rabbit_fifo_dlx_worker:redeliver takes the keys from there when the queue has no
 * x-dead-letter-routing-key.
 */
export function latestDeath(message: Message): { reason: DeadLetterReason; routingKeys: string[] } {
  const deaths = message.properties.headers?.['x-death'];
  const latest = deaths?.type === 'A' ? deaths.value[0] : undefined;
  const routingKeys: string[] = [];
  if (latest?.type !== 'F') return { reason: 'rejected', routingKeys: [message.routingKey] };
  headerRoutingKeys(latest.value['routing-keys'], routingKeys);
  return { reason: (fieldString(latest.value['reason']) ?? 'rejected') as DeadLetterReason, routingKeys };
}

/**
 * rabbit_dead_letter's cycle rule (detect_cycles): a message dead-lettered for reason that would
 * come back to a queue it already died in is dropped for that queue unless a rejection happened
 * somewhere in the cycle (a rejection now: detect_cycles(rejected, …) lets every queue have it).
 * Returns the cycle as RabbitMQ logs it (the target queue, then every queue of its x-death, newest
 * first), or undefined when the target may have it.
 */
export function deadLetterCycle(message: Message, targetQueue: string, reason: DeadLetterReason): string[] | undefined {
  if (reason === 'rejected') return undefined;
  const deaths = message.properties.headers?.['x-death'];
  if (!deaths || deaths.type !== 'A') return undefined;
  const list = deaths.value;
  const idx = list.findIndex((d) => d.type === 'F' && fieldString(d.value['queue']) === targetQueue);
  if (idx < 0) return undefined;
  if (!list.slice(0, idx + 1).every((d) => d.type === 'F' && fieldString(d.value['reason']) !== 'rejected')) return undefined;
  const queues = [targetQueue];
  for (const d of list) {
    // A longstr "queue" only ({longstr, QName} <- OldQueues).
    const q = d.type === 'F' ? fieldString(d.value['queue']) : undefined;
    if (q !== undefined) queues.push(q);
  }
  return queues;
}
