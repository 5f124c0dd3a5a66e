/**
 * Warren's management routes, in RabbitMQ's dispatcher order (rabbit_mgmt_dispatcher: the
 * first matching route wins). Definitions, parameters and the rest are added by their own
 * modules (ManagementServerOptions.routes).
 */
import type { Route } from '../router.js';
import { bindingRoutes } from './bindings.js';
import { connectionRoutes, vhostConnectionRoutes } from './connections.js';
import { definitionsRoutes } from './definitions.js';
import { exchangeRoutes } from './exchanges.js';
import { healthRoutes } from './health.js';
import { nodeRoutes } from './nodes.js';
import { identityRoutes, overviewRoutes } from './overview.js';
import { permissionRoutes, vhostPermissionRoutes } from './permissions.js';
import { parameterRoutes } from './parameters.js';
import { policyRoutes } from './policies.js';
import { queueRoutes } from './queues.js';
import { shovelRoutes } from './shovels.js';
import { userLimitRoutes } from './user-limits.js';
import { userRoutes } from './users.js';
import { vhostRoutes } from './vhosts.js';
import { warrenRoutes } from './warren.js';
import { warrenToolkitRoutes } from './warren-toolkit.js';

export function managementRoutes(): Route[] {
  return [
    ...overviewRoutes,
    ...nodeRoutes,
    ...connectionRoutes,
    ...exchangeRoutes,
    ...queueRoutes,
    ...bindingRoutes,
    ...vhostRoutes,
    ...vhostPermissionRoutes,
    ...vhostConnectionRoutes,
    ...userRoutes,
    ...userLimitRoutes,
    ...policyRoutes,
    ...parameterRoutes,
    ...definitionsRoutes,
    ...identityRoutes,
    ...permissionRoutes,
    ...healthRoutes,
    ...shovelRoutes,
    // Warren's own: the test toolkit over HTTP (not RabbitMQ's).
    ...warrenRoutes,
    ...warrenToolkitRoutes,
  ];
}
