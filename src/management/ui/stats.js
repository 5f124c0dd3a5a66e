// The overview sampler: polls /api/overview on the refresh tick and keeps the last ten minutes
// of totals, queue depths and message rates, so the Overview charts have history even after
// navigating away and back. Rates come from the API's *_details.rate when it reports one, else
// from the change of the counters between two samples.

import { api } from './api.js';

const KEEP_MS = 10 * 60 * 1000;
export const RATE_KEYS = [
  ['publish', 'Published'],
  ['deliver_get', 'Delivered'],
  ['ack', 'Acknowledged'],
  ['redeliver', 'Redelivered'],
];

function rates(cur, prev, dt) {
  const out = {};
  const stats = cur.message_stats ?? {};
  const before = prev?.overview.message_stats ?? {};
  for (const [key] of RATE_KEYS) {
    const reported = stats[`${key}_details`]?.rate;
    let derived;
    if (prev && dt > 0 && typeof stats[key] === 'number' && typeof before[key] === 'number') derived = Math.max(0, ((stats[key] - before[key]) * 1000) / dt);
    out[key] = typeof reported === 'number' && (reported > 0 || !derived) ? reported : (derived ?? 0);
  }
  return out;
}

const listeners = new Set();

export const sampler = {
  history: [], // [{ t, overview, rates }]
  latest: null,
  lastError: null,
  inflight: null,

  reset() {
    this.history = [];
    this.latest = null;
  },

  /** Takes a sample now (at most one request in flight, none within a second of the last). */
  sample() {
    if (this.inflight) return this.inflight;
    if (this.latest && Date.now() - this.latest.t < 1000) return Promise.resolve(this.latest);
    this.inflight = (async () => {
      try {
        const overview = await api.get('/overview');
        const t = Date.now();
        const prev = this.history[this.history.length - 1];
        const entry = { t, overview, rates: rates(overview, prev, prev ? t - prev.t : 0) };
        this.history.push(entry);
        while (this.history.length && this.history[0].t < t - KEEP_MS) this.history.shift();
        this.latest = entry;
        this.lastError = null;
        for (const fn of listeners) fn(entry);
        return entry;
      } catch (e) {
        this.lastError = e;
        throw e;
      } finally {
        this.inflight = null;
      }
    })();
    return this.inflight;
  },

  subscribe(fn) {
    listeners.add(fn);
    return () => listeners.delete(fn);
  },
};
