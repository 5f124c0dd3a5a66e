export { Broker, startBroker, type RunningBroker } from './broker.js';
export { FakeClock, SystemClock, type Clock } from './clock.js';
export type { BrokerConfig, BrokerOptions, UserConfig } from './config.js';
export { PolicyOperations, VHostNotFoundError, type PolicyInfo } from './policy/policy-operations.js';
export { PolicyInternalError, PolicyValidationError, type PolicyInput } from './policy/validation.js';
export type { PolicyKind, PolicyRecord } from './policy/policy.js';
export type { Faults, CloseOptions, FaultScope } from './testing/faults.js';
export type {
  BindingInfo, ConnectionInfo, ConnectionSelector, ConsumerInfo, ExchangeInfo, InspectedMessage, Inspector, MessageProperties,
  QueueInfo, QueueMessages, VHostOption, XDeath,
} from './testing/inspect.js';
export type { Until, WaitOptions } from './testing/until.js';
