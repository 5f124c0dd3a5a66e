import { basicHandlers } from './basic.js';
import { channelClassHandlers } from './channel.js';
import { confirmHandlers } from './confirm.js';
import { exchangeHandlers } from './exchange.js';
import { queueHandlers } from './queue.js';
import { txHandlers } from './tx.js';
import type { ChannelHandlers } from './types.js';

/** Every method a client may send on a channel other than 0, by name. */
export const channelHandlers: ChannelHandlers = {
  ...channelClassHandlers,
  ...exchangeHandlers,
  ...queueHandlers,
  ...basicHandlers,
  ...confirmHandlers,
  ...txHandlers,
};
