import {
  completeCrosstabExecute,
  completeIndexesFind,
  completeQueriesExecute,
  completeQueriesReplay,
  completeReportsExecute,
  completeReportsFind,
  completeReportsSchedule,
} from './complete-params';
import { inlinedDocument, openRpcDocument } from './openrpc-document';
import { parseParams } from './parse-params';
import {
  completeSourcesCreate,
  completeSourcesRuns,
  completeSourcesUpdate,
  sourcesCreateParams,
  sourcesDeleteParams,
  sourcesFindParams,
  sourcesRunParams,
  sourcesRunsParams,
  sourcesUpdateParams,
} from './params/source-params';
import {
  completeTokensCreate,
  completeUsersCreate,
  tokensCreateParams,
  usersCreateParams,
} from './params/identity-params';
import {
  crosstabExecuteParams,
  queriesReplayParams,
  indexesFindParams,
  queriesExecuteParams,
  reportsExecuteParams,
  reportsFindParams,
  reportsMetadataParams,
  reportsScheduleParams,
  reportsSchedulesParams,
  reportsUnscheduleParams,
} from './param-schemas';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [key: string]: Json };

/** Every `default` the document states, with the path of the value it fills (`[]` for an array's items). */
function documentedDefaults(schema: Schema, path: string[] = []): Array<{ path: string[]; value: Json }> {
  const found: Array<{ path: string[]; value: Json }> = [];
  if ('default' in schema) found.push({ path, value: schema.default });
  const props = schema.properties as { [key: string]: Schema } | undefined;
  for (const [k, v] of Object.entries(props ?? {})) found.push(...documentedDefaults(v, [...path, k]));
  if (schema.items) found.push(...documentedDefaults(schema.items as Schema, [...path, '[]']));
  for (const alt of ((schema.anyOf ?? schema.oneOf ?? []) as Schema[]) ?? [])
    found.push(...documentedDefaults(alt, path));
  return found;
}

/**
 * Where a default lands in the complete params: the same name at the same place, except where the
 * complete shape groups things (a crosstab's table format or chart settings live under `output`).
 */
function valueAt(value: unknown, path: string[]): { present: boolean; value?: unknown } {
  let at: unknown = value;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return { present: false };
    const next: unknown = key === '[]' ? (at as unknown[])[0] : (at as Record<string, unknown>)[key];
    if (next === undefined) {
      const output = (at as Record<string, unknown>).output;
      if (key !== '[]' && output && typeof output === 'object' && key in output) {
        at = (output as Record<string, unknown>)[key];
        continue;
      }
      return { present: false };
    }
    at = next;
  }
  return { present: true, value: at };
}

/** The least each method accepts, plus one of every optional object and array, so each default has a place. */
const MINIMAL = {
  'SOURCES.CREATE': [
    completeSourcesCreate(
      parseParams(sourcesCreateParams, {
        name: 's',
        index: 'i',
        kind: 'url',
        connection: { url: 'https://example.com/a.csv' },
        refresh: { mode: 'replace' },
        load: {},
      }),
    ),
  ],
  'USERS.CREATE': [completeUsersCreate(parseParams(usersCreateParams, { name: 'ada' }))],
  'TOKENS.CREATE': [completeTokensCreate(parseParams(tokensCreateParams, { scopes: ['query:execute'] }))],
  'SOURCES.RUN': [parseParams(sourcesRunParams, { sourceId: 'a'.repeat(32) })],
  'SOURCES.RUNS': [completeSourcesRuns(parseParams(sourcesRunsParams, { sourceId: 'a'.repeat(32) }))],
  'SOURCES.FIND': [parseParams(sourcesFindParams, {})],
  'SOURCES.UPDATE': [
    completeSourcesUpdate(
      parseParams(sourcesUpdateParams, { sourceId: 'a'.repeat(32), refresh: { mode: 'append' }, load: {} }),
    ),
  ],
  'SOURCES.DELETE': [parseParams(sourcesDeleteParams, { sourceId: 'a'.repeat(32) })],
  'QUERIES.REPLAY': [completeQueriesReplay(parseParams(queriesReplayParams, { token: 'qr1.a.b' }))],
  'QUERIES.EXECUTE': [
    completeQueriesExecute(
      parseParams(queriesExecuteParams, {
        index: 'movies',
        sort: [{ field: 'Title' }],
        highlight: {},
        facets: [{ field: 'Major Genre' }],
        saveReport: { name: 'r' },
      }),
    ),
  ],
  'INDEXES.FIND': [completeIndexesFind(parseParams(indexesFindParams, {}))],
  'CROSSTAB.EXECUTE': [
    completeCrosstabExecute(
      parseParams(crosstabExecuteParams, {
        index: 'movies',
        rows: ['Distributor'],
        columns: [{ field: 'MPAA Rating' }],
        totals: [{ aggregationType: 'Count', format: {} }],
        rowOrder: { by: 'value' },
        columnOrder: { by: 'label' },
        saveReport: { name: 'r' },
      }),
    ),
    completeCrosstabExecute(
      parseParams(crosstabExecuteParams, {
        index: 'movies',
        rows: ['Distributor'],
        totals: [{ aggregationType: 'Count' }],
        chartType: 'Pie2D',
      }),
    ),
    completeCrosstabExecute(
      parseParams(crosstabExecuteParams, {
        index: 'movies',
        rows: [
          { field: 'IMDB Rating', bin: { width: 1 } },
          { field: 'Release Date', dateGroup: 'year' },
        ],
        columns: [{ field: 'Running Time min', bin: { width: 30 } }],
        totals: [{ aggregationType: 'Median', field: 'Worldwide Gross', compare: { to: 'previousYear' } }],
      }),
    ),
  ],
  'REPORTS.FIND': [completeReportsFind(parseParams(reportsFindParams, {}))],
  'REPORTS.METADATA': [parseParams(reportsMetadataParams, { guid: 'g' })],
  'REPORTS.SCHEDULE': [
    completeReportsSchedule(
      parseParams(reportsScheduleParams, {
        guid: 'g',
        cron: '0 8 * * 1',
        format: 'csv',
        deliver: { email: { to: ['a@example.com'] } },
      }),
    ),
  ],
  'REPORTS.SCHEDULES': [parseParams(reportsSchedulesParams, {})],
  'REPORTS.UNSCHEDULE': [parseParams(reportsUnscheduleParams, { scheduleId: 's' })],
  'REPORTS.EXECUTE': [completeReportsExecute(parseParams(reportsExecuteParams, { guid: 'g' }))],
} as const;

