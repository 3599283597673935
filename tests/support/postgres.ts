import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '@quarry/runtime';

const run = promisify(execFile);

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
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-pg-'));
    const server = new TestPostgres(await freePort(), dir, bin);
    try {
      await server.init();
      await server.waitReady(deadlineMs);
      await server.admin(async (c) => {
        await c.query(`CREATE ROLE ${server.user} LOGIN PASSWORD '${server.password}'`);
        await c.query(`CREATE DATABASE ${server.database} OWNER ${server.user}`);
      });
      return server;
    } catch (err) {
      await server.stop();
      throw err;
    }
  }

  private get asRoot(): boolean {
    return process.getuid?.() === 0;
  }

  /** Runs a PostgreSQL binary as the postgres user when this process is root. */
  private async pgRun(tool: string, args: string[]): Promise<void> {
    const file = path.join(this.bin, tool);
    const [cmd, argv] = this.asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
    try {
      await run(cmd, argv, { cwd: this.dir, timeout: 120_000 });
    } catch (err) {
      const e = err as { stderr?: string; stdout?: string; message: string };
      throw new Error(`${tool} failed: ${e.stderr || e.stdout || e.message}\n${this.logTail()}`, { cause: err });
    }
  }

  private async init(): Promise<void> {
    if (this.asRoot) {
      const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
      const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
      fs.chownSync(this.dir, uid, gid);
    }
    const pwfile = path.join(this.dir, 'pwfile');
    fs.writeFileSync(pwfile, `${this.adminPassword}\n`, { mode: 0o600 });
    if (this.asRoot) fs.chownSync(pwfile, fs.statSync(this.dir).uid, fs.statSync(this.dir).gid);
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
    const until = Date.now() + deadlineMs;
    let last: unknown;
    while (Date.now() < until) {
      const c = new pg.Client({ ...this.adminLogin, connectionTimeoutMillis: 5000 });
      c.on('error', () => undefined);
      try {
        await c.connect();
        await c.query('SELECT 1');
        await c.end();
        return;
      } catch (err) {
        last = err;
        await c.end().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    throw new Error(`PostgreSQL did not accept a login within ${deadlineMs} ms: ${String(last)}\n${this.logTail()}`);
  }

  /** Runs `work` on a superuser connection to `database` (default: the test database). */
  async admin<T>(work: (c: pg.Client) => Promise<T>, database = 'postgres'): Promise<T> {
    const c = new pg.Client({ ...this.adminLogin, database });
    c.on('error', () => undefined);
    await c.connect();
    try {
      return await work(c);
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  /** Runs `work` on a connection of the test user to the test database. */
  async asUser<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
    const c = new pg.Client(this.login);
    c.on('error', () => undefined);
    await c.connect();
    try {
      return await work(c);
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  private logTail(): string {
    try {
      return fs.readFileSync(path.join(this.dir, 'server.log'), 'utf8').split('\n').slice(-20).join('\n');
    } catch {
      return '';
    }
  }

  async stop(): Promise<void> {
    if (fs.existsSync(path.join(this.dir, 'data', 'postmaster.pid'))) {
      await this.pgRun('pg_ctl', ['-D', path.join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']).catch(
        () => undefined,
      );
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
