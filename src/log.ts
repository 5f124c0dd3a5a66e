import { Writable } from 'node:stream';
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** Builds the broker's root logger; connections and channels take child loggers from it. */
export function createLogger(level: LevelWithSilent = 'info', destination?: NodeJS.WritableStream): Logger {
  return pino({ level, base: { name: 'warren' } }, destination ?? process.stdout);
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const SKIP = new Set(['level', 'time', 'msg', 'name', 'pid', 'hostname']);

/**
 * A destination that prints pino's JSON lines for people: "12:03:04.567 INFO  message key=value".
 * main.ts uses it when stdout is a terminal; pipes and files get the JSON lines unchanged.
 */
export function prettyDestination(out: NodeJS.WritableStream = process.stdout): Writable {
  let partial = '';
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line) out.write(`${formatLine(line)}\n`);
      done();
    },
  });
}

export function formatLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = new Date(Number(entry['time'])).toISOString().slice(11, 23);
  const level = LEVELS[Number(entry['level'])] ?? String(entry['level']);
  const fields = Object.entries(entry)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${time} ${level} ${String(entry['msg'] ?? '')}${fields ? `  ${fields}` : ''}`;
}
