import { expect } from 'chai';
import amqp from 'amqplib';
import { useManagedBroker } from '../support/management.js';
import { rabbitmqadminUnavailable, runRabbitmqadmin } from '../support/rabbitmqadmin.js';

/**
 * Policies set over the management API act on queues that exist (issue 13), seen over amqplib;
 * the replies of /api/policies are compared with RabbitMQ 3.10.8's in conformance/ (area
 * policies). Here: the effect, the queue's policy fields, access rules and rabbitmqadmin.
 */
describe('management API: /api/policies and /api/operator-policies', function () {
  this.timeout(30000);
  const b = useManagedBroker({ users: [{ username: 'guest', password: 'guest' }, { username: 'pm', password: 'pm', tags: ['policymaker'], permissions: {} }, { username: 'mgmt', password: 'mgmt', tags: ['management'], permissions: {} }] });

  it('a max-length policy set over HTTP trims a queue that already holds messages, and its removal lifts the limit', async () => {
    const conn = await amqp.connect(b.url);
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue('pol.q', { durable: false });
    for (let i = 0; i < 5; i++) ch.sendToQueue('pol.q', Buffer.from(`m${i}`));
    await ch.waitForConfirms();
    const put = await b.api('PUT', '/api/policies/%2F/cap', { body: { pattern: '^pol\\.', definition: { 'max-length': 2 }, 'apply-to': 'queues' } });
    expect(put.status).to.equal(201);
    expect((await ch.checkQueue('pol.q')).messageCount).to.equal(2);
    const q = (await b.api('GET', '/api/queues/%2F/pol.q')).json as Record<string, unknown>;
    expect(q).to.deep.include({ policy: 'cap', operator_policy: null, effective_policy_definition: { 'max-length': 2 } });
    const got = await ch.get('pol.q', { noAck: true });
    expect(got && got.content.toString()).to.equal('m3'); // drop-head: the oldest went
    expect((await b.api('DELETE', '/api/policies/%2F/cap')).status).to.equal(204);
    for (let i = 5; i < 9; i++) ch.sendToQueue('pol.q', Buffer.from(`m${i}`));
    await ch.waitForConfirms();
    expect((await ch.checkQueue('pol.q')).messageCount).to.equal(5);
    await conn.close();
  });

  it('an operator policy caps below the user policy (the lower value wins)', async () => {
    const conn = await amqp.connect(b.url);
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue('op.q', { durable: false });
    expect((await b.api('PUT', '/api/policies/%2F/user-cap', { body: { pattern: '^op\\.', definition: { 'max-length': 3 } } })).status).to.equal(201);
    expect((await b.api('PUT', '/api/operator-policies/%2F/ops-cap', { body: { pattern: '.*', definition: { 'max-length': 1 }, 'apply-to': 'queues' } })).status).to.equal(201);
    for (let i = 0; i < 4; i++) ch.sendToQueue('op.q', Buffer.from(`m${i}`));
    await ch.waitForConfirms();
    expect((await ch.checkQueue('op.q')).messageCount).to.equal(1);
    const q = (await b.api('GET', '/api/queues/%2F/op.q')).json as Record<string, unknown>;
    expect(q).to.deep.include({ policy: 'user-cap', operator_policy: 'ops-cap', effective_policy_definition: { 'max-length': 1 } });
    expect((await b.api('DELETE', '/api/operator-policies/%2F/ops-cap')).status).to.equal(204);
    expect((await b.api('DELETE', '/api/policies/%2F/user-cap')).status).to.equal(204);
    await conn.close();
  });

  it('lets a policymaker set policies, but not a plain management user; operator policies need an administrator', async () => {
    const body = { pattern: '^x', definition: { 'message-ttl': 1000 } };
    expect((await b.api('PUT', '/api/policies/%2F/by-mgmt', { body, user: 'mgmt', password: 'mgmt' })).json).to.deep.equal({ error: 'not_authorised', reason: 'User not authorised to access object' });
    expect((await b.api('PUT', '/api/operator-policies/%2F/by-pm', { body, user: 'pm', password: 'pm' })).status).to.equal(401);
    // pm has no permissions on '/' yet: a policymaker must also be able to open the vhost.
    expect((await b.api('PUT', '/api/policies/%2F/by-pm', { body, user: 'pm', password: 'pm' })).status).to.equal(401);
    b.running.broker.access.setPermission('pm', '/', { configure: '.*', write: '.*', read: '.*' });
    expect((await b.api('PUT', '/api/policies/%2F/by-pm', { body, user: 'pm', password: 'pm' })).status).to.equal(201);
    expect(((await b.api('GET', '/api/policies', { user: 'mgmt', password: 'mgmt' })).json as unknown[]).length).to.equal(0); // mgmt sees no vhost
    expect((await b.api('DELETE', '/api/policies/%2F/by-pm', { user: 'pm', password: 'pm' })).status).to.equal(204);
  });

  it("rabbitmqadmin 3.10.8 declares, lists and deletes a policy", async function () {
    const why = rabbitmqadminUnavailable();
    if (why) this.skip();
    const port = Number(new URL(b.base).port);
    const run = async (...args: string[]) => {
      const res = await runRabbitmqadmin(port, args);
      expect(res.code, res.stderr).to.equal(0);
      return res.stdout;
    };
    expect(await run('declare', 'policy', 'name=ra-ttl', 'pattern=^ra\\.', 'definition={"message-ttl":60000}', 'priority=3', 'apply-to=queues')).to.equal('policy declared\n');
    const listed = JSON.parse(await run('-f', 'raw_json', 'list', 'policies'));
    expect(listed).to.deep.equal([{ vhost: '/', name: 'ra-ttl', pattern: '^ra\\.', 'apply-to': 'queues', definition: { 'message-ttl': 60000 }, priority: 3 }]);
    expect(await run('delete', 'policy', 'name=ra-ttl')).to.equal('policy deleted\n');
    expect(JSON.parse(await run('-f', 'raw_json', 'list', 'policies'))).to.deep.equal([]);
  });
});
