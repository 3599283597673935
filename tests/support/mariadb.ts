import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { freePort } from '@quarry/runtime';

const run = promisify(execFile);

/*
 * A private MariaDB server for tests: Debian's mariadb-server (scripts/ensure-system-deps.sh --tests
 * installs it; its own service is never used), a data folder made by mariadb-install-db in a temp
 * folder, mariadbd listening on 127.0.0.1 at a free port with its socket in that folder, real accounts
 * with passwords (root's is set at start; the test user owns one database). As root the server runs as
 * the `mysql` user, who owns the folder. stop() stops the server and removes the folder.
 */

const SERVER = ['/usr/sbin/mariadbd', '/usr/sbin/mysqld'];
const INSTALL_DB = ['/usr/bin/mariadb-install-db', '/usr/bin/mysql_install_db'];

const firstExisting = (paths: string[]) => paths.find((p) => fs.existsSync(p));

/** Why the tests cannot start a MariaDB here, or undefined when they can. */
export function mariadbMissing(): string | undefined {
  if (!firstExisting(SERVER) || !firstExisting(INSTALL_DB))
    return 'MariaDB server binaries are not installed (mariadbd, mariadb-install-db); scripts/ensure-system-deps.sh --tests installs them';
  return undefined;
}

export interface MysqlLogin {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
}

export class TestMariadb {
  readonly host = '127.0.0.1';
  readonly database = 'quarry_source';
  readonly user = 'quarry_reader';
  readonly password = `pw-${randomBytes(9).toString('hex')}`;
  private readonly rootPassword = `root-${randomBytes(9).toString('hex')}`;
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get login(): MysqlLogin {
    return { host: this.host, port: this.port, database: this.database, user: this.user, password: this.password };
  }

  private get socket(): string {
    return path.join(this.dir, 'mysqld.sock');
  }

  static async start(deadlineMs = 90_000): Promise<TestMariadb> {
    const missing = mariadbMissing();
    if (missing) throw new Error(missing);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-mariadb-'));
    const server = new TestMariadb(await freePort(), dir);
    try {
      await server.init();
      await server.waitReady(deadlineMs);
      return server;
    } catch (err) {
      await server.stop();
      throw err;
    }
  }

  private get asRoot(): boolean {
    return process.getuid?.() === 0;
  }

  private async init(): Promise<void> {
    const data = path.join(this.dir, 'data');
    if (this.asRoot) {
      const uid = Number((await run('id', ['-u', 'mysql'])).stdout.trim());
      const gid = Number((await run('id', ['-g', 'mysql'])).stdout.trim());
      fs.chownSync(this.dir, uid, gid);
    }
    const userArg = this.asRoot ? ['--user=mysql'] : [];
    try {
      await run(
        firstExisting(INSTALL_DB)!,
        [
          '--no-defaults',
          `--datadir=${data}`,
          ...userArg,
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
          '--skip-name-resolve',
          '--innodb-buffer-pool-size=32M',
        ],
        { cwd: this.dir, timeout: 180_000 },
      );
    } catch (err) {
      const e = err as { stderr?: string; stdout?: string; message: string };
      throw new Error(`mariadb-install-db failed: ${e.stderr || e.stdout || e.message}`, { cause: err });
    }
    const child = spawn(
      firstExisting(SERVER)!,
      [
        '--no-defaults',
        `--datadir=${data}`,
        `--socket=${this.socket}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        `--pid-file=${path.join(this.dir, 'mysqld.pid')}`,
        `--log-error=${path.join(this.dir, 'error.log')}`,
        `--tmpdir=${this.dir}`,
        '--skip-name-resolve',
        '--skip-log-bin',
        '--innodb-buffer-pool-size=32M',
        '--innodb-flush-log-at-trx-commit=0',
        '--default-time-zone=+02:00',
        ...userArg,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.child = child;
    child.stderr?.resume();
  }

  /** Polls a real login (root over the socket) until one succeeds or the deadline passes, then makes the accounts. */
  private async waitReady(deadlineMs: number): Promise<void> {
    const until = Date.now() + deadlineMs;
    let last: unknown;
    let ready = false;
    while (!ready && Date.now() < until) {
      if (this.child && this.child.exitCode !== null)
        throw new Error(`mariadbd exited with ${this.child.exitCode}\n${this.logTail()}`);
      try {
        const c = await mysql.createConnection({ socketPath: this.socket, user: 'root', password: '' });
        try {
          await c.query('SELECT 1');
        } finally {
          await c.end();
        }
        ready = true;
      } catch (err) {
        last = err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    if (!ready)
      throw new Error(`MariaDB did not accept a login within ${deadlineMs} ms: ${String(last)}\n${this.logTail()}`);
    const c = await mysql.createConnection({ socketPath: this.socket, user: 'root', password: '' });
    try {
      await c.query(`CREATE DATABASE ${this.database}`);
      await c.query(`CREATE USER '${this.user}'@'%' IDENTIFIED BY '${this.password}'`);
      await c.query(`GRANT ALL ON ${this.database}.* TO '${this.user}'@'%'`);
      await c.query(`ALTER USER 'root'@'localhost' IDENTIFIED BY '${this.rootPassword}'`);
    } finally {
      await c.end();
    }
  }

  /** A connection as root (over the socket), for what the test user may not do. */
  async admin<T>(work: (c: mysql.Connection) => Promise<T>): Promise<T> {
    const c = await mysql.createConnection({
      socketPath: this.socket,
      user: 'root',
      password: this.rootPassword,
      database: this.database,
      multipleStatements: true,
    });
    try {
      return await work(c);
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  /** A connection of the test user to the test database. */
  async asUser<T>(work: (c: mysql.Connection) => Promise<T>): Promise<T> {
    const c = await mysql.createConnection({ ...this.login, multipleStatements: true });
    try {
      return await work(c);
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  private logTail(): string {
    try {
      return fs.readFileSync(path.join(this.dir, 'error.log'), 'utf8').split('\n').slice(-20).join('\n');
    } catch {
      return '';
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill('SIGTERM');
      });
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
