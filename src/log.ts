import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** Builds the broker's root logger; connections and channels take child loggers from it. */
export function createLogger(level: LevelWithSilent = 'info', destination?: NodeJS.WritableStream): Logger {
  return pino({ level, base: { name: 'warren' } }, destination ?? process.stdout);
}
