import { createLogger, type Logger } from '../../src/log.js';

export interface LogEntry {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface CapturedLog {
  log: Logger;
  entries: LogEntry[];
  /** Resolves with the first entry (already written or to come) whose msg matches. */
  waitFor(msg: string | RegExp): Promise<LogEntry>;
}

/** A logger whose JSON lines are parsed into `entries` as they are written (synchronously). */
export function captureLog(level: 'debug' | 'info' | 'warn' = 'debug'): CapturedLog {
  const entries: LogEntry[] = [];
  const waiters: Array<{ match: (e: LogEntry) => boolean; resolve: (e: LogEntry) => void }> = [];
  const matcher = (msg: string | RegExp) => (e: LogEntry) => (typeof msg === 'string' ? e.msg === msg : msg.test(e.msg));
  const sink = {
    write: (line: string) => {
      const entry = JSON.parse(line) as LogEntry;
      entries.push(entry);
      for (const w of [...waiters]) {
        if (w.match(entry)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(entry);
        }
      }
    },
  };
  return {
    log: createLogger(level, sink as unknown as NodeJS.WritableStream),
    entries,
    waitFor(msg) {
      const match = matcher(msg);
      const found = entries.find(match);
      return found ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ match, resolve }));
    },
  };
}
