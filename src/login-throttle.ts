/**
 * Failed-login back-off per client address (RabbitMQ has none; brute-forcing a password over
 * AMQP costs a connection per guess, and nothing slows it). With a limit of N: once an address
 * has failed N logins, each within a minute of the one before, it is refused logins for 1 s, and
 * every further failure doubles that back-off up to 60 s. A success clears the address's record. Refused logins look
 * the same to the client as a wrong password (ACCESS_REFUSED), so the back-off reveals nothing.
 */

const WINDOW_MS = 60_000;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;
/** Addresses tracked before stale records are dropped. */
const KEPT = 10_000;

interface Record {
  /** Failures, each within WINDOW_MS of the one before. */
  failures: number;
  /** When the last one was. */
  last: number;
  /** Refused until then (monotonic ms). */
  until: number;
  backoff: number;
}

export class LoginThrottle {
  private readonly records = new Map<string, Record>();

  /** `limit`: failures before the back-off starts (0 = off); `now`: monotonic milliseconds. */
  constructor(
    private readonly limit: number,
    private readonly now: () => number,
  ) {}

  /** Milliseconds this address is still refused logins for (0 = it may try). */
  refusedFor(address: string): number {
    if (this.limit === 0) return 0;
    const r = this.records.get(address);
    return r ? Math.max(0, r.until - this.now()) : 0;
  }

  /** Counts a failed login; returns the back-off it starts, if it starts one. */
  failed(address: string): number | undefined {
    if (this.limit === 0) return undefined;
    const now = this.now();
    let r = this.records.get(address);
    if (!r || this.stale(r, now)) {
      if (!r && this.records.size >= KEPT) this.dropStale(now);
      r = { failures: 0, last: now, until: 0, backoff: 0 };
      this.records.set(address, r);
    }
    r.failures++;
    r.last = now;
    if (r.failures < this.limit) return undefined;
    r.backoff = r.backoff === 0 ? FIRST_BACKOFF_MS : Math.min(MAX_BACKOFF_MS, r.backoff * 2);
    r.until = now + r.backoff;
    return r.backoff;
  }

  succeeded(address: string): void {
    this.records.delete(address);
  }

  private stale(r: Record, now: number): boolean {
    return now - r.last > WINDOW_MS && now >= r.until;
  }

  private dropStale(now: number): void {
    for (const [address, r] of this.records) if (this.stale(r, now)) this.records.delete(address);
  }
}
