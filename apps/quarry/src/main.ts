import fs from 'node:fs';
import { Command, Option } from 'commander';
import { ConfigError, loadConfig, type Config } from '@quarry/config';
import { isAppError } from '@quarry/errors';
import type { MetadataAndCatalog } from '@quarry/metadata-store';
import type { AddSourceOptions, UpdateSourceOptions } from './commands/source.commands.js';

/*
 * Commands load what they need when they run: `quarry index list` should not pay for DuckDB, gRPC,
 * Chromium's driver and every service (bench/README.md "CLI start-up").
 */
const indexCommands = () => import('./commands/index.commands.js');
const reportCommands = () => import('./commands/report.commands.js');
const identityCommands = () => import('./commands/identity.commands.js');
const sourceCommands = () => import('./commands/source.commands.js');

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * Before a command that only reads: say which data directory it reads when QUARRY_DATA_DIR is not set,
 * and refuse one that does not exist instead of creating it empty and answering "no users".
 */
function readable(config: Config): Config {
  if (config.mongo) return config;
  const shown = config.dataDirDefaulted ? './data (QUARRY_DATA_DIR is not set)' : config.dataDir;
  if (!fs.existsSync(config.dataDir))
    throw new Error(
      `no Quarry data in ${shown}: set QUARRY_DATA_DIR to the folder the server uses (npm start's is ./data in the repository)`,
    );
  if (config.dataDirDefaulted) process.stderr.write(`reading ${config.dataDir} (QUARRY_DATA_DIR is not set)\n`);
  return config;
}

/** Runs a command against the metadata store the server uses, then closes it. */
async function withStore(config: Config, fn: (store: MetadataAndCatalog) => Promise<string>): Promise<void> {
  const { openMetadataStore } = await import('@quarry/metadata-store');
  const store = await openMetadataStore({ dataDir: config.dataDir, mongo: config.mongo });
  try {
    process.stdout.write(`${await fn(store)}\n`);
  } finally {
    await store.close();
  }
}

