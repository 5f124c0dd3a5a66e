/**
 * TLS settings as RabbitMQ's `ssl_options` name them, and the Node TLS options they become.
 * Certificate, key and CA are read from files (as RabbitMQ reads them); reading them again is
 * how a renewed certificate is taken up without a restart (tls-listener.ts).
 */

import { readFileSync } from 'node:fs';
import type { SecureContextOptions, TlsOptions } from 'node:tls';

export interface TlsConfig {
  /** Port of the AMQPS listener (RabbitMQ's listeners.ssl.default; 5671 by default, 0 = any free port). */
  port?: number;
  /** PEM server certificate (chain), key, and CA bundle that client certificates must chain to. */
  certfile: string;
  keyfile: string;
  cacertfile?: string;
  /** Passphrase of an encrypted key. */
  password?: string;
  /** verify_peer asks every client for a certificate and checks it against cacertfile. */
  verify?: 'verify_peer' | 'verify_none';
  /** With verify_peer: refuse clients that present no certificate (RabbitMQ's default is false). */
  fail_if_no_peer_cert?: boolean;
  /** Protocol versions allowed, as RabbitMQ names them ('tlsv1.2', 'tlsv1.3'); default both. */
  versions?: string[];
  /** What EXTERNAL takes as the user name: the subject's distinguished name (default) or its CN. */
  ssl_cert_login_from?: 'distinguished_name' | 'common_name';
}

export const DEFAULT_TLS_PORT = 5671;

const VERSIONS: Record<string, 'TLSv1.2' | 'TLSv1.3'> = { 'tlsv1.2': 'TLSv1.2', 'tlsv1.3': 'TLSv1.3' };

/** Throws a clear error for a setting that cannot work (checked once, before listening). */
export function checkTlsConfig(tls: TlsConfig, where: string): void {
  const fail = (msg: string): never => {
    throw new Error(`${where}: ${msg}`);
  };
  if (typeof tls !== 'object' || tls === null) fail('must be an object with certfile and keyfile');
  if (typeof tls.certfile !== 'string' || typeof tls.keyfile !== 'string') fail('certfile and keyfile are required');
  if (tls.cacertfile !== undefined && typeof tls.cacertfile !== 'string') fail('cacertfile must be a file name');
  if (tls.port !== undefined && !(Number.isInteger(tls.port) && tls.port >= 0 && tls.port <= 65535)) fail(`invalid port '${String(tls.port)}'`);
  if (tls.verify !== undefined && tls.verify !== 'verify_peer' && tls.verify !== 'verify_none') {
    fail(`verify must be verify_peer or verify_none, not '${String(tls.verify)}'`);
  }
  if (tls.verify === 'verify_peer' && tls.cacertfile === undefined) fail('verify_peer needs cacertfile (the CA that signs client certificates)');
  if (tls.fail_if_no_peer_cert !== undefined && typeof tls.fail_if_no_peer_cert !== 'boolean') fail('fail_if_no_peer_cert must be true or false');
  for (const v of tls.versions ?? []) if (!VERSIONS[v]) fail(`unsupported TLS version '${v}' (tlsv1.2 or tlsv1.3)`);
  const from = tls.ssl_cert_login_from;
  if (from !== undefined && from !== 'distinguished_name' && from !== 'common_name') {
    fail(`ssl_cert_login_from must be distinguished_name or common_name, not '${String(from)}'`);
  }
}

/** The certificate, key and CA, read now from their files. */
export function secureContextOptions(tls: TlsConfig): SecureContextOptions {
  const versions = (tls.versions ?? ['tlsv1.2', 'tlsv1.3']).map((v) => VERSIONS[v]!).sort();
  return {
    cert: readFileSync(tls.certfile),
    key: readFileSync(tls.keyfile),
    ca: tls.cacertfile !== undefined ? readFileSync(tls.cacertfile) : undefined,
    passphrase: tls.password,
    minVersion: versions[0],
    maxVersion: versions[versions.length - 1],
  };
}

/**
 * The server options: with verify_peer every client is asked for a certificate. Node rejects an
 * untrusted one during the handshake only when it also requires one, so with
 * fail_if_no_peer_cert false the listener checks `authorized` itself (peerVerdict).
 */
export function serverOptions(tls: TlsConfig): TlsOptions {
  const verifyPeer = tls.verify === 'verify_peer';
  return {
    ...secureContextOptions(tls),
    requestCert: verifyPeer,
    rejectUnauthorized: verifyPeer && tls.fail_if_no_peer_cert === true,
  };
}

/**
 * Whether a TLS client may go on, as RabbitMQ's verify_peer decides: a certificate that does not
 * verify is always refused; no certificate is refused only with fail_if_no_peer_cert.
 */
export function peerVerdict(tls: TlsConfig, peer: { authorized: boolean; authorizationError?: Error | string | null; hasCertificate: boolean }): string | undefined {
  if (tls.verify !== 'verify_peer') return undefined;
  if (!peer.hasCertificate) return tls.fail_if_no_peer_cert ? 'no peer certificate' : undefined;
  return peer.authorized ? undefined : `untrusted peer certificate (${String(peer.authorizationError ?? 'not authorized')})`;
}
