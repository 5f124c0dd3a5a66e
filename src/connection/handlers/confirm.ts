import { preconditionFailed } from '../../errors.js';
import type { ChannelHandlers } from './types.js';

export const confirmHandlers: ChannelHandlers = {
  'confirm.select': (ch, args) => {
    if (ch.txMode) throw preconditionFailed('cannot switch from tx to confirm mode');
    ch.publisher.selectConfirms();
    if (!args.nowait) ch.send('confirm.select-ok', {});
  },
};
