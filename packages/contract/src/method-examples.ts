// Each method's examples: the calls are written here, their answers (result.data and result.meta) are
// recorded in method-example-answers.json by tests/openrpc.test.ts (QUARRY_UPDATE_EXAMPLES=1) from real
// calls on the data `npm start` serves (scripts/sample-data.sh); that test fails when a call no longer
// answers what is recorded.
import type { MethodName, ParamsOf } from './methods';
import ANSWERS from './method-example-answers.json';

export interface MethodExample {
  name: string;
  /** What the call needs beyond what `npm start` configures, and how tests/openrpc.test.ts provides it. */
  setup?: string;
  params: Record<string, unknown>;
  /** result.data */
  result: unknown;
  /** result.meta, the call made with `X-Request-Id: example` */
  meta: { requestId: string; cache?: string } & Record<string, unknown>;
}

/** An example as written: what it shows, and the params sent exactly so. */
export interface ExampleCall<M extends MethodName = MethodName> {
  name: string;
  setup?: string;
  params: ParamsOf<M>;
}

/** The report `npm start` saves (scripts/sample-reports.jsonl), and the second one it saves. */
const SAMPLE_REPORT = '5a3e1c2b-7d4f-4e8a-9b6c-0d1e2f3a4b5c';
const SECOND_SAMPLE_REPORT = '7c9d2e4f-1a3b-4c5d-8e6f-0a1b2c3d4e5f';

/** A call of `M` on the movies index. */
const onMovies = <M extends 'QUERIES.EXECUTE' | 'CROSSTAB.EXECUTE' | 'TOKENS.EMBED'>(
  name: string,
  params: Omit<ParamsOf<M>, 'index'>,
): ExampleCall<M> => ({ name, params: { index: 'movies', ...params } as ParamsOf<M> });

/** A call of `M` on the sample report. */
const onSampleReport = <M extends 'REPORTS.METADATA' | 'REPORTS.EXECUTE' | 'REPORTS.UPDATE'>(
  name: string,
  params?: Omit<ParamsOf<M>, 'guid'>,
): ExampleCall<M> => ({ name, params: { guid: SAMPLE_REPORT, ...params } as ParamsOf<M> });

/** REPORTS.SCHEDULE of the sample report: when, in which format, and where to (which the server must allow). */
const schedule = (
  name: string,
  setup: string,
  when: Pick<ParamsOf<'REPORTS.SCHEDULE'>, 'cron' | 'timeZone'>,
  format: ParamsOf<'REPORTS.SCHEDULE'>['format'],
  deliver: ParamsOf<'REPORTS.SCHEDULE'>['deliver'],
): ExampleCall<'REPORTS.SCHEDULE'> => ({ name, setup, params: { guid: SAMPLE_REPORT, ...when, format, deliver } });

/** The id the first REPORTS.SCHEDULE example got, as recorded: what REPORTS.UNSCHEDULE removes. */
const FIRST_SCHEDULE = (ANSWERS['REPORTS.SCHEDULE'][0].result as { scheduleId: string }).scheduleId;

/** The id the TOKENS.EMBED example's token got, as recorded: what the TOKENS.REVOKE_EMBED example revokes. */
const FIRST_EMBED = (ANSWERS['TOKENS.EMBED'][0].result as { id: string }).id;

/** The id the EXPORTS.START example's export got, as recorded: what the EXPORTS.STATUS example asks after. */
const FIRST_EXPORT =
  (
    (ANSWERS as Partial<Record<string, Array<{ result: unknown }>>>)['EXPORTS.START']?.[0]?.result as
      { exportId: string } | undefined
  )?.exportId ?? '00000000000000000000000000000000';

/** The id the SOURCES.CREATE example's source got, as recorded: what the other SOURCES examples name. */
const FIRST_SOURCE =
  (
    (ANSWERS as Partial<Record<string, Array<{ result: unknown }>>>)['SOURCES.CREATE']?.[0]?.result as
      { sourceId: string } | undefined
  )?.sourceId ?? '00000000000000000000000000000000';
/** Where the sources examples' SQLite file lies: a folder QUARRY_SOURCE_FILE_DIRS names. */
const SHOP_FILE = '/srv/quarry/sources/shop.sqlite';
const SOURCE_SETUP = `the server reads SQLite files in ${SHOP_FILE.replace(/\/[^/]+$/, '')} (QUARRY_SOURCE_FILE_DIRS), and ${SHOP_FILE} holds a table orders (the test writes one and sends its own path)`;

/** The id the TOKENS.CREATE example's token got, as recorded: what the TOKENS.REVOKE example revokes. */
const FIRST_TOKEN =
  (
    (ANSWERS as Partial<Record<string, Array<{ result: unknown }>>>)['TOKENS.CREATE']?.[0]?.result as
      { id: string } | undefined
  )?.id ?? '00000000-0000-4000-8000-000000000000';
