import type { Row } from '@quarry/snapshots';

/** Statements kept: each a different crosstab shape (or realm) over a rollup of a version in use. */
const MAX_ENTRIES = 64;
/** Cells one statement may keep; a larger answer is read again each time. */
const MAX_ROWS_PER_ENTRY = 50_000;
/** Cells all statements keep together (about 100 bytes each for a few short distinct values). */
const MAX_ROWS = 400_000;

/** Strings and big integers told apart in a key (1n and '1n' are different parameters). */
const tagged = (_: string, v: unknown) => (typeof v === 'string' ? `s${v}` : typeof v === 'bigint' ? `b${v}` : v);

/**
 * The cells a crosstab reads from a rollup, kept in memory by their statement and its parameters.
 *
 * A rollup is part of an immutable version, and its statement names the version's attachment in this
 * process (a new name each time a version is opened), so the same statement always reads the same cells:
 * keeping them is keeping a smaller rollup in memory, not a result. What a call still does each time:
 * the roll-up of the cells into every level, the distinct counts, showAs, the table. `cache: false`
 * (the result cache) does not read or write this; nothing from the records' scan is kept. The least
 * recently used statements go first; only answers are kept, never a failure (an aborted call's
 * statement runs again next time).
 */
export class RollupCells {
  private readonly kept = new Map<string, Row[]>();
  private rows = 0;

  async read(sql: string, params: Record<string, unknown>, run: () => Promise<Row[]>): Promise<Row[]> {
    const key = `${sql}\u0000${JSON.stringify(params, tagged)}`;
    const hit = this.kept.get(key);
    if (hit) {
      this.kept.delete(key);
      this.kept.set(key, hit);
      return hit;
    }
    const cells = await run();
    if (cells.length > MAX_ROWS_PER_ENTRY) return cells;
    // Two calls of one statement at once both read it: the second replaces the first, counted once.
    const before = this.kept.get(key);
    if (before) {
      this.kept.delete(key);
      this.rows -= before.length;
    }
    this.kept.set(key, cells);
    this.rows += cells.length;
    for (const [k, v] of this.kept) {
      if (this.kept.size <= MAX_ENTRIES && this.rows <= MAX_ROWS) break;
      this.kept.delete(k);
      this.rows -= v.length;
    }
    return cells;
  }

  /** Forgets every kept statement (an index dropped or reloaded: its names will not come back). */
  clear(): void {
    this.kept.clear();
    this.rows = 0;
  }

  get size(): number {
    return this.kept.size;
  }
}
