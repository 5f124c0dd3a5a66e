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
    // Publishes first (returns go out now), then acknowledgements; commit-ok once persistent
    // messages of the transaction are on disk. If a publish fails the acks stay uncommitted,
    // and the channel's close requeues their messages.
    const durable = ch.publisher.commit();
    ch.commitAcks();
    if (durable) ch.conn.broker.commits.whenDurable(() => ch.send('tx.commit-ok', {}));
    else ch.send('tx.commit-ok', {});
  },
  'tx.rollback': (ch) => {
    if (!ch.txMode) throw preconditionFailed('channel is not transactional');
    ch.publisher.rollback();
    ch.rollbackAcks();
    ch.send('tx.rollback-ok', {});
  },
};
