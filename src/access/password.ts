import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * RabbitMQ's password hashing (rabbit_password, rabbit_password_hashing_*): a hash is
 * base64(salt ‖ H(salt ‖ utf8(password))) with a random 4-byte salt. The algorithm is named as
 * RabbitMQ names it in definitions and in the management API (`hashing_algorithm`).
 */
export type HashingAlgorithm = 'rabbit_password_hashing_sha256' | 'rabbit_password_hashing_sha512' | 'rabbit_password_hashing_md5';

/** RabbitMQ's default (password_hashing_module). */
export const DEFAULT_HASHING_ALGORITHM: HashingAlgorithm = 'rabbit_password_hashing_sha256';

const DIGESTS: Record<HashingAlgorithm, string> = {
  rabbit_password_hashing_sha256: 'sha256',
  rabbit_password_hashing_sha512: 'sha512',
  rabbit_password_hashing_md5: 'md5',
};

export const HASHING_ALGORITHMS = Object.keys(DIGESTS) as readonly HashingAlgorithm[];

export function isHashingAlgorithm(name: unknown): name is HashingAlgorithm {
  return typeof name === 'string' && Object.hasOwn(DIGESTS, name);
}

const SALT_BYTES = 4;

/** A new RabbitMQ-format hash of password (a fresh random salt unless one is given). */
export function hashPassword(password: string, algorithm: HashingAlgorithm = DEFAULT_HASHING_ALGORITHM, salt: Buffer = randomBytes(SALT_BYTES)): string {
  if (salt.length !== SALT_BYTES) throw new RangeError(`a password salt is ${SALT_BYTES} bytes`);
  return Buffer.concat([salt, saltedHash(algorithm, salt, password)]).toString('base64');
}

/**
 * Whether password matches a stored hash, compared in constant time. As in
 * rabbit_auth_backend_internal, an empty password never matches, and neither does a hash too
 * short to hold a salt (an empty password_hash: the user cannot log in with a password).
 */
export function verifyPassword(password: string, passwordHash: string, algorithm: HashingAlgorithm): boolean {
  if (password === '') return false;
  const stored = Buffer.from(passwordHash, 'base64');
  if (stored.length < SALT_BYTES) return false;
  const expected = stored.subarray(SALT_BYTES);
  const actual = saltedHash(algorithm, stored.subarray(0, SALT_BYTES), password);
  // The digest length is public (it follows from the algorithm): only the contents are compared in constant time.
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** Whether s is a password hash RabbitMQ would store: canonical base64 (possibly empty). */
export function isPasswordHash(s: unknown): s is string {
  return typeof s === 'string' && s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);
}

function saltedHash(algorithm: HashingAlgorithm, salt: Buffer, password: string): Buffer {
  return createHash(DIGESTS[algorithm]).update(salt).update(password, 'utf8').digest();
}
