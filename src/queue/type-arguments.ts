/**
 * The queue and consumer arguments each queue type takes in RabbitMQ 3.10.8 (the
 * queue_arguments and consumer_arguments of rabbit_classic_queue, rabbit_quorum_queue and
 * rabbit_stream_queue:capabilities/0), and so the ones it refuses: every argument another type
 * takes and it does not. A queue.declare or basic.consume that carries one is 406 "invalid arg
 * 'x-…' for queue 'q' in vhost '/' of queue type rabbit_…_queue"
 * (rabbit_amqqueue:check_arguments_key); arguments no type knows are not refused.
 */
import { preconditionFailed } from '../errors.js';

export type QueueTypeName = 'classic' | 'quorum' | 'stream';

const TAKES: Readonly<Record<QueueTypeName, readonly string[]>> = {
  classic: [
    'x-expires', 'x-message-ttl', 'x-dead-letter-exchange', 'x-dead-letter-routing-key', 'x-max-length', 'x-max-length-bytes',
    'x-max-priority', 'x-overflow', 'x-queue-mode', 'x-queue-version', 'x-single-active-consumer', 'x-queue-type', 'x-queue-master-locator',
  ],
  quorum: [
    'x-dead-letter-exchange', 'x-dead-letter-routing-key', 'x-dead-letter-strategy', 'x-expires', 'x-max-length', 'x-max-length-bytes',
    'x-max-in-memory-length', 'x-max-in-memory-bytes', 'x-overflow', 'x-single-active-consumer', 'x-queue-type',
    'x-quorum-initial-group-size', 'x-delivery-limit', 'x-message-ttl', 'x-queue-leader-locator',
  ],
  stream: ['x-max-length-bytes', 'x-queue-type', 'x-max-age', 'x-stream-max-segment-size-bytes', 'x-initial-cluster-size', 'x-queue-leader-locator'],
};

const CONSUMER_TAKES: Readonly<Record<QueueTypeName, readonly string[]>> = {
  classic: ['x-cancel-on-ha-failover', 'x-priority', 'x-credit'],
  quorum: ['x-priority', 'x-credit'],
  stream: ['x-stream-offset', 'x-credit'],
};

/** By type, what it refuses of what the others take. */
function refusals(takes: Readonly<Record<QueueTypeName, readonly string[]>>): Map<QueueTypeName, ReadonlySet<string>> {
  const all = new Set(Object.values(takes).flat());
  return new Map((Object.keys(takes) as QueueTypeName[]).map((type) => [type, new Set([...all].filter((k) => !takes[type].includes(k)))]));
}

const REFUSES = refusals(TAKES);
const CONSUMER_REFUSES = refusals(CONSUMER_TAKES);

function refuse(refused: ReadonlySet<string>, type: QueueTypeName, args: object, resource: string): void {
  for (const key of Object.keys(args)) {
    if (refused.has(key)) throw preconditionFailed(`invalid arg '${key}' for ${resource} of queue type rabbit_${type}_queue`);
  }
}

/** queue.declare: the first argument, in the table's order, that a queue of this type refuses is 406. */
export function refuseOtherTypesArguments(type: QueueTypeName, args: object, resource: string): void {
  refuse(REFUSES.get(type)!, type, args, resource);
}

/** basic.consume: likewise for the consumer arguments of a queue of this type. */
export function refuseOtherTypesConsumerArguments(type: QueueTypeName, args: object, resource: string): void {
  refuse(CONSUMER_REFUSES.get(type)!, type, args, resource);
}
