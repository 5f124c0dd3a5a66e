import type { Broker } from '../broker.js';
import type { Connection } from '../connection/connection.js';
import { ReplyCode, replyText } from '../errors.js';
import { describeSelector, selects, type ConnectionSelector } from './inspect.js';

/** The reply codes connection.close carries (the spec's hard errors, and RabbitMQ's 320). */
const CONNECTION_CLOSE_CODES = new Set<number>([
  ReplyCode.CONNECTION_FORCED, ReplyCode.FRAME_ERROR, ReplyCode.SYNTAX_ERROR, ReplyCode.COMMAND_INVALID, ReplyCode.CHANNEL_ERROR,
  ReplyCode.UNEXPECTED_FRAME, ReplyCode.RESOURCE_ERROR, ReplyCode.NOT_ALLOWED, ReplyCode.NOT_IMPLEMENTED, ReplyCode.INTERNAL_ERROR,
]);

/** What a client sees when RabbitMQ stops (rabbit_networking:close_all_connections at shutdown). */
export const SHUTDOWN_REASON = "broker forced connection closure with reason 'shutdown'";

export interface CloseOptions {
  /** The reply code (default 320 CONNECTION_FORCED); one of the codes connection.close carries. */
  code?: number;
  /**
   * The detail after "<CODE_NAME> - " in the reply text (default for 320: RabbitMQ's shutdown
   * reason, "broker forced connection closure with reason 'shutdown'"; for others, none).
   */
  reason?: string;
}

/** Which connections a fault applies to (default: all). */
export interface FaultScope {
  connection?: ConnectionSelector;
}

/**
 * broker.faults: failures injected through the broker's real failure paths, so a client sees
 * each exactly as it sees the real one (src/hooks.ts has the seams):
 *
 * - closeConnection / closeAllConnections: connection.close with the chosen code, the way a
 *   broker shutdown or `rabbitmqctl close_connection` closes it;
 * - dropConnection: the socket reset without a close (after N more frames from the client), as a
 *   network failure or a killed broker looks;
 * - nackPublishes: the next N publishes in confirm mode dropped and basic.nack'ed, as when a
 *   queue refuses a message (x-overflow=reject-publish);
 * - holdConfirms / releaseConfirms: confirms held back, as while a slow disk holds the commit
 *   they wait for;
 * - raiseAlarm / clearAlarm: the memory or disk alarm (connection.blocked "low on memory" /
 *   "low on disk", publishers no longer read);
 * - failNextCommit / resumeStore: the store's next commit fails as on a full disk (waiting
 *   confirms nacked, publishers blocked "low on disk") until the store writes again.
 */
export class Faults {
  /** Publishes still to nack, with the scope of each nackPublishes call. */
  private nacks: Array<{ left: number; scope: ConnectionSelector | undefined }> = [];
  /** holdConfirms scopes in force; undefined in the list means every connection. */
  private holds: Array<ConnectionSelector | undefined> = [];
  /** Channels whose confirms are held, and how to send them. */
  private readonly heldResumes = new Set<() => void>();
  /** Alarms raised here (cleared by clear() and reset()). */
  private readonly alarms = new Set<'memory' | 'disk'>();

  constructor(private readonly broker: Broker) {}

  /**
   * Closes the selected connections (a string: the client's connection_name, or the broker's
   * name of the connection) with connection.close; resolves with how many once they are closed
   * (the client answered close-ok, or closeTimeout real ms passed). Throws when none matches.
   */
  async closeConnection(selector: ConnectionSelector, options: CloseOptions = {}): Promise<number> {
    const { code, text } = closeReply(options);
    const chosen = this.select(selector, 'closeConnection');
    await closeConnections(this.broker, chosen, code, text);
    return chosen.length;
  }

  /** closeConnection for every connection; resolves with how many there were. */
  async closeAllConnections(options: CloseOptions = {}): Promise<number> {
    const { code, text } = closeReply(options);
    const all = [...this.broker.connections];
    await closeConnections(this.broker, all, code, text);
    return all.length;
  }

  /**
   * Resets the selected connections' sockets (TCP RST, no connection.close) once afterFrames
   * more frames have come from each client (default 0: now; heartbeats count). Returns how
   * many connections it applies to; throws when none matches.
   */
  dropConnection(selector: ConnectionSelector, options: { afterFrames?: number } = {}): number {
    const frames = options.afterFrames ?? 0;
    if (!Number.isInteger(frames) || frames < 0) throw new RangeError(`faults.dropConnection: afterFrames must be a whole number, not ${frames}`);
    const chosen = this.select(selector, 'dropConnection');
    for (const conn of chosen) conn.dropAfterFrames(frames);
    return chosen.length;
  }

