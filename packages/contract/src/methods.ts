import type { z } from 'zod';
import * as P from './param-schemas';
import * as R from './result-schemas';
import * as X from './params/export-params';
import * as S from './params/source-params';
import * as I from './params/identity-params';
import type { Scope } from './scopes';

/** When a business error (JSON-RPC code = HTTP status) happens, per method. */
export interface MethodError {
  code: 400 | 403 | 404 | 409 | 429 | 503 | 504;
  when: string;
}

export interface MethodContract<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  /** The client's group and function: `client.queries.execute(…)`. */
  group: 'queries' | 'indexes' | 'crosstab' | 'reports' | 'tokens' | 'exports' | 'sources' | 'users';
  call:
    | 'execute'
    | 'find'
    | 'metadata'
    | 'update'
    | 'delete'
    | 'schedule'
    | 'schedules'
    | 'unschedule'
    | 'embed'
    | 'revokeEmbed'
    | 'whoami'
    | 'start'
    | 'status'
    | 'create'
    | 'run'
    | 'runs'
    | 'disable'
    | 'enable'
    | 'revoke'
    | 'replay';
  /** The scope the method needs; null: any valid API token may call it. */
  scope: Scope | null;
  /** Another scope the method needs besides `scope` (running a report runs a query). */
  alsoNeeds?: Scope;
  /** Needs reports:write too when saveReport is given. */
  saves: boolean;
  /** Served through the result cache: `result.meta.cache` says how it answered. */
  cached: boolean;
  /** May be answered from a rollup: `result.meta.servedBy` names it. */
  rollups?: true;
  /** Runs on an index version: `result.meta.provenance` says which data gave the answer. */
  provenance?: true;
  /** `result.meta.replay` is a token QUERIES.REPLAY answers the same data for, from the same version. */
  replays?: true;
  /** Takes `verify: true`: `result.meta.verify` counts the cells recomputed and those that differed. */
  verifies?: true;
  summary: string;
  description: string;
  params: P;
  result: R;
  errors: readonly MethodError[];
}

const common: readonly MethodError[] = [
  {
    code: 400,
    when: 'A parameter is missing, of the wrong type, out of range or unknown; the detail names each one (the first 20, then how many more).',
  },
  { code: 403, when: 'The token lacks the scope the method needs.' },
  { code: 503, when: 'The server is at capacity (Retry-After says when to try again) or a service cannot be reached.' },
  { code: 504, when: 'The call did not finish within its deadline; its work was cancelled.' },
];

const onIndex: readonly MethodError[] = [
  {
    code: 400,
    when: 'The query does not parse, names an unknown field, or nests too deeply; the detail quotes the place.',
  },
  { code: 404, when: 'The index does not exist or the token may not read it (the two are not told apart).' },
];

const saving: readonly MethodError[] = [{ code: 403, when: 'saveReport is given and the token lacks reports:write.' }];

/** The admin API's refusals beyond the scope: the token's user must be an admin too. */
const adminOnly: readonly MethodError[] = [
  { code: 403, when: 'The token lacks users:admin, its user is not an admin, or the caller is an embed token.' },
];
const noSuchUser: MethodError = { code: 404, when: 'No user of that name.' };
/** An admin's guard against locking themselves out: their own user stays an active admin. */
const notOneself: MethodError = {
  code: 400,
  when: 'The user is the caller’s own (an admin may not disable, demote or delete the user their token belongs to).',
};
const realmProblems: MethodError = {
  code: 400,
  when: 'A realm names an index the user is not given, is blank, does not parse or names a field its index does not have, or is given to an admin.',
};

const method = <P extends z.ZodType, R extends z.ZodType>(m: MethodContract<P, R>) => m;

