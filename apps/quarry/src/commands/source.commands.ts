import {
  QuarryClient,
  QuarryError,
  type MethodName,
  type ParamsOf,
  type ResultOf,
  type SourceRun,
  type SourcesCreateParams,
  type SourcesUpdateParams,
  type SourceSummary,
} from '@quarry/client';
import { listing } from './listing';
import { serverSettings } from './server-settings';

/*
 * `quarry source add|list|update|run|runs|drop`: sources live in the server's Redis, which the CLI does not
 * reach, so each command is a call of the running server's JSON-RPC API (SOURCES.*) with QUARRY_TOKEN,
 * as `quarry mcp` reaches it. The server checks everything (the host policy, the shape, the cron, the
 * rights); what it refuses is printed as one line, `quarry: <its detail>`, in the words of the flags.
 */

/** What a command is refused for, printed as `quarry: <message>` (never a stack). */
export class SourceCommandError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** The SOURCES.* calls a command makes, typed by the contract. */
export interface SourceApi {
  call<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
}

const SOURCE_ID = /^[0-9a-f]{32}$/;

/** The API's parameter names as `source add` spells them, for the server's refusals. */
const FLAGS: Array<[string, string]> = [
  ['connection.url', '--url'],
  ['connection.host', '--host'],
  ['connection.port', '--port'],
  ['connection.database', '--database'],
  ['connection.user', '--user'],
  ['connection.password', '--password-stdin'],
  ['connection.ssl', '--ssl'],
  ['refresh.cron', '--cron'],
  ['refresh.timeZone', '--time-zone'],
  ['refresh.mode', '--mode'],
  ['refresh.cursor', '--cursor'],
  ['refresh.key', '--key'],
  ['load.onError', '--on-error'],
  ['load.maxErrors', '--max-errors'],
  ['load.types', '--type'],
  ['load.views', '--view'],
  ['index', '--index'],
  ['kind', '--kind'],
  ['query', '--query'],
  ['table', '--table'],
];

/** One problem of a refusal, its leading parameter named by its flag. */
function problemInFlagTerms(problem: string, connectionFlag: string): string {
  const shape = /^connection of an? (\w+) source is \{url\} alone/.exec(problem);
  if (shape) return `a ${shape[1]} source takes --url alone (no --host, --port, --database, --user, --ssl or password)`;
  if (problem.startsWith('connection takes url or host'))
    return 'give --url, or --host with --database and --user: not both';
  if (problem.startsWith('connection: ')) return `${connectionFlag}: ${problem.slice('connection: '.length)}`;
  const type = /^load\.types\.(\S+) /.exec(problem);
  if (type) return `--type ${type[1]}=… ${problem.slice(type[0].length)}`;
  for (const [param, flag] of FLAGS)
    if (problem.startsWith(param) && /^[\s.:[]/.test(problem.slice(param.length) || ' '))
      return flag + problem.slice(param.length);
  return problem;
}

/**
 * A refusal of SOURCES.CREATE in the words of `source add`: each problem's parameter (the server joins
 * them with "; ") named by its flag, and the connection as a whole by the flag that gave it (`--url`, or
 * `--host` with the others).
 */
export function inFlagTerms(detail: string, connectionFlag = '--url'): string {
  const flagOf = new Map(FLAGS);
  return detail
    .split('; ')
    .map((problem) => problemInFlagTerms(problem, connectionFlag))
    .join('; ')
    .replace(/\bconnection\.(url|host|port|database|user|password|ssl)\b/g, (p) => flagOf.get(p) ?? p)
    .replace(/with mode "(\w+)"/g, 'with --mode $1')
    .replace(/with onError "(\w+)"/g, 'with --on-error $1');
}

/** The calls of one command, through the typed client, to the server QUARRY_URL names. */
export function serverApi(env: Record<string, string | undefined>): SourceApi {
  let settings: ReturnType<typeof serverSettings>;
  try {
    settings = serverSettings(env);
  } catch (err) {
    throw new SourceCommandError((err as Error).message, 2);
  }
  const client = new QuarryClient({ url: settings.url.origin, token: settings.token });
  return {
    async call(method, params) {
      try {
        return (await client.call(method, params)).data;
      } catch (err) {
        throw serverRefusal(err, settings.url.origin);
      }
    },
  };
}

/** A failed call as one line: the server's own detail, or why it could not be asked. */
function serverRefusal(err: unknown, origin: string): Error {
  if (!(err instanceof QuarryError)) return err instanceof Error ? err : new Error(String(err));
  if (err.isTransport)
    return new SourceCommandError(`cannot reach the server at ${origin} (QUARRY_URL): ${err.detail}`);
  if (err.code === 401) return new SourceCommandError(`${err.detail} (QUARRY_TOKEN)`);
  return new SourceCommandError(err.detail);
}

/**
 * Runs one source command: its output on stdout, a refusal as `quarry: …` on stderr and a non-zero exit
 * code (1, or 2 for a missing setting); the output already written stays written.
 */
export async function runSourceCommand(
  env: Record<string, string | undefined>,
  command: (api: SourceApi, out: (line: string) => void) => Promise<void>,
): Promise<void> {
  const out = (line: string) => void process.stdout.write(`${line}\n`);
  try {
    await command(serverApi(env), out);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`quarry: ${message}\n`);
    process.exitCode = err instanceof SourceCommandError ? err.exitCode : 1;
  }
}

