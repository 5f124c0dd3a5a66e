export { Broker, startBroker, type RunningBroker } from './broker.js';
export { FakeClock, SystemClock, type Clock } from './clock.js';
export type { BrokerConfig, BrokerOptions, UserConfig } from './config.js';
export { AccessError, type AccessControl, type UserSpec } from './access/access-control.js';
export { hashPassword, type HashingAlgorithm } from './access/password.js';
export type { PermissionEntry, Permissions, TopicPermissionEntry, TopicPermissions, User, UserLimits } from './access/records.js';
export type { VHostMetadata } from './vhost/vhost-metadata.js';
