import type { MethodArgsByName, MethodName } from '../../frame/generated/methods.js';
import type { Channel } from '../channel.js';

/** Method handlers keyed by the spec's dotted method name; a missing entry is rejected. */
export type ChannelHandlers = { [N in MethodName]?: (ch: Channel, args: MethodArgsByName[N]) => void };
