/**
 * The AMQPS listener: a node:tls server whose sockets become ordinary connections once the TLS
 * handshake (and RabbitMQ's verify_peer rule) has passed. `reload()` reads the certificate, key
 * and CA files again and uses them for every new handshake, so a renewed certificate is taken up
 * without a restart (SIGHUP in main.ts, or Broker.reloadTls()).
 */

import type { Socket } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { peerVerdict, secureContextOptions, serverOptions, type TlsConfig } from './tls-options.js';

/** Handshake failures are logged at most this often (a scanner must not flood the log). */
const FAILURE_LOG_MS = 10_000;

export interface TlsListenerDeps {
  log: Logger;
  clock: Clock;
  handshakeTimeout: number;
  /** A raw TCP socket arrived: false to refuse it before the handshake (connection limits). */
  admit(socket: Socket): boolean;
  /** A client passed the handshake and the peer check. */
  accept(socket: TLSSocket): void;
}

export class TlsListener {
  private readonly server: Server;
  private failures = { count: 0, loggedAt: -Infinity, last: '' };

  constructor(
    private readonly tls: TlsConfig,
    private readonly deps: TlsListenerDeps,
  ) {
    this.server = createServer({ ...serverOptions(tls), handshakeTimeout: deps.handshakeTimeout });
    this.server.on('connection', (socket: Socket) => {
      if (!deps.admit(socket)) socket.destroy();
    });
    this.server.on('secureConnection', (socket: TLSSocket) => this.secured(socket));
    this.server.on('tlsClientError', (err: Error, socket: TLSSocket) => {
      this.failed(socket.remoteAddress ?? '', err.message);
      socket.destroy();
    });
  }

  /** Starts listening; resolves with the bound port. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        this.server.on('error', (err) => this.deps.log.error({ err: err.message }, 'TLS listener error'));
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /** Reads the certificate, key and CA files again; throws (keeping the old ones) if they are bad. */
  reload(): void {
    this.server.setSecureContext(secureContextOptions(this.tls));
    this.deps.log.info({ certfile: this.tls.certfile }, 'TLS certificate reloaded');
  }

  /** Stops accepting; resolves once every socket it accepted is gone. */
  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private secured(socket: TLSSocket): void {
    const cert = socket.getPeerCertificate();
    const refusal = peerVerdict(this.tls, {
      authorized: socket.authorized,
      authorizationError: socket.authorizationError,
      hasCertificate: cert !== null && Object.keys(cert).length > 0,
    });
    if (refusal) {
      this.failed(socket.remoteAddress ?? '', refusal);
      socket.destroy();
      return;
    }
    this.deps.accept(socket);
  }

  private failed(peer: string, reason: string): void {
    this.failures.count++;
    this.failures.last = reason;
    const now = this.deps.clock.monotonic();
    if (now - this.failures.loggedAt < FAILURE_LOG_MS) return;
    this.deps.log.warn({ peer, reason, failures: this.failures.count }, `TLS client refused: ${reason}`);
    this.failures = { count: 0, loggedAt: now, last: '' };
  }
}
