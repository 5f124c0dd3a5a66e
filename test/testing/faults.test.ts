import { expect } from 'chai';
import type { ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { FakeClock } from '../../src/clock.js';
import { channel, confirmChannel, connect, connectionClosed, connectNamed } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/** Publishes with a confirm callback; resolves with 'ack' or the callback's error message. */
function publishConfirmed(ch: ConfirmChannel, queue: string, body: string, persistent = false): Promise<string> {
  return new Promise((resolve) => {
    ch.sendToQueue(queue, Buffer.from(body), { persistent }, (err: Error | null) => resolve(err ? err.message : 'ack'));
  });
}

function event<T = unknown>(conn: ChannelModel, name: string): Promise<T> {
  return new Promise((resolve) => conn.once(name, resolve));
}

/**
 * broker.faults (docs/testing.md): each fault goes through the broker's real failure path, so
 * the client sees what it sees of the real failure. Texts of forced closes as RabbitMQ 3.10.8
 * sends them (checked against it: its management API's DELETE /api/connections/{name} closes
 * with "CONNECTION_FORCED - <X-Reason>", a stop with "... reason 'shutdown'").
 */
describe('test toolkit: faults', () => {
  describe('without a data dir', () => {
    const b = useBroker();
    afterEach(() => b.running.reset());

    it('closeConnection: connection.close with the chosen code and reason, to the named connection only', async () => {
      const victim = await connectNamed(b.url, 'victim');
      const bystander = await connectNamed(b.url, 'bystander');
      const closed = connectionClosed(victim);
      expect(await b.running.faults.closeConnection('victim', { reason: 'test says bye' })).to.equal(1);
      expect(await closed).to.deep.equal({ code: 320, text: 'CONNECTION_FORCED - test says bye' });
      expect(b.running.inspect.connections().map((c) => c.connectionName)).to.deep.equal(['bystander']);

      const internal = connectionClosed(bystander);
      await b.running.faults.closeConnection((c) => c.connectionName === 'bystander', { code: 541, reason: 'simulated' });
      expect(await internal).to.deep.equal({ code: 541, text: 'INTERNAL_ERROR - simulated' });
    });

    it('closeAllConnections: by default as a broker shutdown closes them', async () => {
      const conns = [await connect(b.url), await connect(b.url)];
      const closed = conns.map(connectionClosed);
      expect(await b.running.faults.closeAllConnections()).to.equal(2);
      for (const c of await Promise.all(closed)) {
        expect(c).to.deep.equal({ code: 320, text: "CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'" });
      }
    });

    it('refuses a code connection.close does not carry, and a connection that is not there', async () => {
      const conn = await connectNamed(b.url, 'here');
      await b.running.faults.closeConnection('here', { code: 200 }).then(() => expect.fail('closed'), (e: Error) => {
        expect(e).to.be.instanceOf(RangeError);
      });
      await b.running.faults.closeConnection('elsewhere').then(() => expect.fail('closed'), (e: Error) => {
        expect(e.message).to.equal("faults.closeConnection: no connection 'elsewhere' is open");
      });
      expect(() => b.running.faults.dropConnection('here', { afterFrames: -1 })).to.throw(RangeError);
      expect(() => b.running.faults.nackPublishes(1.5)).to.throw(RangeError);
      await conn.close();
    });

    it('dropConnection: the socket is reset without connection.close; unacked messages come back redelivered', async () => {
      const worker = await connectNamed(b.url, 'worker');
      const ch = await channel(worker);
      await ch.assertQueue('jobs');
      ch.sendToQueue('jobs', Buffer.from('job'));
      const delivered = new Promise<ConsumeMessage>((resolve) => void ch.consume('jobs', (m) => m && resolve(m)));
      expect((await delivered).fields.redelivered).to.equal(false);
      const closed = connectionClosed(worker);
      expect(b.running.faults.dropConnection('worker')).to.equal(1);
      // No connection.close: the client sees the TCP reset.
      expect((await closed).code).to.equal('ECONNRESET');
      const [back] = b.running.inspect.messages('jobs').ready;
      expect(back).to.include({ redelivered: true });
    });

    it('dropConnection afterFrames: a publish gets through, its confirm never comes back', async () => {
      const publisher = await connectNamed(b.url, 'publisher');
      const ch = await confirmChannel(publisher);
      await ch.assertQueue('orders');
      const closed = connectionClosed(publisher);
      // basic.publish is three frames: method, content header, body.
      b.running.faults.dropConnection('publisher', { afterFrames: 3 });
      expect(await publishConfirmed(ch, 'orders', 'order-1')).to.equal('channel closed');
      expect((await closed).code).to.equal('ECONNRESET');
      expect(b.running.inspect.messages('orders').ready.map((m) => m.body.toString())).to.deep.equal(['order-1']);
    });

    it('nackPublishes: the next n publishes in confirm mode are nacked and not routed', async () => {
      const a = await connectNamed(b.url, 'a');
      const other = await connectNamed(b.url, 'b');
      const cha = await confirmChannel(a);
      const chb = await confirmChannel(other);
      await cha.assertQueue('q');
      b.running.faults.nackPublishes(2);
      expect(await Promise.all(['1', '2', '3'].map((body) => publishConfirmed(cha, 'q', body)))).to.deep.equal(['message nacked', 'message nacked', 'ack']);
      expect(b.running.faults.pendingNacks).to.equal(0);
      expect(b.running.broker.hooks.nackPublish).to.equal(undefined);
      // Scoped to one connection: the other one's publishes go through.
      b.running.faults.nackPublishes(1, { connection: 'a' });
      expect(await publishConfirmed(chb, 'q', '4')).to.equal('ack');
      expect(await publishConfirmed(cha, 'q', '5')).to.equal('message nacked');
      expect(b.running.inspect.messages('q').ready.map((m) => m.body.toString())).to.deep.equal(['3', '4']);
      await a.close();
      await other.close();
    });

    it('holdConfirms: publishes are routed, their confirms wait for releaseConfirms', async () => {
      const conn = await connect(b.url);
      const ch = await confirmChannel(conn);
      await ch.assertQueue('q');
      b.running.faults.holdConfirms();
      const confirms: string[] = [];
      const all = Promise.all(['1', '2', '3'].map((body) => publishConfirmed(ch, 'q', body).then((r) => confirms.push(r))));
      // Two round trips on the same connection: an unheld confirm would be on the wire before the second reply.
      expect((await ch.checkQueue('q')).messageCount).to.equal(3);
      await ch.checkQueue('q');
      expect(confirms).to.deep.equal([]);
      b.running.faults.releaseConfirms();
      await all;
      expect(confirms).to.deep.equal(['ack', 'ack', 'ack']);
      await conn.close();
    });

    it('raiseAlarm / clearAlarm: a connection that publishes under the alarm gets connection.blocked and is not read until it clears', async () => {
      const conn = await connectNamed(b.url, 'pub');
      const ch = await channel(conn);
      await ch.assertQueue('q');
      ch.sendToQueue('q', Buffer.from('before'));
      await b.running.until.queueLength('q', 1);
      for (const [resource, reason] of [['memory', 'low on memory'], ['disk', 'low on disk']] as const) {
        const blocked = event<string>(conn, 'blocked');
        b.running.faults.raiseAlarm(resource);
        ch.sendToQueue('q', Buffer.from(`during ${resource}`));
        expect(await blocked).to.equal(reason);
        expect(b.running.inspect.connections()[0]).to.include({ blocked: true });
        const unblocked = event(conn, 'unblocked');
        const arrived = b.running.until.routed('q');
        b.running.faults.clearAlarm(resource);
        await unblocked;
        expect((await arrived).body.toString()).to.equal(`during ${resource}`);
      }
      expect(b.running.inspect.connections()[0]).to.include({ blocked: false });
      await conn.close();
    });

    it('failNextCommit: the waiting confirm is nacked and publishers blocked "low on disk" until resumeStore', async () => {
      const conn = await connect(b.url);
      const ch = await confirmChannel(conn);
      await ch.assertQueue('durable', { durable: true });
      b.running.faults.failNextCommit();
      const blocked = event<string>(conn, 'blocked');
      expect(await publishConfirmed(ch, 'durable', 'lost?', true)).to.equal('message nacked');
      // The next publish finds the alarm on: the connection is blocked, that publish held back.
      const kept = publishConfirmed(ch, 'durable', 'kept', true);
      expect(await blocked).to.equal('low on disk');
      const unblocked = event(conn, 'unblocked');
      await b.running.faults.resumeStore();
      await unblocked;
      expect(await kept).to.equal('ack');
      await conn.close();
    });
  });

  describe('with a data dir', () => {
    const dir = makeTmpDir('warren-faults-');
    const clock = new FakeClock();
    const b = useBroker({ clock, dataDir: dir, freeDiskSpace: () => 10e9 });
    after(() => removeDir(dir));

    it('failNextCommit fails the LMDB commit; the next disk check finds room and the store writes again', async () => {
      const conn = await connect(b.url);
      const ch = await confirmChannel(conn);
      await ch.assertQueue('durable', { durable: true });
      b.running.faults.failNextCommit();
      const blocked = event<string>(conn, 'blocked');
      expect(await publishConfirmed(ch, 'durable', 'first', true)).to.equal('message nacked');
      // The next publish finds the alarm on: it blocks the connection and waits.
      const second = publishConfirmed(ch, 'durable', 'second', true);
      expect(await blocked).to.equal('low on disk');
      const unblocked = event(conn, 'unblocked');
      // The disk monitor checks at most every 10 s; with room on the disk it resumes the store.
      await clock.advance(10_000);
      await unblocked;
      expect(await second).to.equal('ack');
      // What the failed commit held was written when the store resumed: both are stored.
      expect(b.running.broker.store.messages.countEntries('/\u0000durable').messages).to.equal(2);
      await conn.close();
    });
  });
});
