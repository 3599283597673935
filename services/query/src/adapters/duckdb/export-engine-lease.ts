import type { SnapshotEngine } from '@quarry/snapshots';

/**
 * The export DuckDB, open only while exports use it. A finished export leaves DuckDB's allocator holding
 * the pages its sort used (DuckDB's own accounting says they are free, the process's RSS does not), and
 * none of DuckDB's allocator settings hands them back while the instance lives; closing the instance
 * once the last export ends does, and opening it again costs an attach of the version's file. Exports
 * that overlap share one instance, so its limit bounds them together. The instance outlives its last use
 * by `lingerMs`: an export's count when it starts, its count again when its job runs, and its write
 * follow each other within milliseconds and share one.
 */
export class ExportEngineLease {
  private users = 0;
  private closing: Promise<void> = Promise.resolve();
  private linger: NodeJS.Timeout | undefined;

  constructor(
    private readonly engine: SnapshotEngine,
    private readonly lingerMs = 250,
  ) {}

  async use<T>(work: (engine: SnapshotEngine) => Promise<T>): Promise<T> {
    // Counted before waiting: an export that ends meanwhile must not close the instance under this one.
    this.users += 1;
    clearTimeout(this.linger);
    this.linger = undefined;
    try {
      await this.closing;
      return await work(this.engine);
    } finally {
      this.users -= 1;
      if (this.users === 0) {
        this.linger = setTimeout(() => {
          this.linger = undefined;
          if (this.users === 0) this.closing = this.engine.close().catch(() => undefined);
        }, this.lingerMs);
        // A process that is otherwise done does not wait for it.
        this.linger.unref();
      }
    }
  }

  /** Waits for a close under way; one still to come is left to the caller (the process is stopping). */
  async idle(): Promise<void> {
    clearTimeout(this.linger);
    this.linger = undefined;
    await this.closing;
  }
}
