/** Every area's cases; importing this registers them. */
import './connection.js';
import './bad-input.js';
import './exchanges.js';
import './routing.js';
import './queues.js';
import './consuming.js';
import './ttl-dlx.js';
import './priorities-consumers.js';
import './confirms-tx.js';
import './fidelity.js';
import './extensions.js';
import './streams.js';
import './access.js';
import './policies.js';
import './limits.js';
