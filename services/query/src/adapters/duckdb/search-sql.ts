import type { IndexEntry } from '@quarry/metadata-store';
import {
  hasFuzzy,
  resolveFuzzy,
  scoreClauses,
  SCORE_SCALE,
  type QueryNode,
  type ScoreClause,
} from '@quarry/query-language';
import { compileSearch, compileWhere, ident, recordJsonSql, type SnapshotEngine } from '@quarry/snapshots';
import type { FacetCounts, FacetRequest, SearchPage, SearchPlan, SortKey } from '../../ports/search-index.port';

/**
 * Up to this many records a search is one statement, its count a window over the filtered rows; above
 * it the count and the page are two statements run side by side, so a page of a large index never
 * carries every matching row through a window (bench/README.md, latency).
 */
export const ONE_PASS_MAX_RECORDS = 100_000;

/** What a facet value reads as in a crosstab's key: a blank text and a missing value alike. */
export const BLANK = '(blank)';

export function orderBy(sort: SortKey[]): string {
  const keys = sort.map((s) => {
    // Scores compare rounded (relevance.ts, SCORE_DECIMALS): equal ones keep load order.
    const col =
      s.type === 'score'
        ? `round(__score * ${SCORE_SCALE})`
        : s.type === 'string'
          ? `lower(${ident(s.field)})`
          : ident(s.field);
    return `${col} ${s.direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST`;
  });
  return [...keys, '__rowid ASC'].join(', ');
}

/** The plan's queries with fuzzy words resolved against the version's vocabulary, and its score clauses. */
export async function resolvedPlan(
  engine: SnapshotEngine,
  entry: IndexEntry,
  plan: Pick<SearchPlan, 'where' | 'score'>,
): Promise<{ where: QueryNode; score?: QueryNode; clauses: ScoreClause[] | null }> {
  if (!plan.score && !hasFuzzy(plan.where)) return { where: plan.where, clauses: null };
  const terms = await engine.terms(entry);
  const vocabulary = (fields: readonly string[]) => terms.vocabulary(fields);
  const where = resolveFuzzy(plan.where, vocabulary);
  if (!plan.score) return { where, clauses: null };
  const score = resolveFuzzy(plan.score, vocabulary);
  return { where, score, clauses: scoreClauses(score, terms) };
}

/** A search as SQL on the snapshot's table: any index, any plan; stops at the plan's deadline. */
export async function searchSql(
  engine: SnapshotEngine,
  entry: IndexEntry,
  plan: SearchPlan,
): Promise<Omit<SearchPage, 'engine'>> {
  const loaded = await engine.table(entry);
  const { table, columnTypes } = loaded;
  const resolved = await resolvedPlan(engine, entry, plan);
  const compiled = compileSearch(resolved.where, resolved.clauses, loaded);
  const params = compiled.params;
  const from = `FROM ${ident(table)} WHERE ${compiled.where}`;
  const projection = `${recordJsonSql(entry.fields, columnTypes)} AS j${compiled.score ? `, ${compiled.score} AS __score` : ''}`;
  const page = `ORDER BY ${orderBy(plan.sort)} LIMIT ${plan.limit} OFFSET ${plan.offset}`;
  const facets = plan.facets?.length ? facetsSql(engine, entry, resolved.where, plan.facets, plan.signal) : undefined;
  const answer = (total: number, rows: Array<Record<string, unknown>>) => ({
    total,
    recordsJson: `[${rows.map((r) => String(r.j)).join(',')}]`,
    ...(compiled.score ? { scores: rows.map((r) => Number(r.__score)) } : {}),
    ...(resolved.score ? { resolved: resolved.score } : {}),
  });
  const withFacets = async (result: Omit<SearchPage, 'engine'>) =>
    facets ? { ...result, facets: await facets } : result;
  // A count alone (limit 0): no row could carry the window's count.
  if (plan.limit === 0) {
    const [counted] = await engine.all(`SELECT count(*) AS n ${from}`, compiled.whereParams, plan.signal);
    return withFacets(answer(Number(counted.n), []));
  }
  if (entry.recordCount <= ONE_PASS_MAX_RECORDS) {
    // One statement: the count rides along each row of the page as a window over the filtered rows.
    const rows = await engine.all(`SELECT ${projection}, count(*) OVER () AS __n ${from} ${page}`, params, plan.signal);
    // A page past the end has no row to carry the count: ask for it alone (a rare call).
    if (rows.length > 0 || plan.offset === 0) return withFacets(answer(rows.length ? Number(rows[0].__n) : 0, rows));
  }
  const [countRows, pageRows] = await Promise.all([
    engine.all(`SELECT count(*) AS n ${from}`, compiled.whereParams, plan.signal),
    engine.all(`SELECT ${projection} ${from} ${page}`, params, plan.signal),
  ]);
  return withFacets(answer(Number(countRows[0].n), pageRows));
}

/** A facet value as JSON gives it: text as stored, blank as BLANK, dates as ISO text. */
function facetValue(v: unknown, type: FacetRequest['type']): string | number | boolean {
  if (v === null || v === undefined || v === '') return BLANK;
  if (type === 'integer') return typeof v === 'bigint' && !Number.isSafeInteger(Number(v)) ? String(v) : Number(v);
  if (type === 'number') return Number(v);
  if (type === 'boolean') return Boolean(v);
  return String(v);
}

/**
 * Each facet's most frequent values over every record the (resolved) query matches: one grouping per
 * field, run side by side; `others` is what the listed values leave. Blank text and missing values are
 * one key, as a crosstab's `(blank)` row.
 */
export async function facetsSql(
  engine: SnapshotEngine,
  entry: IndexEntry,
  where: QueryNode,
  facets: readonly FacetRequest[],
  signal?: AbortSignal,
): Promise<FacetCounts[]> {
  const loaded = await engine.table(entry);
  const compiled = compileWhere(where, loaded);
  return Promise.all(
    facets.map(async (f) => {
      const col = ident(f.field);
      const type = loaded.columnTypes.get(f.field) ?? '';
      const key =
        f.type === 'string'
          ? `nullif(CAST(${col} AS VARCHAR), '')`
          : type === 'DATE'
            ? `strftime(${col}, '%Y-%m-%d')`
            : type.startsWith('TIMESTAMP')
              ? `strftime(${col}, '%Y-%m-%dT%H:%M:%S')`
              : col;
      // Blank last among equal counts, values in their own order (text by code point).
      const rows = await engine.all(
        `WITH g AS (SELECT ${key} AS v, count(*) AS n FROM ${ident(loaded.table)} WHERE ${compiled.sql} GROUP BY 1)
         SELECT v, n, sum(n) OVER () AS total FROM g ORDER BY n DESC, v ASC NULLS LAST LIMIT ${f.limit}`,
        compiled.params,
        signal,
      );
      const total = rows.length ? Number(rows[0].total) : 0;
      const values = rows.map((r) => ({ value: facetValue(r.v, f.type), count: Number(r.n) }));
      return { field: f.field, values, others: total - values.reduce((s, v) => s + v.count, 0) };
    }),
  );
}
