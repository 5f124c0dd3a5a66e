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
    ch.commitTx();
  },
  'tx.rollback': (ch) => {
    if (!ch.txMode) throw preconditionFailed('channel is not transactional');
    ch.publisher.rollback();
    ch.rollbackAcks();
    ch.send('tx.rollback-ok', {});
  },
};
