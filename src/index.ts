export { Broker, startBroker, type RunningBroker } from './broker.js';
export { FakeClock, SystemClock, type Clock } from './clock.js';
export type { BrokerConfig, BrokerOptions, UserConfig } from './config.js';
