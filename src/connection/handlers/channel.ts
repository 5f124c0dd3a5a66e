import { ConnectionError, ReplyCode } from '../../errors.js';
import type { ChannelHandlers } from './types.js';

/** channel.open / flow / close, with rabbit_channel's answers. */
export const channelClassHandlers: ChannelHandlers = {
  'channel.open': (ch) => {
    if (ch.opened) throw new ConnectionError(ReplyCode.CHANNEL_ERROR, "second 'channel.open' seen");
    ch.opened = true;
    ch.conn.broker.metrics.churn.channelsOpened++;
    ch.send('channel.open-ok', { reserved1: Buffer.alloc(0) });
  },
  'channel.flow': (ch, args) => {
    // RabbitMQ does not implement flow active=false from clients.
    if (!args.active) throw new ConnectionError(ReplyCode.NOT_IMPLEMENTED, 'active=false');
    ch.send('channel.flow-ok', { active: true });
  },
  'channel.close': (ch) => ch.closeByClient(),
  // access.request is long deprecated; RabbitMQ still answers it with ticket 1.
  'access.request': (ch) => ch.send('access.request-ok', { reserved1: 1 }),
};
