/**
 * One dynamic shovel at work (rabbit_shovel_worker + rabbit_amqp091_shovel): an AMQP 0-9-1
 * client (amqplib) at both ends. It consumes from the source queue (or from a server-named
 * exclusive queue bound to the source exchange), republishes each message to the destination
 * and acknowledges it at the source as the ack mode says:
 *
 * - on-confirm: the destination channel is in confirm mode; a message is acked at the source
 *   only once the destination confirmed it, and nacked (requeued) when the destination nacks it;
 * - on-publish: acked at the source as soon as it is published;
 *   (in both, acks at the source are coalesced into multiple acks: source-acks.ts)
 * - no-ack: consumed without acknowledgements.
 *
 * When either connection goes away the worker closes both (whatever the source had not acked is
 * requeued there), reports `terminated` with the reason and tries again after reconnect-delay
 * seconds on the injected clock. src-delete-after (a number, or the queue's length when the
 * worker connects) ends the shovel once that many messages were transferred (acked at the
 * source); the supervisor then deletes its parameter, as RabbitMQ's autodelete does.
 */
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage, Options } from 'amqplib';
import type { Clock, Timer } from '../clock.js';
import type { Logger } from '../log.js';
import { displayUri } from './amqp-uri.js';
import type { ShovelDefinition } from './shovel-parameters.js';
import { SourceAcks } from './source-acks.js';

export type ShovelState = 'starting' | 'running' | 'terminated';

/** What /api/shovels shows of a running shovel, in RabbitMQ's key order. */
export type RunningInfo = Array<[string, string]>;

export interface ShovelStatus {
  state: ShovelState;
  /** Wall-clock milliseconds of the last state report. */
  timestamp: number;
  /** `running`: src_uri, src_protocol, dest_protocol, dest_uri and the endpoints. */
  info?: RunningInfo;
  /** `terminated`: RabbitMQ's reason, as ~p prints it. */
  reason?: string;
}

/** Messages moved since the shovel started (Warren's extension: the UI shows them). */
export interface ShovelCounts {
  /** Published to the destination. */
  forwarded: number;
  /** Acknowledged at the source (on-confirm: confirmed by the destination). */
  acked: number;
  /** Published, waiting for the destination's confirm. */
  pending: number;
  /** Times a connection was lost or could not be made. */
  restarts: number;
}

export interface WorkerDeps {
  clock: Clock;
  log: Logger;
  /** Where amqplib connects for a shovel URI (`amqp://` with no host: the local broker). */
  connectTarget(uri: string): ConnectTarget;
  /** rabbit_nodes:cluster_name(): the x-shovelled header's shovelled-by. */
  clusterName(): string;
  /** src-delete-after reached: the supervisor deletes the parameter. */
  onDone(): void;
}

/** An amqplib URL, and for a direct connection the local socket it goes over instead of its host. */
export interface ConnectTarget {
  url: string;
  path?: string;
}

/** amqplib, loaded when the first shovel connects: a broker without shovels starts without it. */
let client: Promise<typeof import('amqplib')> | undefined;
function amqplib(): Promise<typeof import('amqplib')> {
  return (client ??= import('amqplib').then((m) => m.default ?? m));
}

class Stop extends Error {}

/** No URI of one end could be connected to (rabbit_shovel_worker's init: {stop, shutdown}). */
class ConnectFailed extends Error {}

export class ShovelWorker {
  private status: ShovelStatus;
  readonly counts: ShovelCounts = { forwarded: 0, acked: 0, pending: 0, restarts: 0 };
  private stopped = false;
  private retryTimer: Timer | undefined;
  private src: ChannelModel | undefined;
  private dest: ChannelModel | undefined;
  private channels: Channel[] = [];
  /** The running session's graceful stop: no more deliveries, then no more pending confirms. */
  private quiesce: (() => Promise<void>) | undefined;
  /** Sends the running session's settled source acks now (before its channels close). */
  private flushAcks: (() => void) | undefined;
  private readonly pendingWaiters: Array<() => void> = [];
  /** Resolves the running session's wait when a connection is lost. */
  private lost: ((reason: string) => void) | undefined;

  constructor(
    readonly def: ShovelDefinition,
    private readonly deps: WorkerDeps,
  ) {
    this.status = { state: 'starting', timestamp: deps.clock.now() };
  }

  get current(): ShovelStatus {
    return this.status;
  }

