import type { IndexEntry } from '@quarry/metadata-store';
import type { Logger } from '@quarry/logger';
import type { SnapshotEngine } from '@quarry/snapshots';
import { InMemoryTable } from './in-memory-table';

export interface HeldVersionsOptions {
  /** Records above which a version is never held (0: none is). */
  maxRecords: number;
  /** Memory all held versions may take together (estimated; 0: none is held). */
  budgetBytes: number;
  /** How long a version let go for room is not read in again. */
  reloadAfterEvictionMs: number;
  /** Where versions read in and let go are told (an operator sizing QUARRY_MEMORY_INDEX_MB). */
  log?: Logger;
}

interface HeldTable {
  name: string;
  version: number;
  /**
   * Null while it is being read, after it was let go for room (until `evictedAt` is old enough), and for
   * good when it cannot be held (the SQL path answers).
   */
  table: InMemoryTable | null;
  loading: Promise<void>;
  lastUsed: number;
  evictedAt?: number;
}

const mb = (bytes: number) => Math.round(bytes / 104857.6) / 10;

/**
 * Small indexes' published versions held as JS columns under one memory budget, by snapshot file
 * (unique per load): which versions are read in, when, and which are let go, least recently searched
 * first. Searching them is `searchInMemory`'s job; this only decides what is held.
 */
export class HeldVersions {
  private readonly held = new Map<string, HeldTable>();
  /**
   * Versions are read in one at a time: each is whole before the budget can judge it, so side by side
   * many first searches would hold many versions' records at once, and take both cores.
   */
  private loads: Promise<void> = Promise.resolve();

  constructor(
    private readonly engine: SnapshotEngine,
    private readonly options: HeldVersionsOptions,
  ) {}

  /** Whether the version is small enough to hold at all. */
  mayHold(entry: IndexEntry): boolean {
    return this.options.maxRecords > 0 && this.options.budgetBytes > 0 && entry.recordCount <= this.options.maxRecords;
  }

  /**
   * The version held in memory, or null while it is read in the background (the first search of a
   * version never waits for it) or when it cannot be held.
   */
  table(entry: IndexEntry): InMemoryTable | null {
    const known = this.held.get(entry.snapshot);
    const now = Date.now();
    if (known && !(known.evictedAt !== undefined && now - known.evictedAt >= this.options.reloadAfterEvictionMs)) {
      known.lastUsed = now;
      return known.table;
    }
    // A search still naming an older version (a publish is under way) is not worth holding.
    for (const other of this.held.values()) if (other.name === entry.name && other.version > entry.version) return null;
    const held: HeldTable = {
      name: entry.name,
      version: entry.version,
      table: null,
      loading: Promise.resolve(),
      lastUsed: now,
    };
    const wanted = () => this.held.get(entry.snapshot) === held;
    held.loading = this.loads = this.loads.then(async () => {
      // Forgotten, or a newer version asked for, while it waited its turn.
      if (!wanted()) return;
      const started = Date.now();
      try {
        const table = await InMemoryTable.load(this.engine, entry);
        if (!table || !wanted()) return;
        if (!this.makeRoom(table.approxBytes(), entry.snapshot)) {
          this.options.log?.info(
            {
              index: entry.name,
              version: entry.version,
              mb: mb(table.approxBytes()),
              budgetMb: mb(this.options.budgetBytes),
            },
            'index too large to hold in memory',
          );
          return;
        }
        held.table = table;
        table.onGrow = () => this.keepToBudget(entry.snapshot);
        this.options.log?.info(
          {
            index: entry.name,
            version: entry.version,
            records: table.size,
            mb: mb(table.approxBytes()),
            ms: Date.now() - started,
          },
          'index held in memory',
        );
      } catch (err) {
        // Only a shortcut: whatever keeps it from loading, the SQL path answers.
        this.options.log?.warn(
          { index: entry.name, version: entry.version, err },
          'index could not be read into memory; SQL answers its searches',
        );
      }
    });
    this.held.set(entry.snapshot, held);
    return null;
  }

  /** Older versions of the index go once a newer one is searched, small or not; searches holding them finish. */
  dropOlder(entry: IndexEntry): void {
    for (const [key, other] of this.held) {
      if (other.name === entry.name && other.version < entry.version) this.held.delete(key);
    }
  }

  forget(name: string): void {
    for (const [key, held] of this.held) if (held.name === name) this.held.delete(key);
  }

  clear(): void {
    this.held.clear();
  }

  /** The versions held now, as `name@version`; for tests and diagnostics. */
  holding(): string[] {
    return [...this.held.values()].filter((h) => h.table).map((h) => `${h.name}@${h.version}`);
  }

  /** Resolves once the version's records are held (or could not be); for tests and warm-up. */
  async whenHeld(entry: IndexEntry): Promise<void> {
    if (!this.mayHold(entry)) return;
    this.table(entry);
    await this.held.get(entry.snapshot)?.loading;
  }

  /** Resolves once the columns being read for the version are read (none is started); for tests. */
  async whenRead(entry: IndexEntry): Promise<void> {
    await this.held.get(entry.snapshot)?.table?.settled();
  }

  /**
   * What the held versions count against the budget: each its expected size once fully read, or what it
   * holds now if that is more (the estimate fell short).
   */
  private usedBytes(): number {
    let used = 0;
    for (const h of this.held.values()) if (h.table) used += Math.max(h.table.approxBytes(), h.table.heldBytes());
    return used;
  }

  /** Lets the least recently searched version other than `keep` go; false when there is none. */
  private evictOldest(keep: string): boolean {
    let oldest: HeldTable | undefined;
    for (const [key, h] of this.held)
      if (key !== keep && h.table && (!oldest || h.lastUsed < oldest.lastUsed)) oldest = h;
    if (!oldest?.table) return false;
    this.options.log?.info(
      {
        index: oldest.name,
        version: oldest.version,
        mb: mb(oldest.table.heldBytes()),
        budgetMb: mb(this.options.budgetBytes),
      },
      'index let go from memory for room',
    );
    oldest.table = null;
    oldest.evictedAt = Date.now();
    return true;
  }

  /**
   * Lets the least recently searched versions go until `bytes` more fit the budget, counting what each
   * holds now; false (nothing let go) if they never can, as when the version alone is over the budget.
   */
  private makeRoom(bytes: number, keep: string): boolean {
    if (bytes > this.options.budgetBytes) return false;
    while (this.usedBytes() + bytes > this.options.budgetBytes) if (!this.evictOldest(keep)) return false;
    return true;
  }

  /**
   * After a held version grew (a column read, a word index or a sort rank built): the others go, least
   * recently searched first, until all fit; if it alone is over the budget it goes too, for good.
   */
  private keepToBudget(snapshot: string): void {
    while (this.usedBytes() > this.options.budgetBytes) {
      if (this.evictOldest(snapshot)) continue;
      const self = this.held.get(snapshot);
      if (self?.table) {
        this.options.log?.info(
          {
            index: self.name,
            version: self.version,
            mb: mb(self.table.heldBytes()),
            budgetMb: mb(this.options.budgetBytes),
          },
          'index let go from memory: alone over the budget',
        );
        self.table = null;
      }
      return;
    }
  }
}