  /**
   * The next n publishes on channels in confirm mode (of the scoped connections) are not
   * routed and get basic.nack instead of basic.ack; publishes outside confirm mode are not
   * counted. Calls add up.
   */
  nackPublishes(n: number, options: FaultScope = {}): void {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`faults.nackPublishes: n must be a whole number, not ${n}`);
    if (n === 0) return;
    this.nacks.push({ left: n, scope: options.connection });
    this.broker.hooks.nackPublish = (conn) => this.takeNack(conn);
  }

  /** Publishes still to be nacked by nackPublishes. */
  get pendingNacks(): number {
    return this.nacks.reduce((n, x) => n + x.left, 0);
  }

  /**
   * From now on, confirms (acks and nacks) of the scoped connections' channels are held until
   * releaseConfirms(); the publishes themselves are routed as usual.
   */
  holdConfirms(options: FaultScope = {}): void {
    this.holds.push(options.connection);
    this.broker.hooks.holdConfirms = (conn, resume) => this.holdsConfirms(conn, resume);
  }

  /** Stops holding confirms and sends every held one, in seq order per channel (acks coalesced as usual). */
  releaseConfirms(): void {
    this.holds = [];
    this.broker.hooks.holdConfirms = undefined;
    const resumes = [...this.heldResumes];
    this.heldResumes.clear();
    for (const resume of resumes) resume();
  }

  /** Raises the memory or disk alarm as a real one is raised (Broker.setAlarm). */
  raiseAlarm(resource: 'memory' | 'disk'): void {
    checkResource(resource);
    this.alarms.add(resource);
    this.broker.setAlarm(resource, true);
  }

  /** Clears an alarm raised by raiseAlarm (one the broker measures stays). */
  clearAlarm(resource: 'memory' | 'disk'): void {
    checkResource(resource);
    this.alarms.delete(resource);
    this.broker.setAlarm(resource, false);
  }

  /**
   * The store's next commit fails as on a full disk (Store.failNextCommit): confirms waiting for
   * it are nacked, publishers get connection.blocked "low on disk" and are no longer read, and
   * the store keeps what it is given until it writes again — by resumeStore(), or, with a data
   * dir, by the broker's next disk check, as after a real full disk that got room again.
   */
  failNextCommit(): void {
    this.broker.store.failNextCommit(true);
  }

  /** After a failed commit: the store writes what it kept and publishers are unblocked (Broker.retryStore). */
  resumeStore(): Promise<void> {
    return this.broker.retryStore();
  }

  /**
   * Takes back every fault in force: pending nacks, held confirms (sent now), alarms raised
   * here, an armed failNextCommit. A store that has failed is resumed (awaited).
   */
  async clear(): Promise<void> {
    this.nacks = [];
    this.broker.hooks.nackPublish = undefined;
    this.releaseConfirms();
    for (const resource of this.alarms) this.broker.setAlarm(resource, false);
    this.alarms.clear();
    this.broker.store.failNextCommit(false);
    await this.broker.retryStore().catch(() => undefined);
  }

  private select(selector: ConnectionSelector, method: string): Connection[] {
    const chosen = [...this.broker.connections].filter((c) => c.state !== 'closed' && selects(selector, c));
    if (chosen.length === 0) throw new Error(`faults.${method}: no ${describeSelector(selector).replace(/^the /, '')} is open`);
    return chosen;
  }

  private takeNack(conn: Connection): boolean {
    const i = this.nacks.findIndex((x) => x.scope === undefined || selects(x.scope, conn));
    if (i < 0) return false;
    const nack = this.nacks[i]!;
    if (--nack.left === 0) this.nacks.splice(i, 1);
    if (this.nacks.length === 0) this.broker.hooks.nackPublish = undefined;
    return true;
  }

  private holdsConfirms(conn: Connection, resume: () => void): boolean {
    if (!this.holds.some((scope) => scope === undefined || selects(scope, conn))) return false;
    this.heldResumes.add(resume);
    return true;
  }
}

function checkResource(resource: string): void {
  if (resource !== 'memory' && resource !== 'disk') throw new RangeError(`unknown alarm '${resource}' (memory or disk)`);
}

function closeReply(options: CloseOptions): { code: number; text: string } {
  const code = options.code ?? ReplyCode.CONNECTION_FORCED;
  if (!CONNECTION_CLOSE_CODES.has(code)) {
    throw new RangeError(`${code} is not a reply code connection.close carries (${[...CONNECTION_CLOSE_CODES].join(', ')})`);
  }
  const reason = options.reason ?? (code === ReplyCode.CONNECTION_FORCED ? SHUTDOWN_REASON : '');
  return { code, text: replyText(code, reason) };
}

/**
 * Sends connection.close (code, text) to each connection, as Broker.close does, and resolves
 * once their sockets are closed: the client answered close-ok, or closeTimeout real ms passed
 * (then the socket is destroyed; the broker's own close timer runs on its clock, which a
 * FakeClock would not move).
 */
export async function closeConnections(broker: Broker, conns: Connection[], code: number, text: string): Promise<void> {
  const closed = conns.map((conn) => new Promise<void>((resolve) => {
    conn.onClosed(resolve);
    conn.closeWithError(code, text, 0, 0);
    if (conn.socket.destroyed) resolve();
  }));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(closed), new Promise<void>((resolve) => (timer = setTimeout(resolve, broker.config.closeTimeout)))]);
  clearTimeout(timer);
  for (const conn of conns) if (!conn.socket.destroyed) conn.destroy();
}
