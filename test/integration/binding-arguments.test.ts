import { expect } from 'chai';
import { join } from 'node:path';
import { startBroker } from '../../src/broker.js';
import { encodeTable, F } from '../../src/frame/field-table.js';
import { openLmdbStore } from '../../src/store/lmdb/index.js';
import { confirmChannel, connect } from '../support/amqp.js';
import { useTmpDir } from '../support/tmp-dir.js';

/**
 * A binding's arguments are kept sorted, as RabbitMQ's rabbit_binding keeps them: the same
 * arguments in another order are the same binding (conformance: routing/binding-arguments-in-
 * any-order). A binding stored before that, its arguments in another order, is stored again
 * sorted as it is recovered, so an unbind after the restart removes it for good.
 */
describe('binding arguments: sorted, also for bindings stored unsorted', function () {
  this.timeout(30000);
  const dataDir = useTmpDir('warren-binding-args-');

  it('recovers a binding stored with its arguments unsorted, lists it sorted, and an unbind in either order removes it for good', async () => {
    const first = await startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path });
    let conn = await connect(first.url);
    let ch = await confirmChannel(conn);
    await ch.assertExchange('args.x', 'direct', { durable: true });
    await ch.assertQueue('args.q', { durable: true });
    await conn.close();
    await first.close();
    // The record an earlier Warren wrote for bind(args.q, args.x, 'k', {b: '2', a: '1'}).
    const store = openLmdbStore(join(dataDir.path, 'store'));
    const unsorted = { vhost: '/', source: 'args.x', destination: 'args.q', destinationKind: 'queue' as const, routingKey: 'k', arguments: encodeTable({ b: F.str('2'), a: F.str('1') }) };
    store.metadata.putBinding(unsorted);
    await store.close();

    const second = await startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path });
    const bindings = second.broker.vhosts.get('/')!.listBindings().filter((b) => b.source.name === 'args.x');
    expect(bindings.map((b) => Object.keys(b.args))).to.deep.equal([['a', 'b']]);
    conn = await connect(second.url);
    ch = await confirmChannel(conn);
    await ch.unbindQueue('args.q', 'args.x', 'k', { b: '2', a: '1' });
    await conn.close();
    await second.close();

    const third = await startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path });
    try {
      expect(third.broker.vhosts.get('/')!.listBindings().filter((b) => b.source.name === 'args.x')).to.deep.equal([]);
    } finally {
      await third.close();
    }
  });
});
