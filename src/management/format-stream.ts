/**
 * A stream queue as RabbitMQ 3.10's management API shows it (rabbit_stream_queue:info/2 through
 * rabbit_mgmt): no backing-queue, paging or byte keys; members, online and readers per node;
 * messages = messages_ready (a stream has nothing "unacknowledged": acks only return credit).
 */
import type { StreamQueue } from '../stream/stream-queue.js';
import { tableToJson } from './amqp-json.js';
import { noGarbageCollection, NODE } from './format.js';
import { noRate, type Json, type JsonObject } from './json.js';
import { asMap } from './query.js';
import type { MessageStatsSource } from './stats.js';
import type { PolicyInfo } from '../policy/policy-operations.js';

export function formatStream(vhost: string, q: StreamQueue, stats: MessageStatsSource, policies: PolicyInfo): Record<string, Json | undefined> {
  const messages = q.messageCount;
  return {
    arguments: tableToJson(q.arguments),
    auto_delete: false,
    consumers: q.consumerCount,
    durable: true,
    effective_policy_definition: asMap({ ...(policies.effective_policy_definition as JsonObject) }),
    exclusive: false,
    garbage_collection: noGarbageCollection(),
    members: [NODE],
    // What the stream holds in memory: its segment summaries, not its messages.
    memory: 0,
    message_stats: stats.queue?.(vhost, q),
    messages,
    messages_details: noRate(),
    messages_ready: messages,
    messages_ready_details: noRate(),
    messages_unacknowledged: 0,
    messages_unacknowledged_details: noRate(),
    name: q.name,
    node: NODE,
    online: [NODE],
    operator_policy: policies.operator_policy,
    policy: policies.policy,
    readers: { [NODE]: q.consumerCount },
    reductions: 0,
    reductions_details: noRate(),
    state: 'running',
    type: 'stream',
    vhost,
  };
}
