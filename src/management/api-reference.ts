/**
 * The management API's reference page, `/api/index.html` (where `/api`, `/api/` and
 * `/doc/stats.html` redirect, as RabbitMQ 3.10's do): written from the server's routes when
 * first asked for, so that it lists exactly the paths and methods this server answers, with who
 * may call each (the route's access rule) and what it does (DESCRIPTIONS: one per path;
 * test/management/api-reference.test.ts keeps the two in step).
 */
import { escapeHtmlTags } from '../erlang/format.js';
import { accessFor, type Access, type Method, type Route } from './router.js';

const METHODS: readonly Method[] = ['GET', 'PUT', 'DELETE', 'POST'];

/** What each path does, by its route pattern. Warren's own paths are under /api/warren/. */
export const DESCRIPTIONS: Readonly<Record<string, string>> = {
  '/api/overview': 'The node at a glance: versions, object totals, queued message counts, message rates (<code>message_stats</code>), listeners and contexts.',
  '/api/extensions': 'The management UI extensions: none.',
  '/api/nodes': 'The nodes of the cluster (this one): memory, disk, file descriptors, alarms, uptime.',
  '/api/nodes/:node': 'One node.',
  '/api/auth/attempts/:node': 'Login attempts on the node by protocol (AMQP 0-9-1, HTTP), succeeded and failed. DELETE resets the counts.',
  '/api/auth/attempts/:node/source': 'Login attempts on the node by remote address and user name.',
  '/api/rebalance/queues': 'Moves queue leaders across the cluster: on a single node there is nothing to move (204).',
  '/api/connections': 'Open connections (AMQP 0-9-1, with TLS details for AMQPS).',
  '/api/connections/:connection': 'One connection. DELETE closes it (320 CONNECTION_FORCED); an <code>X-Reason</code> header gives the reason the client is sent.',
  '/api/connections/username/:username': 'The connections of a user. DELETE closes them all.',
  '/api/connections/:connection/channels': 'The channels of a connection.',
  '/api/channels': 'Open channels, with their prefetch, unacknowledged and unconfirmed counts and message rates.',
  '/api/channels/:channel': 'One channel, with its consumers and per-exchange and per-queue publishing counts.',
  '/api/consumers': 'Every consumer: its queue, channel, tag, prefetch, acknowledgement mode and arguments.',
  '/api/consumers/:vhost': 'The consumers in a vhost.',
  '/api/exchanges': 'Every exchange.',
  '/api/exchanges/:vhost': 'The exchanges of a vhost.',
  '/api/exchanges/:vhost/:exchange': 'One exchange. PUT declares it (<code>{"type":"direct","durable":true,"auto_delete":false,"internal":false,"arguments":{}}</code>; a declaration that does not match an existing one is refused as AMQP refuses it). DELETE deletes it; <code>?if-unused=true</code> only when it has no bindings.',
  '/api/exchanges/:vhost/:exchange/publish': 'Publishes a message: <code>{"properties":{},"routing_key":"k","payload":"text","payload_encoding":"string"}</code> (or <code>"base64"</code>). Answers <code>{"routed": true|false}</code>.',
  '/api/exchanges/:vhost/:exchange/bindings/source': 'The bindings of which the exchange is the source.',
  '/api/exchanges/:vhost/:exchange/bindings/destination': 'The bindings of which the exchange is the destination.',
  '/api/queues': 'Every queue, with live message counts, consumers and rates.',
  '/api/queues/:vhost': 'The queues of a vhost.',
  '/api/queues/:vhost/:queue': 'One queue. PUT declares it (<code>{"durable":true,"auto_delete":false,"arguments":{"x-queue-type":"quorum"}}</code>). DELETE deletes it; <code>?if-empty=true</code> and <code>?if-unused=true</code> as in AMQP.',
  '/api/queues/:vhost/:destination/bindings': 'The bindings of a queue.',
  '/api/queues/:vhost/:queue/contents': 'DELETE purges the queue.',
  '/api/queues/:vhost/:queue/get': 'Takes messages from the queue: <code>{"count":5,"ackmode":"ack_requeue_true","encoding":"auto","truncate":50000}</code>; ackmode <code>ack_requeue_true</code> and <code>reject_requeue_true</code> put them back (redelivered), <code>ack_requeue_false</code> and <code>reject_requeue_false</code> remove them (rejected ones dead-lettered). For diagnostics, not for consuming.',
  '/api/bindings': 'Every binding.',
  '/api/bindings/:vhost': 'The bindings of a vhost.',
  '/api/bindings/:vhost/e/:source/:dtype/:destination': 'The bindings between an exchange and a queue (<code>q</code>) or exchange (<code>e</code>). POST binds: <code>{"routing_key":"k","arguments":{}}</code>; the answer\'s <code>Location</code> header names the new binding.',
  '/api/bindings/:vhost/e/:source/:dtype/:destination/:props': 'One binding, named by its <code>properties_key</code> (the routing key, with a hash of its arguments when it has some). DELETE unbinds it.',
  '/api/vhosts': 'The vhosts the user may see, with their message counts and rates.',
  '/api/vhosts/:vhost': 'One vhost. PUT creates it (<code>{"description":"","tags":"","defaultqueuetype":"quorum","tracing":false}</code>, as RabbitMQ 3.10 reads them) or updates those fields; DELETE deletes it with everything in it.',
  '/api/vhosts/:vhost/permissions': 'The permissions granted in a vhost.',
  '/api/vhosts/:vhost/topic-permissions': 'The topic permissions granted in a vhost.',
  '/api/vhosts/:vhost/connections': 'The connections to a vhost.',
  '/api/vhosts/:vhost/channels': 'The channels of the connections to a vhost.',
  '/api/users/bulk-delete': 'Deletes the users named in <code>{"users":["a","b"]}</code>.',
  '/api/users/without-permissions': 'The users with no permission in any vhost.',
  '/api/users': 'Every user, with its tags and password hash.',
  '/api/users/:user': 'One user. PUT creates or updates it: <code>{"password":"secret","tags":"administrator"}</code>, or <code>password_hash</code> (with <code>hashing_algorithm</code>) instead of a password; neither: it cannot log in with a password. DELETE deletes it and closes its connections.',
  '/api/users/:user/permissions': 'The permissions of a user.',
  '/api/users/:user/topic-permissions': 'The topic permissions of a user.',
  '/api/user-limits': 'The limits (<code>max-connections</code>, <code>max-channels</code>) set on users.',
  '/api/user-limits/:user': 'The limits set on one user.',
  '/api/user-limits/:user/:name': 'PUT sets a user limit (<code>{"value":10}</code>); DELETE removes it.',
  '/api/policies': 'Every policy.',
  '/api/policies/:vhost': 'The policies of a vhost.',
  '/api/policies/:vhost/:name': 'One policy. PUT sets it: <code>{"pattern":"^orders","definition":{"max-length":1000},"priority":0,"apply-to":"queues"}</code>; DELETE removes it.',
  '/api/operator-policies': 'Every operator policy.',
  '/api/operator-policies/:vhost': 'The operator policies of a vhost.',
  '/api/operator-policies/:vhost/:name': 'One operator policy (the limits an operator imposes over users\' policies). PUT sets it, DELETE removes it.',
  '/api/parameters': 'Every runtime parameter but policies (<code>shovel</code>, <code>vhost-limits</code>).',
  '/api/parameters/:component': 'The runtime parameters of a component (<code>shovel</code>, <code>vhost-limits</code>, <code>policy</code>, <code>operator_policy</code>).',
  '/api/parameters/:component/:vhost': 'The runtime parameters of a component in a vhost.',
  '/api/parameters/:component/:vhost/:name': 'One runtime parameter. PUT sets it (<code>{"value":{...}}</code>; a <code>shovel</code> parameter starts a dynamic shovel); DELETE removes it.',
  '/api/vhost-limits': 'The limits (<code>max-connections</code>, <code>max-queues</code>) set on vhosts.',
  '/api/vhost-limits/:vhost': 'The limits set on a vhost.',
  '/api/vhost-limits/:vhost/:name': 'PUT sets a vhost limit (<code>{"value":100}</code>); DELETE removes it.',
  '/api/global-parameters': 'The global parameters (the cluster name, internal cluster id, ...).',
  '/api/global-parameters/:name': 'One global parameter. PUT sets it (<code>{"value":...}</code>); DELETE removes it.',
  '/api/cluster-name': 'The cluster\'s name. PUT renames it: <code>{"name":"..."}</code>.',
  '/api/definitions': 'The whole configuration: users, vhosts, permissions, topic permissions, parameters, global parameters, policies, queues, exchanges and bindings. POST imports such a document (RabbitMQ\'s definitions files included); <code>?download=name</code> on GET makes it an attachment.',
  '/api/definitions/:vhost': 'The definitions of one vhost (queues, exchanges, bindings, policies, parameters); POST imports them into it.',
  '/api/feature-flags': 'The feature flags, all enabled.',
  '/api/whoami': 'The calling user and its tags.',
  '/api/auth': 'How the UI should log in: basic authentication (OAuth 2 is not enabled). No credentials needed.',
  '/api/permissions': 'Every permission.',
  '/api/permissions/:vhost/:user': 'A user\'s permissions in a vhost. PUT grants them: <code>{"configure":".*","write":".*","read":".*"}</code> (regular expressions on resource names); DELETE revokes them.',
  '/api/topic-permissions': 'Every topic permission.',
  '/api/topic-permissions/:vhost/:user': 'A user\'s topic permissions in a vhost. PUT sets them for an exchange: <code>{"exchange":"amq.topic","write":"^a","read":".*"}</code>; DELETE removes all of them.',
  '/api/topic-permissions/:vhost/:user/:exchange': 'A user\'s topic permission for one exchange (GET), removed by DELETE.',
  '/api/aliveness-test/:vhost': 'Declares the queue <code>aliveness-test</code> in the vhost, publishes a message to it and gets it back: <code>{"status":"ok"}</code>.',
  '/api/health/checks/alarms': 'Fails (503) while a memory or disk alarm is in effect.',
  '/api/health/checks/local-alarms': 'Fails (503) while a memory or disk alarm is in effect on this node.',
  '/api/health/checks/port-listener/:port': 'Fails (503) unless the node listens on the port.',
  '/api/health/checks/protocol-listener/:protocol': 'Fails (503) unless the node listens for the protocol (<code>amqp</code>, <code>amqp/ssl</code>, <code>http</code>, <code>https</code>, or their aliases such as <code>amqps</code>).',
  '/api/health/checks/virtual-hosts': 'Fails (503) when a vhost is not running.',
  '/api/health/checks/node-is-quorum-critical': 'Fails (503) when stopping the node would make a quorum queue lose its majority: never on a single node.',
  '/api/health/checks/node-is-mirror-sync-critical': 'Fails (503) when stopping the node would lose a classic mirrored queue\'s only synchronised copy: never on a single node.',
  '/api/health/checks/certificate-expiration/:within/:unit': 'Fails (503) when a TLS listener\'s certificate expires within the period (<code>/1/months</code>; days, weeks, months or years).',
  '/api/shovels': 'The dynamic shovels and their state.',
  '/api/shovels/:vhost': 'The dynamic shovels of a vhost.',
  '/api/shovels/vhost/:vhost/:name': 'One shovel\'s state. DELETE deletes the shovel (its parameter).',
  '/api/shovels/vhost/:vhost/:name/restart': 'DELETE restarts the shovel.',
  '/api/warren/shovels': 'Warren\'s: each shovel\'s messages forwarded and pending, as the web UI shows them.',
  '/api/warren/reset': 'Warren\'s test toolkit: back to the state the broker started in (clients closed with 320, everything added since gone).',
  '/api/warren/queues': 'Warren\'s test toolkit: every queue as <code>inspect.queues()</code> shows it (<code>?vhost=v</code> for one vhost).',
  '/api/warren/queues/:vhost/:queue': 'Warren\'s test toolkit: one queue as <code>inspect.queue()</code> shows it.',
  '/api/warren/queues/:vhost/:queue/messages': 'Warren\'s test toolkit: the messages of a queue, ready and unacknowledged, without taking any.',
  '/api/warren/exchanges': 'Warren\'s test toolkit: every exchange as <code>inspect.exchanges()</code> shows it.',
  '/api/warren/bindings': 'Warren\'s test toolkit: every binding as <code>inspect.bindings()</code> shows it.',
  '/api/warren/consumers': 'Warren\'s test toolkit: every consumer as <code>inspect.consumers()</code> shows it.',
  '/api/warren/connections': 'Warren\'s test toolkit: every connection as <code>inspect.connections()</code> shows it.',
  '/api/warren/clock': 'Warren\'s test toolkit: the broker\'s time, and whether its clock is the fake one (<code>--fake-clock</code>).',
  '/api/warren/clock/advance': 'Warren\'s test toolkit: moves the fake clock on (<code>{"ms":30000}</code>): TTLs, expiries and delayed messages fall due.',
  '/api/warren/until': 'Warren\'s test toolkit: a long poll answered once a condition holds (a queue\'s length, drained, a consumer count, a connection), or 408 after its timeout.',
  '/api/warren/waits': 'Warren\'s test toolkit: registers a wait (the conditions of <code>until</code>, and <code>routed</code>: the next message routed to a queue) before the test acts; 201 with its id.',
  '/api/warren/waits/:id': 'Warren\'s test toolkit: the long poll of a registered wait.',
  '/api/warren/faults/close-connection': 'Warren\'s test toolkit: closes a connection with a code and reason, as the broker would.',
  '/api/warren/faults/close-all-connections': 'Warren\'s test toolkit: closes every connection with a code and reason.',
  '/api/warren/faults/drop-connection': 'Warren\'s test toolkit: drops a connection\'s socket without a close, at once or after some frames.',
  '/api/warren/faults/nack-publishes': 'Warren\'s test toolkit: the next publishes are nacked instead of confirmed.',
  '/api/warren/faults/hold-confirms': 'Warren\'s test toolkit: publisher confirms are held back until released.',
  '/api/warren/faults/release-confirms': 'Warren\'s test toolkit: sends the confirms held back.',
  '/api/warren/faults/raise-alarm': 'Warren\'s test toolkit: raises a memory or disk alarm (publishers blocked).',
  '/api/warren/faults/clear-alarm': 'Warren\'s test toolkit: clears an alarm it raised.',
  '/api/warren/faults/fail-next-commit': 'Warren\'s test toolkit: the store\'s next commit fails as a full disk does.',
  '/api/warren/faults/resume-store': 'Warren\'s test toolkit: the store writes again after a failed commit.',
  '/api/warren/faults/clear': 'Warren\'s test toolkit: every fault taken back.',
};

