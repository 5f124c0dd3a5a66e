import type { Broker } from '../broker.js';
import { Faults } from './faults.js';
import { Inspector } from './inspect.js';
import { resetBroker } from './reset.js';
import { Until } from './until.js';

/**
 * The test toolkit over one broker: one instance of each, so a reset over HTTP clears the
 * faults a test armed through startBroker()'s object and the other way round. Built by
 * Broker.toolkit on first use; startBroker() returns these, the management API's
 * /api/warren/ routes (src/management/routes/warren.ts) serve them.
 */
export interface Toolkit {
  readonly inspect: Inspector;
  readonly until: Until;
  readonly faults: Faults;
  /** resetBroker with this toolkit's faults (src/testing/reset.ts). */
  reset(): Promise<void>;
}

export function createToolkit(broker: Broker): Toolkit {
  const inspect = new Inspector(broker);
  const faults = new Faults(broker);
  return { inspect, until: new Until(broker, inspect), faults, reset: () => resetBroker(broker, faults) };
}
