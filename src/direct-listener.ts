import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the broker's own direct connections come in: a shovel's `amqp://` without a host, which
 * RabbitMQ opens inside the node (rabbit_direct). Warren runs them over a local socket that is
 * not its AMQP listener, so that, as in RabbitMQ, they do not count against `connection_max` or
 * the per-address and rate limits, and the broker's direct secret never crosses TCP.
 *
 * The socket is a Linux abstract socket (no file, gone with the process, even after SIGKILL), a
 * named pipe on Windows, and elsewhere a Unix socket in a fresh private directory, removed on
 * close. Its name is random; a login on it still needs the direct secret or a user's password.
 * Sockets open on it at once are capped by `limit()` (what the shovels need, and a few more), so
 * a local process that finds it cannot open descriptors without bound where connection_max does
 * not apply; one over the cap is closed at once.
 */
export class DirectListener {
  private server: Server | undefined;
  private dir: string | undefined;
  /** The path amqplib connects to (socketOptions.path), once listening. */
  path: string | undefined;
  /** Sockets open now. */
  private open = 0;

  listen(onSocket: (socket: Socket) => void, limit: () => number): Promise<string> {
    const path = this.choosePath();
    const server = createServer((socket) => {
      if (this.open >= limit()) {
        socket.on('error', () => {});
        socket.destroy();
        return;
      }
      this.open++;
      socket.once('close', () => this.open--);
      onSocket(socket);
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        server.on('error', () => {}); // a failed accept leaves the shovel to retry
        this.path = path;
        resolve(path);
      });
    });
  }

  /** Stops listening; resolves once every connection that came in on it has closed. */
  close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.path = undefined;
    return new Promise((resolve) => {
      const done = (): void => {
        if (this.dir) rmSync(this.dir, { recursive: true, force: true });
        this.dir = undefined;
        resolve();
      };
      if (server?.listening) server.close(done);
      else done();
    });
  }

  private choosePath(): string {
    const name = `warren-direct-${process.pid}-${randomBytes(8).toString('hex')}`;
    if (process.platform === 'linux') return `\0${name}`;
    if (process.platform === 'win32') return `\\\\.\\pipe\\${name}`;
    this.dir = mkdtempSync(join(tmpdir(), 'warren-direct-'));
    return join(this.dir, 'direct.sock');
  }
}
