/**
 * What a case gets: a trace to write observable facts into, unique resource names, amqplib
 * connections and channels (each with a wire tap), raw clients, and waiting helpers that wait on
 * events or poll with a deadline instead of sleeping.
 */
import amqp, { type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage, type GetMessage, type Message } from 'amqplib';
import { HttpAdmin, type BrokerAdmin } from './admin.js';
import { ManagementClient, type HttpOutcome } from './management.js';
import { RawClient, type CloseInfo, type HandshakeOptions } from './raw-client.js';
import { typedTable } from './typed.js';
import { WireTap } from './wire-tap.js';

export type TraceEntry = Record<string, unknown>;

/** How an operation ended when it did not succeed. */
export interface Failure {
  closed: 'channel' | 'connection' | 'none';
  code?: number;
  text?: string;
  classId?: number;
  methodId?: number;
  /** A client-side error with no close behind it (e.g. "Channel closed"). */
  error?: string;
}

interface ChannelState {
  conn: ChannelModel;
  tap: WireTap;
  error?: { code: number; text: string; classId: number; methodId: number };
  closed: Promise<void>;
  isClosed: boolean;
}

const REPLY_TEXT = /with message "([\s\S]*)"$/;

export class CaseContext {
  readonly trace: TraceEntry[] = [];
  private readonly conns: ChannelModel[] = [];
  private readonly taps = new Map<ChannelModel, WireTap>();
  private readonly connClosed = new Map<ChannelModel, Promise<void>>();
  private readonly channels = new WeakMap<Channel, ChannelState>();
  private readonly raws: RawClient[] = [];
  readonly queues = new Set<string>();
  readonly exchanges = new Set<string>();
  private defaultConn: ChannelModel | undefined;

  /** Users and vhosts made through the admin, deleted after the case. */
  readonly users = new Set<string>();
  readonly vhosts = new Set<string>();

  /** Policies (kind, name) the case set, deleted after it. */
  readonly policies: Array<['policies' | 'operator-policies', string]> = [];

  constructor(
    readonly url: string,
    readonly caseName: string,
    readonly token: string,
    /** The management API's base URL, when given explicitly (see lib/management.ts). */
    readonly mgmtUrl?: string,
  ) {}

  /** Creates users, permissions and vhosts on the broker under test through its management API (lib/admin.ts). */
  get admin(): BrokerAdmin {
    return new HttpAdmin(this.mgmt());
  }

  /** A user name unique to this run and case, deleted after the case. */
  user(suffix = 'u'): string {
    const n = this.name(suffix);
    this.users.add(n);
    return n;
  }

  /** A vhost name unique to this run and case, deleted after the case. */
  vhost(suffix = 'v'): string {
    const n = this.name(suffix);
    this.vhosts.add(n);
    return n;
  }

  /** The case's URL with other credentials (and vhost). */
  urlFor(user: string, password: string, vhost?: string): string {
    const u = new URL(this.url);
    u.username = user;
    u.password = password;
    if (vhost !== undefined) u.pathname = `/${encodeURIComponent(vhost)}`;
    return u.toString();
  }

  // --- management API (policies) -------------------------------------------------------------

  /** The broker's management API (see lib/management.ts for where it is looked for). */
  mgmt(): ManagementClient {
    return ManagementClient.forAmqpUrl(this.url, this.mgmtUrl);
  }

  /**
   * PUT /api/policies/%2F/{name} (or /api/operator-policies) with body; the policy is deleted
   * after the case. Resolves with {status, body}.
   */
  async setPolicy(name: string, body: unknown, kind: 'policies' | 'operator-policies' = 'policies'): Promise<HttpOutcome> {
    if (!this.policies.some(([k, n]) => k === kind && n === name)) this.policies.push([kind, name]);
    return this.mgmt().request('PUT', `/api/${kind}/%2F/${encodeURIComponent(name)}`, body);
  }

  async deletePolicy(name: string, kind: 'policies' | 'operator-policies' = 'policies'): Promise<HttpOutcome> {
    return this.mgmt().request('DELETE', `/api/${kind}/%2F/${encodeURIComponent(name)}`);
  }

