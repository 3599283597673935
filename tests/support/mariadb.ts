import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
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
    const { dir, port } = await serverPlace('mariadb');
    return startServer(new TestMariadb(port, dir), async (server) => {
      await server.init();
      await server.waitReady(deadlineMs);
    });
  }

  private async init(): Promise<void> {
    const data = path.join(this.dir, 'data');
    await chownToUser(this.dir, 'mysql');
    const userArg = asRoot() ? ['--user=mysql'] : [];
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
      throw toolFailed('mariadb-install-db', err);
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
    const root = () => mysql.createConnection({ socketPath: this.socket, user: 'root', password: '' });
    await pollLogin(
      'MariaDB',
      deadlineMs,
      () => withConnection(root, (c) => c.query('SELECT 1').then(() => undefined)),
      () => this.logTail(),
      () => {
        if (this.child && this.child.exitCode !== null)
          throw new Error(`mariadbd exited with ${this.child.exitCode}\n${this.logTail()}`);
      },
    );
    await withConnection(root, async (c) => {
      await c.query(`CREATE DATABASE ${this.database}`);
      await c.query(`CREATE USER '${this.user}'@'%' IDENTIFIED BY '${this.password}'`);
      await c.query(`GRANT ALL ON ${this.database}.* TO '${this.user}'@'%'`);
      await c.query(`ALTER USER 'root'@'localhost' IDENTIFIED BY '${this.rootPassword}'`);
    });
  }

  /** A connection as root (over the socket), for what the test user may not do. */
  admin<T>(work: (c: mysql.Connection) => Promise<T>): Promise<T> {
    const open = () =>
      mysql.createConnection({
        socketPath: this.socket,
        user: 'root',
        password: this.rootPassword,
        database: this.database,
        multipleStatements: true,
      });
    return withConnection(open, work);
  }

  /** A connection of the test user to the test database. */
  asUser<T>(work: (c: mysql.Connection) => Promise<T>): Promise<T> {
    return withConnection(() => mysql.createConnection({ ...this.login, multipleStatements: true }), work);
  }

  private logTail(): string {
    return logTail(path.join(this.dir, 'error.log'));
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
    removeServerDir(this.dir);
  }
}
