import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@quarry/runtime';

/*
 * What the private database servers of the tests (tests/support/postgres.ts, tests/support/mariadb.ts)
 * share: a temp folder and a free loopback port, the folder handed to the server's own user when the
 * tests run as root, polling a real login until the server is ready, the log's tail for messages, and a
 * start that stops (and removes the folder) when any step fails.
 */

export const run = promisify(execFile);

/** Whether this process is root (a database server then runs as its own user). */
export function asRoot(): boolean {
  return process.getuid?.() === 0;
}

/** A temp folder (`quarry-<prefix>-…`) and a free port for a new server. */
export async function serverPlace(prefix: string): Promise<{ dir: string; port: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `quarry-${prefix}-`));
  return { dir, port: await freePort() };
}

/** Makes the server, runs its steps, and answers it ready; on any failure stops it (folder gone) and rethrows. */
export async function startServer<S extends { stop(): Promise<void> }>(
  server: S,
  steps: (server: S) => Promise<void>,
): Promise<S> {
  try {
    await steps(server);
    return server;
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/** As root: gives `dir` to the system user `user` (the server refuses, or is told not, to run as root). */
export async function chownToUser(dir: string, user: string): Promise<void> {
  if (!asRoot()) return;
  const uid = Number((await run('id', ['-u', user])).stdout.trim());
  const gid = Number((await run('id', ['-g', user])).stdout.trim());
  fs.chownSync(dir, uid, gid);
}

/** A program's failure as an Error naming it, with what it printed. */
export function toolFailed(tool: string, err: unknown, tail = ''): Error {
  const e = err as { stderr?: string; stdout?: string; message: string };
  return new Error(`${tool} failed: ${e.stderr || e.stdout || e.message}${tail ? `\n${tail}` : ''}`, { cause: err });
}

/**
 * Calls `login` (a real login and a `SELECT 1`) every 250 ms until one succeeds or `deadlineMs` passes,
 * then rejects naming `what` and the last error, with `logTail`'s lines. `check` runs before each try
 * (to fail at once when the server has exited).
 */
export async function pollLogin(
  what: string,
  deadlineMs: number,
  login: () => Promise<void>,
  logTail: () => string,
  check?: () => void,
): Promise<void> {
  const until = Date.now() + deadlineMs;
  let last: unknown;
  while (Date.now() < until) {
    check?.();
    try {
      await login();
      return;
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`${what} did not accept a login within ${deadlineMs} ms: ${String(last)}\n${logTail()}`);
}

/** Runs `work` on a connection `open` makes, ending it afterwards whatever happens. */
export async function withConnection<C extends { end(): Promise<unknown> }, T>(
  open: () => Promise<C>,
  work: (c: C) => Promise<T>,
): Promise<T> {
  const c = await open();
  try {
    return await work(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** The last 20 lines of a server's log, or nothing when there is none. */
export function logTail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}

/** Removes a server's folder, once the server is stopped. */
export function removeServerDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
