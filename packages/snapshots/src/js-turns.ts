/**
 * Long JS passes over big results (turning a DuckDB result into rows, a pivot's roll-up) take turns on
 * the thread, one at a time, first come first served. Each pass already yields between slices, but
 * four interleaved passes made every other call on the thread wait for four slices per turn of the
 * loop; one at a time it waits for one (INDEXES.FIND p99 under 8 big crosstabs). The work is
 * the same, so throughput is too. Small passes never queue: they do not take a turn.
 */
export class JsTurns {
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  /** Runs `pass` once the passes before it have finished (whether they resolved or threw). */
  take<T>(pass: () => Promise<T>): Promise<T> {
    this.waiting++;
    const turn = this.tail.then(() => {
      this.waiting--;
      return pass();
    });
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  /** Passes taken and not yet started (for tests and metrics). */
  get queued(): number {
    return this.waiting;
  }
}
