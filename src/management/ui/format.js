// Number, size, rate and time formatting.

const intFmt = new Intl.NumberFormat('en-US');

export function num(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return '–';
  return intFmt.format(n);
}

/** "1 queue", "3 queues", "2 of 5 queues". */
export function count(n, noun, of) {
  const word = (of ?? n) === 1 ? noun : `${noun}s`;
  return of === undefined || of === n ? `${num(n)} ${word}` : `${num(n)} of ${num(of)} ${word}`;
}

/** A compact count for tiles and axes: 1.2k, 3.4M. */
export function compact(n) {
  if (n === undefined || n === null) return '–';
  const a = Math.abs(n);
  if (a < 1000) return String(Math.round(n * 10) / 10);
  if (a < 1e6) return `${(n / 1e3).toFixed(a < 1e4 ? 1 : 0)}k`;
  if (a < 1e9) return `${(n / 1e6).toFixed(a < 1e7 ? 1 : 0)}M`;
  return `${(n / 1e9).toFixed(1)}G`;
}

export function bytes(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function rate(r) {
  if (r === undefined || r === null || Number.isNaN(r)) return '–';
  if (r === 0) return '0/s';
  if (r < 10) return `${r.toFixed(1)}/s`;
  return `${compact(Math.round(r))}/s`;
}

/** Milliseconds as "3d 4h", "5m 10s". */
export function duration(ms) {
  if (ms === undefined || ms === null) return '–';
  let s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const hr = Math.floor(s / 3600);
  s -= hr * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d) return `${d}d ${hr}h`;
  if (hr) return `${hr}h ${m}m`;
  if (m) return `${m}m ${s}s`;
  return `${s}s`;
}

/** A past moment (epoch ms, or an ISO string) as "12:04:05" today, else a date and time. */
export function when(t) {
  if (t === undefined || t === null || t === '') return '–';
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  const today = new Date();
  const sameDay = d.toDateString() === today.toDateString();
  return sameDay ? d.toLocaleTimeString() : d.toLocaleString();
}

/** The name shown for an exchange: the default one has an empty name. */
export function exchangeName(name) {
  return name === '' ? '(AMQP default)' : name;
}

/** A value from an arguments or headers table, shown compactly. */
export function value(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
