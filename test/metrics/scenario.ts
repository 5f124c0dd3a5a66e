import { connect as tcpConnect } from 'node:net';
import amqp, { type Channel, type ConfirmChannel, type ConsumeMessage, type GetMessage } from 'amqplib';
import { channelOrder, renameChannels, samples } from './prometheus-text.js';

/**
 * AMQP traffic whose counters are checked against RabbitMQ 3.10.8's: the same scenario ran
 * against the reference (record-reference.ts) and its counters are in
 * fixtures/reference-3.10.8.json. Every step waits for what it causes (a confirm, a delivery,
 * a get-ok), so the counts do not depend on timing. `settle` is called where RabbitMQ applies a
 * step asynchronously (quorum queues, socket closes); Warren needs no wait there.
 *
 * Queues, exchanges and what happens to them:
 * - mt.a: 2 publishes; get no-ack, get + ack, get-empty; redeclared once, checked passively
 * - mt.b (confirm channel): 3 publishes; consumed with manual ack: ack, nack-requeue (redelivered), ack, ack
 * - mt.fan (fanout to mt.fa and mt.fb): 1 confirmed publish; mt.fa consumed with auto-ack
 * - amq.direct: 2 unroutable publishes (1 mandatory, returned) on the plain channel, 2 more on the confirm channel
 * - mt.src (DLX '' → mt.dlq): get + reject (dead-lettered, rejected), a TTL 0 message (expired)
 * - mt.nodlx: a TTL 0 message, no DLX (counted as dead-lettered, strategy disabled)
 * - mt.max (max-length 1, DLX): 2 publishes (one dead-lettered, maxlen)
 * - mt.c: get + reject without DLX (rejected, disabled), deleted after whileOpen
 * - mt.qq (quorum): 2 confirmed publishes; get + ack, get + reject (rejected, disabled), get-empty
 * - mt.qqdl (quorum, delivery-limit 1, DLX): get + nack-requeue twice (delivery_limit)
 * - a channel closed by an error (404), an exclusive queue deleted with its connection, a
 *   failed login and a socket that sends garbage
 */
export const QUEUES = ['mt.a', 'mt.b', 'mt.fa', 'mt.fb', 'mt.dlq', 'mt.src', 'mt.nodlx', 'mt.max', 'mt.c', 'mt.qq', 'mt.qqdl'] as const;

const SCENARIO_QUEUE = new RegExp(`[{,]queue="(${QUEUES.map((q) => q.replace('.', '\\.')).join('|')})"`);

/**
 * The /metrics/per-object samples that belong to the scenario while its connection is open:
 * channel families (channels renamed ch1, ch2, ch3 in the order they opened) and queue
 * families of its named queues (not its server-named exclusive queue), by sampleKey.
 */
