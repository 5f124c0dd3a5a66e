import { expect } from 'chai';
import { AccessControl, AccessError } from '../../src/access/access-control.js';
import { hashPassword, verifyPassword } from '../../src/access/password.js';
import { openMemoryStore } from '../../src/store/memory-store.js';
import type { MetadataStore } from '../../src/store/metadata-store.js';
import { captureLog } from '../support/capture-log.js';

/** The users database and its rules, as rabbit_auth_backend_internal keeps them (no sockets here). */
describe('access: AccessControl (users, permissions, topic permissions)', () => {
  let store: MetadataStore;
  let access: AccessControl;
  let deleted: string[];
  const vhosts = new Set(['/', 'dev']);
  const make = (metadata: MetadataStore = store) => new AccessControl({
    store: metadata,
    log: captureLog('warn').log,
    loopbackUsers: ['guest'],
    vhostExists: (v) => vhosts.has(v),
    onUserDeleted: (u) => deleted.push(u),
  });

  beforeEach(() => {
    store = openMemoryStore().metadata;
    deleted = [];
    access = make();
  });

  it('authenticates a user created with a plain password, which is stored only as a salted SHA-256 hash', () => {
    expect(access.putUser('alice', { password: 'secret', tags: ['management'] })).to.equal('created');
    expect(access.authenticate('alice', 'secret')?.tags).to.deep.equal(['management']);
    expect(access.authenticate('alice', 'wrong')).to.equal(undefined);
    expect(access.authenticate('bob', 'secret')).to.equal(undefined);
    const stored = store.loadDefinitions().find((d) => d.kind === 'user');
    expect(JSON.stringify(stored)).to.not.contain('secret');
    const value = stored!.value as { password_hash: string; hashing_algorithm: string };
    expect(value.hashing_algorithm).to.equal('rabbit_password_hashing_sha256');
    expect(verifyPassword('secret', value.password_hash, 'rabbit_password_hashing_sha256')).to.equal(true);
  });

  it('takes a hash and its algorithm as given; refuses both a password and a hash, bad base64 and unknown algorithms', () => {
    access.putUser('h', { passwordHash: 'UEntaMqnxQqTVSQ9k9EWPWCLssc=', hashingAlgorithm: 'rabbit_password_hashing_md5', tags: [] });
    expect(access.authenticate('h', 's3cret pw')).to.not.equal(undefined);
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        expect(err).to.be.instanceOf(AccessError);
        return (err as AccessError).reason;
      }
      throw new Error('expected an AccessError');
    };
    expect(refused(() => access.putUser('x', { password: 'a', passwordHash: '', tags: [] }))).to.equal('both_password_and_password_hash_are_provided');
    expect(refused(() => access.putUser('x', { passwordHash: '!!!', tags: [] }))).to.equal('not_base64');
    expect(refused(() => access.putUser('x', { passwordHash: '', hashingAlgorithm: 'nope' as never, tags: [] }))).to.equal('invalid_hashing_algorithm');
    expect(access.hasUser('x')).to.equal(false);
  });

  it('a user without a password cannot log in with one; updating without a password clears it (put_user)', () => {
    access.putUser('nopw', { tags: [] });
    expect(access.authenticate('nopw', '')).to.equal(undefined);
    expect(access.authenticate('nopw', 'x')).to.equal(undefined);
    access.putUser('u', { password: 'pw', tags: ['a'] });
    expect(access.putUser('u', { tags: ['b'] })).to.equal('updated');
    expect(access.user('u')!.passwordHash).to.equal('');
    expect(access.authenticate('u', 'pw')).to.equal(undefined);
    expect(access.tags('u')).to.deep.equal(['b']);
  });

  it('keeps limits across updates unless given, and validates them', () => {
    access.putUser('l', { password: 'pw', tags: [], limits: { 'max-connections': 2 } });
    access.putUser('l', { password: 'pw2', tags: [] });
    expect(access.user('l')!.limits).to.deep.equal({ 'max-connections': 2 });
    access.setUserLimit('l', 'max-channels', 5);
    expect(access.user('l')!.limits).to.deep.equal({ 'max-connections': 2, 'max-channels': 5 });
    access.clearUserLimits('l', 'max-connections');
    expect(access.user('l')!.limits).to.deep.equal({ 'max-channels': 5 });
    expect(() => access.putUser('l', { tags: [], limits: { 'max-queues': 1 } as never })).to.throw(AccessError);
  });

  it('loopback users log in only from loopback addresses', () => {
    access.putUser('guest', { password: 'guest', tags: ['administrator'] });
    expect(access.login('guest', 'guest', '127.0.0.1')).to.deep.equal({ user: { name: 'guest', tags: ['administrator'] } });
    expect(access.login('guest', 'guest', '::1')).to.have.property('user');
    expect(access.login('guest', 'guest', '::ffff:127.0.0.1')).to.have.property('user');
    expect(access.login('guest', 'guest', '10.0.0.5')).to.deep.equal({ refusal: 'loopback' });
    expect(access.login('guest', 'nope', '127.0.0.1')).to.deep.equal({ refusal: 'credentials' });
  });

  it('denies by default: no vhost and no resource without a permission entry', () => {
    access.putUser('u', { password: 'pw', tags: [] });
    expect(access.mayAccessVhost('u', '/')).to.equal(false);
    expect(access.mayUseResource('u', '/', { kind: 'queue', name: 'q' }, 'read')).to.equal(false);
    access.setPermission('u', '/', { configure: '^c', write: '^amq\\.default$', read: '' });
    expect(access.mayAccessVhost('u', '/')).to.equal(true);
    expect(access.mayAccessVhost({ name: 'u', tags: [] }, 'dev')).to.equal(false);
    expect(access.mayUseResource('u', '/', { kind: 'queue', name: 'cq' }, 'configure')).to.equal(true);
    expect(access.mayUseResource('u', '/', { kind: 'queue', name: 'q' }, 'configure')).to.equal(false);
    // The default exchange is checked as amq.default (rabbit_access_control).
    expect(access.mayUseResource('u', '/', { kind: 'exchange', name: '' }, 'write')).to.equal(true);
    expect(access.mayUseResource('u', '/', { kind: 'queue', name: 'anything' }, 'read')).to.equal(false);
  });

  it('refuses permissions for unknown users or vhosts and patterns that do not compile', () => {
    access.putUser('u', { password: 'pw', tags: [] });
    const reason = (f: () => unknown) => {
      try {
        f();
        return 'none';
      } catch (err) {
        return (err as AccessError).reason;
      }
    };
    expect(reason(() => access.setPermission('nobody', '/', { configure: '.*', write: '.*', read: '.*' }))).to.equal('vhost_or_user_not_found');
    expect(reason(() => access.setPermission('u', 'nope', { configure: '.*', write: '.*', read: '.*' }))).to.equal('vhost_or_user_not_found');
    expect(reason(() => access.setPermission('u', '/', { configure: '(', write: '.*', read: '.*' }))).to.equal('invalid_regexp');
    expect(reason(() => access.setTopicPermission('u', '/', 'amq.topic', { write: '(', read: '' }))).to.equal('invalid_regexp');
    expect(access.permissions()).to.deep.equal([]);
    expect(access.topicPermissions()).to.deep.equal([]);
  });

  it('deleting a user takes its permissions and topic permissions along and reports it (its connections close)', () => {
    access.putUser('u', { password: 'pw', tags: [] });
    access.putUser('v', { password: 'pw', tags: [] });
    access.setPermission('u', '/', { configure: '.*', write: '.*', read: '.*' });
    access.setPermission('v', '/', { configure: '.*', write: '.*', read: '.*' });
    access.setTopicPermission('u', '/', 'amq.topic', { write: '.*', read: '.*' });
    expect(access.deleteUser('u')).to.equal(true);
    expect(access.deleteUser('u')).to.equal(false);
    expect(deleted).to.deep.equal(['u']);
    expect(access.permissions().map((p) => p.user)).to.deep.equal(['v']);
    expect(access.topicPermissions()).to.deep.equal([]);
    expect(store.loadDefinitions().map((d) => `${d.kind}:${d.key}`)).to.deep.equal(['user:v', 'permission:v\u0000/']);
  });

  it('a vhost going away takes every permission and topic permission in it', () => {
    access.putUser('u', { password: 'pw', tags: [] });
    access.setPermission('u', '/', { configure: '.*', write: '.*', read: '.*' });
    access.setPermission('u', 'dev', { configure: '.*', write: '.*', read: '.*' });
    access.setTopicPermission('u', 'dev', 'amq.topic', { write: '.*', read: '.*' });
    access.vhostDeleted('dev');
    expect(access.permissions()).to.have.length(1);
    expect(access.permissions({ vhost: 'dev' })).to.deep.equal([]);
    expect(access.topicPermissions()).to.deep.equal([]);
  });

  it('lists by user and vhost, and clears topic permissions by exchange or all at once', () => {
    access.putUser('b', { password: 'pw', tags: [] });
    access.putUser('a', { password: 'pw', tags: [] });
    access.setPermission('b', '/', { configure: '', write: '', read: '' });
    access.setPermission('a', 'dev', { configure: '', write: '', read: '' });
    access.setPermission('a', '/', { configure: '', write: '', read: '' });
    expect(access.users().map((u) => u.name)).to.deep.equal(['a', 'b']);
    expect(access.permissions().map((p) => `${p.user}@${p.vhost}`)).to.deep.equal(['a@/', 'a@dev', 'b@/']);
    expect(access.permissions({ user: 'a' })).to.have.length(2);
    expect(access.permissions({ vhost: '/' })).to.have.length(2);
    access.setTopicPermission('a', '/', 'x1', { write: '', read: '' });
    access.setTopicPermission('a', '/', 'x2', { write: '', read: '' });
    expect(access.clearTopicPermissions('a', '/', 'x1')).to.equal(true);
    expect(access.topicPermissions().map((p) => p.exchange)).to.deep.equal(['x2']);
    expect(access.clearTopicPermissions('a', '/')).to.equal(true);
    expect(access.clearTopicPermissions('a', '/')).to.equal(false);
    expect(access.clearPermission('b', '/')).to.equal(true);
    expect(access.clearPermission('b', '/')).to.equal(false);
  });

  it('loads what it stored (a restart), skipping malformed records with a warning', () => {
    access.putUser('u', { passwordHash: hashPassword('pw', 'rabbit_password_hashing_sha512'), hashingAlgorithm: 'rabbit_password_hashing_sha512', tags: ['t'], limits: { 'max-channels': 3 } });
    access.setPermission('u', '/', { configure: '^c', write: '^w', read: '^r' });
    access.setTopicPermission('u', '/', 'amq.topic', { write: '^{username}\\.', read: '' });
    store.putDefinition({ kind: 'user', key: 'broken', value: { name: 'broken', password_hash: 42 } });
    store.putDefinition({ kind: 'permission', key: 'u\u0000dev', value: { user: 'u', vhost: 'dev', configure: '(', write: '', read: '' } });
    const { log, entries } = captureLog('warn');
    const again = new AccessControl({ store, log, loopbackUsers: [], vhostExists: (v) => vhosts.has(v) });
    expect(again.load(store.loadDefinitions())).to.deep.equal({ users: 1, permissions: 1, topicPermissions: 1 });
    expect(again.authenticate('u', 'pw')?.limits).to.deep.equal({ 'max-channels': 3 });
    expect(again.permission('u', '/')).to.deep.equal({ user: 'u', vhost: '/', configure: '^c', write: '^w', read: '^r' });
    expect(again.topicPermission('u', '/', 'amq.topic')?.write).to.equal('^{username}\\.');
    expect(entries.filter((e) => e.msg === 'skipping a malformed stored definition').map((e) => e['kind'])).to.deep.equal(['user', 'permission']);
  });

  it('changes the generation with every change, so cached checks are dropped', () => {
    const g0 = access.generation;
    access.putUser('u', { password: 'pw', tags: [] });
    const g1 = access.generation;
    access.setPermission('u', '/', { configure: '.*', write: '.*', read: '.*' });
    const g2 = access.generation;
    access.clearPermission('u', '/');
    expect(new Set([g0, g1, g2, access.generation]).size).to.equal(4);
  });
});
