import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { useBroker } from '../support/broker.js';
import { ORDER_TTL_MS, OrderPublisher, OrderWorker, type Order } from './fixtures/orders-app.js';

/**
 * The pattern end to end (docs/testing.md): an application — a publisher that retries until
 * confirmed, an idempotent worker (fixtures/orders-app.ts) — tested against a real broker over
 * AMQP for the failures it must survive, each injected where it happens, each waited for by a
 * broker event. No sleeps: time moves only when the test moves the fake clock.
 */
describe('test toolkit, end to end: the orders application', () => {
  const clock = new FakeClock();
  const b = useBroker({ clock });
  let publisher: OrderPublisher;
  let worker: OrderWorker | undefined;

  beforeEach(() => {
    publisher = new OrderPublisher(b.url);
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
    await publisher.close();
    await b.running.reset();
  });

  const ids = (orders: Order[]): string[] => orders.map((o) => o.id);

  it('a connection dropped before the confirm: the order is published again and processed once', async () => {
    worker = new OrderWorker(b.url);
    await worker.start();
    await publisher.publish({ id: 'A-1', item: 'tea' });
    // The next publish reaches the broker (three frames), then the connection drops before the confirm goes out.
    b.running.faults.dropConnection('order-publisher', { afterFrames: 3 });
    await publisher.publish({ id: 'A-2', item: 'coffee' });
    await b.running.until.queueDrained('orders');

    expect(publisher).to.include({ connections: 2, attempts: 3 });
    expect(ids(worker.processed)).to.deep.equal(['A-1', 'A-2']);
    // The broker had taken the first attempt: the worker saw A-2 twice and processed it once.
    expect(worker.duplicates).to.equal(1);
  });

  it('a nacked publish: the order is published again on the same connection, and arrives once', async () => {
    worker = new OrderWorker(b.url);
    await worker.start();
    b.running.faults.nackPublishes(1);
    await publisher.publish({ id: 'B-1', item: 'milk' });
    await b.running.until.queueDrained('orders');

    expect(publisher).to.include({ connections: 1, attempts: 2 });
    expect(ids(worker.processed)).to.deep.equal(['B-1']);
    expect(worker.duplicates).to.equal(0); // a nacked message was never routed
  });

  it('an ack lost with the worker\'s connection: the order is redelivered and not processed twice', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    worker = new OrderWorker(b.url, (order) => (order.id === 'C-1' ? gate : Promise.resolve()));
    await worker.start();
    await publisher.publish({ id: 'C-1', item: 'bread' });
    // The worker holds C-1, unacknowledged; its connection drops while it works on it.
    await b.running.until.queue('orders', (q) => q.unacked === 1, { description: 'have C-1 delivered' });
    b.running.faults.dropConnection('order-worker');
    release(); // the worker finishes C-1; its ack has no connection to go on
    await b.running.until.queueDrained('orders');

    expect(ids(worker.processed)).to.deep.equal(['C-1']);
    expect(worker).to.include({ redeliveries: 1, duplicates: 1 });
  });

  it('an order nobody processes expires to orders.expired after its TTL', async () => {
    await publisher.publish({ id: 'D-1', item: 'cake' });
    await clock.advance(ORDER_TTL_MS - 1);
    expect(b.running.inspect.queue('orders')).to.include({ ready: 1 });
    await clock.advance(1);

    expect(b.running.inspect.queue('orders')).to.include({ ready: 0 });
    const [expired] = b.running.inspect.messages('orders.expired').ready;
    expect(JSON.parse(expired!.body.toString())).to.deep.equal({ id: 'D-1', item: 'cake' });
    expect(expired!.properties).to.include({ messageId: 'D-1', contentType: 'application/json' });
    expect(expired!.xDeath).to.have.length(1);
    expect(expired!.xDeath![0]).to.include({ reason: 'expired', queue: 'orders', count: 1 });
  });
});
