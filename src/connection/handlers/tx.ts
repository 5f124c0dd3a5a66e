import { preconditionFailed } from '../../errors.js';
import type { ChannelHandlers } from './types.js';

/** tx.select / commit / rollback with rabbit_channel's rules and reply texts. */
export const txHandlers: ChannelHandlers = {
  'tx.select': (ch) => {
    if (ch.publisher.confirming) throw preconditionFailed('cannot switch from confirm to tx mode');
    ch.txMode = true;
    ch.send('tx.select-ok', {});
  },
  'tx.commit': (ch) => {
    if (!ch.txMode) throw preconditionFailed('channel is not transactional');
    // Publishes first (they were checked and routed at basic.publish; returns go out now), then
    // acknowledgements. A publish a queue refused fails the commit, its acknowledgements
    // applied all the same.
    const { durable, rejected } = ch.publisher.commit();
    if (rejected) {
      ch.commitAcks();
      throw preconditionFailed('partial tx completion');
    }
    // commit-ok waits for the store when it holds a persistent message of the transaction;
    // otherwise it goes out, as RabbitMQ's does, before the queues redeliver what the
    // acknowledgements make room for.
    if (durable) ch.conn.broker.commits.whenDurable(() => ch.send('tx.commit-ok', {}));
    else ch.send('tx.commit-ok', {});
    ch.commitAcks();
  },
  'tx.rollback': (ch) => {
    if (!ch.txMode) throw preconditionFailed('channel is not transactional');
    ch.publisher.rollback();
    ch.rollbackAcks();
    ch.send('tx.rollback-ok', {});
  },
};