export function scenarioPerObject(text: string): Map<string, number> {
  const order = channelOrder(text);
  const out = new Map<string, number>();
  for (const [key, value] of samples(text)) {
    const channelFamily = /^rabbitmq_(channel_|consumer_prefetch|queue_messages_published_total)/.test(key) && !key.startsWith('rabbitmq_channel_process');
    const queueFamily = /^rabbitmq_queue_/.test(key) && SCENARIO_QUEUE.test(key);
    if ((channelFamily || queueFamily) && !/queue="amq\.gen-/.test(key)) out.set(renameChannels(key, order), value);
  }
  return out;
}

export interface ScenarioOptions {
  /** amqp://guest:guest@host:port */
  url: string;
  /** Waits for what the broker does asynchronously (RabbitMQ: a short sleep; Warren: nothing). */
  settle: () => Promise<void>;
  /** Called while the connection is still open, after all the traffic. */
  whileOpen?: () => Promise<void>;
}

export async function runScenario({ url, settle, whileOpen }: ScenarioOptions): Promise<void> {
  const conn = await amqp.connect(url);
  const ch1 = await conn.createChannel();
  const ch2 = await conn.createConfirmChannel();
  const ch3 = await conn.createChannel();
  const returned = waitForEvents(ch1, 'return', 1);
  const returnedConfirm = waitForEvents(ch2, 'return', 1);

  for (const q of QUEUES) await ch1.deleteQueue(q);
  await ch1.deleteExchange('mt.fan');
  await ch1.assertQueue('mt.a');
  await ch1.assertQueue('mt.b');
  await ch1.assertQueue('mt.fa');
  await ch1.assertQueue('mt.fb');
  await ch1.assertQueue('mt.dlq');
  await ch1.assertQueue('mt.src', { deadLetterExchange: '', deadLetterRoutingKey: 'mt.dlq' });
  await ch1.assertQueue('mt.nodlx');
  await ch1.assertQueue('mt.max', { maxLength: 1, deadLetterExchange: '', deadLetterRoutingKey: 'mt.dlq' });
  await ch1.assertQueue('mt.c');
  await ch1.assertQueue('mt.qq', { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await ch1.assertQueue('mt.qqdl', {
    durable: true, deadLetterExchange: '', deadLetterRoutingKey: 'mt.dlq', arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 1 },
  });
  await ch1.assertExchange('mt.fan', 'fanout', { durable: false });
  await ch1.bindQueue('mt.fa', 'mt.fan', '');
  await ch1.bindQueue('mt.fb', 'mt.fan', '');
  await ch1.assertQueue('mt.a'); // declared again: counted as declared, not created
  await ch1.checkQueue('mt.a'); // passive: not counted
  await ch1.assertQueue('', { exclusive: true }); // deleted with the connection

  // Plain publishes: routed, dropped, returned.
  ch1.publish('', 'mt.a', Buffer.from('a1'));
  ch1.publish('', 'mt.a', Buffer.from('a2'));
  ch1.publish('amq.direct', 'nowhere', Buffer.from('dropped'));
  ch1.publish('amq.direct', 'nowhere', Buffer.from('returned'), { mandatory: true });
  await returned;

  // Confirmed publishes, one of them to two queues.
  for (let i = 0; i < 3; i++) ch2.publish('', 'mt.b', Buffer.from(`b${i}`));
  ch2.publish('mt.fan', '', Buffer.from('fan'));
  ch2.publish('amq.direct', 'nowhere', Buffer.from('confirm-returned'), { mandatory: true });
  ch2.publish('amq.direct', 'nowhere', Buffer.from('confirm-dropped'));
  await ch2.waitForConfirms();
  await returnedConfirm;

  // basic.get: no-ack, manual ack, empty.
  await get(ch1, 'mt.a', true);
  ch1.ack(await get(ch1, 'mt.a', false));
  expectEmpty(await ch1.get('mt.a'));

  // A consumer with manual acks; one message comes back redelivered.
  const deliveries: ConsumeMessage[] = [];
  let fourth: () => void = () => {};
  const gotFour = new Promise<void>((resolve) => (fourth = resolve));
  let three: () => void = () => {};
  const gotThree = new Promise<void>((resolve) => (three = resolve));
  const { consumerTag } = await ch3.consume('mt.b', (m) => {
    if (!m) return;
    deliveries.push(m);
    if (deliveries.length === 3) three();
    if (deliveries.length === 4) fourth();
  });
  await gotThree;
  ch3.ack(deliveries[0]!);
  ch3.nack(deliveries[1]!, false, true);
  await gotFour;
  if (!deliveries[3]!.fields.redelivered) throw new Error('the requeued message should come back redelivered');
  ch3.ack(deliveries[2]!);
  ch3.ack(deliveries[3]!);
  await ch3.cancel(consumerTag);

  // A no-ack consumer.
  let delivered: () => void = () => {};
  const gotFan = new Promise<void>((resolve) => (delivered = resolve));
  const fan = await ch3.consume('mt.fa', () => delivered(), { noAck: true });
  await gotFan;
  await ch3.cancel(fan.consumerTag);

  // Dead-lettering: rejected (DLX), expired (DLX and none), maxlen (DLX), rejected (no DLX).
  ch1.publish('', 'mt.src', Buffer.from('rejected'));
  ch1.reject(await get(ch1, 'mt.src', false), false);
  ch1.publish('', 'mt.src', Buffer.from('expired'), { expiration: '0' });
  ch1.publish('', 'mt.nodlx', Buffer.from('expired'), { expiration: '0' });
  ch1.publish('', 'mt.max', Buffer.from('x1'));
  ch1.publish('', 'mt.max', Buffer.from('x2'));
  ch1.publish('', 'mt.c', Buffer.from('c'));
  ch1.reject(await get(ch1, 'mt.c', false), false);
  await ch1.checkQueue('mt.max');

  // Quorum queues (confirmed, so the messages are in before they are fetched).
  ch2.publish('', 'mt.qq', Buffer.from('q1'));
  ch2.publish('', 'mt.qq', Buffer.from('q2'));
  ch2.publish('', 'mt.qqdl', Buffer.from('limited'));
  await ch2.waitForConfirms();
  ch1.ack(await get(ch1, 'mt.qq', false, settle));
  ch1.reject(await get(ch1, 'mt.qq', false, settle), false);
  await settle();
  expectEmpty(await ch1.get('mt.qq'));
  ch1.nack(await get(ch1, 'mt.qqdl', false, settle), false, true);
  ch1.nack(await get(ch1, 'mt.qqdl', false, settle), false, true);
  await settle();

  // A channel closed by an error.
  const ch4 = await conn.createChannel();
  ch4.on('error', () => {});
  const ch4Closed = new Promise<void>((resolve) => ch4.once('close', () => resolve()));
  await ch4.checkQueue('mt.missing').catch(() => undefined);
  await ch4Closed;
  await settle();

  await whileOpen?.();
  // A queue deleted (after whileOpen: when RabbitMQ's management API counts a deleted queue's
  // gets in its channel's stats depends on timing).
  await ch1.deleteQueue('mt.c');
  await conn.close();

  // A failed login, and a socket that is not AMQP at all.
  await amqp.connect(url.replace('guest:guest', 'guest:wrong')).then(
    (c) => c.close().then(() => { throw new Error('the login should fail'); }),
    () => undefined,
  );
  await garbage(url);
  await settle();
}

async function get(ch: Channel, queue: string, noAck: boolean, settle?: () => Promise<void>): Promise<GetMessage> {
  for (let tries = 0; tries < 20; tries++) {
    const m = await ch.get(queue, { noAck });
    if (m) return m;
    if (!settle) break;
    await settle();
  }
  throw new Error(`${queue}: expected a message`);
}

function expectEmpty(m: GetMessage | false): void {
  if (m !== false) throw new Error('expected basic.get-empty');
}

function waitForEvents(ch: Channel | ConfirmChannel, event: string, count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    ch.on(event, () => {
      if (++seen === count) resolve();
    });
  });
}

/** A TCP connection that sends 8 bytes that are not an AMQP header, and its close. */
function garbage(url: string): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = tcpConnect(Number(port), hostname, () => socket.write('GARBAGE!'));
    socket.on('data', () => {});
    // RabbitMQ answers with its protocol header and may reset the socket.
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
}
