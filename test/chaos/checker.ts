/**
 * The chaos test's history and its checker (Jepsen-style, one node). Publishers number their
 * messages 1, 2, 3… and never republish; each consumer session (one connection of one consumer
 * worker, or the final drain) records every delivery in the order it saw them. The checker then
 * asserts, for the whole run:
 *
 * - no loss: every message whose publish was confirmed (basic.ack) was delivered at least once
 *   (to a consumer, or by the drain at the end);
 * - no silent duplicates: every delivery of a message after its first carries redelivered=true;
 * - per-consumer order: for each consumer session and publisher, the sequence numbers of
 *   deliveries that are not redeliveries increase (a queue is FIFO; only a redelivery may come
 *   back out of order);
 * - no phantoms: every delivery is of a message that was published, with its body intact.
 *
 * A delivery out of a dead-letter queue fed at least once (Delivery.deadLettered) counts for no
 * loss, phantoms and intact bodies, but not for duplicates or order: at least once means a
 * dead-letter may come twice (RabbitMQ's worker forwards again what it had no confirm for), as
 * a new message each time, and one held and forwarded again comes after later ones.
 */

export interface Delivery {
  /** The consumer session (worker and connection number, or "drain"). */
  consumer: string;
  publisher: number;
  seq: number;
  redelivered: boolean;
  queue: string;
  /** The body matched what the publisher sent for (publisher, seq). */
  intact: boolean;
  /** Out of a queue that dead-letters were forwarded to at least once. */
  deadLettered?: boolean;
}

export class History {
  /** Highest seq each publisher has sent. */
  readonly published = new Map<number, number>();
  readonly confirmed = new Set<string>();
  nacked = 0;
  /** Publishes whose confirm never came (connection lost first): may or may not be delivered. */
  unknown = 0;
  readonly deliveries: Delivery[] = [];

  publish(publisher: number, seq: number): void {
    this.published.set(publisher, Math.max(seq, this.published.get(publisher) ?? 0));
  }

  confirm(publisher: number, seq: number): void {
    this.confirmed.add(key(publisher, seq));
  }

  deliver(d: Delivery): void {
    this.deliveries.push(d);
  }
}

export interface CheckResult {
  violations: string[];
  stats: {
    published: number;
    confirmed: number;
    nacked: number;
    unknown: number;
    deliveries: number;
    distinctDelivered: number;
    redeliveries: number;
    duplicates: number;
    /** Deliveries out of the dead-letter queue. */
    deadLettered: number;
    /** ... that came after a later seq of their publisher, to the same consumer: held and forwarded again. */
    deadLetteredLate: number;
  };
}

/** Violations listed per kind are capped, so a broken run still prints a readable report. */
const MAX_PER_KIND = 10;

export function check(h: History): CheckResult {
  const violations: string[] = [];
  const counts = new Map<string, number>();
  const report = (kind: string, text: string) => {
    const n = (counts.get(kind) ?? 0) + 1;
    counts.set(kind, n);
    if (n <= MAX_PER_KIND) violations.push(`${kind}: ${text}`);
  };

  const seen = new Map<string, number>();
  const lastInOrder = new Map<string, number>();
  let redeliveries = 0;
  let duplicates = 0;
  let deadLettered = 0;
  let deadLetteredLate = 0;
  const lastDeadLettered = new Map<string, number>();
  for (const d of h.deliveries) {
    const k = key(d.publisher, d.seq);
    if (!d.intact) report('corrupt', `message ${k} delivered to ${d.consumer} with a body that is not the one published`);
    if (!(d.seq >= 1 && d.seq <= (h.published.get(d.publisher) ?? 0))) report('phantom', `message ${k} delivered to ${d.consumer} was never published`);
    const times = seen.get(k) ?? 0;
    seen.set(k, times + 1);
    if (d.redelivered) redeliveries++;
    if (d.deadLettered) {
      deadLettered++;
      if (times > 0) duplicates++;
      const order = `${d.consumer}/${d.publisher}`;
      if (d.seq < (lastDeadLettered.get(order) ?? 0)) deadLetteredLate++;
      else lastDeadLettered.set(order, d.seq);
      continue;
    }
    if (times > 0) {
      duplicates++;
      if (!d.redelivered) report('duplicate without redelivered', `message ${k} delivered again (delivery ${times + 1}) to ${d.consumer} with redelivered=false`);
    }
    if (!d.redelivered) {
      const order = `${d.consumer}/${d.publisher}`;
      const last = lastInOrder.get(order) ?? 0;
      if (d.seq <= last) report('order', `${d.consumer} got publisher ${d.publisher}'s seq ${d.seq} (not redelivered) after seq ${last}`);
      else lastInOrder.set(order, d.seq);
    }
  }
  const lost = [...h.confirmed].filter((k) => !seen.has(k)).sort(compareKeys);
  for (const k of lost) report('lost', `confirmed message ${k} was never delivered nor found queued at the end`);
  for (const [kind, n] of counts) if (n > MAX_PER_KIND) violations.push(`${kind}: … ${n - MAX_PER_KIND} more`);

  let published = 0;
  for (const n of h.published.values()) published += n;
  return {
    violations,
    stats: {
      published,
      confirmed: h.confirmed.size,
      nacked: h.nacked,
      unknown: h.unknown,
      deliveries: h.deliveries.length,
      distinctDelivered: seen.size,
      redeliveries,
      duplicates,
      deadLettered,
      deadLetteredLate,
    },
  };
}

function key(publisher: number, seq: number): string {
  return `${publisher}.${seq}`;
}

function compareKeys(a: string, b: string): number {
  const [pa, sa] = a.split('.').map(Number) as [number, number];
  const [pb, sb] = b.split('.').map(Number) as [number, number];
  return pa - pb || sa - sb;
}

/** The body of message (publisher, seq): its identity, then filler derived from it. */
export function messageBody(publisher: number, seq: number, size: number): Buffer {
  const head = Buffer.from(`${publisher}.${seq}|`);
  const body = Buffer.alloc(Math.max(size, head.length));
  head.copy(body);
  for (let i = head.length; i < body.length; i++) body[i] = 97 + ((publisher * 31 + seq * 7 + i) % 26);
  return body;
}

/** Reads (publisher, seq) back from a body and checks the filler; undefined if it is not a chaos body. */
export function parseBody(body: Buffer): { publisher: number; seq: number; intact: boolean } | undefined {
  const bar = body.indexOf(0x7c);
  const m = bar > 0 ? /^(\d+)\.(\d+)$/.exec(body.toString('latin1', 0, bar)) : null;
  if (!m) return undefined;
  const publisher = Number(m[1]);
  const seq = Number(m[2]);
  return { publisher, seq, intact: messageBody(publisher, seq, body.length).equals(body) };
}