  /** A regex matching exactly the names this case gives out with the suffixes given. */
  namePattern(...suffixes: string[]): string {
    const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
    return `^${esc(this.name(''))}(${suffixes.map(esc).join('|')})$`;
  }

  /** Appends a fact to the trace. */
  log(label: string, value: unknown = null): void {
    this.trace.push({ [label]: value });
  }

  /** A name unique to this run and case (the run token is normalised away in traces). */
  name(suffix = 'n'): string {
    return `cf.${this.token}.${this.caseName}.${suffix}`;
  }

  /** A queue name, deleted after the case. */
  q(suffix = 'q'): string {
    const n = this.name(suffix);
    this.queues.add(n);
    return n;
  }

  /** An exchange name, deleted after the case. */
  x(suffix = 'x'): string {
    const n = this.name(suffix);
    this.exchanges.add(n);
    return n;
  }

  // --- amqplib --------------------------------------------------------------------------------

  async connect(opts: { url?: string; frameMax?: number; heartbeat?: number; vhost?: string; clientProperties?: Record<string, unknown> } = {}): Promise<ChannelModel> {
    const u = new URL(opts.url ?? this.url);
    if (opts.frameMax !== undefined) u.searchParams.set('frameMax', String(opts.frameMax));
    if (opts.heartbeat !== undefined) u.searchParams.set('heartbeat', String(opts.heartbeat));
    if (opts.vhost !== undefined) u.pathname = `/${encodeURIComponent(opts.vhost)}`;
    const socketOpts: Record<string, unknown> = { noDelay: true };
    if (opts.clientProperties) socketOpts['clientProperties'] = opts.clientProperties;
    const conn = await amqp.connect(u.toString(), socketOpts);
    conn.on('error', () => {});
    this.conns.push(conn);
    this.taps.set(conn, WireTap.attach(conn));
    this.connClosed.set(conn, new Promise<void>((resolve) => conn.once('close', () => resolve())));
    return conn;
  }

  /** The case's default connection (opened on first use). */
  async conn(): Promise<ChannelModel> {
    this.defaultConn ??= await this.connect();
    return this.defaultConn;
  }

  tap(conn: ChannelModel): WireTap {
    const t = this.taps.get(conn);
    if (!t) throw new Error('connection not opened through the case context');
    return t;
  }

  async channel(conn?: ChannelModel): Promise<Channel> {
    const c = conn ?? (await this.conn());
    return this.track(c, await c.createChannel());
  }

  async confirmChannel(conn?: ChannelModel): Promise<ConfirmChannel> {
    const c = conn ?? (await this.conn());
    return this.track(c, await c.createConfirmChannel());
  }

  private track<C extends Channel>(conn: ChannelModel, ch: C): C {
    const st: ChannelState = { conn, tap: this.tap(conn), closed: Promise.resolve(), isClosed: false };
    st.closed = new Promise<void>((resolve) => {
      ch.once('close', () => {
        st.isClosed = true;
        resolve();
      });
    });
    ch.on('error', (e: Error & { code?: number; classId?: number; methodId?: number }) => {
      const m = REPLY_TEXT.exec(e.message);
      if (e.code !== undefined) st.error = { code: e.code, text: m ? (m[1] as string) : e.message, classId: e.classId ?? 0, methodId: e.methodId ?? 0 };
    });
    this.channels.set(ch, st);
    return ch;
  }

  channelNumber(ch: Channel): number {
    return (ch as unknown as { ch: number }).ch;
  }

  /**
   * Runs an operation and records its outcome under label: {ok: view(result)} or the close it
   * caused. Resolves with the result (undefined on failure).
   */
  async step<T>(label: string, op: Promise<T> | (() => Promise<T>), view: (v: T) => unknown = (v) => v, ch?: Channel): Promise<T | undefined> {
    try {
      const v = await (typeof op === 'function' ? op() : op);
      this.log(label, { ok: view(v) ?? null });
      return v;
    } catch (e) {
      this.log(label, await this.failure(e, ch));
      return undefined;
    }
  }

