import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { FD_RESERVE } from '../../src/connection-limits.js';
import { AMQP_0_9_1_HEADER } from '../../src/frame/protocol-header.js';
import { BrokerProcess } from '../support/broker-process.js';
import { useBroker, waitUntil } from '../support/broker.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';
import { RawClient } from '../../conformance/lib/raw-client.js';

/**
 * What a client over a limit sees: its TCP connection is accepted and closed before the broker
 * sends anything (amqplib: "Socket closed abruptly during opening handshake").
 */
type Outcome = { socket: Socket; outcome: 'served' | 'refused' };

/** Connects from localAddress, sends the protocol header and reports whether connection.start came back. */
function attempt(port: number, localAddress = '127.0.0.1'): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ port, host: '127.0.0.1', localAddress }, () => socket.write(AMQP_0_9_1_HEADER));
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      resolve({ socket, outcome: 'served' });
    });
    socket.on('close', () => resolve({ socket, outcome: received > 0 ? 'served' : 'refused' }));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset of a refused socket; anything before connecting is a test failure.
      if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') reject(err);
    });
  });
}

function closeAll(outcomes: Outcome[]): void {
  for (const o of outcomes) o.socket.destroy();
}

describe('connection limits (issue 10)', () => {
  describe('connectionMax', () => {
    const broker = useBroker({ connectionMax: 2 });

    it('closes connections over connectionMax before sending anything; a closed connection makes room', async () => {
      const a = await RawClient.open(broker.url);
      const b = await attempt(broker.port);
      const refused = await attempt(broker.port);
      try {
        expect([b.outcome, refused.outcome]).to.deep.equal(['served', 'refused']);
        a.close();
        await a.waitClosed();
        await waitUntil(() => broker.running.broker.connections.size === 1, 'the closed connection to be released');
        const c = await RawClient.open(broker.url);
        c.close();
      } finally {
        a.close();
        closeAll([b, refused]);
      }
    });
  });

  describe('connectionMaxPerIp', () => {
    const broker = useBroker({ connectionMaxPerIp: 2 });

    it('limits connections from one address, not from others', async () => {
      const got = [await attempt(broker.port), await attempt(broker.port), await attempt(broker.port), await attempt(broker.port, '127.0.0.2')];
      try {
        expect(got.map((o) => o.outcome)).to.deep.equal(['served', 'served', 'refused', 'served']);
      } finally {
        closeAll(got);
      }
    });
  });

  describe('file descriptors', () => {
    let dir: string;
    let broker: BrokerProcess | undefined;
    const limit = 128;

    before(async () => {
      dir = makeTmpDir('warren-fds-');
      broker = await BrokerProcess.start(dir, { openFilesLimit: limit });
    });

    after(async () => {
      await broker?.stop();
      removeDir(dir);
    });

    it(`refuses sockets near the soft RLIMIT_NOFILE (ulimit -n ${limit}) instead of running out; existing clients keep working`, async () => {
      const b = broker as BrokerProcess;
      // The store's space reserve keeps a helper process on two pipes; it is made shortly after
      // the store opens: wait for it, so those two descriptors are there before the count.
      await b.waitForLog((e) => /MiB reserved past its end/.test(e.msg ?? ''));
      const client = await RawClient.open(b.url);
      const flood: Outcome[] = [];
      try {
        await client.openChannel(1);
        // Twice as many sockets as there are descriptors, all held open.
        for (let i = 0; i < 2 * limit; i++) flood.push(await attempt(b.port));
        const served = flood.filter((o) => o.outcome === 'served').length;
        expect(served).to.be.above(limit / 4);
        expect(flood.length - served).to.be.above(limit);
        await b.waitForLog((e) => e.msg === 'refusing connections: too few file descriptors left');
        // The broker keeps its reserve: what it opens for itself (the memory monitor reads /proc,
        // the store and the shutdown marker open files) does not fail with EMFILE.
        const open = readdirSync(`/proc/${b.child.pid}/fd`).length;
        expect(open).to.be.at.most(limit - FD_RESERVE + 1);
        expect(b.child.exitCode).to.equal(null);
        // The client that was already connected is served as before.
        client.method(1, 'queue.declare', { reserved1: 0, queue: '', passive: false, durable: false, exclusive: true, autoDelete: false, noWait: false, arguments: {} });
        await client.expect('queue.declare-ok');
        // Once sockets close (the broker learns of it asynchronously), new clients are taken again.
        closeAll(flood);
        let again: Outcome;
        const deadline = Date.now() + 10000;
        while ((again = await attempt(b.port)).outcome === 'refused' && Date.now() < deadline) again.socket.destroy();
        again.socket.destroy();
        expect(again.outcome).to.equal('served');
        // A clean shutdown still writes its marker file: descriptors were left for it.
        const code = await b.stop();
        broker = undefined;
        expect(code).to.equal(0);
      } finally {
        client.close();
        closeAll(flood);
      }
    });
  });
});
