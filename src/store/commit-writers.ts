/**
 * The writers registered with MessageStore.beforeCommit, as both stores keep them: run when the
 * batch they join is flushed, each once, and any that one of them registers meanwhile too (a
 * stream's chunk full again). They run outside the caller that registered them (a flush of its
 * own, a microtask), so what one throws is reported, not thrown, and the others still run.
 */
export class CommitWriters {
  private list: Array<() => void> = [];

  /** Adds write; true when it is the first since the last run (the caller schedules the run). */
  add(write: () => void): boolean {
    return this.list.push(write) === 1;
  }

  /** Runs every writer, and those they add, until none is left; `failed` learns what one threw. */
  run(failed: (err: unknown) => void): void {
    while (this.list.length > 0) {
      const writers = this.list;
      this.list = [];
      for (const write of writers) {
        try {
          write();
        } catch (err) {
          failed(err);
        }
      }
    }
  }
}