  /** Like step, but records only ok: true (for replies with nothing worth recording). */
  async stepOk(label: string, op: Promise<unknown> | (() => Promise<unknown>), ch?: Channel): Promise<boolean> {
    const r = await this.step(label, op, () => true, ch);
    return r !== undefined;
  }

  /** Describes an error an amqplib operation failed with. */
  async failure(e: unknown, ch?: Channel): Promise<Failure> {
    const err = e as Error & { code?: number; classId?: number; methodId?: number };
    const msg = err?.message ?? String(e);
    const m = REPLY_TEXT.exec(msg);
    if (/^(Operation failed|Channel closed by server)/.test(msg) && err.code !== undefined) {
      return { closed: 'channel', code: err.code, text: m ? (m[1] as string) : msg, classId: err.classId ?? 0, methodId: err.methodId ?? 0 };
    }
    if (ch) {
      // The operation failed because its channel closed: say why it closed.
      const st = this.channels.get(ch);
      if (st) {
        await Promise.race([st.closed, sleep(300)]);
        if (st.error) return { closed: 'channel', ...st.error };
        const cc = st.tap.channelCloses.get(this.channelNumber(ch));
        if (cc) return { closed: 'channel', ...cc };
      }
    }
    // A connection close: amqplib does not pass on class and method ids; the tap has them.
    const taps = ch ? [this.channels.get(ch)?.tap] : [...this.taps.values()];
    for (let i = 0; i < 50; i++) {
      const close = taps.find((t) => t?.connectionClose)?.connectionClose;
      if (close) return { closed: 'connection', ...close };
      await sleep(10);
    }
    return { closed: 'none', error: msg.replace(/\n[\s\S]*/, '') };
  }

  /** Waits for the channel to close and describes why (closed: 'none' if it stays open). */
  async closeOf(ch: Channel, timeoutMs = 2000): Promise<Failure> {
    const st = this.channels.get(ch);
    if (!st) throw new Error('channel not opened through the case context');
    await Promise.race([st.closed, sleep(timeoutMs)]);
    if (!st.isClosed) return { closed: 'none' };
    if (st.error) return { closed: 'channel', ...st.error };
    const cc = st.tap.connectionClose ?? (await this.waitFor(() => st.tap.connectionClose, 200));
    if (cc) return { closed: 'connection', ...cc };
    return { closed: 'channel', error: 'closed without error' };
  }

  /** Waits for the connection to close; the connection.close the server sent, or null. */
  async connectionCloseOf(conn: ChannelModel, timeoutMs = 2000): Promise<CloseInfo | null> {
    await Promise.race([this.connClosed.get(conn), sleep(timeoutMs)]);
    return this.tap(conn).connectionClose ?? null;
  }

  isOpen(ch: Channel): boolean {
    return !this.channels.get(ch)?.isClosed;
  }

  // --- messages -------------------------------------------------------------------------------