export function buildProgram(config: () => Config): Command {
  const program = new Command('quarry')
    .description('Quarry: search, crosstab and saved reports over JSON-RPC')
    .showHelpAfterError();

  program
    .command('serve')
    .description('run the targets of QUARRY_TARGET (default all) in the foreground')
    .action(async () => {
      const c = config();
      const [{ serveCommand }, { startThreadObservability }] = await Promise.all([
        import('./commands/serve.command.js'),
        import('./runtime/thread-observability.js'),
      ]);
      const { log, tracing } = await startThreadObservability(c);
      await serveCommand(c, log, tracing);
    });

  program
    .command('mcp')
    .description('MCP over stdio for desktop agents: relays to the server at QUARRY_URL with QUARRY_TOKEN')
    .action(async () => {
      const { mcpBridgeSettings, runMcpBridge } = await import('./commands/mcp.command.js');
      await runMcpBridge(mcpBridgeSettings(process.env));
    });

  const source = program
    .command('source')
    .description(
      'data sources the server reads into indexes (SOURCES.*): asks the server at QUARRY_URL with QUARRY_TOKEN (indexes:write)',
    );
  source
    .command('add <name>')
    .description(
      'define a source: a PostgreSQL or MySQL/MariaDB query or table, a SQLite file or a file at a URL; prints its id ' +
        '(nothing is read until `source run` or the cron)',
    )
    .requiredOption('--index <name>', 'the index each run loads (yours, or a new name the first run creates)')
    .requiredOption('--kind <kind>', 'postgres, mysql, sqlite or url')
    .option(
      '--url <url>',
      'postgres/mysql: a connection URL (may carry the password); sqlite: the file; url: the file to fetch',
    )
    .option('--host <host>', 'postgres/mysql: the database host (with --database and --user)')
    .option('--port <port>', 'postgres/mysql: its port (default 5432, 3306)')
    .option('--database <name>', 'postgres/mysql: the database')
    .option('--user <name>', 'postgres/mysql: the user')
    .option('--ssl', 'postgres/mysql: TLS to the database, certificates verified')
    .option('--password-stdin', 'read the password from standard input (the only way to give one with --host)')
    .addOption(new Option('--password <password>').hideHelp())
    .option('--query <sql>', 'the SELECT each run reads (read-only), or:')
    .option('--table <table>', 'every row of this table (schema.table allowed)')
    .option('--cron <cron>', 'refresh on this schedule: 5 cron fields, or 6 with seconds first (default: on demand)')
    .option('--time-zone <zone>', 'the IANA time zone the cron is read in (default UTC)')
    .option(
      '--mode <mode>',
      'replace (default): each run is the new version; append: its rows are added; upsert: by --key',
    )
    .option('--cursor <column>', 'append: only rows past the last run’s largest value of this column (implies append)')
    .option('--key <field>', 'upsert: the field that names a record (implies upsert)')
    .option('--on-error <fail|skip>', 'fail (default): a malformed row fails the run; skip: it is rejected and counted')
    .option('--max-errors <n>', 'with --on-error skip: the most rows a run may reject')
    .option('--type <field=type>', 'declare a field type: string, integer, number, boolean, date; repeatable', collect)
    .option('--view <name=field>', 'dynamic view counting distinct values of a field, repeatable', collect)
    .addHelpText(
      'after',
      [
        '',
        'The password is never taken on the command line, where other users of the machine can see it:',
        'pipe it with --password-stdin, or put it inside --url (postgres://user:password@host:5432/db).',
        'The server keeps it encrypted and never shows it: `source list` says "password kept", or shows a URL’s as ***.',
        '',
        'Examples:',
        '  printf \'%s\' "$PGPASSWORD" | quarry source add orders --index orders --kind postgres \\',
        '    --host db.example.com --database shop --user quarry --password-stdin --table orders \\',
        "    --cron '0 * * * *' --mode append --cursor updated_at",
        '  quarry source add shop --index shop --kind sqlite --url /srv/data/shop.sqlite --table items',
      ].join('\n'),
    )
    .action(async (name: string, opts: AddSourceOptions) => {
      const s = await sourceCommands();
      await s.runSourceCommand(process.env, async (api, out) => out(await s.addSource(api, name, opts)));
    });
  source
    .command('list')
    .description('your sources (an admin’s: every one): where each reads from, its refresh and its last run')
    .option('--index <name>', 'only the sources that load this index')
    .action(async (opts: { index?: string }) => {
      const s = await sourceCommands();
      await s.runSourceCommand(process.env, async (api, out) => out(await s.listSources(api, opts)));
    });
  source
    .command('update <source>')
    .description(
      'change a source (by its id or name): what the flags name changes, the rest stays; prints it as it is now',
    )
    .option('--name <name>', 'a new name')
    .option('--index <name>', 'another index to load (yours, or a new name)')
    .option('--url <url>', 'a new connection URL or file (the connection is given anew)')
    .option('--host <host>', 'postgres/mysql: a new host (with --database and --user)')
    .option('--port <port>', 'postgres/mysql: its port')
    .option('--database <name>', 'postgres/mysql: the database')
    .option('--user <name>', 'postgres/mysql: the user')
    .option('--ssl', 'postgres/mysql: TLS to the database')
    .option('--password-stdin', 'a new password from standard input (the connection otherwise as it is)')
    .addOption(new Option('--password <password>').hideHelp())
    .option('--query <sql>', 'read this SELECT instead')
    .option('--table <table>', 'read this table instead')
    .option('--cron <cron>', 'refresh on this schedule instead')
    .option('--on-demand', 'take the cron away: run only when asked')
    .option('--time-zone <zone>', 'the IANA time zone the cron is read in')
    .option('--mode <mode>', 'replace, append or upsert')
    .option('--cursor <column>', 'append: the cursor column (implies append)')
    .option('--key <field>', 'upsert: the key field (implies upsert)')
    .option('--on-error <fail|skip>', 'fail or skip malformed rows')
    .option('--max-errors <n>', 'with skip: the most rows a run may reject')
    .option('--type <field=type>', 'declare a field type (kept types stay), repeatable', collect)
    .option('--view <name=field>', 'the dynamic views (replacing the kept ones), repeatable', collect)
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        "  quarry source update orders --cron '*/15 * * * *' --time-zone Europe/Paris",
        '  printf \'%s\' "$NEW_PASSWORD" | quarry source update orders --password-stdin',
        '  quarry source update orders --on-demand',
      ].join('\n'),
    )
    .action(async (given: string, opts: UpdateSourceOptions) => {
      const s = await sourceCommands();
      await s.runSourceCommand(process.env, async (api, out) => out(await s.updateSource(api, given, opts)));
    });
  source
    .command('run <source>')
    .description('run a source now (by its id or name); prints the run’s id')
    .option('--wait', 'wait for the run to end: print its rows and version, or its error and exit 1')
    .action(async (given: string, opts: { wait?: boolean }) => {
      const s = await sourceCommands();
      await s.runSourceCommand(process.env, (api, out) => s.runSource(api, given, opts, out));
    });
  source
    .command('runs <source>')
    .description('a source’s runs, newest first: state, rows read, loaded and rejected, the version, the error')
    .option('--limit <n>', 'how many (default 20, at most 50)')
    .action(async (given: string, opts: { limit?: string }) => {
      const s = await sourceCommands();
      await s.runSourceCommand(process.env, async (api, out) => out(await s.listRuns(api, given, opts)));
    });
  source
    .command('drop <source>')
    .description('remove a source, its schedule and its runs; the index keeps what it loaded')
    .action(async (given: string) => {
      const s = await sourceCommands();
      await s.runSourceCommand(process.env, async (api, out) => out(await s.dropSource(api, given)));
    });

  const user = program.command('user').description('manage users');
  user
    .command('create <name>')
    .option('--indexes <list>', 'comma list of readable indexes, or *')
    .option('--realm <index=query>', 'row-level restriction, repeatable', collect)
    .option('--admin', 'sees every index and report')
    .action((name: string, opts) =>
      withStore(config(), async (s) => (await identityCommands()).createUser(s, name, opts)),
    );
  user
    .command('list')
    .action(() => withStore(readable(config()), async (s) => (await identityCommands()).listUsers(s)));
  user
    .command('disable <name>')
    .action((name: string) =>
      withStore(config(), async (s) => `disabled ${(await s.setUserStatus(name, 'disabled')).name}`),
    );
  user
    .command('enable <name>')
    .action((name: string) =>
      withStore(config(), async (s) => `enabled ${(await s.setUserStatus(name, 'active')).name}`),
    );
  user.command('delete <name>').action((name: string) =>
    withStore(config(), async (s) => {
      await s.deleteUser(name);
      return `deleted ${name}`;
    }),
  );

  const token = program.command('token').description('manage API tokens');
  token
    .command('create')
    .requiredOption('--user <name>')
    .requiredOption(
      '--scopes <list>',
      'comma list of query:execute, indexes:read, indexes:write, reports:read, reports:write, embed:create, users:admin, tokens:write',
    )
    .option('--expires-in <duration>', '90s, 15m, 12h or 30d')
    .option('--allow-unknown-scopes', 'accept scope names Quarry does not know')
    .action((opts) => withStore(config(), async (s) => (await identityCommands()).createToken(s, opts)));
  token
    .command('list')
    .action(() => withStore(readable(config()), async (s) => (await identityCommands()).listTokens(s)));
  token
    .command('revoke <idOrToken>')
    .action((id: string) => withStore(config(), async (s) => (await identityCommands()).revokeToken(s, id)));
  token
    .command('revoke-embed <id>')
    .description('revoke one embed token (the id TOKENS.EMBED returned) before it expires; any user’s')
    .action((id: string) => withStore(config(), async (s) => (await identityCommands()).revokeEmbedToken(s, id)));

  const index = program.command('index').description('manage indexes');
  index
    .command('load <name> <file>')
    .description(
      'load a CSV, JSON array, JSON Lines or Parquet file (- for standard input) as a new version of an index; ' +
        'every row is loaded or rejected, and by default one malformed row fails the load and publishes nothing',
    )
    .option('--view <name=field>', 'dynamic view counting distinct values of a field, repeatable', collect)
    .option('--type <field=type>', 'declare a field type: string, integer, number, boolean, date; repeatable', collect)
    .option('--description <text>', 'what the index holds')
    .option(
      '--on-error <fail|skip>',
      'fail (default): publish nothing; skip: publish the good rows, list the others in rejects/',
    )
    .option('--max-errors <n>', 'with --on-error skip: fail when more rows than this are rejected')
    .option('--encoding <utf-8|latin1>', "the CSV file's encoding (default utf-8)")
    .option('--date-format <strptime>', 'how dates are written, e.g. %d/%m/%Y (tried before the built-in layouts)')
    .option('--format <csv|json|jsonl|parquet>', 'the format, when the file name does not say (always with -)')
    .option('--append', "publish the current version's rows followed by these (same fields)")
    .action((name: string, file: string, opts) => {
      const c = config();
      return withStore(c, async (s) => (await indexCommands()).loadIndex(c, s, name, file, opts));
    });
  index
    .command('list')
    .action(() =>
      withStore(readable(config()), async (s) => (await import('./commands/index-list.command.js')).listIndexes(s)),
    );
  index.command('drop <name>').action((name: string) => {
    const c = config();
    return withStore(c, async (s) => (await indexCommands()).dropIndex(c, s, name));
  });
  const rollup = index
    .command('rollup')
    .description('pre-aggregations of an index that answer the crosstabs they cover');
  const rollupCommands = () => import('./commands/rollup.commands.js');
  rollup
    .command('add <index>')
    .description('add a rollup, built at once and at every later load')
    .requiredOption('--rows <fields>', 'the fields it groups by, comma-separated')
    .option('--columns <fields>', 'more fields, a date with its grain (date:month), comma-separated')
    .requiredOption('--totals <list>', 'count, sum:field, countDistinct:field, min:field, max:field, average:field')
    .option('--name <name>', 'its name (default: from its fields)')
    .action((name: string, opts) => {
      const c = config();
      return withStore(c, async (s) => (await rollupCommands()).addRollup(c, s, name, opts));
    });
  rollup
    .command('list <index>')
    .action((name: string) =>
      withStore(readable(config()), async (s) => (await rollupCommands()).listRollups(s, name)),
    );
  rollup
    .command('suggest <index>')
    .description('propose rollups from the crosstabs of the index in the audit trail')
    .action((name: string) => withStore(readable(config()), async (s) => (await rollupCommands()).suggest(s, name)));
  rollup.command('drop <index> <rollup>').action((name: string, r: string) => {
    const c = config();
    return withStore(c, async (s) => (await rollupCommands()).dropRollup(c, s, name, r));
  });

  program
    .command('audit')
    .description('the calls the API recorded, newest first (kept QUARRY_AUDIT_DAYS days)')
    .option('--user <name>', "only this user's calls")
    .option('--since <when>', 'only calls since a duration ago (24h, 7d) or a date (2026-01-31)')
    .option('--method <name>', 'only calls of this method (QUERIES.EXECUTE, …)')
    .option('--limit <n>', 'at most this many (default 100)')
    .option('--json', 'one JSON object per line')
    .action((opts) =>
      withStore(readable(config()), async (s) => (await import('./commands/audit.command.js')).readAudit(s, opts)),
    );

  const report = program.command('report').description('manage saved reports');
  report
    .command('list')
    .option('--user <name>', "only this user's reports")
    .option('--trash', 'the deleted reports `report restore` can bring back')
    .action(async (opts: { user?: string; trash?: boolean }) => {
      process.stdout.write(
        `${await (await reportCommands()).listReports(readable(config()), opts.user, opts.trash)}\n`,
      );
    });
  report
    .command('delete <guid>')
    .description('delete a report for good, versions and all (REPORTS.DELETE moves one into the trash instead)')
    .action(async (guid: string) => {
      process.stdout.write(`${await (await reportCommands()).deleteReport(config(), guid)}\n`);
    });
  report
    .command('restore <guid>')
    .description('bring a deleted report back from the trash (within QUARRY_REPORT_TRASH_DAYS)')
    .option('--user <name>', "only if it is this user's report")
    .action(async (guid: string, opts: { user?: string }) => {
      process.stdout.write(`${await (await reportCommands()).restoreReport(config(), guid, opts.user)}\n`);
    });
  report
    .command('export')
    .description('write every report as JSON Lines (to --out or stdout)')
    .option('--out <file>')
    .action(async (opts: { out?: string }) => {
      const out = opts.out ? fs.createWriteStream(opts.out) : process.stdout;
      const n = await (await reportCommands()).exportReports(readable(config()), out);
      if (opts.out) await new Promise((r) => (out as fs.WriteStream).end(r));
      process.stderr.write(`exported ${n} report(s)\n`);
    });
  report
    .command('import <file>')
    .description('read a JSON Lines export into this deployment (owners matched by user name)')
    .action((file: string) => {
      const c = config();
      return withStore(c, async (s) => (await reportCommands()).importReports(c, s, file));
    });

  return program;
}

export function main(argv: string[]): void {
  // Everything this process creates in the data directory (databases, snapshots, keys, rejects) is its
  // user's alone: files 0600, directories 0700, whatever the shell's umask, for every file the drivers
  // (SQLite's journal, DuckDB's Parquet, redis-server's) create too.
  process.umask(0o077);
  let cached: Config | undefined;
  const config = () => (cached ??= loadConfig(process.env));
  buildProgram(config)
    .parseAsync(argv)
    .catch((err: unknown) => {
      if (err instanceof ConfigError) {
        process.stderr.write(`${err.message}\n`);
        process.exit(2);
      }
      if (isAppError(err)) {
        process.stderr.write(`error: ${err.detail}\n`);
        process.exit(1);
      }
      process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    });
}
