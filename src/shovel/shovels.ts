/**
 * The dynamic shovels of a broker (rabbit_shovel_dyn_worker_sup_sup + rabbit_shovel_status):
 * one ShovelWorker per `shovel` runtime parameter, started, replaced and stopped as the
 * parameter is set and cleared (the `shovel` component that src/parameters calls), and their
 * status as /api/shovels lists it. Workers start once the broker listens (`amqp://` with no host
 * goes to the broker's direct listener), so parameters recovered at boot start with the broker.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { DIRECT_USER } from '../access/access-control.js';
import type { ActingUser, ParameterComponent } from '../parameters/runtime-parameters.js';
import type { JsonValue } from '../parameters/value.js';
import { isUriError, parseAmqpUri } from './amqp-uri.js';
import { shovelDefinition, validateShovel, type ShovelDefinition } from './shovel-parameters.js';
import { ShovelWorker, type ConnectTarget, type ShovelCounts, type ShovelState } from './shovel-worker.js';

export interface ShovelsDeps {
  clock: Clock;
  log: Logger;
  /** The node name /api/shovels reports. */
  node(): string;
  /** The cluster name (the x-shovelled header's shovelled-by). */
  clusterName(): string;
  /** Clears the shovel's parameter (src-delete-after reached). */
  clearParameter(vhost: string, name: string): void;
  /** The password of the broker's direct connections (AccessControl.directSecret). */
  directSecret: string;
}

/** One entry of /api/shovels, keys in RabbitMQ's order. */
export type ShovelStatusJson = Record<string, string>;

/** A shovel's counts, for the web UI (GET /api/shovels?counts=true). */
export interface ShovelCountsJson extends ShovelCounts {
  vhost: string;
  name: string;
}

const key = (vhost: string, name: string) => `${vhost}\0${name}`;

export class Shovels implements ParameterComponent {
  private readonly workers = new Map<string, ShovelWorker>();
  /** The broker's direct listener (its socket path), once it listens: where `amqp://` without a host goes. */
  private local: string | undefined;

  constructor(private readonly deps: ShovelsDeps) {}

  // ---- the runtime parameter component ---------------------------------------------------------

  validate(_vhost: string, name: string, value: JsonValue | undefined, user: ActingUser | undefined) {
    return validateShovel(name, value, user);
  }

  /** rabbit_shovel_dyn_worker_sup_sup:adjust: a new or changed definition (re)starts its worker. */
  notify(vhost: string, name: string, value: JsonValue): void {
    const old = this.workers.get(key(vhost, name));
    if (old) void old.stop();
    this.spawn(shovelDefinition(vhost, name, value));
  }

  private spawn(def: ShovelDefinition): void {
    const k = key(def.vhost, def.name);
    const worker: ShovelWorker = new ShovelWorker(def, {
      clock: this.deps.clock,
      log: this.deps.log,
      connectTarget: (uri) => this.connectTarget(uri),
      clusterName: this.deps.clusterName,
      onDone: () => {
        if (this.workers.get(k) !== worker) return;
        this.workers.delete(k);
        this.deps.clearParameter(def.vhost, def.name);
      },
    });
    this.workers.set(k, worker);
    if (this.local) worker.start();
  }