const WHO: Record<Access, string> = {
  none: 'anyone',
  management: 'management',
  vhost: 'management, with access to the vhost',
  monitor: 'monitoring',
  admin: 'administrator',
  policymaker: 'policymaker, with access to the vhost',
};

/** Who may call the route, by method where the rules differ. */
function who(route: Route): string {
  const methods = METHODS.filter((m) => route[m]);
  const rules = methods.map((m) => accessFor(route, m));
  if (rules.every((r) => r === rules[0])) return WHO[rules[0]!];
  return methods.map((m, i) => `${m}: ${WHO[rules[i]!]}`).join('; ');
}

function table(routes: readonly Route[]): string {
  const rows = routes.map((r) => {
    const marks = METHODS.map((m) => `<td class="m">${r[m] ? 'X' : ''}</td>`).join('');
    return `<tr>${marks}<td class="path">${escapeHtmlTags(r.path).replaceAll('/', '/<wbr>')}</td><td>${escapeHtmlTags(who(r))}</td><td>${DESCRIPTIONS[r.path] ?? ''}</td></tr>`;
  });
  return `<table><thead><tr>${METHODS.map((m) => `<th>${m}</th>`).join('')}<th>Path</th><th>Who may call it</th><th>What it does</th></tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table>`;
}

/** The page, for the routes in the order the server tries them. */
export function apiReferencePage(routes: readonly Route[], version: string): string {
  const warren = routes.filter((r) => r.path.startsWith('/api/warren/'));
  const rabbit = routes.filter((r) => !r.path.startsWith('/api/warren/'));
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Warren Management HTTP API</title>
  <style>
    :root { color-scheme: light dark; }
    body { font: 14px/1.5 system-ui, sans-serif; margin: 2rem; }
    main { max-width: 78rem; }
    code, td.path { font: 13px ui-monospace, monospace; }
    pre { font: 13px ui-monospace, monospace; padding: .75rem 1rem; border-radius: 6px; background: color-mix(in srgb, currentColor 8%, transparent); overflow-x: auto; }
    table { border-collapse: collapse; margin: 1rem 0 2rem; width: 100%; }
    th, td { text-align: left; vertical-align: top; padding: .35rem .6rem; border: 1px solid color-mix(in srgb, currentColor 20%, transparent); }
    td.m { text-align: center; font-weight: 600; }
    td.path { width: 22rem; }
    td code { overflow-wrap: anywhere; }
  </style>
</head>
<body>
<main>
  <h1>Warren Management HTTP API</h1>
  <p>
    Warren ${escapeHtmlTags(version)} answers RabbitMQ 3.10's management HTTP API: the paths below, with
    RabbitMQ's methods, status codes, error bodies and JSON objects, so that rabbitmqadmin
    (<a href="/cli/">download it from here</a>), the web UI at <a href="/">/</a> and RabbitMQ's
    HTTP clients work unchanged. This page is written from the routes this server answers.
  </p>
  <ul>
    <li>Every path but this page answers <code>application/json</code>, and all but
      <code>/api/auth</code> need HTTP basic authentication as a user with a management tag
      (<code>guest</code>/<code>guest</code> from localhost by default); the tag decides what the
      user may call (the third column) and which vhosts' objects it sees.</li>
    <li>A vhost in a path is percent-encoded: the default vhost <code>/</code> is
      <code>%2F</code>.</li>
    <li>PUT creates (201) or updates (204) the object of its path from a JSON body; DELETE
      removes it (204). Keys the object does not take are ignored.</li>
    <li>Lists take <code>sort</code> (a key, or a dotted path into the objects),
      <code>sort_reverse=true</code>, <code>columns</code> (comma-separated keys or dotted
      paths), and on the large ones <code>page</code> and <code>page_size</code> (with
      <code>name</code> and <code>use_regex</code> to filter).</li>
    <li>Counts are live, not sampled every 5 seconds; rates (<code>*_details.rate</code>) are
      per second over the last seconds.</li>
  </ul>
  <pre>curl -u guest:guest http://localhost:15672/api/queues/%2F?columns=name,messages
curl -u guest:guest -X PUT -H 'content-type: application/json' \\
  -d '{"durable":true}' http://localhost:15672/api/queues/%2F/orders
curl -u guest:guest -X POST -H 'content-type: application/json' \\
  -d '{"routing_key":"orders","payload":"hi","payload_encoding":"string","properties":{}}' \\
  http://localhost:15672/api/exchanges/%2F/amq.default/publish</pre>
  <h2>RabbitMQ's API</h2>
  ${table(rabbit)}
  <h2>Warren's own</h2>
  <p>Not in RabbitMQ: the shovel counts the web UI shows, and the test toolkit over HTTP (reset,
    inspect, wait, faults, virtual time), for tests that drive Warren from another process or
    language.</p>
  ${table(warren)}
</main>
</body>
</html>
`;
}
