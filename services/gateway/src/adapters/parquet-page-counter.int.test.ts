import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { ParquetPageCounter } from './parquet-page-counter';

const ROWS = 50_000;
const COLUMNS = 4;

/** Feeds the counter the file's first `size` bytes as a watcher would, a bounded read at a time. */
function countPrefix(file: Buffer, size: number, columns = COLUMNS, chunk = 4096): number {
  const counter = new ParquetPageCounter(columns);
  while (!counter.done && counter.offset < size) {
    if (!counter.feed(file.subarray(counter.offset, Math.min(size, counter.offset + chunk)), size)) break;
  }
  return counter.rows;
}

describe('ParquetPageCounter on files DuckDB writes', () => {
  let dir: string;
  const files = new Map<string, Buffer>();
  // Nulls, long text (statistics in the page headers), small row groups, dictionary pages, pages v2.
  const OPTIONS = {
    zstd: 'COMPRESSION zstd',
    'small row groups': 'COMPRESSION snappy, ROW_GROUP_SIZE 3000',
    'pages v2': 'COMPRESSION zstd, PARQUET_VERSION v2',
    uncompressed: 'COMPRESSION uncompressed',
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-parquet-count-'));
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    for (const [name, options] of Object.entries(OPTIONS)) {
      const file = path.join(dir, `${name.replace(/ /g, '-')}.parquet`);
      await c.run(
        `COPY (SELECT i AS n, CASE WHEN i % 7 = 0 THEN NULL ELSE repeat(chr((65 + i % 26)::INTEGER), (1 + i % 300)::INTEGER) END AS text, ` +
          `DATE '2020-01-01' + (i % 900)::INTEGER AS day, i % 3 = 0 AS flag FROM range(${ROWS}) t(i)) ` +
          `TO '${file}' (FORMAT parquet, ${options})`,
      );
      files.set(name, fs.readFileSync(file));
    }
    c.closeSync();
  });

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each(Object.keys(OPTIONS))('counts every row of a finished file (%s), and stops at its footer', (name) => {
    const file = files.get(name)!;
    expect(countPrefix(file, file.length)).toBe(ROWS);
    // Read in one piece as large as the file, too.
    expect(countPrefix(file, file.length, COLUMNS, file.length)).toBe(ROWS);
  });

  it.each(Object.keys(OPTIONS))('counts rows only as they reach the disk while it is written (%s)', (name) => {
    const file = files.get(name)!;
    const counts = [0.05, 0.2, 0.4, 0.6, 0.8, 0.95].map((share) => countPrefix(file, Math.floor(file.length * share)));
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1]);
    // The footer follows the last page: a prefix short of it may hold every row, never more.
    expect(counts.every((n) => n <= ROWS)).toBe(true);
    expect(counts.filter((n) => n < ROWS).length).toBeGreaterThanOrEqual(3);
    expect(counts[0]).toBeLessThan(counts.at(-1)!);
  });

  it('moves on as a file grows, from where it stopped', () => {
    const file = files.get('small row groups')!;
    const counter = new ParquetPageCounter(COLUMNS);
    const seen: number[] = [];
    for (let size = 1024; size < file.length + 1024; size += 1024) {
      const now = Math.min(size, file.length);
      while (!counter.done && counter.offset < now) {
        if (!counter.feed(file.subarray(counter.offset, Math.min(now, counter.offset + 8192)), now)) break;
      }
      seen.push(counter.rows);
    }
    expect(seen.at(-1)).toBe(ROWS);
    expect(new Set(seen).size).toBeGreaterThan(5);
  });

  it('counts nothing in bytes that are not Parquet pages, and never throws on them', () => {
    for (const junk of [Buffer.alloc(4096), Buffer.from('PAR1' + 'x'.repeat(5000)), Buffer.from([0x15, 0xff, 0xff])]) {
      const counter = new ParquetPageCounter(COLUMNS);
      expect(() => counter.feed(junk.subarray(4), junk.length)).not.toThrow();
      expect(counter.rows).toBe(0);
    }
    // Deep nesting in a header: refused, not a stack overflow.
    const deep = Buffer.concat([Buffer.from([0x1c]), Buffer.alloc(100_000, 0x1c)]);
    const counter = new ParquetPageCounter(COLUMNS);
    expect(() => counter.feed(deep, deep.length + 4)).not.toThrow();
    expect(counter.done).toBe(true);
  });
});