/** The replay token the QUERIES.EXECUTE example got, as recorded: what the QUERIES.REPLAY example sends. */
const FIRST_REPLAY =
  (
    (ANSWERS as Partial<Record<string, Array<{ meta: unknown }>>>)['QUERIES.EXECUTE']?.[0]?.meta as
      { replay?: string } | undefined
  )?.replay ?? 'qr1.unrecorded.unrecorded';
/** The user the USERS examples create, change and remove. */
const ADA = 'ada@example.com';
const ADMIN_SETUP = 'the demo user npm start creates is an admin, and its token holds users:admin';

/** Each method's examples as called; the first is the one a reader meets first. */
export const EXAMPLE_CALLS: { [M in MethodName]: Array<ExampleCall<M>> } = {
  'QUERIES.EXECUTE': [
    onMovies('the two Star Wars films that grossed most worldwide', {
      query: 'Title:"Star Wars"',
      pageSize: 2,
      sort: [{ field: 'Worldwide Gross', direction: 'desc' }],
    }),
  ],
  'QUERIES.REPLAY': [
    {
      name: 'the QUERIES.EXECUTE example again, from the version it ran on',
      setup: 'that example ran (the test sends the token its QUERIES.EXECUTE call got)',
      params: { token: FIRST_REPLAY },
    },
  ],
  'INDEXES.FIND': [{ name: 'the airports index', params: { searchText: 'airports', limit: 1 } }],
  'CROSSTAB.EXECUTE': [
    onMovies('dramas per MPAA rating, top 3, as JSON', {
      query: '(Major Genre):Drama AND (MPAA Rating):*',
      rows: ['MPAA Rating'],
      totals: [{ aggregationType: 'Count' }, { aggregationType: 'Average', field: 'IMDB Rating' }],
      rowOrder: { by: 'value', direction: 'desc' },
      rowLimit: 3,
      format: 'json',
    }),
    onMovies('films per MPAA rating as the ECharts option of a pie chart', {
      query: '(MPAA Rating):*',
      rows: ['MPAA Rating'],
      totals: [{ aggregationType: 'Count' }],
      chartType: 'Pie2D',
      imageFormat: 'echarts',
      width: 480,
      height: 320,
    }),
  ],
  'REPORTS.FIND': [{ name: 'reports about dramas', params: { search: 'dramas', limit: 1 } }],
  'REPORTS.METADATA': [onSampleReport('the sample report npm start saves')],
  'REPORTS.EXECUTE': [onSampleReport('the sample report run as the caller, as a CSV table', { format: 'csv' })],
  'REPORTS.UPDATE': [
    onSampleReport('file and share the sample report (no new version: its params stay)', {
      folder: 'samples',
      shared: true,
    }),
  ],
  'REPORTS.DELETE': [{ name: 'move the second sample report into the trash', params: { guid: SECOND_SAMPLE_REPORT } }],
  'REPORTS.SCHEDULE': [
    schedule(
      'the sample report as CSV every Monday at 08:00 Paris time, by e-mail (needs QUARRY_SMTP_URL)',
      'QUARRY_SMTP_URL names an SMTP relay (the test starts one)',
      { cron: '0 8 * * 1', timeZone: 'Europe/Paris' },
      'csv',
      { email: { to: ['analyst@example.com'] } },
    ),
    schedule(
      'the sample report as JSON every weekday at 07:30 UTC, to a signed webhook (needs QUARRY_WEBHOOK_ALLOW)',
      'QUARRY_WEBHOOK_ALLOW admits the URL (hooks.example.com does not resolve where the test runs: it sends the same path to a local receiver its QUARRY_WEBHOOK_ALLOW names)',
      { cron: '30 7 * * 1-5', timeZone: 'UTC' },
      'json',
      { webhook: { url: 'https://hooks.example.com/quarry' } },
    ),
  ],
  'REPORTS.SCHEDULES': [{ name: "the caller's schedules: the two the REPORTS.SCHEDULE examples made", params: {} }],
  'REPORTS.UNSCHEDULE': [
    {
      name: 'remove the schedule the first REPORTS.SCHEDULE example made',
      setup: 'that schedule exists (the test sends the id its REPORTS.SCHEDULE call got)',
      params: { scheduleId: FIRST_SCHEDULE },
    },
  ],
  'TOKENS.EMBED': [
    onMovies('a token a browser may use for ten minutes to search dramas in movies', {
      realm: '(Major Genre):Drama',
      ttlSeconds: 600,
    }),
  ],
  'TOKENS.REVOKE_EMBED': [
    {
      name: 'revoke the embed token the TOKENS.EMBED example issued, before it expires',
      setup: 'that embed token exists (the test sends the id its TOKENS.EMBED call got)',
      params: { id: FIRST_EMBED },
    },
  ],
  'TOKENS.WHOAMI': [{ name: 'who the sample token belongs to, and what it may do', params: {} }],
  'EXPORTS.START': [
    {
      name: 'every drama in movies as CSV, the highest-grossing first',
      params: {
        method: 'QUERIES.EXECUTE',
        params: {
          index: 'movies',
          query: '(Major Genre):Drama',
          sort: [{ field: 'Worldwide Gross', direction: 'desc' }],
        },
        format: 'csv',
      },
    },
  ],
  'EXPORTS.STATUS': [
    {
      name: 'how the EXPORTS.START example’s export is doing',
      setup: 'that export exists (the test sends the id its EXPORTS.START call got, once it is done)',
      params: { exportId: FIRST_EXPORT },
    },
  ],
  'SOURCES.CREATE': [
    {
      name: 'the orders table of a SQLite file into index orders, new rows appended every morning',
      setup: SOURCE_SETUP,
      params: {
        name: 'shop orders',
        index: 'orders',
        kind: 'sqlite',
        connection: { url: SHOP_FILE },
        table: 'orders',
        refresh: { cron: '0 6 * * *', timeZone: 'Europe/Paris', mode: 'append', cursor: 'order_id' },
      },
    },
  ],
  'SOURCES.RUN': [
    {
      name: 'run the SOURCES.CREATE example’s source now',
      setup: 'that source exists (the test sends the id its SOURCES.CREATE call got)',
      params: { sourceId: FIRST_SOURCE },
    },
  ],
  'SOURCES.RUNS': [
    {
      name: 'how its runs went: the SOURCES.RUN example’s run, done',
      setup: 'the test waits for that run to end',
      params: { sourceId: FIRST_SOURCE },
    },
  ],
  'SOURCES.FIND': [{ name: 'the sources that load index orders, each with its last run', params: { index: 'orders' } }],
  'SOURCES.UPDATE': [
    {
      name: 'refresh on weekdays only, at 7',
      params: {
        sourceId: FIRST_SOURCE,
        refresh: { cron: '0 7 * * 1-5', timeZone: 'Europe/Paris', mode: 'append', cursor: 'order_id' },
      },
    },
  ],
  'SOURCES.DELETE': [
    { name: 'remove the source (index orders keeps what it loaded)', params: { sourceId: FIRST_SOURCE } },
  ],
  'USERS.CREATE': [
    {
      name: 'a user who reads the dramas of movies, and nothing else',
      setup: ADMIN_SETUP,
      params: { name: ADA, indexes: ['movies'], realms: { movies: ['(Major Genre):Drama'] } },
    },
  ],
  'USERS.UPDATE': [
    {
      name: 'give her the Californian airports too',
      setup: ADMIN_SETUP,
      params: {
        name: ADA,
        indexes: ['movies', 'airports'],
        realms: { movies: ['(Major Genre):Drama'], airports: ['state:CA'] },
      },
    },
  ],
  'USERS.FIND': [{ name: 'one user by name', setup: ADMIN_SETUP, params: { name: ADA } }],
  'USERS.DISABLE': [{ name: 'stop all her tokens at once', setup: ADMIN_SETUP, params: { name: ADA } }],
  'USERS.ENABLE': [{ name: 'let her tokens work again', setup: ADMIN_SETUP, params: { name: ADA } }],
  'USERS.DELETE': [{ name: 'remove her', setup: ADMIN_SETUP, params: { name: ADA } }],
  'TOKENS.CREATE': [
    {
      name: 'a read-only token of one’s own for a week, for a dashboard',
      setup: 'the sample token holds tokens:write (npm start gives it)',
      params: { scopes: ['query:execute', 'indexes:read'], expiresIn: '7d', name: 'wall dashboard' },
    },
  ],
  'TOKENS.FIND': [{ name: 'the caller’s own tokens: the sample token and the one just made', params: {} }],
  'TOKENS.REVOKE': [
    {
      name: 'revoke the token the TOKENS.CREATE example made',
      setup: 'that token exists (the test sends the id its TOKENS.CREATE call got)',
      params: { id: FIRST_TOKEN },
    },
  ],
};

/** What each example answered, in the order of EXAMPLE_CALLS. */
export type ExampleAnswers = Record<MethodName, Array<Pick<MethodExample, 'result' | 'meta'>>>;

const NOT_RECORDED = { result: undefined, meta: { requestId: 'example' } };

/** Each method's examples with their recorded answers; the first is the one a reader meets first. */
export const METHOD_EXAMPLES = Object.fromEntries(
  Object.entries(EXAMPLE_CALLS).map(([method, calls]) => [
    method,
    calls.map((c, i): MethodExample => {
      // A call not recorded yet shows no result until QUARRY_UPDATE_EXAMPLES=1 records it (the test fails till then).
      const answer = (ANSWERS as Partial<ExampleAnswers>)[method as MethodName]?.[i];
      return { ...c, params: c.params as Record<string, unknown>, ...(answer ?? NOT_RECORDED) };
    }),
  ]),
) as Record<MethodName, MethodExample[]>;
