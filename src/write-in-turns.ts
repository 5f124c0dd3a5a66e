import type { Writable } from 'node:stream';

/**
 * Writes a long HTTP body a part a turn (the management API's long lists, a Prometheus scrape of
 * many thousand queues), so that making it never holds the event loop for long: each call of
 * `next` makes one part (undefined: the body is complete, and the sink is ended). A slow reader
 * is waited for ('drain'); the next part is made in a later turn either way, since a socket that
 * takes each write at once emits 'drain' from a nextTick, and going on from there would never
 * leave the turn. Stops when `stopped()` says the reader is gone; what `next` throws goes to
 * `failed`, and nothing more is written.
 */
export function writeInTurns(sink: Writable, next: () => string | undefined, control: { stopped(): boolean; failed(err: unknown): void }): void {
  const step = (): void => {
    if (control.stopped()) return;
    let text: string | undefined;
    try {
      text = next();
    } catch (err) {
      control.failed(err);
      return;
    }
    if (text === undefined) sink.end();
    else if (sink.write(text)) setImmediate(step);
    else sink.once('drain', () => setImmediate(step));
  };
  step();
}
