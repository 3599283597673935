import { z } from 'zod';
import { quoteInput } from '@quarry/errors';
import * as L from '../limits';
import {
  arrayOf,
  CROSS,
  intInRange,
  isTimeZone,
  oneOf,
  optionalBoolean,
  optionalNonBlank,
  optionalString,
  PARAM,
  requiredString,
  string,
} from './param-builders';

export const SOURCE_KINDS = ['postgres', 'mysql', 'sqlite', 'url'] as const;
export type SourceKindName = (typeof SOURCE_KINDS)[number];
export const SOURCE_MODES = ['replace', 'append', 'upsert'] as const;
export const SOURCE_RUN_STATES = ['queued', 'running', 'done', 'failed'] as const;
export const SOURCE_FIELD_TYPES = ['string', 'integer', 'number', 'boolean', 'date'] as const;

/** A source's and a run's id as the server hands them out: 32 lower-case hex digits. */
export const SOURCE_ID_PATTERN = /^[0-9a-f]{32}$/;
export const SOURCE_NAME_MAX = 100;
export const SOURCE_QUERY_MAX = 20_000;
export const SOURCE_URL_MAX = 2000;
/** Runs SOURCES.RUNS lists per source, newest first. */
export const SOURCE_RUNS_KEPT = 50;

const idOf = (what: string) =>
  z
    .string({ error: `${PARAM} must be a string` })
    .max(64, { error: `${PARAM} is not ${what}` })
    .regex(SOURCE_ID_PATTERN, { error: `${PARAM} is not ${what}` });

const sourceId = idOf('a source id').meta({ description: 'The id SOURCES.CREATE returned.' });

