import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IndexCatalog, IndexEntry, RollupDef } from '@quarry/metadata-store';
import type { Reader } from '@quarry/query-language';
import type { ResultCache } from '@quarry/result-cache';
import { SnapshotEngine } from '@quarry/snapshots';
import { builtEntry } from '@quarry/testkit';
import { mulberry32 } from '../../../../../tests/support/seeded-random';
import { crosstabInput, type SentCrosstab } from '../../../test-support/crosstab-input';
import { RunCrosstabUseCase } from '../../domain/run-crosstab.use-case';
import { DuckDbPivotEngine } from './duckdb-pivot-engine.adapter';
import { eventsWithRollups, ROLLUPS, sameJson } from '../../../test-support/rollup-events';

/*
 * A differential test: seeded random crosstabs (subtotals, showAs, rowLimit and filters, value order,
 * date groups, realms, filters) over the same version, once with its rollups and once without, the
 * JSON tables (cells, totals, drill queries) compared value by value. Covered ones must say which
 * rollup answered; the others (a median, a filter on a field the rollup lacks, a time zone a
 * truncated date cannot answer) must scan.
 */

const SHOW_AS = ['value', 'percentOfGrandTotal', 'percentOfRowTotal', 'percentOfColumnTotal', 'runningTotal'] as const;

/** A random crosstab over the rollups' fields, sometimes with something no rollup covers. */
function randomCrosstab(rnd: () => number): { sent: SentCrosstab; realm?: string } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const onDay = rnd() < 0.3;
  const rows = onDay ? ['region'] : pick([['kind'], ['region'], ['kind', 'region'], ['region', 'kind']]);
  const columns = onDay
    ? pick([[{ field: 'day' }], [{ field: 'day', dateGroup: 'month' }], [{ field: 'day', dateGroup: 'dayOfWeek' }], []])
    : pick([
        [{ field: 'at', dateGroup: 'month' }],
        [{ field: 'at', dateGroup: 'quarter' }],
        [{ field: 'at', dateGroup: 'year' }],
        [{ field: 'at', dateGroup: 'monthOfYear' }],
        [{ field: 'at', dateGroup: 'day' }],
        [],
      ]);
  const totals = onDay
    ? [
        { aggregationType: 'Count' },
        { aggregationType: 'Sum', field: 'qty' },
        { aggregationType: 'Average', field: 'qty' },
      ]
    : [
        { aggregationType: 'Count' },
        { aggregationType: 'Sum', field: 'amount' },
        { aggregationType: 'Sum', field: 'qty' },
        { aggregationType: 'Average', field: 'amount' },
        { aggregationType: 'Min', field: 'qty' },
        { aggregationType: 'Max', field: 'amount' },
        { aggregationType: 'CountDistinct', field: 'code' },
        { aggregationType: 'Median', field: 'amount' },
      ];
  const chosen = totals
    .filter(() => rnd() < 0.45)
    .slice(0, 3)
    .map((t) => ({ ...t, showAs: pick(SHOW_AS) }));
  if (chosen.length === 0) chosen.push({ ...totals[0], showAs: 'value' });
  const queries = onDay
    ? ['*', 'region:north', 'NOT region:east', 'qty:>10']
    : ['*', 'kind:alpha', 'region:north OR kind:beta', 'code:sfo', 'kind:delta', 'qty:>10'];
  const sent: SentCrosstab = {
    rows,
    ...(columns.length ? { columns } : {}),
    totals: chosen,
    query: pick(queries),
    subtotals: rnd() < 0.5,
    format: 'json',
    timeZone: rnd() < 0.8 ? 'UTC' : 'Asia/Tokyo',
  } as SentCrosstab;
  if (rnd() < 0.3) Object.assign(sent, { rowLimit: 2, rowOrder: { by: 'value', measure: 0, direction: 'desc' } });
  if (rnd() < 0.2) Object.assign(sent, { rowFilter: { measure: 0, op: '>', value: 50 } });
  const realm = rnd() < 0.2 ? pick(['region:south OR region:west', 'qty:<50']) : undefined;
  return { sent, ...(realm ? { realm } : {}) };
}

const noCache: ResultCache = { enabled: false, get: () => undefined, set: () => undefined };

