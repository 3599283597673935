import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import {
  asRoot,
  chownToUser,
  logTail,
  pollLogin,
  removeServerDir,
  run,
  serverPlace,
  startServer,
  toolFailed,
  withConnection,
} from './test-server';

/*
 * A private PostgreSQL server for tests: Debian's binaries (scripts/ensure-system-deps.sh --tests
 * installs postgresql-15), a cluster made by initdb in a temp folder, listening on 127.0.0.1 at a free
 * port with its socket in that folder, password (SCRAM) logins only over TCP. Never the machine's own
 * cluster. initdb and the server refuse to run as root: as root they run as the `postgres` user, who
 * owns the folder. stop() stops the server and removes the folder.
 */

/** The binaries' folder: PostgreSQL 15 as the tests expect, else the newest one installed. */
function binDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  const preferred = path.join(base, '15', 'bin');
  if (fs.existsSync(path.join(preferred, 'initdb'))) return preferred;
  if (!fs.existsSync(base)) return undefined;
  const versions = fs
    .readdirSync(base)
    .filter((v) => /^\d+$/.test(v) && fs.existsSync(path.join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(base, versions[0], 'bin') : undefined;
}

/** Why the tests cannot start a PostgreSQL here, or undefined when they can. */
export function postgresMissing(): string | undefined {
  if (!binDir())
    return 'PostgreSQL server binaries are not installed (/usr/lib/postgresql/*/bin/initdb); scripts/ensure-system-deps.sh --tests installs them';
  if (process.getuid?.() === 0 && !fs.existsSync('/usr/sbin/runuser') && !fs.existsSync('/sbin/runuser'))
    return 'running as root without runuser to start PostgreSQL as the postgres user';
  return undefined;
}

export interface PgLogin {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
}

export class TestPostgres {
  readonly host = '127.0.0.1';
  readonly database = 'quarry_source';
  readonly user = 'quarry_reader';
  readonly password = `pw-${randomBytes(9).toString('hex')}`;
  private readonly adminPassword = `admin-${randomBytes(9).toString('hex')}`;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly bin: string,
  ) {}

  /** The test user's login (owner of `database`). */
  get login(): PgLogin {
    return { host: this.host, port: this.port, database: this.database, user: this.user, password: this.password };
  }

  /** The superuser's login, for what the test user may not do. */
  get adminLogin(): PgLogin {
    return { host: this.host, port: this.port, database: 'postgres', user: 'postgres', password: this.adminPassword };
  }

  static async start(deadlineMs = 90_000): Promise<TestPostgres> {
    const bin = binDir();
    if (!bin) throw new Error(postgresMissing());
    const { dir, port } = await serverPlace('pg');
    return startServer(new TestPostgres(port, dir, bin), async (server) => {
      await server.init();
      await server.waitReady(deadlineMs);
      await server.admin(async (c) => {
        await c.query(`CREATE ROLE ${server.user} LOGIN PASSWORD '${server.password}'`);
        await c.query(`CREATE DATABASE ${server.database} OWNER ${server.user}`);
      });
    });
  }

  /** Runs a PostgreSQL binary as the postgres user when this process is root. */
  private async pgRun(tool: string, args: string[]): Promise<void> {
    const file = path.join(this.bin, tool);
    const [cmd, argv] = asRoot() ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
    try {
      await run(cmd, argv, { cwd: this.dir, timeout: 120_000 });
    } catch (err) {
      throw toolFailed(tool, err, this.logTail());
    }
  }

  private async init(): Promise<void> {
    await chownToUser(this.dir, 'postgres');
    const pwfile = path.join(this.dir, 'pwfile');
    fs.writeFileSync(pwfile, `${this.adminPassword}\n`, { mode: 0o600 });
    if (asRoot()) fs.chownSync(pwfile, fs.statSync(this.dir).uid, fs.statSync(this.dir).gid);
    await this.pgRun('initdb', [
      '-D',
      path.join(this.dir, 'data'),
      '-U',
      'postgres',
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      `--pwfile=${pwfile}`,
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
      '--no-instructions',
    ]);
    fs.rmSync(pwfile, { force: true });
    const options = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c shared_buffers=16MB',
      '-c max_connections=30',
      "-c TimeZone='Europe/Paris'",
    ].join(' ');
    await this.pgRun('pg_ctl', [
      '-D',
      path.join(this.dir, 'data'),
      '-l',
      path.join(this.dir, 'server.log'),
      '-o',
      options,
      '-w',
      '-t',
      '90',
      'start',
    ]);
  }

  /** Polls a real login until one succeeds or the deadline passes. */
  private async waitReady(deadlineMs: number): Promise<void> {
    await pollLogin(
      'PostgreSQL',
      deadlineMs,
      () =>
        withConnection(
          () => connected({ ...this.adminLogin, connectionTimeoutMillis: 5000 }),
          (c) => c.query('SELECT 1').then(() => undefined),
        ),
      () => this.logTail(),
    );
  }

  /** Runs `work` on a superuser connection to `database` (default: the test database). */
  admin<T>(work: (c: pg.Client) => Promise<T>, database = 'postgres'): Promise<T> {
    return withConnection(() => connected({ ...this.adminLogin, database }), work);
  }

  /** Runs `work` on a connection of the test user to the test database. */
  asUser<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
    return withConnection(() => connected(this.login), work);
  }

  private logTail(): string {
    return logTail(path.join(this.dir, 'server.log'));
  }

  async stop(): Promise<void> {
    if (fs.existsSync(path.join(this.dir, 'data', 'postmaster.pid'))) {
      await this.pgRun('pg_ctl', ['-D', path.join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']).catch(
        () => undefined,
      );
    }
    removeServerDir(this.dir);
  }
}

/** A connected client (its errors between queries ignored); a client that fails to connect is ended. */
async function connected(config: pg.ClientConfig): Promise<pg.Client> {
  const c = new pg.Client(config);
  c.on('error', () => undefined);
  try {
    await c.connect();
  } catch (err) {
    await c.end().catch(() => undefined);
    throw err;
  }
  return c;
}
