import { readdirSync, readFileSync } from 'node:fs';
import { plainAddress } from './peer-address.js';

/**
 * Which new TCP connections the broker takes. Five limits, checked as a socket is accepted:
 *
 * - `connectionMax`: connections open at once (RabbitMQ's `connection_max`; 0 = no limit);
 * - `connectionMaxPerIp`: connections open at once from one client address (RabbitMQ has no
 *   such limit; 0 = no limit);
 * - `connectionRateLimit` and `connectionRateLimitPerIp`: new connections accepted per second
 *   (one-second windows on the monotonic clock), from all addresses and from one (LavinMQ has
 *   such limits, RabbitMQ does not; 0 = no limit);
 * - file descriptors: a socket is refused while fewer than FD_RESERVE descriptors are left
 *   under the soft RLIMIT_NOFILE, so the broker itself can still open files (the memory
 *   monitor reads /proc, the store and the shutdown marker open files) instead of failing
 *   with EMFILE.
 *
 * A refused socket is closed at once, before the broker sends anything.
 */

/** Descriptors kept free for the broker's own use. */
export const FD_RESERVE = 32;
/** Accepts between two exact counts of open descriptors while far from the limit. */
const RECOUNT_EVERY = 256;

/** Why a socket was refused, and how the broker's warning says it. */
export const REFUSALS = {
  connection_max: 'connection_max reached',
  connection_max_per_ip: 'connection_max_per_ip reached for a client address',
  file_descriptors: 'too few file descriptors left',
  connection_rate: 'connection rate limit reached',
  connection_rate_per_ip: 'connection rate limit reached for a client address',
} as const;
export type Refusal = keyof typeof REFUSALS;

export interface ConnectionLimitSettings {
  connectionMax: number;
  connectionMaxPerIp: number;
  connectionRateLimit: number;
  connectionRateLimitPerIp: number;
}

/** Per-address rate windows kept before idle ones are dropped. */
const RATE_WINDOWS_KEPT = 10_000;
const RATE_WINDOW_MS = 1000;

interface RateWindow {
  start: number;
  count: number;
}

/** How the process's descriptors are counted (replaceable in tests). */
export interface FdProbe {
  /** The soft limit on open descriptors; undefined when unknown or unlimited. */
  limit(): number | undefined;
  /** Descriptors open now (Infinity when none is left to count them); undefined when unknown. */
  open(): number | undefined;
}

/** Linux: the soft limit from /proc/self/limits, open descriptors from /proc/self/fd. */
export const procFdProbe: FdProbe = {
  limit() {
    try {
      const m = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
      const n = m ? Number(m[1]) : NaN;
      return Number.isFinite(n) ? n : undefined;
    } catch {
      return undefined;
    }
  },
  open() {
    try {
      return readdirSync('/proc/self/fd').length;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Not even the directory could be opened: out of descriptors.
      return code === 'EMFILE' || code === 'ENFILE' ? Infinity : undefined;
    }
  },
};

export class ConnectionLimits {
  private readonly perIp = new Map<string, number>();
  private total = 0;
  private readonly fdLimit: number | undefined;
  /** Open descriptors that are not connections, as of the last exact count. */
  private otherFds = 0;
  private acceptsSinceCount = RECOUNT_EVERY;
  private readonly rate: RateWindow = { start: -Infinity, count: 0 };
  private readonly ratePerIp = new Map<string, RateWindow>();

  /** `now`: monotonic milliseconds (Clock.monotonic), for the rate limits. */
  constructor(
    private readonly settings: ConnectionLimitSettings,
    private readonly fds: FdProbe = procFdProbe,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.fdLimit = fds.limit();
  }

  /** The soft limit on open file descriptors, if known (RabbitMQ's fd_total). */
  get fdTotal(): number | undefined {
    return this.fdLimit;
  }

  /** File descriptors open now, if they can be counted (RabbitMQ's fd_used). */
  fdsUsed(): number | undefined {
    const open = this.fds.open();
    return open === undefined || open === Infinity ? open : open - 1; // less the one readdir held
  }

  /** Connections admitted and not yet released. */
  get open(): number {
    return this.total;
  }

  /** Admits a connection from address (counting it until release), or says why not. */
  admit(address: string): Refusal | undefined {
    const { connectionMax, connectionMaxPerIp } = this.settings;
    if (connectionMax > 0 && this.total >= connectionMax) return 'connection_max';
    const ip = plainAddress(address);
    const fromIp = this.perIp.get(ip) ?? 0;
    if (connectionMaxPerIp > 0 && fromIp >= connectionMaxPerIp) return 'connection_max_per_ip';
    const rateRefusal = this.takeRate(ip);
    if (rateRefusal) return rateRefusal;
    if (!this.fdsLeft()) return 'file_descriptors';
    this.perIp.set(ip, fromIp + 1);
    this.total++;
    return undefined;
  }

  release(address: string): void {
    const ip = plainAddress(address);
    const n = this.perIp.get(ip) ?? 0;
    if (n <= 1) this.perIp.delete(ip);
    else this.perIp.set(ip, n - 1);
    this.total--;
  }

  /** Counts a new connection against the rate limits, or says which one it exceeds. */
  private takeRate(ip: string): Refusal | undefined {
    const { connectionRateLimit: all, connectionRateLimitPerIp: perIp } = this.settings;
    if (all === 0 && perIp === 0) return undefined;
    const now = this.now();
    const window = (w: RateWindow): RateWindow => {
      if (now - w.start >= RATE_WINDOW_MS) {
        w.start = now;
        w.count = 0;
      }
      return w;
    };
    const global = window(this.rate);
    if (all > 0 && global.count >= all) return 'connection_rate';
    let own: RateWindow | undefined;
    if (perIp > 0) {
      own = this.ratePerIp.get(ip);
      if (!own) {
        if (this.ratePerIp.size >= RATE_WINDOWS_KEPT) this.dropIdleRateWindows(now);
        own = { start: now, count: 0 };
        this.ratePerIp.set(ip, own);
      }
      if (window(own).count >= perIp) return 'connection_rate_per_ip';
    }
    global.count++;
    if (own) own.count++;
    return undefined;
  }

  private dropIdleRateWindows(now: number): void {
    for (const [ip, w] of this.ratePerIp) if (now - w.start >= RATE_WINDOW_MS) this.ratePerIp.delete(ip);
  }

  /**
   * Whether the accepted socket (already holding a descriptor) leaves FD_RESERVE free. Counting
   * /proc/self/fd costs a directory read, so it is done every RECOUNT_EVERY accepts, or on each
   * accept once the estimate (connections + other descriptors) comes near the limit.
   */
  private fdsLeft(): boolean {
    if (this.fdLimit === undefined) return true;
    // The new socket is not a connection yet: +1.
    const estimate = this.otherFds + this.total + 1;
    if (++this.acceptsSinceCount < RECOUNT_EVERY && estimate < this.fdLimit - 2 * FD_RESERVE) return true;
    this.acceptsSinceCount = 0;
    const open = this.fds.open();
    if (open === undefined) return true;
    if (open === Infinity) return false;
    // readdir held one descriptor of its own while counting.
    const used = open - 1;
    this.otherFds = Math.max(0, used - 1 - this.total);
    return used <= this.fdLimit - FD_RESERVE;
  }
}
