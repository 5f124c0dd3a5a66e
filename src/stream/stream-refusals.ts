/**
 * What AMQP 0-9-1 operations a stream refuses, with RabbitMQ 3.10's codes and texts
 * (rabbit_stream_queue: dequeue, purge, settle, consume), for the channel handlers.
 */
import { ConnectionError, preconditionFailed, ReplyCode, resourceName } from '../errors.js';
import type { Queue } from '../queue/queue.js';
import { StreamQueue } from './stream-queue.js';

export function isStream(queue: Queue): queue is StreamQueue {
  return queue instanceof StreamQueue;
}

type Refused = 'basic.get' | 'queue.purge' | 'basic.nack and basic.reject';

/** basic.get, queue.purge, basic.nack and basic.reject on a stream: 540 on the connection. */
export function refuseOnStream(queue: Queue, vhost: string, what: Refused): void {
  if (!isStream(queue)) return;
  throw streamRefusal(queue, vhost, what);
}

/** The 540 refuseOnStream throws (a nack or reject unless said). */
export function streamRefusal(queue: Queue, vhost: string, what: Refused = 'basic.nack and basic.reject'): ConnectionError {
  return new ConnectionError(ReplyCode.NOT_IMPLEMENTED, `${what} not supported by stream queues ${resourceName('queue', queue.name, vhost)}`);
}

/**
 * basic.consume's own checks on a stream, after its arguments (rabbit_stream_queue:consume): a
 * consumer prefetch is required (406), automatic acknowledgement is refused (540).
 */
export function checkStreamConsumer(rs: string, prefetch: number, noAck: boolean): void {
  if (prefetch === 0) throw preconditionFailed(`consumer prefetch count is not set for '${rs}'`);
  if (noAck) throw new ConnectionError(ReplyCode.NOT_IMPLEMENTED, `automatic acknowledgement not supported by stream queues ${rs}`);
}
