import { copyTable, F, fieldString, newTable, type FieldTable } from '../frame/field-table.js';
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
 * way rabbit_dead_letter:make_msg writes it: one entry per (queue, reason), most recent first,
 * with count, reason, queue, time, exchange and routing-keys (and original-expiration for a
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
    headers['x-first-death-reason'] = F.str(reason);
    headers['x-first-death-queue'] = F.str(queueName);
    headers['x-first-death-exchange'] = F.str(msg.exchange);
    headers['x-death'] = F.array([F.table({ count: F.int64(1), ...info })]);
    newHeaders = sorted(headers);
  } else {
    const deaths = existing.value;
    const matchIndex = deaths.findIndex(
      (d) => d.type === 'F' && fieldString(d.value['queue']) === queueName && fieldString(d.value['reason']) === reason,
    );
    let entry: FieldTable;
    const others = deaths.filter((_, i) => i !== matchIndex);
    if (matchIndex >= 0) {
      const previous = (deaths[matchIndex] as { type: 'F'; value: FieldTable }).value;
      const count = previous['count'];
      const n = count ? Number(count.type === 'l' ? count.value : count.value) : 0;
      entry = copyTable(previous);
      entry['count'] = F.int64(n + 1);
    } else {
      entry = { count: F.int64(1), ...info };
    }
    headers['x-death'] = F.array([F.table(sorted(entry)), ...others]);
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

/**
 * rabbit_dead_letter's cycle rule: a message that would come back to a queue it already died
 * in is dropped for that queue unless a rejection happened somewhere in the cycle.
 */
export function isDeadLetterCycle(message: Message, targetQueue: string): boolean {
  const deaths = message.properties.headers?.['x-death'];
  if (!deaths || deaths.type !== 'A') return false;
  const list = deaths.value;
  const idx = list.findIndex((d) => d.type === 'F' && fieldString(d.value['queue']) === targetQueue);
  if (idx < 0) return false;
  return list.slice(0, idx + 1).every((d) => d.type === 'F' && fieldString(d.value['reason']) !== 'rejected');
}
