import type { DuckDBConnection, DuckDBInstance, DuckDBPreparedStatement } from '@duckdb/node-api';

/** Prepared statements kept per connection: the SQL shapes of a few indexes' searches and pivots. */
const STATEMENTS_PER_CONNECTION = 64;

interface Pooled {
  connection: DuckDBConnection;
  statements: Map<string, DuckDBPreparedStatement>;
  generation: number;
}

/**
 * Long-lived DuckDB connections, each with its prepared statements by SQL text. Opening a connection and
 * planning a statement cost more than a small query itself (bench/README.md, latency); here a call
 * borrows a connection that already knows its statement. A connection is lent to one call at a time
 * (DuckDB runs one statement per connection); an interrupted or failed one is closed, never lent again.
 * `invalidate()` (a table dropped or replaced) retires every connection and its statements: SQL names
 * tables by snapshot, so no statement could be reused anyway, and their plans hold the old table.
 */
export class ConnectionPool {
  private readonly idle: Pooled[] = [];
  private generation = 0;

  constructor(
    private readonly db: () => Promise<DuckDBInstance>,
    private readonly maxIdle: number,
  ) {}

  async use<T>(
    fn: (c: DuckDBConnection, prepare: (sql: string) => Promise<DuckDBPreparedStatement>) => Promise<T>,
  ): Promise<T> {
    const pooled = this.idle.pop() ?? {
      connection: await (await this.db()).connect(),
      statements: new Map(),
      generation: this.generation,
    };
    let healthy = false;
    try {
      const result = await fn(pooled.connection, (sql) => this.prepare(pooled, sql));
      healthy = true;
      return result;
    } finally {
      if (healthy && pooled.generation === this.generation && this.idle.length < this.maxIdle) this.idle.push(pooled);
      else this.close(pooled);
    }
  }

  private async prepare(pooled: Pooled, sql: string): Promise<DuckDBPreparedStatement> {
    const known = pooled.statements.get(sql);
    if (known) {
      // Most recently used last: the first key is the one to evict.
      pooled.statements.delete(sql);
      pooled.statements.set(sql, known);
      return known;
    }
    const statement = await pooled.connection.prepare(sql);
    pooled.statements.set(sql, statement);
    if (pooled.statements.size > STATEMENTS_PER_CONNECTION) {
      const [oldest, stale] = pooled.statements.entries().next().value as [string, DuckDBPreparedStatement];
      pooled.statements.delete(oldest);
      stale.destroySync();
    }
    return statement;
  }

  /** Retires every idle connection; busy ones are closed when their call returns. */
  invalidate(): void {
    this.generation += 1;
    for (const pooled of this.idle.splice(0)) this.close(pooled);
  }

  private close(pooled: Pooled): void {
    for (const statement of pooled.statements.values()) statement.destroySync();
    pooled.statements.clear();
    pooled.connection.closeSync();
  }
}
