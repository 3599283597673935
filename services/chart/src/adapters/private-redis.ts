import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { freePort } from '@quarry/runtime';

export interface PrivateRedis {
  /** Carries the password; never log it (`port` says where it listens). */
  url: string;
  port: number;
  pid: number | undefined;
  stop(): Promise<void>;
}

// util-linux's setpriv (Essential in Debian) sets the parent-death signal: the kernel then kills the
// redis-server even when its owner dies by SIGKILL, which no exit handler of ours would see.
const SETPRIV = '/usr/bin/setpriv';
const STOP_WAIT_MS = 5000;

export interface PrivateRedisOptions {
  /** redis-server's own notation (`256mb`, `1gb`, bytes). */
  maxmemory: string;
  /**
   * Where it keeps its append-only file: schedules live in this Redis, and a restart (of it or of the
   * process) must lose none. Unset: no persistence (tests of the chart queue alone).
   */
  dir?: string;
}

/**
 * A redis-server on a free loopback port, owned by this process (persistent when given a directory), with a password
 * made up for this start: any other local process could otherwise read the queued charts' data or
 * complete a job with an image of its own.
 */
export async function startPrivateRedis(
  binary: string,
  { maxmemory, dir }: PrivateRedisOptions,
): Promise<PrivateRedis> {
  const port = await freePort();
  // Every write synced before it is acknowledged: the private Redis dies with its process (pdeathsig), and
  // a once-a-second sync would lose what was acknowledged just before a crash (a schedule, a job's count).
  const persistence = dir
    ? ['--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '']
    : ['--save', '', '--appendonly', 'no'];
  if (dir) fs.mkdirSync(dir, { recursive: true });
  const args = ['--port', String(port), '--bind', '127.0.0.1', ...persistence, '--protected-mode', 'yes'];
  // Capped, and never evicting: a queue that silently lost keys would lose jobs and images, while a
  // full one refuses writes and the chart service answers 503 at once.
  args.push('--maxmemory', maxmemory, '--maxmemory-policy', 'noeviction');
  const password = randomBytes(32).toString('hex');
  // The password goes in on standard input (`redis-server -` reads its configuration there), not on the
  // command line, which every local user can read in /proc/<pid>/cmdline.
  args.unshift('-');
  const guarded = fs.existsSync(SETPRIV);
  // A process group of its own: Ctrl-C in a terminal signals the whole foreground group, and a Redis that
  // stopped first would leave the owner's closes waiting on it. Its owner stops it, last (and pdeathsig or
  // the exit handler below when the owner dies).
  const options = { stdio: 'pipe' as const, detached: true };
  const child: ChildProcess = guarded
    ? spawn(SETPRIV, ['--pdeathsig', 'KILL', binary, ...args], options)
    : spawn(binary, args, options);
  child.stdin?.on('error', () => undefined);
  child.stdin?.end(`requirepass ${password}\n`);
  const notFound = () => new Error(`cannot start ${binary}: not found (install redis-server or set REDIS_URL)`);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out.slice(-500)}`)), 10000);
    const collect = (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        err.code === 'ENOENT'
          ? notFound()
          : new Error(`cannot start ${binary}: ${err.message} (install redis-server or set REDIS_URL)`),
      );
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      // setpriv answers 127 when it cannot find the program, as a shell would.
      reject(guarded && code === 127 ? notFound() : new Error(`redis-server exited with ${code}: ${out.slice(-500)}`));
    });
  });
  child.stdout?.resume();
  child.stderr?.resume();
  // A normal exit stops it here too (setpriv covers the deaths no handler sees).
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  return {
    url: `redis://:${password}@127.0.0.1:${port}`,
    port,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        process.off('exit', kill);
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        // SIGTERM writes the append-only file out; one that does not end in time is killed.
        const late = setTimeout(() => child.kill('SIGKILL'), STOP_WAIT_MS);
        child.once('exit', () => {
          clearTimeout(late);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