const indexName = z
  .string({ error: `${PARAM} must be a string` })
  .max(L.INDEX_NAME_MAX, { error: `${PARAM} must be at most ${L.INDEX_NAME_MAX} characters` })
  .regex(L.INDEX_NAME, {
    error: `${PARAM} is not an index name: 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
  });

const connection = z
  .strictObject(
    {
      url: optionalNonBlank(SOURCE_URL_MAX).meta({
        description:
          'postgres/mysql: a connection URL (postgres://user:password@host:5432/db, mysql://…); sqlite: the file (an absolute path or file: URL, in a folder QUARRY_SOURCE_FILE_DIRS names); url: the file to fetch (http or https; csv, json, jsonl or parquet by Content-Type or extension).',
      }),
      host: optionalNonBlank(255),
      port: intInRange(1, 65535),
      database: optionalNonBlank(255),
      user: optionalNonBlank(255),
      password: optionalString(1000).meta({
        description:
          'Kept encrypted at rest; never returned (hasPassword says whether one is kept), logged or audited.',
      }),
      ssl: optionalBoolean().meta({ description: 'TLS to the database (certificates verified).' }),
    },
    { error: `${PARAM} must be {url} or {host, port?, database, user, password?, ssl?}` },
  )
  .meta({
    description: 'Where the rows come from: {url}, or for a database {host, port?, database, user, password?, ssl?}.',
  });

const refresh = z
  .strictObject(
    {
      cron: requiredString(L.CRON_MAX).optional().meta({
        description:
          'When to refresh: 5 cron fields (minute hour day month weekday), or 6 with seconds first; runs closer together than QUARRY_SCHEDULE_MIN_INTERVAL_S are refused. Absent: the source runs only when SOURCES.RUN asks.',
      }),
      timeZone: string(L.TIME_ZONE_MAX, 'an IANA time zone name')
        .optional()
        .meta({ default: L.DEFAULT_TIME_ZONE, description: 'The zone cron is read in (IANA name).' }),
      mode: oneOf(SOURCE_MODES).meta({
        description:
          'replace: each run publishes the rows read as the new version; append: the rows read are added (with cursor, only rows past the last run’s largest cursor value are read); upsert: rows whose key appears replace the records of that key, the others are added.',
      }),
      cursor: optionalNonBlank(L.FIELD_NAME_MAX).meta({
        description:
          'append: the column (increasing: an id, an updated-at time) whose largest value a run remembers; the next run reads only rows past it, the bound passed as a query parameter. Rows whose cursor is null are never read.',
      }),
      key: optionalNonBlank(L.FIELD_NAME_MAX).meta({
        description: 'upsert: the field that names a record; it must be unique among the rows read.',
      }),
    },
    { error: `${PARAM} must be an object with mode` },
  )
  .superRefine((r, ctx) => {
    if (r.mode === 'upsert' && !r.key)
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['key'],
        message: `${PARAM} is required with mode "upsert"`,
      });
    if (r.mode !== 'upsert' && r.key)
      ctx.addIssue({ code: 'custom', params: CROSS, path: ['key'], message: `${PARAM} goes with mode "upsert"` });
    if (r.mode !== 'append' && r.cursor)
      ctx.addIssue({ code: 'custom', params: CROSS, path: ['cursor'], message: `${PARAM} goes with mode "append"` });
    if (r.timeZone !== undefined && r.timeZone.length <= L.TIME_ZONE_MAX && !isTimeZone(r.timeZone))
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['timeZone'],
        message: `${PARAM} ${quoteInput(r.timeZone)} is not a known IANA time zone (like "UTC" or "Europe/Paris")`,
      });
  })
  .meta({
    description: 'How each run loads, and when runs happen on their own. Absent: {mode: "replace"}, on demand.',
  });

const load = z
  .strictObject(
    {
      types: z
        .record(string(L.FIELD_NAME_MAX), oneOf(SOURCE_FIELD_TYPES), { error: `${PARAM} must be an object` })
        .optional()
        .meta({
          description:
            'Field → type, as `quarry index load --type` takes them, over what the database says (a column the database types exactly needs none).',
        }),
      views: arrayOf(
        z.strictObject(
          { name: requiredString(L.FIELD_NAME_MAX), field: requiredString(L.FIELD_NAME_MAX) },
          { error: `${PARAM} must be {name, field}` },
        ),
        50,
      )
        .optional()
        .meta({ description: 'Dynamic views of the index, as `quarry index load --view name=field`.' }),
      onError: oneOf(['fail', 'skip'] as const)
        .optional()
        .meta({
          default: 'fail',
          description: 'fail: a malformed row fails the run; skip: it is rejected and counted.',
        }),
      maxErrors: intInRange(0, 1_000_000_000).meta({
        description: 'With onError skip: the most rows a run may reject.',
      }),
    },
    { error: `${PARAM} must be an object` },
  )
  .superRefine((l, ctx) => {
    if (l.maxErrors !== undefined && l.onError !== 'skip')
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['maxErrors'],
        message: `${PARAM} goes with onError "skip" (a strict load allows none)`,
      });
  })
  .meta({ description: 'How rows are loaded, as `quarry index load` loads a file.' });

const sourceBody = {
  name: requiredString(SOURCE_NAME_MAX).meta({
    description: 'A name of the caller’s own, unique among their sources.',
  }),
  index: indexName.meta({
    description:
      'The index each run loads: one the caller owns (or, as an admin, any), or a new name, which the first run creates.',
  }),
  kind: oneOf(SOURCE_KINDS).meta({ description: 'What the connection reaches.' }),
  connection,
  query: optionalNonBlank(SOURCE_QUERY_MAX).meta({
    description:
      'postgres/mysql/sqlite: the SELECT each run reads, inside a read-only transaction (or table). A cursor is compared outside it: SELECT * FROM (query) WHERE cursor > $1.',
  }),
  table: optionalNonBlank(255).meta({
    description: 'postgres/mysql/sqlite: every row of this table (schema.table allowed).',
  }),
  refresh: refresh.optional(),
  load: load.optional(),
};

/** The rules across parameters a source's kind sets (also checked again on SOURCES.UPDATE's merge). */
export function sourceShapeProblems(
  s: { kind: SourceKindName; connection: z.output<typeof connection>; query?: string; table?: string },
  at: (key: string) => (string | number)[],
): Array<{ path: (string | number)[]; message: string }> {
  const problems: Array<{ path: (string | number)[]; message: string }> = [];
  const c = s.connection;
  const database = s.kind === 'postgres' || s.kind === 'mysql';
  const hostForm = c.host !== undefined || c.database !== undefined || c.user !== undefined;
  if (database) {
    if (c.url !== undefined && (hostForm || c.port !== undefined || c.password !== undefined))
      problems.push({ path: at('connection'), message: `${PARAM} takes url or host, database, user: not both` });
    else if (c.url === undefined)
      for (const k of ['host', 'database', 'user'] as const)
        if (c[k] === undefined)
          problems.push({ path: [...at('connection'), k], message: `${PARAM} is required (or give connection.url)` });
    if ((s.query === undefined) === (s.table === undefined))
      problems.push({
        path: at('query'),
        message: `${PARAM}: a ${s.kind} source reads a query or a table (one of them)`,
      });
  } else {
    if (c.url === undefined)
      problems.push({ path: [...at('connection'), 'url'], message: `${PARAM} is required for a ${s.kind} source` });
    if (hostForm || c.port !== undefined || c.password !== undefined || c.ssl !== undefined)
      problems.push({ path: at('connection'), message: `${PARAM} of a ${s.kind} source is {url} alone` });
    if (s.kind === 'url' && (s.query !== undefined || s.table !== undefined))
      problems.push({ path: at('query'), message: `${PARAM}: a url source reads the whole file (no query or table)` });
    if (s.kind === 'sqlite' && (s.query === undefined) === (s.table === undefined))
      problems.push({ path: at('query'), message: `${PARAM}: a sqlite source reads a query or a table (one of them)` });
  }
  return problems;
}

export const sourcesCreateParams = z
  .strictObject(sourceBody)
  .superRefine((s, ctx) => {
    for (const p of sourceShapeProblems(s, (k) => [k]))
      ctx.addIssue({ code: 'custom', params: CROSS, path: p.path, message: p.message });
  })
  .meta({ title: 'SourcesCreateParams' });

export const sourcesCreateResult = z
  .strictObject({
    sourceId: z.string().meta({ description: 'Ask SOURCES.RUN, SOURCES.RUNS, SOURCES.UPDATE with it.' }),
  })
  .meta({ title: 'SourcesCreateResult' });

export const sourcesFindParams = z
  .strictObject({
    sourceId: sourceId.optional().meta({ description: 'One source; absent: every source the caller may see.' }),
    index: indexName.optional().meta({ description: 'Only the sources that load this index.' }),
  })
  .meta({ title: 'SourcesFindParams' });

const runSummary = z
  .strictObject({
    runId: z.string(),
    state: z.enum(SOURCE_RUN_STATES),
    trigger: z.enum(['manual', 'schedule']).meta({ description: 'SOURCES.RUN, or the refresh cron.' }),
    mode: z.enum(SOURCE_MODES),
    rowsRead: z.number().int().meta({ description: 'Rows read from the source (0 until the load has counted them).' }),
    loaded: z.number().int(),
    rejected: z.number().int(),
    version: z.number().int().optional().meta({ description: 'The index version the run published.' }),
    cursorAfter: z
      .string()
      .optional()
      .meta({ description: 'append with cursor: the bound this run read past (absent: it read every row).' }),
    cursorMax: z.string().optional().meta({ description: 'append with cursor: the largest cursor value read.' }),
    queuedAt: z.string(),
    startedAt: z.string().optional(),
    endedAt: z.string().optional(),
    error: z.string().optional().meta({ description: 'Why it failed (state "failed"); nothing was published.' }),
  })
  .meta({ title: 'SourceRun' });

const shownConnection = z
  .strictObject({
    url: z.string().optional().meta({
      description:
        'As given, with a password, a user name without one, and the query (which may hold a token or a signature) replaced by ***.',
    }),
    host: z.string().optional(),
    port: z.number().int().optional(),
    database: z.string().optional(),
    user: z.string().optional(),
    ssl: z.boolean().optional(),
    hasPassword: z.boolean().meta({ description: 'A password is kept (encrypted); it is never returned.' }),
  })
  .meta({ description: 'The connection without its secret.' });

export const sourceSummary = z
  .strictObject({
    sourceId: z.string(),
    name: z.string(),
    index: z.string(),
    kind: z.enum(SOURCE_KINDS),
    owner: z.string().meta({ description: 'The user who created it; its runs run with that token’s rights.' }),
    connection: shownConnection,
    query: z.string().optional(),
    table: z.string().optional(),
    refresh: z.strictObject({
      cron: z.string().optional(),
      timeZone: z.string(),
      mode: z.enum(SOURCE_MODES),
      cursor: z.string().optional(),
      key: z.string().optional(),
    }),
    load: z.strictObject({
      types: z.record(z.string(), z.enum(SOURCE_FIELD_TYPES)).optional(),
      views: z.array(z.strictObject({ name: z.string(), field: z.string() })).optional(),
      onError: z.enum(['fail', 'skip']),
      maxErrors: z.number().int().optional(),
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
    nextRunAt: z.string().optional().meta({ description: 'The next refresh the cron makes (ISO-8601 UTC).' }),
    lastRun: runSummary.optional(),
  })
  .meta({ title: 'SourceSummary' });

export const sourcesFindResult = z
  .strictObject({ sources: z.array(sourceSummary) })
  .meta({ title: 'SourcesFindResult' });

export const sourcesUpdateParams = z
  .strictObject({
    sourceId,
    name: sourceBody.name.optional(),
    index: sourceBody.index.optional(),
    connection: connection.optional().meta({
      description:
        'Replaces the connection; a password left out keeps the one kept when host, user and database stay as they were.',
    }),
    query: sourceBody.query,
    table: sourceBody.table,
    refresh: z
      .union([refresh, z.null()], { error: `${PARAM} must be an object with mode, or null` })
      .optional()
      .meta({ description: 'Replaces the refresh; null: on demand, mode replace.' }),
    load: load.optional().meta({ description: 'Replaces how rows are loaded.' }),
  })
  .meta({ title: 'SourcesUpdateParams' });

export const sourcesUpdateResult = sourceSummary.meta({ title: 'SourcesUpdateResult' });

export const sourcesDeleteParams = z.strictObject({ sourceId }).meta({ title: 'SourcesDeleteParams' });

export const sourcesDeleteResult = z
  .strictObject({ sourceId: z.string(), deleted: z.literal(true) })
  .meta({ title: 'SourcesDeleteResult' });

export const sourcesRunParams = z.strictObject({ sourceId }).meta({ title: 'SourcesRunParams' });

export const sourcesRunResult = z
  .strictObject({ runId: z.string().meta({ description: 'Its state is in SOURCES.RUNS.' }) })
  .meta({ title: 'SourcesRunResult' });

export const sourcesRunsParams = z
  .strictObject({
    sourceId,
    limit: intInRange(1, SOURCE_RUNS_KEPT).meta({ default: 20, description: 'How many runs, newest first.' }),
  })
  .meta({ title: 'SourcesRunsParams' });

export const sourcesRunsResult = z.strictObject({ runs: z.array(runSummary) }).meta({ title: 'SourcesRunsResult' });

export type SourcesCreateParams = z.output<typeof sourcesCreateParams>;
export type SourcesUpdateParams = z.output<typeof sourcesUpdateParams>;
export type SourceConnectionParams = z.output<typeof connection>;
export type SourceRefreshParams = z.output<typeof refresh>;
export type SourceLoadParams = z.output<typeof load>;
export type SourceSummary = z.output<typeof sourceSummary>;
export type SourceRunSummary = z.output<typeof runSummary>;
export type SourceRunState = (typeof SOURCE_RUN_STATES)[number];

type RefreshIn = SourceRefreshParams | null | undefined;
const completeRefresh = <R extends RefreshIn>(r: R): R =>
  (r ? { ...r, timeZone: r.timeZone?.trim() || L.DEFAULT_TIME_ZONE } : r) as R;
const completeLoad = (l: SourceLoadParams | undefined) => (l ? { ...l, onError: l.onError ?? 'fail' } : l);

/** refresh.timeZone and load.onError as the document states their defaults. */
export function completeSourcesCreate(p: SourcesCreateParams): SourcesCreateParams {
  const { refresh, load, ...rest } = p;
  return {
    ...rest,
    ...(refresh ? { refresh: completeRefresh(refresh) } : {}),
    ...(load ? { load: completeLoad(load) } : {}),
  };
}

export function completeSourcesUpdate(p: SourcesUpdateParams): SourcesUpdateParams {
  const { refresh, load, ...rest } = p;
  return {
    ...rest,
    ...(refresh !== undefined ? { refresh: completeRefresh(refresh) } : {}),
    ...(load ? { load: completeLoad(load) } : {}),
  };
}

export function completeSourcesRuns(p: z.output<typeof sourcesRunsParams>): z.output<typeof sourcesRunsParams> {
  return { ...p, limit: p.limit ?? 20 };
}
