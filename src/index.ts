export { Broker, startBroker, type RunningBroker } from './broker.js';
export { FakeClock, SystemClock, type Clock } from './clock.js';
export type { BrokerConfig, BrokerOptions, UserConfig } from './config.js';
export { AccessError, type AccessControl, type UserSpec } from './access/access-control.js';
export { hashPassword, type HashingAlgorithm } from './access/password.js';
export type { PermissionEntry, Permissions, TopicPermissionEntry, TopicPermissions, User, UserLimits } from './access/records.js';
export type { VHostMetadata } from './vhost/vhost-metadata.js';
export { PolicyOperations, VHostNotFoundError, type PolicyInfo } from './policy/policy-operations.js';
export { PolicyInternalError, PolicyValidationError, type PolicyInput } from './policy/validation.js';
export type { PolicyKind, PolicyRecord } from './policy/policy.js';
export type { Faults, CloseOptions, FaultScope } from './testing/faults.js';
export type {
  BindingInfo, ConnectionInfo, ConnectionSelector, ConsumerInfo, ExchangeInfo, InspectedMessage, Inspector, MessageProperties,
  QueueInfo, QueueMessages, VHostOption, XDeath,
} from './testing/inspect.js';
export type { Until, WaitOptions } from './testing/until.js';
