import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { RollupDef } from '@quarry/metadata-store';
import { learnRollupHints, narrowRollupSums, rollupTableSql, type RollupHints } from './rollup-tables';

type Rows = Array<Record<string, unknown>>;
type Field = { name: string; type: string; grain?: string };

/**
 * A rollup's statement with the load's hints (integer date keys, words without a regex, BIGINT sums)
 * must write the very table the plain statement (date_trunc per record, HUGEINT sums narrowed after)
 * writes: same columns, same types, same rows, and both what DuckDB's own GROUP BY gives by hand.
 */
describe('rollup tables: the cheaper statement writes the same table', () => {
  let db: DuckDBInstance;
  let c: DuckDBConnection;
  const all = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJS() as Rows;
  const run = (sql: string) => c.run(sql).then(() => undefined);
  const typesOf = async (table: string) => {
    const described = await all(`DESCRIBE ${table}`);
    return new Map(described.map((r) => [String(r.column_name), String(r.column_type)]));
  };
  const described = async (table: string) =>
    (await all(`DESCRIBE ${table}`)).map((r) => `${String(r.column_name)} ${String(r.column_type)}`);
  // Every value as text: infinities and dates before 1 AD have no JS Date.
  const rowsOf = async (table: string) => {
    const cols = (await all(`DESCRIBE ${table}`)).map((r) => `CAST("${String(r.column_name)}" AS VARCHAR)`);
    return all(`SELECT ${cols.join(', ')} FROM ${table} ORDER BY ALL`);
  };

  /** Builds `def` over `records` twice, without hints then with the learnt ones; returns both tables' names. */
  async function bothWays(def: RollupDef, records: string, fields: Field[], singleWord: string[] = []) {
    const types = await typesOf(records);
    const hints: RollupHints = await learnRollupHints(all, records, fields, types, [def], new Set(singleWord));
    const plain = `plain_${records}`;
    const cheap = `cheap_${records}`;
    await run(`DROP TABLE IF EXISTS "${plain}"`);
    await run(`DROP TABLE IF EXISTS "${cheap}"`);
    await run(rollupTableSql(def, plain, records, fields, types).sql);
    await narrowRollupSums(run, all, plain);
    const { sql } = rollupTableSql(def, cheap, records, fields, types, hints);
    await run(sql);
    await narrowRollupSums(run, all, cheap);
    return { plain, cheap, hints, sql };
  }

  beforeAll(async () => {
    db = await DuckDBInstance.create(':memory:');
    c = await db.connect();
    // Instants at the edges of days, weeks, months, quarters and years, a leap day, years before 1 AD
    // (negative integer keys), the far future, both infinities and null; the same as DATE.
    const instants = [
      '2023-12-31 23:59:59.999999',
      '2024-01-01 00:00:00',
      '2024-01-31 23:59:59.999999',
      '2024-02-01 00:00:00',
      '2024-02-29 12:00:00',
      '2024-03-31 23:59:59.999999',
      '2024-04-01 00:00:00',
      '2024-06-30 23:59:59',
      '2024-07-01 00:00:00.000001',
      '2024-09-30 23:59:59.999999',
      '2024-10-01 00:00:00',
      '2024-12-29 10:00:00',
      '0001-01-01 00:00:00',
      '0001-12-31 23:59:59',
      '0001-03-15 (BC) 00:00:00',
      '0044-12-31 (BC) 23:59:59',
      '0044-01-01 (BC) 00:00:00',
      '9999-12-31 23:59:59',
      '290000-06-15 08:00:00',
      'infinity',
      '-infinity',
    ];
    const values = [...instants.map((t) => `TIMESTAMP '${t}'`), 'NULL'];
    // Each instant three times over, with different keys.
    await run(
      `CREATE TABLE recs AS SELECT ts, CAST(ts AS DATE) AS d, ['LAX', 'sfo', '', NULL][1 + (i % 4)] AS origin,
         ['New York', 'san  francisco', 'Zürich-Ost 2', NULL, ''][1 + (i % 5)] AS place, (i % 7) - 3 AS n,
         CAST(i AS INTEGER) AS small, CAST(i AS HUGEINT) * 1000 AS wide, (i % 11) / 4 AS x
       FROM (SELECT ts, row_number() OVER (ORDER BY j, ts) AS i FROM (SELECT unnest([${values.join(', ')}]) AS ts), range(3) r(j))`,
    );
  });
  afterAll(() => {
    c.closeSync();
    db.closeSync();
  });

  const fields: Field[] = [
    { name: 'ts', type: 'date' },
    { name: 'd', type: 'date', grain: 'month' },
    { name: 'origin', type: 'string' },
    { name: 'place', type: 'string' },
    { name: 'n', type: 'integer' },
    { name: 'small', type: 'integer' },
    { name: 'wide', type: 'integer' },
    { name: 'x', type: 'number' },
  ];

  it.each(['day', 'week', 'month', 'quarter', 'year'])(
    'a TIMESTAMP and a DATE by %s: every instant in the group date_trunc gives it, infinities and null kept apart',
    async (grain) => {
      for (const field of ['ts', 'd']) {
        const def: RollupDef = {
          name: 'r',
          rows: ['origin'],
          columns: [{ field, grain }],
          totals: [{ kind: 'count' }, { kind: 'sum', field: 'n' }, { kind: 'countDistinct', field: 'place' }],
        };
        const { plain, cheap, sql } = await bothWays(def, 'recs', fields, ['origin']);
        // Only a week is still truncated on every record.
        expect(sql.includes('date_trunc')).toBe(grain === 'week');
        expect(await described(cheap)).toEqual(await described(plain));
        const got = await rowsOf(cheap);
        expect(got).toEqual(await rowsOf(plain));
        // By hand: DuckDB's own date_trunc, in the column's own type.
        const type = field === 'ts' ? 'TIMESTAMP' : 'DATE';
        const hand = await all(
          `SELECT origin, CAST(CAST(date_trunc('${grain}', ${field}) AS ${type}) AS VARCHAR) AS k, place, count(*) AS n, sum(n) AS s
           FROM recs GROUP BY ALL ORDER BY ALL`,
        );
        const mine = await all(
          `SELECT origin, CAST("${field}" AS VARCHAR) AS k, place, __n AS n, "__sum:n" AS s FROM ${cheap} ORDER BY ALL`,
        );
        expect(mine).toEqual(hand);
      }
    },
  );

  it('keeps a text key whole and its words as wordsExpr gives them, single-word or not', async () => {
    const def: RollupDef = { name: 'w', rows: ['origin', 'place'], columns: [], totals: [{ kind: 'count' }] };
    const { plain, cheap } = await bothWays(def, 'recs', fields, ['origin']);
    expect(await described(cheap)).toEqual(await described(plain));
    expect(await rowsOf(cheap)).toEqual(await rowsOf(plain));
    const wordsOf = (field: string) =>
      all(`SELECT DISTINCT "${field}" AS v, "__w:${field}" AS w FROM ${cheap} WHERE "${field}" IS NOT NULL ORDER BY 1`);
    expect(await wordsOf('origin')).toEqual([
      { v: '', w: '  ' },
      { v: 'LAX', w: ' lax ' },
      { v: 'sfo', w: ' sfo ' },
    ]);
    // A text of several words keeps them split on anything not a letter or digit, lower-cased.
    expect(await wordsOf('place')).toEqual([
      { v: '', w: '  ' },
      { v: 'New York', w: ' new york ' },
      { v: 'Zürich-Ost 2', w: ' zürich ost 2 ' },
      { v: 'san  francisco', w: ' san francisco ' },
    ]);
    const [{ nulls }] = await all(
      `SELECT count(*) AS nulls FROM ${cheap} WHERE origin IS NULL AND "__w:origin" IS NULL`,
    );
    expect(nulls).toBeGreaterThan(0n);
  });

  it('sums integers to BIGINT at once only when max |value| x records < 2^63; otherwise as before', async () => {
    const big = 2n ** 62n;
    const cases: Array<{ values: string[]; type: string; hinted: boolean; stored: string; sum: string | null }> = [
      // 2 x (2^62 - 1) < 2^63: known to fit.
      {
        values: [`${big - 1n}`, `${big - 1n}`],
        type: 'BIGINT',
        hinted: true,
        stored: 'BIGINT',
        sum: `${2n * big - 2n}`,
      },
      // 2 x 2^62 = 2^63: not known, and the sum does not fit: HUGEINT, exact.
      { values: [`${big}`, `${big}`], type: 'BIGINT', hinted: false, stored: 'HUGEINT', sum: `${2n * big}` },
      // |-2^63| x 1 = 2^63: not known, but the sum fits: narrowed after, as before.
      { values: [`${-2n * big}`], type: 'BIGINT', hinted: false, stored: 'BIGINT', sum: `${-2n * big}` },
      // Values far past 64 bits in a HUGEINT column: HUGEINT.
      { values: [`${big * big}`, '1'], type: 'HUGEINT', hinted: false, stored: 'HUGEINT', sum: `${big * big + 1n}` },
      { values: ['5', '-7'], type: 'INTEGER', hinted: true, stored: 'BIGINT', sum: '-2' },
      { values: ['5', '7'], type: 'UBIGINT', hinted: true, stored: 'BIGINT', sum: '12' },
      { values: ['NULL', 'NULL'], type: 'BIGINT', hinted: true, stored: 'BIGINT', sum: null },
    ];
    for (const [i, k] of cases.entries()) {
      const table = `sums${i}`;
      await run(
        `CREATE TABLE ${table} AS SELECT 'a' AS g, CAST(v AS ${k.type}) AS v FROM (SELECT unnest([${k.values.map((v) => (v === 'NULL' ? v : `'${v}'`)).join(', ')}]::VARCHAR[]) AS v)`,
      );
      const def: RollupDef = { name: 's', rows: ['g'], columns: [], totals: [{ kind: 'sum', field: 'v' }] };
      const f: Field[] = [
        { name: 'g', type: 'string' },
        { name: 'v', type: 'integer' },
      ];
      const { plain, cheap, hints } = await bothWays(def, table, f);
      expect([table, hints.bigintSums?.has('v')]).toEqual([table, k.hinted]);
      expect(await described(cheap)).toEqual(await described(plain));
      expect((await typesOf(cheap)).get('__sum:v')).toBe(k.stored);
      const [row] = await all(`SELECT CAST("__sum:v" AS VARCHAR) AS s FROM ${cheap}`);
      expect(row.s).toBe(k.sum);
      expect(await rowsOf(cheap)).toEqual(await rowsOf(plain));
    }
  });

  it('an empty table and a number field (fsum) are as before', async () => {
    await run(`CREATE TABLE none AS SELECT * FROM recs WHERE false`);
    const def: RollupDef = {
      name: 'e',
      rows: ['origin'],
      columns: [{ field: 'ts', grain: 'month' }],
      totals: [
        { kind: 'sum', field: 'n' },
        { kind: 'sum', field: 'x' },
        { kind: 'average', field: 'wide' },
      ],
    };
    for (const records of ['none', 'recs']) {
      const { plain, cheap } = await bothWays(def, records, fields, ['origin']);
      expect(await described(cheap)).toEqual(await described(plain));
      expect(await rowsOf(cheap)).toEqual(await rowsOf(plain));
    }
    expect((await typesOf('cheap_none')).get('__sum:n')).toBe('BIGINT');
    expect((await typesOf('cheap_recs')).get('__sum:x')).toBe('DOUBLE');
  });
});
