import { expect } from 'chai';
import amqp from 'amqplib';
import { connect as netConnect } from 'node:net';
import { FakeClock } from '../../src/clock.js';
import { AMQP_0_9_1_HEADER } from '../../src/frame/protocol-header.js';
import { captureLog } from '../support/capture-log.js';
import { useBroker } from '../support/broker.js';
import { connectError } from '../support/amqp.js';

/** Whether a new socket gets connection.start (served) or is closed before anything (refused). */
function attempt(port: number): Promise<'served' | 'refused'> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ port, host: '127.0.0.1' }, () => socket.write(AMQP_0_9_1_HEADER));
    socket.once('data', () => {
      socket.destroy();
      resolve('served');
    });
    socket.on('close', () => resolve('refused'));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') reject(err);
    });
  });
}

describe('limits on hostile clients (issue 14)', () => {
  describe('consumerMaxPerChannel (RabbitMQ 4\'s consumer_max_per_channel)', () => {
    const broker = useBroker({ consumerMaxPerChannel: 2 });

    it('closes the connection with 530 NOT_ALLOWED when a channel asks for one consumer too many', async () => {
      const conn = await amqp.connect(broker.url);
      const closed = new Promise<Error>((resolve) => conn.on('error', resolve));
      const ch = await conn.createChannel();
      ch.on('error', () => {});
      const { queue } = await ch.assertQueue('', { exclusive: true });
      await ch.consume(queue, () => {}, { consumerTag: 'a' });
      await ch.consume(queue, () => {}, { consumerTag: 'b' });
      await ch.cancel('a');
      await ch.consume(queue, () => {}, { consumerTag: 'c' }); // a cancel makes room
      ch.consume(queue, () => {}, { consumerTag: 'd' }).catch(() => {});
      expect((await closed).message).to.include('NOT_ALLOWED - reached maximum (2) of consumers per channel');
    });
  });

  describe('connectionRateLimitPerIp', () => {
    const clock = new FakeClock();
    const broker = useBroker({ clock, connectionRateLimitPerIp: 2 });

    it('refuses new connections from an address over its rate until the next second', async () => {
      expect([await attempt(broker.port), await attempt(broker.port), await attempt(broker.port)]).to.deep.equal(['served', 'served', 'refused']);
      clock.advance(1000);
      expect(await attempt(broker.port)).to.equal('served');
    });
  });

  describe('loginFailureLimit', () => {
    const clock = new FakeClock();
    const log = captureLog('warn');
    const broker = useBroker({ clock, logger: log.log, loginFailureLimit: 2, users: [{ username: 'app', password: 's3cret' }], loopbackUsers: [] });
    const url = (password: string) => `amqp://app:${password}@127.0.0.1:${broker.port}`;
    const refused = 'ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN';

    it('refuses every login from an address that failed too often, for a back-off that doubles, and logs it', async () => {
      expect(await connectError(url('guess1'))).to.include(refused);
      expect(await connectError(url('s3cret'))).to.equal('connected'); // a success clears the record
      expect(await connectError(url('guess2'))).to.include(refused);
      expect(await connectError(url('guess3'))).to.include(refused);
      const started = await log.waitFor(/^failed logins from 127\.0\.0\.1: refusing its logins for 1 s/);
      expect(started['backoffMs']).to.equal(1000);
      // The right password does not help during the back-off, and the client cannot tell.
      expect(await connectError(url('s3cret'))).to.include(refused);
      await log.waitFor('login refused: too many failed logins from this address');
      clock.advance(1000);
      expect(await connectError(url('guess4'))).to.include(refused);
      expect((await log.waitFor(/refusing its logins for 2 s/))['backoffMs']).to.equal(2000);
      clock.advance(2000);
      expect(await connectError(url('s3cret'))).to.equal('connected');
    });
  });
});
