import { expect } from 'chai';
import { hashPassword, isPasswordHash, verifyPassword, type HashingAlgorithm } from '../../src/access/password.js';

/**
 * RabbitMQ's password hashes (rabbit_password, rabbit_password_hashing_sha256/_sha512/_md5):
 * base64(salt4 ‖ H(salt4 ‖ utf8(password))). The vectors were made by RabbitMQ 3.10.8: a user
 * created over its management API with the password shown, then GET /api/users/NAME (the node's
 * password_hashing_module switched to sha512 and md5 with rabbitmqctl eval for those two).
 */
const REFERENCE_VECTORS: Array<{ password: string; hash: string; algorithm: HashingAlgorithm }> = [
  { password: 's3cret pw', hash: 'QEfis3Zhr8T69jVDWbNPv4XFNSom3QZuu4bF1SNE8Jz18Qm5', algorithm: 'rabbit_password_hashing_sha256' },
  { password: 'pässwörd ✓', hash: 'xL0U1zKlrjmlsWiH0MiHhy+9bFStrHQvKyAUxfBP8WhaoA7p', algorithm: 'rabbit_password_hashing_sha256' },
  { password: 'guest', hash: 'qNgDhkHdig4UGSylfhMlB1y1LB6fQpkF4scoWvxHp5iZxXyE', algorithm: 'rabbit_password_hashing_sha256' },
  {
    password: 's3cret pw',
    hash: 'h2mT3vQBB/5aIDW5jbt1qcPm272npCEcXmFP7sbcn/OGkz98cMXJeBO3TTk1pRHw6FVoBVCpRDndTrXyJrwMJyCYZOs=',
    algorithm: 'rabbit_password_hashing_sha512',
  },
  { password: 's3cret pw', hash: 'UEntaMqnxQqTVSQ9k9EWPWCLssc=', algorithm: 'rabbit_password_hashing_md5' },
];

describe('access: RabbitMQ password hashes', () => {
  for (const v of REFERENCE_VECTORS) {
    it(`accepts RabbitMQ 3.10's ${v.algorithm} hash of '${v.password}' and refuses other passwords`, () => {
      expect(verifyPassword(v.password, v.hash, v.algorithm)).to.equal(true);
      expect(verifyPassword(`${v.password}x`, v.hash, v.algorithm)).to.equal(false);
      expect(verifyPassword(v.password.toUpperCase(), v.hash, v.algorithm)).to.equal(false);
      const other: HashingAlgorithm = v.algorithm === 'rabbit_password_hashing_md5' ? 'rabbit_password_hashing_sha256' : 'rabbit_password_hashing_md5';
      expect(verifyPassword(v.password, v.hash, other)).to.equal(false);
    });
  }

  it('reproduces a reference hash exactly from its salt', () => {
    for (const v of REFERENCE_VECTORS) {
      const salt = Buffer.from(v.hash, 'base64').subarray(0, 4);
      expect(hashPassword(v.password, v.algorithm, salt)).to.equal(v.hash);
    }
  });

  it('hashes with a fresh 4-byte salt, SHA-256 by default, and verifies its own hashes', () => {
    const a = hashPassword('pw');
    const b = hashPassword('pw');
    expect(a).to.not.equal(b);
    expect(Buffer.from(a, 'base64')).to.have.length(4 + 32);
    expect(Buffer.from(hashPassword('pw', 'rabbit_password_hashing_sha512'), 'base64')).to.have.length(4 + 64);
    expect(Buffer.from(hashPassword('pw', 'rabbit_password_hashing_md5'), 'base64')).to.have.length(4 + 16);
    expect(verifyPassword('pw', a, 'rabbit_password_hashing_sha256')).to.equal(true);
  });

  it('never matches an empty password, an empty hash or one too short to hold a salt', () => {
    expect(verifyPassword('', hashPassword(''), 'rabbit_password_hashing_sha256')).to.equal(false);
    expect(verifyPassword('pw', '', 'rabbit_password_hashing_sha256')).to.equal(false);
    expect(verifyPassword('pw', 'AAA=', 'rabbit_password_hashing_sha256')).to.equal(false);
    // A salt and a digest of the wrong length (a SHA-256 hash read as SHA-512).
    expect(verifyPassword('pw', hashPassword('pw'), 'rabbit_password_hashing_sha512')).to.equal(false);
  });

  it('recognises base64 hashes as RabbitMQ stores them', () => {
    expect(isPasswordHash('')).to.equal(true);
    expect(isPasswordHash(REFERENCE_VECTORS[0]!.hash)).to.equal(true);
    for (const bad of ['!!!', 'abc', 'ab=c', 42, null]) expect(isPasswordHash(bad), String(bad)).to.equal(false);
  });
});