/** The method catalogue, in the order the API has always listed them (docs/api.md keeps it). */
export const METHODS = {
  'QUERIES.EXECUTE': method({
    group: 'queries',
    call: 'execute',
    scope: 'query:execute',
    saves: true,
    cached: true,
    provenance: true,
    replays: true,
    summary: 'Search an index: one page of matching records, best first or sorted.',
    description:
      'Runs the query on the index the token may read (realms filter records and fields), and returns one page with the total count. How records are ordered: with `sort`, by its keys (ties in load order; "_score" is the relevance score); without it, a query holding words, phrases or fuzzy words (word~1) ranks by relevance, best first (BM25 over the index version, data.scores aligned with records), and a query of only filters, ranges, prefixes or * keeps load order. `highlight` returns matched words in <mark> per record; `facets` counts each field\'s values over every match.',
    params: P.queriesExecuteParams,
    result: R.queriesExecuteResult,
    errors: [...common, ...onIndex, ...saving],
  }),
  'QUERIES.REPLAY': method({
    group: 'queries',
    call: 'replay',
    scope: 'query:execute',
    saves: false,
    cached: true,
    rollups: true,
    provenance: true,
    replays: true,
    summary: 'Answer a search or crosstab again from the same index version, given its meta.replay token.',
    description:
      'Runs the call a meta.replay token records (QUERIES.EXECUTE, CROSSTAB.EXECUTE or REPORTS.EXECUTE, with every parameter it had and the time its relative dates were read at) on the index version it ran on, and returns the same data: the same records in the same order, the same cells. It runs with the permissions and realms the caller has now, so a replay never shows what its caller may no longer read, and it needs the scopes the replayed method needs (REPORTS.EXECUTE: reports:read too). A token is signed by the deployment and issued to one user: changed in any way, or sent by another user, it is refused. Once the version is no longer kept (QUARRY_SNAPSHOT_KEEP_MB, saved reports keep theirs) the replay is a 404 naming it.',
    params: P.queriesReplayParams,
    result: R.queriesReplayResult,
    errors: [
      ...common,
      { code: 400, when: 'The token is not one this deployment signed (tampered, truncated, from elsewhere).' },
      {
        code: 403,
        when: 'The token was issued to another user, or the caller lacks a scope the replayed method needs.',
      },
      { code: 403, when: 'The caller is an embed token.' },
      { code: 404, when: 'The version the token ran on is no longer kept: the detail names it.' },
      ...onIndex,
    ],
  }),
  'INDEXES.FIND': method({
    group: 'indexes',
    call: 'find',
    scope: 'indexes:read',
    saves: false,
    cached: false,
    summary: 'List the indexes the token may read, with their fields and dynamic views.',
    description: 'Indexes in name order, cursor-paged; searchText filters by name and description words.',
    params: P.indexesFindParams,
    result: R.indexesFindResult,
    errors: [...common, { code: 400, when: 'The cursor is not one this server issued for the same search.' }],
  }),
  'CROSSTAB.EXECUTE': method({
    group: 'crosstab',
    call: 'execute',
    scope: 'query:execute',
    saves: true,
    cached: true,
    rollups: true,
    provenance: true,
    replays: true,
    verifies: true,
    summary: 'Pivot an index: a table (HTML, JSON, CSV, XLSX, PDF) or a chart (PNG, SVG, PDF).',
    description:
      'Groups the matching records by rows and columns and computes each total. Across parameters: rowOrder.measure and columnOrder.measure index into totals; format goes with tables and imageFormat with chartType, never both, except format pdf, which with chartType prints the chart (without imageFormat); a chart type may need two totals (MSCombiDY2D, Scatter); otherRow needs rowLimit and otherColumn columnLimit; a total’s window goes with showAs movingAverage, which requires it; an axis’s order lists each key once. A compare on a total needs a calendar dateGroup (year to hour) of one date field among rows or columns, goes with an aggregation (not a formula), and a compared total can neither order nor filter keys (rowOrder, columnOrder, rowFilter, columnFilter). The table as drawn may have at most 100,000 cells, and as a PDF at most 20,000 (format pdf: a 400 naming format otherwise, before it is printed).',
    params: P.crosstabExecuteParams,
    result: R.crosstabExecuteResult,
    errors: [
      ...common,
      ...onIndex,
      {
        code: 400,
        when: 'The crosstab would exceed 100,000 cells (20,000 as a PDF), or a chart type cannot draw that many categories legibly (the detail suggests rowLimit).',
      },
      ...saving,
    ],
  }),
  'REPORTS.FIND': method({
    group: 'reports',
    call: 'find',
    scope: 'reports:read',
    saves: false,
    cached: false,
    summary: "The token user's reports and the reports shared on indexes they may read.",
    description: 'Cursor-paged; search filters by name and description words, types by report type.',
    params: P.reportsFindParams,
    result: R.reportsFindResult,
    errors: [...common, { code: 400, when: 'The cursor is not one this server issued for the same search.' }],
  }),
  'REPORTS.METADATA': method({
    group: 'reports',
    call: 'metadata',
    scope: 'reports:read',
    saves: false,
    cached: false,
    summary: 'Load a report: the method and params that run it again.',
    description: 'The report must be the caller’s own or shared on an index the caller may read.',
    params: P.reportsMetadataParams,
    result: R.reportsMetadataResult,
    errors: [
      ...common,
      { code: 404, when: 'No such report, or one the caller may not see (the two are not told apart).' },
      { code: 404, when: 'The report has no such version (the detail says which it has).' },
    ],
  }),
  'REPORTS.EXECUTE': method({
    group: 'reports',
    call: 'execute',
    scope: 'reports:read',
    alsoNeeds: 'query:execute',
    saves: false,
    cached: true,
    rollups: true,
    provenance: true,
    replays: true,
    summary: "Run a saved report with the caller's own permissions: what its method returns, and which version ran.",
    description:
      'Runs the report (the latest version, or the one asked for) as QUERIES.EXECUTE or CROSSTAB.EXECUTE would, with the permissions and realms of the token\'s user: a shared report never lends its owner\'s. page and pageSize go with query reports, format and imageFormat with crosstab reports. asOf "saved" runs it on the index snapshot current when that version was saved, while Quarry keeps it (QUARRY_SNAPSHOT_KEEP_MB). A report may declare parameters (saveReport.parameters, REPORTS.UPDATE parameters; REPORTS.METADATA lists them): each value given here, or the parameter\'s default, is ANDed with the saved query as a literal typed by its field, never read as query syntax: text matches the whole value exactly (case and blanks kept), numbers and booleans equal values, a date its whole period ("2024-03" is March), a range from ≤ value ≤ to. An embed token may fix some parameters (TOKENS.EMBED parameters); its calls set only the others.',
    params: P.reportsExecuteParams,
    result: R.reportsExecuteResult,
    errors: [
      ...common,
      {
        code: 400,
        when: 'page or pageSize on a crosstab report, format or imageFormat on a query report, imageFormat on a table; a parameter the report does not declare, a value of the wrong type for its field, a required parameter not given (the detail names it).',
      },
      {
        code: 403,
        when: 'An embed token sets a parameter it fixes.',
      },
      { code: 404, when: 'No such report, or one the caller may not see (the two are not told apart).' },
      {
        code: 404,
        when: 'The report has no such version, or (asOf "saved") its index snapshot is no longer kept: the detail names the version.',
      },
      ...onIndex,
    ],
  }),
  'REPORTS.UPDATE': method({
    group: 'reports',
    call: 'update',
    scope: 'reports:write',
    saves: false,
    cached: false,
    summary: 'Change a report: its name, description, folder or sharing, or its params (a new version).',
    description:
      "Only its owner or an admin may change a report. New params are checked and run as when a report is saved (with the caller's permissions, which needs query:execute too) and become the next version; the earlier versions stay (REPORTS.METADATA lists them). Returns the report as REPORTS.METADATA does.",
    params: P.reportsUpdateParams,
    result: R.reportsUpdateResult,
    errors: [
      ...common,
      {
        code: 400,
        when: 'Nothing to change, params that fail as they would at save time, or params on another index.',
      },
      { code: 403, when: 'params is given and the token lacks query:execute.' },
      {
        code: 404,
        when: 'No such report, or one the caller does not own (the two are not told apart; an admin may change any).',
      },
      ...onIndex,
      { code: 409, when: 'The owner already has another report of that name.' },
    ],
  }),
  'REPORTS.DELETE': method({
    group: 'reports',
    call: 'delete',
    scope: 'reports:write',
    saves: false,
    cached: false,
    summary: 'Move a report into the trash.',
    description:
      'Only its owner or an admin may delete a report. It disappears from REPORTS.FIND, REPORTS.METADATA and REPORTS.EXECUTE at once; an operator can bring it back with `quarry report restore <guid>` for QUARRY_REPORT_TRASH_DAYS (30), after which it is purged.',
    params: P.reportsDeleteParams,
    result: R.reportsDeleteResult,
    errors: [
      ...common,
      {
        code: 404,
        when: 'No such report, one already deleted, or one the caller does not own (not told apart).',
      },
    ],
  }),
  'REPORTS.SCHEDULE': method({
    group: 'reports',
    call: 'schedule',
    scope: 'reports:write',
    saves: false,
    cached: false,
    summary: 'Deliver a report on a cron schedule, by signed webhook or e-mail.',
    description:
      'Each run executes the report with the schedule owner’s permissions at that time (a token revoked, an owner removed, a report deleted or no longer readable stop the schedule, with the reason listed). Webhooks are POSTed JSON {scheduleId, guid, version, runAt, contentType, data} signed the Standard Webhooks way (webhook-id stable per run, as is Idempotency-Key; webhook-timestamp; webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>"> with the secret’s key), and with the deprecated Quarry-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>"> (keyed by the secret in base64url, as schedules made before were shown it; removed in the next release); 5 tries with exponential backoff. Destinations must match QUARRY_WEBHOOK_ALLOW (a pattern without a port admits ports 80 and 443 only); redirects are not followed; loopback, link-local and private addresses (IPv4-compatible ::/96, site-local fec0::/10 and 100::/64 included) only when a pattern names them. A try must have the receiver\'s headers within 10 s and end within 30 s; e-mail goes through QUARRY_SMTP_URL with the output attached, each SMTP step within 10 s and the message within 30 s. runNow counts against QUARRY_SCHEDULE_MIN_INTERVAL_S per user and report; each owner has QUARRY_DELIVERIES_PER_DAY deliveries and QUARRY_RECIPIENTS_PER_DAY e-mail recipients per UTC day, and a run past either is not sent and is listed as failed. Every try is in the audit trail as (delivery). A report with parameters runs with their defaults; one that requires a parameter cannot be scheduled.',
    params: P.reportsScheduleParams,
    result: R.reportsScheduleResult,
    errors: [
      ...common,
      {
        code: 400,
        when: "The cron does not parse or runs too often, the time zone is unknown, the format does not suit the report, the caller has QUARRY_SCHEDULES_PER_USER schedules already, runNow comes within QUARRY_SCHEDULE_MIN_INTERVAL_S of the caller's last runNow of this report, deliver.email.to has more addresses than QUARRY_RECIPIENTS_PER_DAY, the webhook URL is not allowed (QUARRY_WEBHOOK_ALLOW, a private address) or e-mail is not configured; the detail names the parameter.",
      },
      { code: 404, when: 'No such report, or one the caller may not see (the two are not told apart).' },
    ],
  }),
  'REPORTS.SCHEDULES': method({
    group: 'reports',
    call: 'schedules',
    scope: 'reports:read',
    saves: false,
    cached: false,
    summary: "The caller's schedules, with their last delivery attempts.",
    description: 'Only schedules the caller created; guid narrows them to one report.',
    params: P.reportsSchedulesParams,
    result: R.reportsSchedulesResult,
    errors: common,
  }),
  'REPORTS.UNSCHEDULE': method({
    group: 'reports',
    call: 'unschedule',
    scope: 'reports:write',
    saves: false,
    cached: false,
    summary: 'Remove a schedule: no further deliveries.',
    description: 'Only the schedule’s owner may remove it.',
    params: P.reportsUnscheduleParams,
    result: R.reportsUnscheduleResult,
    errors: [...common, { code: 404, when: 'No such schedule, or another user’s (the two are not told apart).' }],
  }),
  'TOKENS.EMBED': method({
    group: 'tokens',
    call: 'embed',
    scope: 'embed:create',
    saves: false,
    cached: false,
    summary: 'Issue a short-lived token a browser may use for one report or one index.',
    description:
      "The token (a signed JWT) may only run that report (REPORTS.EXECUTE) or search and pivot that index (QUERIES.EXECUTE, CROSSTAB.EXECUTE, never saving), with the creator's permissions narrowed by realm. It stops working when it expires, when it is revoked (TOKENS.REVOKE_EMBED with the id returned here), or when the token that issued it is revoked or expires, or its user is disabled or removed. An embed token cannot issue another. Its calls count against the rate limit of the token that issued it.",
    params: P.tokensEmbedParams,
    result: R.tokensEmbedResult,
    errors: [
      ...common,
      {
        code: 400,
        when: 'The realm does not parse or names a field the index does not have, or the user holds QUARRY_EMBED_TOKENS_PER_USER live embed tokens already.',
      },
      {
        code: 404,
        when: 'The index or report does not exist or the token may not read it (the two are not told apart).',
      },
    ],
  }),
  'TOKENS.REVOKE_EMBED': method({
    group: 'tokens',
    call: 'revokeEmbed',
    scope: 'embed:create',
    saves: false,
    cached: false,
    summary: 'Revoke one embed token before it expires.',
    description:
      'Only embed tokens issued by the caller’s own user (through any of its tokens). From then on the embed token gets the plain HTTP 401 of an expired one: at once on the gateway that revoked it, within 2 s on the other gateway replicas. Revoking it again changes nothing and answers the same. `quarry token revoke-embed <id>` does the same for an operator, for any user.',
    params: P.tokensRevokeEmbedParams,
    result: R.tokensRevokeEmbedResult,
    errors: [
      ...common,
      {
        code: 404,
        when: 'No such embed token, one that has expired, or another user’s (the three are not told apart).',
      },
    ],
  }),
  'TOKENS.WHOAMI': method({
    group: 'tokens',
    call: 'whoami',
    scope: null,
    saves: false,
    cached: false,
    summary: 'Who the token belongs to, and what it may do.',
    description:
      'The user the token belongs to, the indexes and realms that bound what the user reads, and the token’s own scopes and expiry: what a console shows as "signed in as", and what to check first when a call is refused or a total looks filtered. Embed tokens may not call it.',
    params: P.tokensWhoamiParams,
    result: R.tokensWhoamiResult,
    errors: [...common.filter((e) => e.code !== 403), { code: 403, when: 'The caller is an embed token.' }],
  }),
  'EXPORTS.START': method({
    group: 'exports',
    call: 'start',
    scope: 'query:execute',
    saves: false,
    cached: false,
    summary: 'Export the whole answer of a search, a crosstab or a saved report to a file, in the background.',
    description:
      'Checks the method’s params and counts the records, then queues the export and answers at once with its id. A search exports every matching record in its sort, with the caller’s realms, as the search would. A crosstab exports the table it renders (csv, xlsx), its rows of cells (jsonl) or the table printed as CROSSTAB.EXECUTE format pdf prints it (pdf; with chartType the chart; a table over 20,000 cells fails the export, saying so); a saved report exports what its method and params give, as the caller (asOf and version as REPORTS.EXECUTE takes them). At most two of a user’s exports run at a time; more wait queued, and the queue takes every user’s first export before anyone’s second, so one user’s many exports never hold up another’s. A crosstab export whose table has more rows than QUARRY_EXPORT_MAX_ROWS fails, saying so. Ask EXPORTS.STATUS for progress and download the file at GET /exports/<exportId> with the same user’s token until it expires (QUARRY_EXPORT_TTL_S).',
    params: X.exportsStartParams,
    result: X.exportsStartResult,
    errors: [
      ...common,
      ...onIndex,
      {
        code: 400,
        when: 'The export would hold more records than QUARRY_EXPORT_MAX_ROWS, the format does not fit the method (parquet for a crosstab, pdf for a search or a search report), or the params carry saveReport, format, imageFormat, or chartType without format pdf.',
      },
      { code: 403, when: 'A report export and the token lacks reports:read.' },
      {
        code: 429,
        when: 'The user already has QUARRY_EXPORT_MAX_PER_USER exports queued or running; the detail names the setting.',
      },
    ],
  }),
  'EXPORTS.STATUS': method({
    group: 'exports',
    call: 'status',
    scope: 'query:execute',
    saves: false,
    cached: false,
    summary: 'An export’s state and progress.',
    description: 'Only the export’s creator sees it; any gateway answers.',
    params: X.exportsStatusParams,
    result: X.exportsStatusResult,
    errors: [...common, { code: 404, when: 'No such export, one that expired, or another user’s (not told apart).' }],
  }),
  'SOURCES.CREATE': method({
    group: 'sources',
    call: 'create',
    scope: 'indexes:write',
    saves: false,
    cached: false,
    summary:
      'Define where an index’s rows come from: a PostgreSQL or MySQL/MariaDB query or table, a SQLite file or a file at a URL.',
    description:
      'The source is checked and kept, nothing is read yet: SOURCES.RUN runs it now, refresh.cron on a schedule. Each run reads every row (replace, upsert) or only the rows past the last run’s largest cursor (append with cursor), streamed into a staged file with the database’s types kept exactly (numeric keeps its digits, bigint past 2^53 stays exact, timestamptz is an instant, date a calendar date, json its text), then loads it as `quarry index load` does and publishes one new version, or nothing: the previous version keeps serving. Runs run with the rights the creating token has at that time (a revoked token, a disabled user or an index no longer theirs fails the run, saying so), one load per index at a time. The host must match QUARRY_SOURCE_ALLOW (loopback, link-local and private addresses only when a pattern names the host exactly), checked now and on every run; a SQLite file must lie in a folder QUARRY_SOURCE_FILE_DIRS names. The password is encrypted at rest (QUARRY_SOURCE_KEY) and never returned, logged or audited.',
    params: S.sourcesCreateParams,
    result: S.sourcesCreateResult,
    errors: [
      ...common,
      {
        code: 400,
        when: 'The connection does not fit the kind, the host is not allowed (QUARRY_SOURCE_ALLOW, a private address) or the file not in QUARRY_SOURCE_FILE_DIRS, the cron does not parse or runs too often, or the caller has QUARRY_SOURCES_PER_USER sources already; the detail names the parameter.',
      },
      { code: 403, when: 'The index belongs to another user (only its owner or an admin loads it).' },
      { code: 409, when: 'The caller already has a source of that name.' },
    ],
  }),
  'SOURCES.RUN': method({
    group: 'sources',
    call: 'run',
    scope: 'indexes:write',
    saves: false,
    cached: false,
    summary: 'Run a source now, in the background.',
    description:
      'Answers at once with the run’s id; SOURCES.RUNS says how it goes. A run of a source already queued or running is refused rather than queued twice.',
    params: S.sourcesRunParams,
    result: S.sourcesRunResult,
    errors: [
      ...common,
      { code: 404, when: 'No such source, or another user’s (not told apart).' },
      { code: 409, when: 'A run of this source is already queued or running; its runId is in the detail.' },
    ],
  }),
  'SOURCES.RUNS': method({
    group: 'sources',
    call: 'runs',
    scope: 'indexes:write',
    saves: false,
    cached: false,
    summary: 'A source’s runs, newest first: state, rows read, loaded and rejected, the version published, the error.',
    description: `The last ${S.SOURCE_RUNS_KEPT} runs are kept.`,
    params: S.sourcesRunsParams,
    result: S.sourcesRunsResult,
    errors: [...common, { code: 404, when: 'No such source, or another user’s (not told apart).' }],
  }),
  'SOURCES.FIND': method({
    group: 'sources',
    call: 'find',
    scope: 'indexes:write',
    saves: false,
    cached: false,
    summary:
      'The caller’s sources (an admin’s: every source), each with its connection less its secret and its last run.',
    description:
      'sourceId names one, index narrows them to the sources that load it. A password is never shown: hasPassword says one is kept, and a URL’s password reads ***.',
    params: S.sourcesFindParams,
    result: S.sourcesFindResult,
    errors: [...common, { code: 404, when: 'sourceId names no source the caller may see (not told apart).' }],
  }),
  'SOURCES.UPDATE': method({
    group: 'sources',
    call: 'update',
    scope: 'indexes:write',
    saves: false,
    cached: false,
    summary: 'Change a source: its name, connection, query, refresh or load options.',
    description:
      'What is given replaces what was kept, checked as SOURCES.CREATE checks it; a run under way finishes as it started. A new cron takes effect at once. Changing the cursor column, the query or the table forgets the cursor’s last value (the next append run reads every row).',
    params: S.sourcesUpdateParams,
    result: S.sourcesUpdateResult,
    errors: [
      ...common,
      { code: 404, when: 'No such source, or another user’s (not told apart).' },
      { code: 409, when: 'The caller already has another source of that name.' },
    ],
  }),
  'SOURCES.DELETE': method({
    group: 'sources',
    call: 'delete',
    scope: 'indexes:write',
    saves: false,
    cached: false,
    summary: 'Remove a source, its schedule and its runs; the index keeps what it has loaded.',
    description:
      'A run under way is stopped and publishes nothing (the previous version keeps serving); queued runs never start.',
    params: S.sourcesDeleteParams,
    result: S.sourcesDeleteResult,
    errors: [...common, { code: 404, when: 'No such source, or another user’s (not told apart).' }],
  }),
  'USERS.CREATE': method({
    group: 'users',
    call: 'create',
    scope: 'users:admin',
    saves: false,
    cached: false,
    summary: 'Create a user: the indexes they read, the rows of each (realms), whether an admin.',
    description:
      'As `quarry user create` does, on the same store. The user has no token yet: TOKENS.CREATE with user makes one. Needs a token with users:admin whose user is an admin.',
    params: I.usersCreateParams,
    result: I.usersCreateResult,
    errors: [...common, ...adminOnly, realmProblems, { code: 409, when: 'A user of that name exists already.' }],
  }),
  'USERS.UPDATE': method({
    group: 'users',
    call: 'update',
    scope: 'users:admin',
    saves: false,
    cached: false,
    summary: 'Change what a user reads (indexes, realms) or whether they are an admin.',
    description:
      'What is given replaces what was kept, and the whole is checked as USERS.CREATE checks it; it applies to the user’s next call, through every token they hold.',
    params: I.usersUpdateParams,
    result: I.usersUpdateResult,
    errors: [...common, ...adminOnly, realmProblems, notOneself, noSuchUser],
  }),
  'USERS.FIND': method({
    group: 'users',
    call: 'find',
    scope: 'users:admin',
    saves: false,
    cached: false,
    summary: 'Every user by name, or one: status, admin, indexes and realms.',
    description: 'Tokens are listed by TOKENS.FIND.',
    params: I.usersFindParams,
    result: I.usersFindResult,
    errors: [...common, ...adminOnly, noSuchUser],
  }),
  'USERS.DISABLE': method({
    group: 'users',
    call: 'disable',
    scope: 'users:admin',
    saves: false,
    cached: false,
    summary: 'Stop every token of a user, from their very next call, until USERS.ENABLE.',
    description:
      'Their tokens get the plain HTTP 401 "Token owner could not be resolved"; their schedules and sources fail to run, saying so. Disabling a disabled user answers the same.',
    params: I.usersDisableParams,
    result: I.usersDisableResult,
    errors: [...common, ...adminOnly, notOneself, noSuchUser],
  }),
  'USERS.ENABLE': method({
    group: 'users',
    call: 'enable',
    scope: 'users:admin',
    saves: false,
    cached: false,
    summary: 'Let a disabled user’s tokens work again (those neither revoked nor expired).',
    description: 'Enabling an active user answers the same.',
    params: I.usersEnableParams,
    result: I.usersEnableResult,
    errors: [...common, ...adminOnly, noSuchUser],
  }),
  'USERS.DELETE': method({
    group: 'users',
    call: 'delete',
    scope: 'users:admin',
    saves: false,
    cached: false,
    summary: 'Remove a user; their tokens stop working at once.',
    description:
      'Their tokens stay listed by `quarry token list` as a deleted user’s and never authenticate again; a new user of the same name does not inherit them.',
    params: I.usersDeleteParams,
    result: I.usersDeleteResult,
    errors: [...common, ...adminOnly, notOneself, noSuchUser],
  }),
  'TOKENS.CREATE': method({
    group: 'tokens',
    call: 'create',
    scope: 'tokens:write',
    saves: false,
    cached: false,
    summary: 'Make an API token: shown once in the answer, only its hash kept.',
    description:
      'For the caller’s own user, or (with users:admin, as an admin) another user. The new token never holds a scope the calling token lacks and never outlives it. As `quarry token create` makes them, on the same store.',
    params: I.tokensCreateParams,
    result: I.tokensCreateResult,
    errors: [
      ...common,
      {
        code: 403,
        when: 'A scope the calling token lacks, an expiry past its own, or another user without users:admin and an admin user (the detail says which); or the caller is an embed token.',
      },
      { code: 404, when: 'No user of that name (asked by an admin).' },
    ],
  }),
  'TOKENS.FIND': method({
    group: 'tokens',
    call: 'find',
    scope: 'tokens:write',
    saves: false,
    cached: false,
    summary: 'A user’s API tokens, oldest first: id, head, scopes, status, expiry; never the tokens themselves.',
    description: 'The caller’s own user’s tokens, or (with users:admin, as an admin) another user’s.',
    params: I.tokensFindParams,
    result: I.tokensFindResult,
    errors: [
      ...common,
      { code: 403, when: 'Another user without users:admin and an admin user, or the caller is an embed token.' },
      { code: 404, when: 'No user of that name (asked by an admin).' },
    ],
  }),
  'TOKENS.REVOKE': method({
    group: 'tokens',
    call: 'revoke',
    scope: 'tokens:write',
    saves: false,
    cached: false,
    summary: 'Revoke an API token: refused from its very next call on.',
    description:
      'One of the caller’s own user’s tokens (the calling one too), or (with users:admin, as an admin) any user’s. The token gets the plain HTTP 401 "Token revoked"; the embed tokens it issued stop too. Revoking it again answers the same, with the first revocation’s time.',
    params: I.tokensRevokeParams,
    result: I.tokensRevokeResult,
    errors: [
      ...common,
      {
        code: 404,
        when: 'No such token, or another user’s without users:admin and an admin user (the two are not told apart).',
      },
    ],
  }),
} as const;

export type MethodName = keyof typeof METHODS;
export const METHOD_NAMES = Object.keys(METHODS) as MethodName[];

/** JSON-RPC's own discovery method (OpenRPC): answered without a token. */
export const DISCOVER_METHOD = 'rpc.discover';

export function isMethodName(value: string): value is MethodName {
  return Object.prototype.hasOwnProperty.call(METHODS, value);
}

export type ParamsOf<M extends MethodName> = z.input<(typeof METHODS)[M]['params']>;
/** A method's params as its schema parsed them (no defaults applied). */
export type CheckedParamsOf<M extends MethodName> = z.output<(typeof METHODS)[M]['params']>;
export type ResultOf<M extends MethodName> = z.output<(typeof METHODS)[M]['result']>;

/** The contract's version as the OpenRPC document states it: the major part changes only with /api/v2. */
export const API_VERSION = '1.1.0';
