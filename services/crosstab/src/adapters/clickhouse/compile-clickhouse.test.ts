import { parseQuery, type FieldDef, type QueryNode } from '@quarry/query-language';
import { chIdent, chLiteral, compileClickHouse } from './compile-clickhouse';

const FIELDS: FieldDef[] = [
  { name: 'title', type: 'string' },
  { name: 'n', type: 'integer' },
  { name: 'x', type: 'number' },
  { name: 'at', type: 'date' },
  { name: 'odd`name\\', type: 'string' },
];
const TYPES = new Map([
  ['at', "Nullable(DateTime64(6, 'UTC'))"],
  ['n', 'Nullable(Int64)'],
]);
const compile = (q: string) =>
  compileClickHouse(parseQuery(q, { fields: FIELDS, now: Date.parse('2026-01-01') }), TYPES);

describe('compileClickHouse', () => {
  it('binds every value as a typed parameter: hostile text never reaches the SQL', () => {
    const hostile = "x') OR 1=1 --";
    const w = compile(`title:"${hostile.replace(/"/g, '\\"')}" OR title:>"${'\\'}{p1:String}"`);
    expect(w.sql).not.toContain('OR 1=1');
    expect(w.sql).not.toContain("x'");
    expect(Object.values(w.params)).toEqual(expect.arrayContaining([` ${'x or 1 1'} `]));
    expect(w.sql).toMatch(/\{p1:String\}/);
    for (const name of Object.keys(w.params)) expect(name).toMatch(/^p\d+$/);
  });

  it('compares integers as Int64, and never a fraction for equality; numbers as Float64, dates in UTC', () => {
    expect(compile('n:3')).toEqual({ sql: '(`n` = {p1:Int64})', params: { p1: 3 } });
    expect(compile('n:3.5').sql).toBe('false');
    expect(compile('n:>3.5')).toEqual({ sql: '(`n` > {p1:Int64})', params: { p1: 3 } });
    // Past 2^53 no integer is exact: compared as a double, as DuckDB does.
    expect(compile('n:>1e300').sql).toBe('(`n` > {p1:Float64})');
    expect(compile('x:[1 TO 2}').params).toEqual({ p1: 1, p2: 2 });
    const d = compile('at:>=2024-03-10');
    expect(d.sql).toBe("(`at` >= {p1:DateTime64(3, 'UTC')})");
    expect(d.params.p1).toBe('2024-03-10 00:00:00.000');
  });

  it('quotes identifiers with backticks and backslashes, and literals with quotes', () => {
    expect(chIdent('odd`name\\')).toBe('`odd\\`name\\\\`');
    expect(chLiteral("/data/it's\\x.parquet")).toBe("'/data/it\\'s\\\\x.parquet'");
    const exists = compileClickHouse({ kind: 'exists', field: 'odd`name\\', fieldType: 'string' }, TYPES);
    expect(exists.sql).toBe("(`odd\\`name\\\\` != '')");
  });

  it('a date part reads the wall clock in its zone, the zone a parameter; NOT makes null false', () => {
    const node: QueryNode = {
      kind: 'datePart',
      field: 'at',
      part: 'dayOfWeek',
      values: [1, 7],
      timeZone: 'Europe/Paris',
    };
    const w = compileClickHouse(node, TYPES);
    expect(w).toEqual({
      sql: '(toDayOfWeek(toTimeZone(`at`, {p1:String})) IN (1, 7))',
      params: { p1: 'Europe/Paris' },
    });
    expect(compile('NOT n:1').sql).toBe('(NOT coalesce((`n` = {p1:Int64}), false))');
  });
});