describe('crosstabs answered from rollups equal their scans', () => {
  let dir: string;
  let engine: SnapshotEngine;
  let withRollups: IndexEntry;
  let plain: IndexEntry;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-rollups-'));
    engine = new SnapshotEngine(dir);
    withRollups = await eventsWithRollups(dir);
    // The same snapshot: the catalog entry without rollups is what a scan reads.
    plain = { ...withRollups, rollups: undefined };
  }, 120_000);

  afterAll(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const run = (entry: IndexEntry, sent: SentCrosstab, realm?: string) => {
    const catalog = { getIndex: async () => entry } as unknown as IndexCatalog;
    const reader: Reader = { admin: false, indexes: ['*'], realms: realm ? [{ index: 'events', query: realm }] : [] };
    return new RunCrosstabUseCase(catalog, new DuckDbPivotEngine(engine), noCache).run(
      reader,
      crosstabInput({ index: 'events', ...sent }),
      'json',
    );
  };

  it('every random crosstab: the same table, from a rollup where one covers it', async () => {
    const rnd = mulberry32(2026);
    let served = 0;
    const cases = 120;
    for (let i = 0; i < cases; i++) {
      const { sent, realm } = randomCrosstab(rnd);
      const scan = await run(plain, sent, realm);
      const fromRollup = await run(withRollups, sent, realm);
      expect(scan.servedBy).toBeUndefined();
      const at = `case ${i} ${JSON.stringify({ sent, realm, servedBy: fromRollup.servedBy })}`;
      sameJson(JSON.parse(String(fromRollup.payload)), JSON.parse(String(scan.payload)), at);
      const uncoverable =
        sent.query === 'qty:>10' ||
        realm === 'qty:<50' ||
        sent.totals.some((t) => 'aggregationType' in t && t.aggregationType === 'Median') ||
        (sent.timeZone !== 'UTC' && JSON.stringify(sent.columns ?? []).includes('"at"'));
      if (uncoverable) expect({ at, servedBy: fromRollup.servedBy }).toEqual({ at, servedBy: undefined });
      if (fromRollup.servedBy) served++;
    }
    // Most random crosstabs are covered: the comparison is not of scans with scans.
    expect(served).toBeGreaterThan(cases / 3);
  }, 300_000);

  it('names the rollup that answered, the smaller one when two cover a crosstab', async () => {
    const byRegion = await run(withRollups, {
      rows: ['region'],
      totals: [{ aggregationType: 'Count' }],
      format: 'json',
    });
    expect(byRegion.servedBy).toBe('by_region_day');
    const byKind = await run(withRollups, {
      rows: ['kind'],
      columns: [{ field: 'at', dateGroup: 'year' }],
      totals: [{ aggregationType: 'CountDistinct', field: 'code' }],
      format: 'json',
    });
    expect(byKind.servedBy).toBe('by_kind_region_month');
    // Days of a rollup kept by month cannot be told apart: the records are scanned.
    const byDay = await run(withRollups, {
      rows: ['kind'],
      columns: [{ field: 'at', dateGroup: 'day' }],
      totals: [{ aggregationType: 'Count' }],
      format: 'json',
    });
    expect(byDay.servedBy).toBeUndefined();
  });

  it('a rollup dropped from the catalog is no longer matched, though its table is still in the file', async () => {
    const dropped: IndexEntry = { ...withRollups, rollups: ROLLUPS.filter((r) => r.name !== 'by_region_day') };
    const r = await run(dropped, { rows: ['region'], totals: [{ aggregationType: 'Count' }], format: 'json' });
    expect(r.servedBy).toBe('by_kind_region_month');
    const none = await run(
      { ...withRollups, rollups: [] },
      { rows: ['region'], totals: [{ aggregationType: 'Count' }], format: 'json' },
    );
    expect(none.servedBy).toBeUndefined();
    sameJson(JSON.parse(String(r.payload)), JSON.parse(String(none.payload)), 'dropped');
  });

  it('a covered crosstab of a large index reads no sample for the estimate, a rollup row per group is not grouped again; one over the limit is still refused', async () => {
    // A rollup with as many keys as records, on an index the estimate takes for large.
    const wide: RollupDef = {
      name: 'amount_day',
      rows: ['amount'],
      columns: [{ field: 'day' }],
      totals: [{ kind: 'count' }],
    };
    // Kind x day, with a distinct count: a crosstab by kind and day finds each of its groups in one row.
    const kindDay: RollupDef = {
      name: 'kind_day',
      rows: ['kind'],
      columns: [{ field: 'day' }],
      totals: [
        { kind: 'count' },
        { kind: 'sum', field: 'amount' },
        { kind: 'average', field: 'amount' },
        { kind: 'min', field: 'qty' },
        { kind: 'max', field: 'amount' },
        { kind: 'countDistinct', field: 'code' },
      ],
    };
    const built = await builtEntry({
      name: 'events',
      file: path.join(dir, 'events.json'),
      dataDir: dir,
      types: { day: 'date' },
      views: [],
      rollups: [...ROLLUPS, wide, kindDay],
    });
    const large = { ...built, recordCount: 50_000_000, rollups: [...ROLLUPS, wide, kindDay] };
    // An engine of its own: the other tests' engine holds version 1 of "events" as another file.
    const own = new SnapshotEngine(dir);
    const runOwn = (entry: IndexEntry, sent: SentCrosstab) => {
      const catalog = { getIndex: async () => entry } as unknown as IndexCatalog;
      const reader: Reader = { admin: false, indexes: ['*'], realms: [] };
      return new RunCrosstabUseCase(catalog, new DuckDbPivotEngine(own), noCache).run(
        reader,
        crosstabInput({ index: 'events', ...sent }),
        'json',
      );
    };
    const read: string[] = [];
    const all = jest.spyOn(own, 'all').mockImplementation(function (this: SnapshotEngine, sql, ...rest) {
      read.push(sql);
      return SnapshotEngine.prototype.all.call(this, sql, ...rest);
    });
    try {
      const sent: SentCrosstab = {
        rows: ['kind'],
        columns: [{ field: 'at', dateGroup: 'month' }],
        totals: [
          { aggregationType: 'Sum', field: 'amount' },
          { aggregationType: 'CountDistinct', field: 'code' },
        ],
        format: 'json',
      };
      const served = await runOwn(large, sent);
      expect(served.servedBy).toBe('by_kind_region_month');
      expect(read.some((sql) => sql.includes('quarry_sample'))).toBe(false);
      sameJson(JSON.parse(String(served.payload)), JSON.parse(String((await run(plain, sent)).payload)), 'large');
      // Each row of kind_day is one group of this pivot: read as it is, not grouped again, same table.
      const byKindDay: SentCrosstab = {
        rows: ['kind'],
        columns: [{ field: 'day' }],
        // Every total the rollup keeps, as a crosstab names it.
        totals: kindDay.totals.map((t) => ({
          aggregationType: t.kind === 'countDistinct' ? 'CountDistinct' : t.kind[0].toUpperCase() + t.kind.slice(1),
          ...(t.field ? { field: t.field } : {}),
        })),
        subtotals: true,
        format: 'json',
      } as SentCrosstab;
      for (const query of ['*', 'code:sfo OR kind:beta']) {
        read.length = 0;
        const perRow = await runOwn(large, { ...byKindDay, query });
        expect(perRow.servedBy).toBe('kind_day');
        const onRollup = read.filter((sql) => sql.includes('quarry_rollup_'));
        expect(onRollup.length).toBeGreaterThan(0);
        for (const sql of onRollup) expect(sql).not.toMatch(/quarry_rollup_\d+" WHERE [^)]* GROUP BY/);
        const scanned = await run(plain, { ...byKindDay, query });
        sameJson(JSON.parse(String(perRow.payload)), JSON.parse(String(scanned.payload)), `per row ${query}`);
      }
      // Amount x day has millions of cells: refused from the rollup's own key count, with the exact
      // rows and columns the scan's estimate (every record of this small version is in its sample) finds.
      const tooBig: SentCrosstab = {
        rows: ['amount'],
        columns: [{ field: 'day' }],
        totals: [{ aggregationType: 'Count' }],
        format: 'json',
      };
      read.length = 0;
      const fromRollup = await runOwn(large, tooBig).catch((e: Error) => e);
      expect(read.some((sql) => sql.includes('quarry_sample'))).toBe(false);
      const fromScan = await runOwn({ ...large, rollups: [] }, tooBig).catch((e: Error) => e);
      expect(read.some((sql) => sql.includes('quarry_sample'))).toBe(true);
      const keys = (e: unknown) =>
        /\((\d+) rows x (\d+) columns x 1 totals\)/.exec(String((e as Error).message))?.slice(1);
      expect(String(fromRollup)).toMatch(/The crosstab would have \d+ cells \(/);
      expect(String(fromScan)).toMatch(/The crosstab would have \d+ cells or more/);
      expect(keys(fromRollup)).toEqual(keys(fromScan));
      expect(Number(keys(fromRollup)?.[0])).toBeGreaterThan(1000);
    } finally {
      all.mockRestore();
      await own.close();
    }
  });
});