export interface AddSourceOptions {
  index: string;
  kind: string;
  url?: string;
  host?: string;
  port?: string;
  database?: string;
  user?: string;
  ssl?: boolean;
  passwordStdin?: boolean;
  /** Hidden: only there to refuse a password given as an argument, saying why. */
  password?: string;
  query?: string;
  table?: string;
  cron?: string;
  timeZone?: string;
  mode?: string;
  cursor?: string;
  key?: string;
  onError?: string;
  maxErrors?: string;
  type?: string[];
  view?: string[];
}

/** `--type a=b` and `--view a=b`: split at the first "=", neither side empty. */
function pairs(values: string[] | undefined, flag: string, shape: string): Array<[string, string]> {
  return (values ?? []).map((v) => {
    const at = v.indexOf('=');
    if (at <= 0 || at === v.length - 1) throw new SourceCommandError(`${flag} takes ${shape}, not "${v}"`, 2);
    return [v.slice(0, at).trim(), v.slice(at + 1).trim()];
  });
}

function wholeNumber(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,10}$/.test(value.trim())) throw new SourceCommandError(`${flag} must be a whole number`, 2);
  return Number(value.trim());
}

/** Standard input whole, less the one line end `echo` or a here-string adds. */
export async function readPasswordFromStdin(stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (stdin.isTTY)
    throw new SourceCommandError(
      '--password-stdin reads the password from a pipe, and standard input is a terminal: ' +
        `printf '%s' "$PASSWORD" | quarry source add …`,
      2,
    );
  const chunks: Buffer[] = [];
  for await (const chunk of stdin as AsyncIterable<Buffer | string>)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  const password = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (!password) throw new SourceCommandError('--password-stdin read no password from standard input', 2);
  return password;
}

/** A --password given anyway is refused, before anything is read or sent. */
function refuseArgumentPassword(opts: { password?: string }): void {
  if (opts.password !== undefined)
    throw new SourceCommandError(
      'the password is never taken on the command line (other users of the machine see a command’s arguments): ' +
        'pipe it to --password-stdin, or put it inside --url',
      2,
    );
}

