/**
 * Vhost limits (rabbitmq.com/vhosts.html#limits): max-connections refused at connection.open
 * in rabbit_reader's order (the vhost's limit, the user's limit, then the permission), max-queues
 * refused when a queue.declare would create a queue (rabbit_channel:check_vhost_queue_limit,
 * after the existence check). Each case makes its own vhost through the runner's admin
 * (lib/admin.ts) and sets limits there with PUT /api/vhost-limits.
 */
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';

const test = area('limits');
const DOC = 'rabbitmq.com/vhosts.html#limits';
const PW = 'cf-password';
const FULL = { configure: '.*', write: '.*', read: '.*' };

/** A vhost of the case (the guest-style user of the URL gets full permissions in it). */
async function vhostWith(t: CaseContext, limits: Partial<Record<'max-connections' | 'max-queues', number>>, suffix = 'v'): Promise<string> {
  const vhost = t.vhost(suffix);
  await t.admin.putVhost(vhost);
  for (const [name, value] of Object.entries(limits)) await t.admin.setVhostLimit(vhost, name as 'max-connections' | 'max-queues', value);
  return vhost;
}

/** A raw handshake as user into vhost, logged as {opened, close}. */
async function handshake(t: CaseContext, label: string, vhost: string, user?: string): Promise<boolean> {
  const c = await t.rawSocket();
  const r = await c.handshake({ vhost, ...(user !== undefined && { user, password: PW }) });
  t.log(label, { opened: r.opened, close: r.close ?? null });
  return r.opened;
}

test('max-connections', `${DOC}: max-connections refuses connection.open once the vhost holds that many (530 NOT_ALLOWED)`, async (t) => {
  const vhost = await vhostWith(t, { 'max-connections': 2 });
  await handshake(t, 'first', vhost);
  await handshake(t, 'second', vhost);
  await handshake(t, 'third', vhost);
  await handshake(t, 'other-vhost', '/');
});

test('max-connections-zero-and-negative', `${DOC}: max-connections 0 admits none, a negative value is no limit`, async (t) => {
  const zero = await vhostWith(t, { 'max-connections': 0 });
  await handshake(t, 'zero', zero);
  const negative = await vhostWith(t, { 'max-connections': -1 }, 'neg');
  await handshake(t, 'negative-1', negative);
  await handshake(t, 'negative-2', negative);
});

test('max-connections-check-order', `${DOC}, rabbit_reader connection.open: the vhost limit, then the user's limit, then the permission`, async (t) => {
  const full = await vhostWith(t, { 'max-connections': 1 });
  const roomy = await vhostWith(t, {}, 'roomy');
  const noPerm = t.user('noperm');
  await t.admin.putUser(noPerm, PW);
  const userLim = t.user('lim0');
  await t.admin.putUser(userLim, PW, [], { 'max-connections': 0 });
  await handshake(t, 'fill', full);
  await handshake(t, 'no-permission-full-vhost', full, noPerm);
  await handshake(t, 'user-limit-full-vhost', full, userLim);
  await handshake(t, 'user-limit-no-permission', roomy, userLim);
  await handshake(t, 'no-permission', roomy, noPerm);
  await t.admin.setPermissions(roomy, userLim, FULL);
  await handshake(t, 'user-limit-with-permission', roomy, userLim);
});

test('max-queues', `${DOC}: max-queues refuses a queue.declare that would create a queue (406), also server-named; redeclaring is fine`, async (t) => {
  const vhost = await vhostWith(t, { 'max-queues': 1 });
  const conn = await t.connect({ vhost });
  let ch = await t.channel(conn);
  await t.step('declare-q1', ch.assertQueue(t.q('one')));
  await t.step('redeclare-q1', ch.assertQueue(t.q('one')));
  await t.step('declare-q2', ch.assertQueue(t.q('two')), undefined, ch);
  ch = await t.channel(conn);
  await t.step('declare-server-named', ch.assertQueue(''), undefined, ch);
  ch = await t.channel(conn);
  await t.step('passive-q1', ch.checkQueue(t.q('one')));
  await t.step('delete-q1', ch.deleteQueue(t.q('one')));
  await t.step('declare-q2-after-delete', ch.assertQueue(t.q('two')));
});

test('max-queues-check-order', 'rabbit_channel queue.declare: name, permission, existence and equivalence are checked before the queue limit, arguments after', async (t) => {
  const vhost = await vhostWith(t, {});
  const conn = await t.connect({ vhost });
  let ch = await t.channel(conn);
  await t.step('declare-held', ch.assertQueue(t.q('held'), { durable: true }));
  await t.admin.setVhostLimit(vhost, 'max-queues', 1);
  await t.step('bad-arguments', ch.assertQueue(t.q('bad'), { arguments: { 'x-max-length': 'not a number' } }), undefined, ch);
  ch = await t.channel(conn);
  await t.step('reserved-name', ch.assertQueue('amq.reserved'), undefined, ch);
  ch = await t.channel(conn);
  await t.step('passive-missing', ch.checkQueue(t.q('missing')), undefined, ch);
  ch = await t.channel(conn);
  await t.step('inequivalent', ch.assertQueue(t.q('held'), { durable: false }), undefined, ch);
  ch = await t.channel(conn);
  await t.step('dlx-bad-type', ch.assertQueue(t.q('dlx'), { arguments: { 'x-dead-letter-exchange': 5 } }), undefined, ch);
});

test('max-queues-zero-negative-lowered', `${DOC}: max-queues 0 admits no new queue, a negative value is none; lowering it deletes nothing; exclusive queues count`, async (t) => {
  const vhost = await vhostWith(t, {});
  const conn = await t.connect({ vhost });
  let ch = await t.channel(conn);
  await t.step('exclusive', ch.assertQueue(t.q('excl'), { exclusive: true }));
  await t.step('shared', ch.assertQueue(t.q('shared')));
  await t.admin.setVhostLimit(vhost, 'max-queues', 2);
  await t.step('third-at-2', ch.assertQueue(t.q('third')), undefined, ch);
  ch = await t.channel(conn);
  await t.admin.setVhostLimit(vhost, 'max-queues', 0);
  await t.step('third-at-0', ch.assertQueue(t.q('third')), undefined, ch);
  ch = await t.channel(conn);
  await t.step('existing-at-0', ch.assertQueue(t.q('shared')));
  await t.step('exclusive-still-there', ch.checkQueue(t.q('excl')));
  await t.admin.setVhostLimit(vhost, 'max-queues', -1);
  await t.step('third-at-negative', ch.assertQueue(t.q('third')));
});