describe('complete params: the defaults the OpenRPC document states are the ones applied', () => {
  const doc = inlinedDocument(openRpcDocument({ serverUrl: 'http://localhost/api/v1', version: '0' }));

  it.each(doc.methods.map((m) => [m.name as keyof typeof MINIMAL, m] as const))('%s', (name, method) => {
    const params = method.params as Array<{ name: string; schema: Schema }>;
    const defaults = params.flatMap((p) => documentedDefaults(p.schema, [p.name]));
    for (const { path, value } of defaults) {
      const landed = MINIMAL[name].map((complete) => valueAt(complete, path)).filter((v) => v.present);
      // Each default fills at least one of the minimal calls, and every one it fills holds that value.
      expect({ path: path.join('.'), landed: landed.length > 0 }).toEqual({ path: path.join('.'), landed: true });
      for (const v of landed) expect({ path: path.join('.'), value: v.value }).toEqual({ path: path.join('.'), value });
    }
  });

  it('the document states the defaults the services rely on', () => {
    const stated = doc.methods.flatMap((m) =>
      (m.params as Array<{ name: string; schema: Schema }>).flatMap((p) =>
        documentedDefaults(p.schema, [p.name]).map((d) => `${m.name as string} ${d.path.join('.')}`),
      ),
    );
    expect(stated).toEqual(
      expect.arrayContaining([
        'QUERIES.EXECUTE query',
        'QUERIES.EXECUTE page',
        'QUERIES.EXECUTE pageSize',
        'QUERIES.EXECUTE sort.[].direction',
        'QUERIES.EXECUTE highlight.fragmentSize',
        'QUERIES.EXECUTE facets.[].limit',
        'INDEXES.FIND limit',
        'CROSSTAB.EXECUTE columns.[].reverse',
        'CROSSTAB.EXECUTE totals.[].showAs',
        'CROSSTAB.EXECUTE totals.[].format.style',
        'CROSSTAB.EXECUTE totals.[].format.notation',
        'CROSSTAB.EXECUTE subtotals',
        'CROSSTAB.EXECUTE rowOrder.measure',
        'CROSSTAB.EXECUTE format',
        'CROSSTAB.EXECUTE imageFormat',
        'CROSSTAB.EXECUTE width',
        'REPORTS.FIND limit',
        'REPORTS.EXECUTE asOf',
      ]),
    );
  });

  it('normalises what the schema lets through in several spellings', () => {
    const q = completeQueriesExecute(
      parseParams(queriesExecuteParams, { index: 'm', query: '  ', sort: [{ field: 'a', direction: ' DESC ' }] }),
    );
    expect(q.query).toBe('*');
    expect(q.sort).toEqual([{ field: 'a', direction: 'desc' }]);
    const c = completeCrosstabExecute(
      parseParams(crosstabExecuteParams, {
        index: 'm',
        rows: ['a'],
        totals: [{ aggregationType: ' sUm ', field: 'x' }],
      }),
    );
    expect(c.totals[0].aggregationType).toBe('Sum');
    expect(c.rowOrder).toEqual({ by: 'label', measure: 0, direction: 'asc' });
    expect(c.output).toEqual({ kind: 'table', format: 'html' });
  });

  it('carries Other, a moving average window and a manual order through; an empty order is no order', () => {
    const c = completeCrosstabExecute(
      parseParams(crosstabExecuteParams, {
        index: 'm',
        rows: [
          { field: 'sev', order: ['Critical', 'High', null, 3, true] },
          { field: 'b', order: [] },
        ],
        columns: [{ field: 'c' }],
        totals: [{ aggregationType: 'Count', showAs: 'movingAverage', window: 4 }],
        rowLimit: 2,
        otherRow: true,
      }),
    );
    expect(c.rows[0].order).toEqual(['Critical', 'High', null, 3, true]);
    expect(c.rows[1]).not.toHaveProperty('order');
    expect(c.totals[0]).toMatchObject({ showAs: 'movingAverage', window: 4 });
    expect([c.otherRow, c.otherColumn]).toEqual([true, false]);
  });
});