  /** Starts the first session. */
  start(): void {
    void this.session();
  }

  /**
   * Stops for good (parameter deleted or changed, broker closing): cancels the consumer, waits
   * (up to 5 s) for the destination to confirm what was published, so the source does not
   * deliver those again, and closes both connections.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.retryTimer?.cancel();
    await this.quiesce?.();
    this.lost?.('stopped');
    await this.closeConnections();
  }

  private report(state: ShovelState, extra: Partial<ShovelStatus> = {}): void {
    this.status = { state, timestamp: this.deps.clock.now(), ...extra };
    for (const fn of [...this.watchers]) fn(this.status);
  }

  private readonly watchers = new Set<(s: ShovelStatus) => void>();

  /** Calls fn on every state report from now on; returns the unsubscribe. */
  watch(fn: (s: ShovelStatus) => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  private async closeConnections(): Promise<void> {
    // Acks settled this turn go out before the channels close: a message the destination
    // confirmed must not be requeued at the source (it would arrive twice).
    this.flushAcks?.();
    this.flushAcks = undefined;
    const conns = [this.src, this.dest];
    const channels = this.channels;
    this.src = this.dest = undefined;
    this.channels = [];
    // Channels first: amqplib writes a connection.close ahead of what its channels still buffer,
    // so acks at the source and publishes to the destination are flushed by closing them.
    await Promise.all(channels.map((ch) => ch.close().catch(() => {})));
    await Promise.all(conns.map(async (c) => {
      if (!c) return;
      c.removeAllListeners('close');
      c.on('error', () => {});
      try {
        await c.close();
      } catch {
        // already closed
      }
    }));
  }

  private async connect(uris: string[], which: 'source' | 'destination'): Promise<{ conn: ChannelModel; uri: string }> {
    let last: unknown;
    for (const uri of uris) {
      try {
        // rabbit_amqp091_shovel:get_connection_name: "Shovel <name>" (/api/connections, the UI).
        const { url, path } = this.deps.connectTarget(uri);
        const conn = await (await amqplib()).connect(url, { path, clientProperties: { connection_name: `Shovel ${this.def.name}` } });
        return { conn, uri };
      } catch (e) {
        last = e;
        this.deps.log.warn({ shovel: this.def.name, vhost: this.def.vhost, uri: displayUri(uri), err: (e as Error).message }, `shovel could not connect to its ${which}`);
      }
    }
    throw new ConnectFailed(last instanceof Error ? last.message : 'failed_to_connect_using_provided_uris');
  }

  /** One connect-transfer-fail cycle; schedules the next unless stopped. */
  private async session(): Promise<void> {
    if (this.stopped) return;
    this.report('starting');
    let reason: string;
    let connected = true;
    try {
      reason = await this.run();
    } catch (e) {
      connected = !(e instanceof ConnectFailed);
      reason = e instanceof Stop ? 'stopped' : errorReason(e);
    }
    this.quiesce = undefined;
    await this.closeConnections();
    this.counts.pending = 0;
    for (const w of this.pendingWaiters.splice(0)) w();
    if (this.stopped) return;
    if (reason === 'autodelete') {
      this.stopped = true;
      this.deps.log.info({ shovel: this.def.name, vhost: this.def.vhost }, 'shovel is stopping (it was configured to autodelete and transfer is completed)');
      this.deps.onDone();
      return;
    }
    this.counts.restarts++;
    this.deps.log.error({ shovel: this.def.name, vhost: this.def.vhost, reason }, 'shovel is stopping');
    // A worker that could not connect stays `starting` while it retries, as RabbitMQ's does (its
    // init stops with `shutdown`, which reports nothing); one that connected and then failed (a
    // declaration refused, a connection lost) reports `terminated` and why (terminate/2).
    if (connected) this.report('terminated', { reason });
    else this.report('starting');
    this.retryTimer = this.deps.clock.setTimeout(() => void this.session(), Math.max(0, this.def.reconnectDelay) * 1000);
  }

  /** Connects, declares, consumes; resolves with the reason the session ended. */
  private async run(): Promise<string> {
    const def = this.def;
    const lost = new Promise<string>((resolve) => (this.lost = resolve));
    const src = await this.connect(def.srcUris, 'source');
    this.src = src.conn;
    if (this.stopped) throw new Stop();
    const dest = await this.connect(def.destUris, 'destination');
    this.dest = dest.conn;
    if (this.stopped) throw new Stop();
    for (const [conn, name] of [[src.conn, 'source'], [dest.conn, 'destination']] as const) {
      conn.on('error', () => {});
      conn.on('close', (err?: Error) => this.lost?.(err ? closeReason(err, name) : `"${name} connection failed"`));
    }
    const unsendable = unsendableProperty(def.publishProperties);
    if (unsendable) throw new Error(`dest-publish-properties: ${unsendable}`);
    // Destination first (rabbit_shovel_worker: init_dest before init_source).
    if (def.destQueue !== undefined) await ensureQueue(dest.conn, def.destQueue);
    const onConfirm = def.ackMode === 'on-confirm';
    const out: Channel | ConfirmChannel = onConfirm ? await dest.conn.createConfirmChannel() : await dest.conn.createChannel();
    out.on('error', () => {});
    const inCh = await src.conn.createChannel();
    inCh.on('error', () => {});
    // Closed source channel first, then the destination's (closeConnections).
    this.channels = [inCh, out];
    let queue: string;
    if (def.srcQueue !== undefined) {
      await ensureQueue(src.conn, def.srcQueue);
      queue = def.srcQueue;
    } else {
      queue = (await inCh.assertQueue('', { exclusive: true, durable: false, autoDelete: false })).queue;
      await inCh.bindQueue(queue, def.srcExchange!, def.srcExchangeKey);
    }
    const noAck = def.ackMode === 'no-ack';
    if (!noAck) await inCh.prefetch(def.srcPrefetchCount, false);
    let remaining: number;
    if (def.srcDeleteAfter === 'never') remaining = Infinity;
    else if (def.srcDeleteAfter === 'queue-length') remaining = (await inCh.checkQueue(queue)).messageCount;
    else remaining = def.srcDeleteAfter;
    if (remaining === 0) return 'autodelete';
    let remainingUnacked = remaining;

    const srcUri = src.uri;
    const destUri = dest.uri;
    const forwardTable = forwardHeaderTable(def, this.deps.clusterName(), srcUri, destUri);
    const done = new Promise<string>((resolve) => {
      const settled = (n: number) => {
        remaining -= n;
        if (remaining <= 0) resolve('autodelete');
      };
      const acks = new SourceAcks(inCh, (n) => {
        this.counts.acked += n;
        settled(n);
      });
      this.flushAcks = () => acks.flushNow();
      let consumerTag: string | undefined;
      let paused = false;
      const deliver = (msg: ConsumeMessage | null) => {
        if (!msg) {
          this.lost?.('"consumer cancelled by the source"');
          return;
        }
        if (remainingUnacked <= 0) return; // the rest are requeued when the connection closes
        remainingUnacked--;
        const exchange = def.destQueue !== undefined ? '' : (def.destExchange ?? msg.fields.exchange);
        const routingKey = def.destQueue ?? def.destExchangeKey ?? msg.fields.routingKey;
        const props = publishOptions(msg, def.publishProperties, forwardTable, def.addTimestampHeader, this.deps.clock);
        this.counts.forwarded++;
        let room: boolean;
        if (onConfirm) {
          this.counts.pending++;
          const ref = acks.track(msg);
          room = (out as ConfirmChannel).publish(exchange, routingKey, msg.content, props, (err) => {
            if (this.src !== src.conn) return; // a later session: the source requeued it already
            this.counts.pending--;
            acks.settle(ref, !err);
            if (this.counts.pending === 0 && this.pendingWaiters.length > 0) {
              acks.flushNow(); // before the waiter closes the channels
              for (const w of this.pendingWaiters.splice(0)) w();
            }
          });
        } else {
          room = out.publish(exchange, routingKey, msg.content, props);
          if (noAck) {
            this.counts.acked++;
            settled(1);
          } else acks.settle(acks.track(msg), true);
        }
        // no-ack has no prefetch to bound what is in flight: stop consuming while the
        // destination's socket is full.
        if (!room && noAck && !paused && consumerTag) {
          paused = true;
          const tagNow = consumerTag;
          void inCh.cancel(tagNow).catch(() => {});
          out.once('drain', () => {
            paused = false;
            if (this.stopped || remainingUnacked <= 0) return;
            void inCh.consume(queue, deliver, { noAck: true }).then((ok) => (consumerTag = ok.consumerTag), () => {});
          });
        }
      };
      void inCh.consume(queue, deliver, { noAck }).then((ok) => (consumerTag = ok.consumerTag), (e: Error) => this.lost?.(errorReason(e)));
      this.quiesce = async () => {
        if (consumerTag) await inCh.cancel(consumerTag).catch(() => {});
        remainingUnacked = 0;
        if (this.counts.pending === 0) return;
        await new Promise<void>((resolve) => {
          this.pendingWaiters.push(resolve);
          void lost.then(() => resolve());
          setTimeout(resolve, 5000).unref();
        });
      };
    });
    this.report('running', { info: runningInfo(def, srcUri, destUri) });
    this.deps.log.info({ shovel: def.name, vhost: def.vhost }, 'shovel running');
    return await Promise.race([lost, done]);
  }
}

/** rabbit_shovel_parameters:ensure_queue: a passive declare, and a durable declare if it is missing. */
async function ensureQueue(conn: ChannelModel, queue: string): Promise<void> {
  const ch = await conn.createChannel();
  ch.on('error', () => {});
  try {
    await ch.checkQueue(queue);
    await ch.close().catch(() => {});
  } catch (e) {
    if (!/NOT_FOUND|404/.test((e as Error).message)) throw e;
    const ch2 = await conn.createChannel();
    ch2.on('error', () => {});
    await ch2.assertQueue(queue, { durable: true });
    await ch2.close().catch(() => {});
  }
}

/** The key-value pairs of the x-shovelled table (rabbit_shovel_util:update_headers), in RabbitMQ's order. */
function forwardHeaderTable(def: ShovelDefinition, clusterName: string, srcUri: string, destUri: string): Record<string, string> | undefined {
  if (!def.addForwardHeaders) return undefined;
  const t: Record<string, string> = {
    'shovelled-by': clusterName,
    'shovel-type': 'dynamic',
    'shovel-name': def.name,
    'shovel-vhost': def.vhost,
    'src-uri': displayUri(srcUri),
    'dest-uri': displayUri(destUri),
  };
  if (def.srcQueue !== undefined) t['src-queue'] = def.srcQueue;
  else {
    t['src-exchange'] = def.srcExchange!;
    t['src-exchange-key'] = def.srcExchangeKey;
  }
  if (def.destExchange !== undefined) t['dest-exchange'] = def.destExchange;
  if (def.destExchangeKey !== undefined) t['dest-exchange-key'] = def.destExchangeKey;
  if (def.destQueue !== undefined) t['dest-queue'] = def.destQueue;
  return t;
}

/**
 * dest-publish-properties' P_basic field names as amqplib's publish options. cluster_id has
 * none: amqplib does not send it (it is deprecated in AMQP 0-9-1).
 */
const PUBLISH_OPTIONS: Readonly<Record<string, keyof Options.Publish>> = {
  content_type: 'contentType',
  content_encoding: 'contentEncoding',
  delivery_mode: 'deliveryMode',
  priority: 'priority',
  correlation_id: 'correlationId',
  reply_to: 'replyTo',
  expiration: 'expiration',
  message_id: 'messageId',
  timestamp: 'timestamp',
  type: 'type',
  user_id: 'userId',
  app_id: 'appId',
};

/**
 * Why a validated dest-publish-properties value cannot go on the wire (a shortstr over 255
 * bytes, an octet or a timestamp out of range), or undefined. RabbitMQ's validation lets such
 * values through and its shovel then fails as it publishes; Warren's session fails before it
 * consumes (amqplib would throw in the middle of a delivery), and is retried like any failure.
 */
function unsendableProperty(props: Readonly<Record<string, string | number>>): string | undefined {
  for (const [k, v] of Object.entries(props)) {
    if (typeof v === 'string') {
      if (Buffer.byteLength(v) > 255) return `${k} is longer than 255 bytes`;
    } else if (k === 'timestamp') {
      if (!Number.isSafeInteger(v) || v < 0) return `${k} ${v} is not a timestamp`;
    } else if (!(v >= 0 && v <= 255)) return `${k} ${v} is out of range (0-255)`;
  }
  return undefined;
}

/**
 * The delivered message's properties as publish options: dest-publish-properties set over them
 * (rabbit_shovel_parameters:set_properties), then the forwarding headers added.
 */
function publishOptions(msg: ConsumeMessage, set: Readonly<Record<string, string | number>>, forward: Record<string, string> | undefined, timestamp: boolean, clock: Clock): Options.Publish {
  const p = msg.properties;
  const o: Options.Publish = {};
  if (p.contentType !== undefined) o.contentType = p.contentType;
  if (p.contentEncoding !== undefined) o.contentEncoding = p.contentEncoding;
  if (p.deliveryMode !== undefined) o.deliveryMode = p.deliveryMode;
  if (p.priority !== undefined) o.priority = p.priority;
  if (p.correlationId !== undefined) o.correlationId = p.correlationId;
  if (p.replyTo !== undefined) o.replyTo = p.replyTo;
  if (p.expiration !== undefined) o.expiration = p.expiration;
  if (p.messageId !== undefined) o.messageId = p.messageId;
  if (p.timestamp !== undefined) o.timestamp = p.timestamp;
  if (p.type !== undefined) o.type = p.type;
  if (p.userId !== undefined) o.userId = p.userId;
  if (p.appId !== undefined) o.appId = p.appId;
  for (const [k, v] of Object.entries(set)) {
    const option = PUBLISH_OPTIONS[k];
    if (option) (o as Record<string, unknown>)[option] = v;
  }
  let headers = p.headers as Record<string, unknown> | undefined;
  if (forward || timestamp) {
    headers = { ...(headers ?? {}) };
    if (forward) {
      // rabbit_basic:prepend_table_header: the new table goes first in the header's array.
      const prior = headers['x-shovelled'];
      headers['x-shovelled'] = [forward, ...(Array.isArray(prior) ? prior : [])];
    }
    if (timestamp) headers['x-shovelled-timestamp'] = { '!': 'long', value: Math.floor(clock.now() / 1000) };
  }
  if (headers !== undefined) o.headers = headers;
  return o;
}

/** running's properties: rabbit_shovel_worker:report_running, with the endpoints (source, then destination). */
function runningInfo(def: ShovelDefinition, srcUri: string, destUri: string): RunningInfo {
  const info: RunningInfo = [
    ['src_uri', displayUri(srcUri)],
    ['src_protocol', 'amqp091'],
    ['dest_protocol', 'amqp091'],
    ['dest_uri', displayUri(destUri)],
  ];
  if (def.srcQueue !== undefined) info.push(['src_queue', def.srcQueue]);
  else info.push(['src_exchange', def.srcExchange!], ['src_exchange_key', def.srcExchangeKey]);
  if (def.destExchange !== undefined) info.push(['dest_exchange', def.destExchange]);
  if (def.destExchangeKey !== undefined) info.push(['dest_exchange_key', def.destExchangeKey]);
  if (def.destQueue !== undefined) info.push(['dest_queue', def.destQueue]);
  return info;
}

/**
 * A connection closed by the server, as RabbitMQ's worker prints its exit reason with ~p:
 * {shutdown,{server_initiated_close,320,<<"CONNECTION_FORCED - ...">>}} (RabbitMQ breaks the
 * line after the code; Warren prints it on one line).
 */
function closeReason(err: Error, which: 'source' | 'destination'): string {
  const m = /^Connection closed: (\d+) \([^)]*\)(?: with message "(.*)")?/s.exec(err.message);
  const code = (err as { code?: number }).code;
  if (m) return `{shutdown,{server_initiated_close,${m[1]},<<"${m[2] ?? ''}">>}}`;
  if (code !== undefined) return `{shutdown,{server_initiated_close,${code},<<"${err.message}">>}}`;
  return `"${which} connection failed"`;
}

function errorReason(e: unknown): string {
  const err = e as Error & { code?: string | number };
  if (typeof err.code === 'string' && /^E[A-Z]+$/.test(err.code)) return `{error,${err.code.toLowerCase()}}`;
  // A channel error answering a method the shovel called (amqplib: "Operation failed:
  // QueueDeclare; 403 (ACCESS-REFUSED) ..."): the Erlang client exits with
  // {{shutdown, {server_initiated_close, Code, Text}}, _}, which terminate/2 reports so.
  if (typeof err.code === 'number' && /^Operation failed: /.test(err.message ?? '')) return '"needed a restart"';
  if (/Connection closed/.test(err.message ?? '')) return closeReason(err, 'source');
  return JSON.stringify(String(err.message ?? e));
}