  /** rabbit_shovel_dyn_worker_sup_sup:stop_child: the parameter was cleared. */
  clear(vhost: string, name: string): void {
    const k = key(vhost, name);
    const w = this.workers.get(k);
    this.workers.delete(k);
    if (w) void w.stop();
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  /** Connections the workers open at most at once: a source and a destination each. */
  get connectionsNeeded(): number {
    return 2 * this.workers.size;
  }

  /** The broker listens, its direct connections on the local socket path: start every worker. */
  listening(path: string): void {
    this.local = path;
    for (const w of this.workers.values()) w.start();
  }

  /** The broker is closing: stop every worker (the parameters stay). */
  async stopAll(): Promise<void> {
    this.local = undefined;
    await Promise.all([...this.workers.values()].map((w) => w.stop()));
  }

  /**
   * Where amqplib connects for a shovel URI. `amqp://` with no host is RabbitMQ's direct
   * connection to the local node (rabbit_direct); Warren's goes to the broker's direct listener
   * (src/direct-listener.ts), with the direct secret: without a user as DIRECT_USER, which may do
   * anything (any user_id too), with a user and no password as that user, unasked for a password;
   * with both, as that user with that password.
   */
  private connectTarget(uri: string): ConnectTarget {
    const p = parseAmqpUri(uri);
    if (isUriError(p) || p.host !== undefined) return { url: uri };
    if (this.local === undefined) throw new Error('the broker is not listening');
    const user = encodeURIComponent(p.username ?? DIRECT_USER);
    const pass = encodeURIComponent(p.password ?? this.deps.directSecret);
    // The host is not used (the path is); a direct connection has no TLS, as in RabbitMQ.
    return { url: `amqp://${user}:${pass}@localhost/${encodeURIComponent(p.vhost)}${p.query ? `?${p.query}` : ''}`, path: this.local };
  }

  // ---- status ------------------------------------------------------------------------------

  /**
   * GET /api/shovels (rabbit_shovel_mgmt_util:status/format): node, timestamp (local time,
   * "YYYY-MM-DD HH:MM:SS"), name, vhost, type, state, then what running reports or the
   * terminated reason. Only the vhosts `visible` admits.
   */
  status(visible: (vhost: string) => boolean = () => true): ShovelStatusJson[] {
    const out: ShovelStatusJson[] = [];
    for (const w of this.workers.values()) {
      if (!visible(w.def.vhost)) continue;
      const st = w.current;
      const entry: ShovelStatusJson = {
        node: this.deps.node(),
        timestamp: localTimestamp(st.timestamp),
        name: w.def.name,
        vhost: w.def.vhost,
        type: 'dynamic',
        state: st.state,
      };
      if (st.state === 'running') for (const [k, v] of st.info ?? []) entry[k] = v;
      if (st.state === 'terminated') entry['reason'] = st.reason ?? '';
      out.push(entry);
    }
    return out;
  }

  /** The shovels' message counts (Warren's extension, for the web UI). */
  counts(visible: (vhost: string) => boolean = () => true): ShovelCountsJson[] {
    return [...this.workers.values()].filter((w) => visible(w.def.vhost)).map((w) => ({ vhost: w.def.vhost, name: w.def.name, ...w.counts }));
  }

  /** One shovel's worker state, for tests and the toolkit. */
  get(vhost: string, name: string): ShovelWorker | undefined {
    return this.workers.get(key(vhost, name));
  }

  /**
   * Resolves once the shovel reports the state (now, or at a later report, also by a worker
   * that replaces it); rejects after timeoutMs of real time. For tests and embedders.
   */
  whenState(vhost: string, name: string, state: ShovelState, timeoutMs = 20_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const unsubs: Array<() => void> = [];
      let watched: ShovelWorker | undefined;
      const finish = (err?: Error) => {
        clearTimeout(timer);
        clearInterval(rewatch);
        for (const u of unsubs) u();
        if (err) reject(err);
        else resolve();
      };
      const check = () => {
        const w = this.get(vhost, name);
        if (w && w.current.state === state) return finish();
        if (w && w !== watched) {
          watched = w;
          unsubs.push(w.watch((s) => s.state === state && finish()));
        }
      };
      const timer = setTimeout(() => finish(new Error(`shovel '${name}' in vhost '${vhost}' did not reach state ${state} in ${timeoutMs} ms (it is ${this.get(vhost, name)?.current.state ?? 'absent'})`)), timeoutMs);
      // A worker replaced by a new definition is watched anew at each parameter change.
      const rewatch = setInterval(check, 50);
      check();
    });
  }

  /** DELETE /api/shovels/vhost/{vhost}/{name}/restart: a fresh worker with the same definition. */
  restart(vhost: string, name: string): boolean {
    const w = this.workers.get(key(vhost, name));
    if (!w) return false;
    void w.stop().then(() => {
      if (this.workers.get(key(vhost, name)) === w) this.spawn(w.def);
    });
    return true;
  }
}

/** calendar:local_time() as rabbit_shovel_mgmt_util:format_ts prints it. */
function localTimestamp(ms: number): string {
  const d = new Date(ms);
  const p2 = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())} ${d.getHours()}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
}
