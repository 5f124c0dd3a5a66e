import { expect } from 'chai';
import amqp from 'amqplib';
import { rabbitmqadminUnavailable, runRabbitmqadmin } from '../support/rabbitmqadmin.js';
import { useManagedBroker } from '../support/management.js';
import { hostname } from 'node:os';
import { nodeName } from '../../src/node-name.js';

const NODE = nodeName();
const CLUSTER = `rabbit@${hostname()}`;

/**
 * rabbitmqadmin 3.10.8 (the copy Warren serves at /cli/rabbitmqadmin, which cli.test.ts checks
 * against Debian's) driving Warren's management API with its common commands, as CI scripts
 * and the testcontainers modules run it. It sends "true" and "2" as strings and names the vhost
 * with -V.
 */
describe('management API: rabbitmqadmin 3.10.8', function () {
  this.timeout(60000);
  const b = useManagedBroker({ vhosts: ['/', 'dev'] });
  let port = 0;
  const admin = async (...args: string[]) => {
    const res = await runRabbitmqadmin(port, args);
    expect(res.code, `rabbitmqadmin ${args.join(' ')}: ${res.stderr}`).to.equal(0);
    return res.stdout;
  };
  const json = async (...args: string[]) => JSON.parse(await admin('-f', 'raw_json', ...args));

  before(function () {
    const why = rabbitmqadminUnavailable();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
    port = Number(new URL(b.base).port);
  });

  it('reports its version and shows the overview', async () => {
    expect((await admin('--version')).trim()).to.equal('rabbitmqadmin 3.10.8');
    const [overview] = await json('show', 'overview');
    expect(overview).to.deep.include({ rabbitmq_version: '3.10.8', cluster_name: CLUSTER });
    expect(overview.object_totals.queues).to.equal(0);
  });

  it('declares a queue, an exchange and a binding; publishes; lists; gets; purges; deletes', async () => {
    expect(await admin('declare', 'queue', 'name=ra.q', 'durable=true', 'arguments={"x-message-ttl":60000}')).to.equal('queue declared\n');
    expect(await admin('declare', 'exchange', 'name=ra.x', 'type=topic')).to.equal('exchange declared\n');
    expect(await admin('declare', 'binding', 'source=ra.x', 'destination=ra.q', 'routing_key=a.#')).to.equal('binding declared\n');
    expect(await admin('publish', 'exchange=ra.x', 'routing_key=a.b', 'payload=hello admin')).to.equal('Message published\n');
    expect(await admin('publish', 'routing_key=ra.q', 'payload=direct')).to.equal('Message published\n');
    expect(await json('list', 'queues', 'name', 'messages', 'durable', 'arguments')).to.deep.equal([{ arguments: { 'x-message-ttl': 60000 }, durable: true, messages: 2, name: 'ra.q' }]);
    const exchanges = await json('list', 'exchanges', 'name', 'type');
    expect(exchanges).to.deep.include({ name: 'ra.x', type: 'topic' });
    expect(await json('list', 'bindings', 'source', 'destination', 'routing_key')).to.deep.include({ source: 'ra.x', destination: 'ra.q', routing_key: 'a.#' });

    const got = await json('get', 'queue=ra.q', 'count=2', 'ackmode=ack_requeue_true');
    expect(got.map((m: { payload: string; redelivered: boolean; exchange: string }) => [m.payload, m.redelivered, m.exchange])).to.deep.equal([['hello admin', false, 'ra.x'], ['direct', false, '']]);
    const again = await json('get', 'queue=ra.q');
    expect([again[0].payload, again[0].redelivered]).to.deep.equal(['hello admin', true]);
    expect(await admin('purge', 'queue', 'name=ra.q')).to.equal('queue purged\n');
    expect((await json('list', 'queues', 'name', 'messages'))[0].messages).to.equal(0);

    expect(await admin('delete', 'binding', 'source=ra.x', 'destination=ra.q', 'destination_type=queue', 'properties_key=a.%23')).to.equal('binding deleted\n');
    expect(await admin('delete', 'queue', 'name=ra.q')).to.equal('queue deleted\n');
    expect(await admin('delete', 'exchange', 'name=ra.x')).to.equal('exchange deleted\n');
    expect(await json('list', 'queues')).to.deep.equal([]);
  });

  it('works in another vhost with -V and sorts with --sort/--sort-reverse', async () => {
    for (const [name, n] of [['d.one', 1], ['d.three', 3], ['d.two', 2]] as const) {
      await admin('-V', 'dev', 'declare', 'queue', `name=${name}`);
      for (let i = 0; i < n; i++) await admin('-V', 'dev', 'publish', `routing_key=${name}`, 'payload=x');
    }
    const sorted = await json('-V', 'dev', 'list', 'queues', 'name', 'messages', '--sort', 'messages', '--sort-reverse');
    expect(sorted.map((q: { name: string }) => q.name)).to.deep.equal(['d.three', 'd.two', 'd.one']);
    expect((await b.api('GET', '/api/queues/dev')).json.length).to.equal(3);
    expect(await json('list', 'vhosts', 'name', 'messages')).to.deep.equal([{ messages: 0, name: '/' }, { messages: 6, name: 'dev' }]);
  });

  it('lists nodes, connections, channels and consumers, and closes a connection', async () => {
    const [node] = await json('list', 'nodes', 'name', 'type', 'mem_used');
    expect([node.name, node.type, node.mem_used > 0]).to.deep.equal([NODE, 'disc', true]);
    const conn = await amqp.connect(b.url, { clientProperties: { connection_name: 'admin-target' } });
    const closed = new Promise<string>((resolve) => conn.on('close', (err: Error) => resolve(err.message)));
    conn.on('error', () => {});
    const ch = await conn.createChannel();
    await ch.assertQueue('ra.c');
    await ch.consume('ra.c', () => {}, { consumerTag: 'admin-consumer' });
    const [c] = await json('list', 'connections', 'name', 'user', 'channels');
    expect([c.user, c.channels]).to.deep.equal(['guest', 1]);
    expect((await json('list', 'channels', 'name', 'user'))[0]).to.deep.equal({ name: `${c.name} (1)`, user: 'guest' });
    expect((await json('list', 'consumers')).map((x: { consumer_tag: string }) => x.consumer_tag)).to.deep.equal(['admin-consumer']);
    expect(await admin('close', 'connection', `name=${c.name}`)).to.equal('connection closed\n');
    expect(await closed).to.equal('Connection closed: 320 (CONNECTION-FORCED) with message "CONNECTION_FORCED - Closed via management plugin"');
    const missing = await runRabbitmqadmin(port, ['close', 'connection', 'name=does-not-exist']);
    expect([missing.code, missing.stderr.trim()]).to.deep.equal([1, '*** Not found: /api/connections/does-not-exist']);
  });

  it('declares and lists users, vhosts and permissions, and deletes them, printing what it prints against RabbitMQ 3.10.8', async () => {
    expect(await admin('declare', 'user', 'name=ra.u', 'password=pw', 'tags=monitoring,management')).to.equal('user declared\n');
    expect(await admin('declare', 'user', 'name=ra.h', 'password_hash=qNgDhkHdig4UGSylfhMlB1y1LB6fQpkF4scoWvxHp5iZxXyE', 'tags=')).to.equal('user declared\n');
    expect(await admin('declare', 'vhost', 'name=ra.v')).to.equal('vhost declared\n');
    expect(await admin('declare', 'permission', 'vhost=ra.v', 'user=ra.u', 'configure=^ra', 'write=.*', 'read=.*')).to.equal('permission declared\n');
    expect(await json('list', 'users', 'name', 'tags')).to.deep.include.members([{ name: 'ra.h', tags: [] }, { name: 'ra.u', tags: ['monitoring', 'management'] }]);
    const table = await admin('list', 'users', 'name', 'password_hash', 'tags');
    expect(table).to.match(/^\| ra\.h +\| qNgDhkHdig4UGSylfhMlB1y1LB6fQpkF4scoWvxHp5iZxXyE \| +\|$/m);
    expect(await json('list', 'permissions', 'user', 'vhost', 'configure')).to.deep.include.members([
      { user: 'guest', vhost: 'ra.v', configure: '.*' }, { user: 'ra.u', vhost: 'ra.v', configure: '^ra' },
    ]);
    expect(await json('list', 'vhosts', 'name')).to.deep.include({ name: 'ra.v' });

    // The declared user logs in over AMQP to the vhost and may declare ra.* only.
    const url = new URL(b.url);
    Object.assign(url, { username: 'ra.u', password: 'pw', pathname: '/ra.v' });
    const conn = await amqp.connect(url.href);
    const ch = await conn.createChannel();
    await ch.assertQueue('ra.ok', { autoDelete: true });
    await conn.close();

    // Refusals print RabbitMQ's reason after "*** ".
    const missingVhost = await runRabbitmqadmin(port, ['declare', 'permission', 'vhost=nov', 'user=ra.u', 'configure=.*', 'write=.*', 'read=.*']);
    expect([missingVhost.code, missingVhost.stderr.trim()]).to.deep.equal([1, '*** vhost_or_user_not_found']);
    const badPattern = await runRabbitmqadmin(port, ['declare', 'permission', 'vhost=ra.v', 'user=ra.u', 'configure=(', 'write=.*', 'read=.*']);
    expect([badPattern.code, badPattern.stderr.trim()]).to.deep.equal([1, "*** ['invalid_regexp', [40], [[109, 105, 115, 115, 105, 110, 103, 32, 41], 1]]"]);

    expect(await admin('delete', 'permission', 'vhost=ra.v', 'user=ra.u')).to.equal('permission deleted\n');
    expect(await admin('delete', 'user', 'name=ra.u')).to.equal('user deleted\n');
    const again = await runRabbitmqadmin(port, ['delete', 'user', 'name=ra.u']);
    expect([again.code, again.stderr.trim()]).to.deep.equal([1, '*** Not found: /api/users/ra.u']);
    expect(await admin('delete', 'vhost', 'name=ra.v')).to.equal('vhost deleted\n');
    const vhostAgain = await runRabbitmqadmin(port, ['delete', 'vhost', 'name=ra.v']);
    expect([vhostAgain.code, vhostAgain.stderr.trim()]).to.deep.equal([1, '*** Not found: /api/vhosts/ra.v']);
    expect(await admin('delete', 'user', 'name=ra.h')).to.equal('user deleted\n');
    const nobody = await runRabbitmqadmin(port, ['-u', 'ra.nobody', '-p', 'x', 'list', 'users']);
    expect([nobody.code, nobody.stderr.trim()]).to.deep.equal([1, '*** Access refused: /api/users']);
  });

  it('reports RabbitMQ\'s reason when a declaration is refused', async () => {
    await admin('declare', 'queue', 'name=ra.d', 'durable=true');
    const res = await runRabbitmqadmin(port, ['declare', 'queue', 'name=ra.d', 'durable=false']);
    expect(res.code).to.not.equal(0);
    expect(res.stderr).to.include("inequivalent arg 'durable' for queue 'ra.d' in vhost '/': received 'false' but current is 'true'");
  });
});