/** SOURCES.CREATE's params from the flags of `source add`; the server checks the rest. */
export function createParams(name: string, opts: AddSourceOptions, password?: string): SourcesCreateParams {
  refuseArgumentPassword(opts);
  if (password !== undefined && opts.url !== undefined)
    throw new SourceCommandError(
      '--password-stdin goes with --host, --database and --user; a --url carries its own password (postgres://user:password@host/db)',
      2,
    );
  const port = wholeNumber(opts.port, '--port');
  const maxErrors = wholeNumber(opts.maxErrors, '--max-errors');
  const types = pairs(opts.type, '--type', 'field=type (amount=number)');
  const views = pairs(opts.view, '--view', 'name=field (Customers=customer)');
  const connection: SourcesCreateParams['connection'] = {
    ...(opts.url !== undefined ? { url: opts.url } : {}),
    ...(opts.host !== undefined ? { host: opts.host } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(opts.database !== undefined ? { database: opts.database } : {}),
    ...(opts.user !== undefined ? { user: opts.user } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(opts.ssl ? { ssl: true } : {}),
  };
  const refreshGiven = [opts.cron, opts.timeZone, opts.mode, opts.cursor, opts.key].some((v) => v !== undefined);
  // A cursor alone means append, a key alone upsert: the only modes they go with.
  const mode = opts.mode ?? (opts.cursor !== undefined ? 'append' : opts.key !== undefined ? 'upsert' : 'replace');
  const load = {
    ...(types.length ? { types: Object.fromEntries(types) } : {}),
    ...(views.length ? { views: views.map(([n, field]) => ({ name: n, field })) } : {}),
    ...(opts.onError !== undefined ? { onError: opts.onError } : {}),
    ...(maxErrors !== undefined ? { maxErrors } : {}),
  };
  // Kinds, modes, types and onError are the server's to check: it names what it refuses.
  return {
    name,
    index: opts.index,
    kind: opts.kind as SourcesCreateParams['kind'],
    connection,
    ...(opts.query !== undefined ? { query: opts.query } : {}),
    ...(opts.table !== undefined ? { table: opts.table } : {}),
    ...(refreshGiven
      ? {
          refresh: {
            mode: mode as NonNullable<SourcesCreateParams['refresh']>['mode'],
            ...(opts.cron !== undefined ? { cron: opts.cron } : {}),
            ...(opts.timeZone !== undefined ? { timeZone: opts.timeZone } : {}),
            ...(opts.cursor !== undefined ? { cursor: opts.cursor } : {}),
            ...(opts.key !== undefined ? { key: opts.key } : {}),
          },
        }
      : {}),
    ...(Object.keys(load).length ? { load: load as SourcesCreateParams['load'] } : {}),
  };
}

/** `quarry source add NAME …`: prints the new source's id alone (scripts take it as it is). */
export async function addSource(
  api: SourceApi,
  name: string,
  opts: AddSourceOptions,
  readPassword: () => Promise<string> = () => readPasswordFromStdin(),
): Promise<string> {
  refuseArgumentPassword(opts);
  const password = opts.passwordStdin ? await readPassword() : undefined;
  const params = createParams(name, opts, password);
  try {
    return (await api.call('SOURCES.CREATE', params)).sourceId;
  } catch (err) {
    if (err instanceof SourceCommandError)
      throw new SourceCommandError(
        inFlagTerms(err.message, opts.url === undefined && opts.host !== undefined ? '--host' : '--url'),
        err.exitCode,
      );
    throw err;
  }
}

export interface UpdateSourceOptions extends Omit<AddSourceOptions, 'index' | 'kind'> {
  name?: string;
  index?: string;
  /** Takes the cron away: the source runs only when asked. */
  onDemand?: boolean;
}

/**
 * SOURCES.UPDATE's params from the flags of `source update`, over the source as it is: what a flag names
 * changes, the rest stays. A connection flag gives the connection anew (the server keeps the password when
 * host, user and database stay); a refresh or load flag changes that part, its other settings kept.
 */
export function updateParams(
  current: SourceSummary,
  opts: UpdateSourceOptions,
  password?: string,
): SourcesUpdateParams {
  refuseArgumentPassword(opts);
  if (opts.onDemand && opts.cron !== undefined)
    throw new SourceCommandError('--on-demand takes the cron away: give it or --cron, not both', 2);
  const connectionGiven = [opts.url, opts.host, opts.port, opts.database, opts.user].some((v) => v !== undefined);
  if ((password !== undefined || opts.ssl) && !connectionGiven && current.connection.url === undefined) {
    // A new password or TLS for the same database: the connection as it is, with them.
    opts = {
      ...opts,
      host: current.connection.host,
      database: current.connection.database,
      user: current.connection.user,
      ...(current.connection.port !== undefined ? { port: String(current.connection.port) } : {}),
    };
  }
  const built = createParams(current.name, { ...opts, index: current.index, kind: current.kind }, password);
  const anyConnection = [opts.url, opts.host, opts.port, opts.database, opts.user].some((v) => v !== undefined);
  const r = current.refresh;
  const refreshFlags = [opts.cron, opts.timeZone, opts.mode, opts.cursor, opts.key].some((v) => v !== undefined);
  const mode = opts.mode ?? (opts.cursor !== undefined ? 'append' : opts.key !== undefined ? 'upsert' : r.mode);
  // Kept settings go with the mode they were for: a cursor with append, a key with upsert.
  const cursor = opts.cursor ?? (mode === 'append' ? r.cursor : undefined);
  const key = opts.key ?? (mode === 'upsert' ? r.key : undefined);
  const cron = opts.onDemand ? undefined : (opts.cron ?? r.cron);
  const loadFlags = [opts.onError, opts.maxErrors, opts.type, opts.view].some((v) => v !== undefined);
  const l = current.load;
  const given = built.load ?? {};
  const onError = given.onError ?? (opts.maxErrors !== undefined ? 'skip' : l.onError);
  return {
    sourceId: current.sourceId,
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    ...(opts.index !== undefined ? { index: opts.index } : {}),
    ...(anyConnection ? { connection: built.connection } : {}),
    ...(opts.query !== undefined ? { query: opts.query } : {}),
    ...(opts.table !== undefined ? { table: opts.table } : {}),
    ...(refreshFlags || opts.onDemand
      ? {
          refresh: {
            mode: mode as NonNullable<SourcesCreateParams['refresh']>['mode'],
            timeZone: opts.timeZone ?? r.timeZone,
            ...(cron !== undefined ? { cron } : {}),
            ...(cursor !== undefined ? { cursor } : {}),
            ...(key !== undefined ? { key } : {}),
          },
        }
      : {}),
    ...(loadFlags
      ? {
          load: {
            ...((given.types ?? l.types) ? { types: { ...l.types, ...given.types } } : {}),
            ...((given.views ?? l.views) ? { views: given.views ?? l.views } : {}),
            onError: onError as 'fail' | 'skip',
            ...(onError === 'skip' && (given.maxErrors ?? l.maxErrors) !== undefined
              ? { maxErrors: given.maxErrors ?? l.maxErrors }
              : {}),
          },
        }
      : {}),
  };
}

/** `quarry source update SOURCE …`: changes what its flags name, and prints the source as it is now. */
export async function updateSource(
  api: SourceApi,
  given: string,
  opts: UpdateSourceOptions,
  readPassword: () => Promise<string> = () => readPasswordFromStdin(),
): Promise<string> {
  refuseArgumentPassword(opts);
  const sourceId = await resolveSource(api, given);
  const password = opts.passwordStdin ? await readPassword() : undefined;
  const [current] = (await api.call('SOURCES.FIND', { sourceId })).sources;
  if (!current) throw new SourceCommandError(`no source ${sourceId}`);
  const params = updateParams(current, opts, password);
  if (Object.keys(params).length === 1)
    throw new SourceCommandError('nothing to change: give the flags of what changes (quarry source update --help)', 2);
  let after: SourceSummary;
  try {
    after = await api.call('SOURCES.UPDATE', params);
  } catch (err) {
    if (err instanceof SourceCommandError)
      throw new SourceCommandError(
        inFlagTerms(err.message, opts.url === undefined && opts.host !== undefined ? '--host' : '--url'),
        err.exitCode,
      );
    throw err;
  }
  return `updated source ${after.sourceId} "${after.name}": ${after.kind} from ${from(after)} into ${after.index}; ${refreshText(after)}`;
}

/** An id as it is; a name, as the one source of the caller's of that name. */
export async function resolveSource(api: SourceApi, given: string): Promise<string> {
  if (SOURCE_ID.test(given)) return given;
  const { sources } = await api.call('SOURCES.FIND', {});
  const named = sources.filter((s) => s.name === given);
  if (named.length === 1) return named[0].sourceId;
  if (named.length === 0)
    throw new SourceCommandError(`no source named "${given}" (quarry source list shows their ids and names)`);
  throw new SourceCommandError(
    `${named.length} sources are named "${given}" (${named.map((s) => `${s.sourceId} of ${s.owner}`).join(', ')}): give the id`,
  );
}

/** Where a source reads from, without its secret (the server never returns it; a URL's reads ***). */
function from(s: SourceSummary): string {
  const c = s.connection;
  if (c.url !== undefined) return c.url;
  const where = `${c.user ?? ''}@${c.host ?? ''}${c.port !== undefined ? `:${c.port}` : ''}/${c.database ?? ''}`;
  return c.hasPassword ? `${where} (password kept)` : where;
}

function refreshText(s: SourceSummary): string {
  const r = s.refresh;
  const how =
    r.mode === 'append' && r.cursor
      ? `append by ${r.cursor}`
      : r.mode === 'upsert' && r.key
        ? `upsert by ${r.key}`
        : r.mode;
  return r.cron !== undefined ? `${how}, cron ${r.cron} (${r.timeZone})` : `${how}, on demand`;
}

const at = (iso: string | undefined) => (iso ? iso.replace(/\.\d+Z$/, 'Z') : '-');

function lastRunText(run: SourceRun | undefined): string {
  if (!run) return 'never run';
  const version = run.version !== undefined ? ` v${run.version}` : '';
  return `${run.state}${version} ${at(run.endedAt ?? run.startedAt ?? run.queuedAt)}`;
}

/** `quarry source list [--index I]`: the caller's sources (an admin's: every one). */
export async function listSources(api: SourceApi, opts: { index?: string }): Promise<string> {
  const { sources } = await api.call('SOURCES.FIND', opts.index !== undefined ? { index: opts.index } : {});
  if (sources.length === 0) return opts.index !== undefined ? `no sources load ${opts.index}` : 'no sources';
  return listing(
    ['id', 'name', 'index', 'kind', 'from', 'refresh', 'last run', 'next run'],
    sources.map((s) => [
      s.sourceId,
      s.name,
      s.index,
      s.kind,
      from(s),
      refreshText(s),
      lastRunText(s.lastRun),
      at(s.nextRunAt),
    ]),
  );
}

/** A finished run in one line: its rows, and the version it published. */
export function outcome(run: SourceRun): string {
  const rows = `${run.rowsRead} rows read, ${run.loaded} loaded, ${run.rejected} rejected`;
  return run.version !== undefined
    ? `done: ${rows}; published version ${run.version}`
    : `done: ${rows}; nothing new, no version published`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `quarry source run SOURCE [--wait]`: the run's id at once; with --wait, its outcome when it ends (a
 * failed run is a refusal: exit 1, its error printed).
 */
export async function runSource(
  api: SourceApi,
  given: string,
  opts: { wait?: boolean },
  out: (line: string) => void,
  pollMs = 500,
): Promise<void> {
  const sourceId = await resolveSource(api, given);
  const { runId } = await api.call('SOURCES.RUN', { sourceId });
  out(runId);
  if (!opts.wait) return;
  for (;;) {
    const { runs } = await api.call('SOURCES.RUNS', { sourceId, limit: 50 });
    const run = runs.find((r) => r.runId === runId);
    if (run?.state === 'done') return out(outcome(run));
    if (run?.state === 'failed') {
      const rows = run.rowsRead || run.rejected ? ` (${run.rowsRead} rows read, ${run.rejected} rejected)` : '';
      throw new SourceCommandError(`run ${runId} failed${rows}: ${run.error ?? 'no reason given'}`);
    }
    await sleep(pollMs);
  }
}

/** `quarry source runs SOURCE [--limit N]`: its runs, newest first. */
export async function listRuns(api: SourceApi, given: string, opts: { limit?: string }): Promise<string> {
  const sourceId = await resolveSource(api, given);
  const limit = wholeNumber(opts.limit, '--limit');
  const { runs } = await api.call('SOURCES.RUNS', { sourceId, ...(limit !== undefined ? { limit } : {}) });
  if (runs.length === 0) return 'no runs yet (quarry source run starts one)';
  return listing(
    ['run', 'state', 'trigger', 'queued', 'ended', 'read', 'loaded', 'rejected', 'version', 'error'],
    runs.map((r) => [
      r.runId,
      r.state,
      r.trigger,
      at(r.queuedAt),
      at(r.endedAt),
      String(r.rowsRead),
      String(r.loaded),
      String(r.rejected),
      r.version !== undefined ? `v${r.version}` : '-',
      r.error ?? '-',
    ]),
  );
}

/** `quarry source drop SOURCE`: the source, its schedule and its runs go; the index stays. */
export async function dropSource(api: SourceApi, given: string): Promise<string> {
  const sourceId = await resolveSource(api, given);
  await api.call('SOURCES.DELETE', { sourceId });
  return `dropped source ${sourceId} (its schedule and runs; the index keeps what it loaded)`;
}