  /** A message as a trace fact: body, routing fields, redelivered, and the properties set. */
  msg(m: ConsumeMessage | GetMessage | Message | null | false, opts: { props?: boolean; tag?: boolean } = {}): unknown {
    if (!m) return null;
    const f = m.fields as unknown as Record<string, unknown>;
    const out: Record<string, unknown> = { body: m.content.toString('utf8') };
    if (f['exchange'] !== undefined) out['exchange'] = f['exchange'];
    out['routingKey'] = f['routingKey'];
    if (f['redelivered'] !== undefined) out['redelivered'] = f['redelivered'];
    if (opts.tag !== false && f['deliveryTag'] !== undefined) out['deliveryTag'] = f['deliveryTag'];
    if (f['messageCount'] !== undefined) out['messageCount'] = f['messageCount'];
    if (f['replyCode'] !== undefined) {
      out['replyCode'] = f['replyCode'];
      out['replyText'] = f['replyText'];
    }
    if (opts.props) {
      const p: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(m.properties)) if (v !== undefined) p[k] = v;
      out['properties'] = p;
    }
    return out;
  }

  /** Only the bodies, in order. */
  bodies(ms: Array<ConsumeMessage | GetMessage | Message>): string[] {
    return ms.map((m) => m.content.toString('utf8'));
  }

  /** The typed headers table (wire types kept) of a message delivered on ch via amqplib. */
  typedHeaders(ch: Channel, m: ConsumeMessage | GetMessage): unknown {
    const st = this.channels.get(ch);
    const t = st?.tap.delivery(this.channelNumber(ch), m.fields.deliveryTag);
    const h = t?.header?.properties.headers;
    return h ? typedTable(h) : null;
  }

  /** basic.get until it returns nothing; the messages in order. */
  async drainQueue(ch: Channel, queue: string, opts: { noAck?: boolean; max?: number } = {}): Promise<GetMessage[]> {
    const out: GetMessage[] = [];
    for (let i = 0; i < (opts.max ?? 1000); i++) {
      const m = await ch.get(queue, { noAck: opts.noAck ?? true });
      if (!m) break;
      out.push(m);
    }
    return out;
  }

  /**
   * Consumes from queue until n messages arrived (or timeoutMs passed), then cancels.
   * Returns what arrived, in order.
   */
  async consumeN(ch: Channel, queue: string, n: number, opts: { noAck?: boolean; timeoutMs?: number; args?: Record<string, unknown>; ack?: boolean } = {}): Promise<ConsumeMessage[]> {
    const got: ConsumeMessage[] = [];
    let wake: (() => void) | undefined;
    const r = await ch.consume(
      queue,
      (m) => {
        if (!m) return;
        got.push(m);
        if (opts.ack) ch.ack(m);
        if (got.length >= n) wake?.();
      },
      { noAck: opts.noAck ?? true, arguments: opts.args },
    );
    if (got.length < n) {
      await Promise.race([new Promise<void>((res) => (wake = res)), sleep(opts.timeoutMs ?? 2000)]);
    }
    if (this.isOpen(ch)) await ch.cancel(r.consumerTag).catch(() => {});
    return got;
  }

  /** Polls fn until it returns a truthy value or timeoutMs passes; the last value. */
  async waitFor<T>(fn: () => T | Promise<T>, timeoutMs = 2000, intervalMs = 10): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn();
      if (v || Date.now() >= deadline) return v;
      await sleep(intervalMs);
    }
  }

  /** Polls a queue's message count (passive declare on a private channel) until pred holds. */
  async waitForCount(queue: string, pred: (n: number) => boolean, timeoutMs = 2000): Promise<number> {
    const ch = await this.channel();
    try {
      let n = -1;
      await this.waitFor(async () => {
        n = (await ch.checkQueue(queue)).messageCount;
        return pred(n);
      }, timeoutMs, 15);
      return n;
    } finally {
      await ch.close().catch(() => {});
    }
  }

  sleep(ms: number): Promise<void> {
    return sleep(ms);
  }

  // --- raw frames -----------------------------------------------------------------------------

  /** A raw client with the handshake done. */
  async raw(opts: HandshakeOptions = {}): Promise<RawClient> {
    const c = await RawClient.open(this.url, opts);
    this.raws.push(c);
    return c;
  }

  /** A raw TCP connection, nothing sent yet. */
  async rawSocket(): Promise<RawClient> {
    const c = await RawClient.connect(this.url);
    this.raws.push(c);
    return c;
  }

  // --- cleanup --------------------------------------------------------------------------------

  /** Deletes the policies the case set (best effort). */
  async deletePolicies(): Promise<void> {
    for (const [kind, name] of this.policies.splice(0)) {
      await Promise.race([this.deletePolicy(name, kind).catch(() => undefined), sleep(2000)]);
    }
  }

  async closeAll(): Promise<void> {
    for (const r of this.raws) r.destroy();
    await Promise.all(
      this.conns.map(async (c) => {
        const closed = this.connClosed.get(c);
        try {
          await Promise.race([c.close().catch(() => {}), sleep(1000)]);
        } finally {
          await Promise.race([closed, sleep(100)]);
          const sock = (c as unknown as { connection: { stream: { destroy(): void } } }).connection.stream;
          sock.destroy();
        }
      }),
    );
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
