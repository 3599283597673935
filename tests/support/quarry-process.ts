import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { TestRedis } from './redis';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const QUARRY_BIN = path.join(REPO_ROOT, 'apps', 'quarry', 'bin', 'quarry.js');

export type Topology = 'all' | 'split';

export function makeDataDir(prefix = 'quarry-e2e-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

import { freePort } from '@quarry/runtime';

export { freePort };

/**
 * The internal credential of the processes a test starts, as a deployment shares one (QUARRY_INTERNAL_TOKEN).
 * A process running every gRPC party makes up its own, so `all` is started without it.
 */
export const E2E_INTERNAL_TOKEN = `e2e-${randomBytes(24).toString('base64url')}`;

/**
 * A child's log lines come through a pipe on their own schedule, often after the HTTP answer that they
 * describe: reads `lines` until `done` holds or `ms` pass, and returns the last read either way.
 */
export async function linesEventually(
  lines: () => string[],
  done: (lines: string[]) => boolean,
  ms = 30000,
): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const read = lines();
    if (done(read) || Date.now() > deadline) return read;
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface Proc {
  child: ChildProcess;
  lines: string[];
}

/**
 * Spawns `quarry serve` and resolves once it logs "quarry ready" (with its gateway port, if any). Unless
 * `env` says otherwise, a process that is not all-in-one gets the run's shared internal credential.
 */
export function spawnServe(
  env: Record<string, string>,
  opts: { unset?: string[]; uid?: number; gid?: number; detached?: boolean } = {},
): Promise<{ proc: Proc; port: number | undefined }> {
  const shared = env.QUARRY_TARGET === 'all' ? {} : { QUARRY_INTERNAL_TOKEN: E2E_INTERNAL_TOKEN };
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    QUARRY_INTERNAL_TOKEN: '',
    PORT: '0',
    HOST: '127.0.0.1',
    ...shared,
    ...env,
    // Readiness is read from the info-level "quarry ready" line, so the level is not configurable here.
    LOG_LEVEL: 'info',
  };
  // For tests of a default: the variable is not set at all, as on a user's machine.
  for (const name of opts.unset ?? []) delete childEnv[name];
  const child = spawn(process.execPath, [QUARRY_BIN, 'serve'], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, as a terminal gives a foreground command (for Ctrl-C to the group).
    detached: opts.detached ?? false,
    ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.gid ?? opts.uid } : {}),
  });
  const proc: Proc = { child, lines: [] };
  return new Promise((resolve, reject) => {
    // A hang guard, not a target: the split topology starts six processes at once, on 2 loaded cores
    // (a start takes 2 s alone here; several times that on a busy machine).
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`quarry did not start in 180 s:\n${proc.lines.join('\n')}`));
    }, 180_000);
    const onLine = (line: string) => {
      proc.lines.push(line);
      if (proc.lines.length > 2000) proc.lines.shift();
      if (line.includes('"quarry ready"')) {
        clearTimeout(timer);
        const parsed = JSON.parse(line) as { port?: number };
        resolve({ proc, port: parsed.port });
      }
    };
    readline.createInterface({ input: child.stdout! }).on('line', onLine);
    readline.createInterface({ input: child.stderr! }).on('line', onLine);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`quarry exited with ${code}:\n${proc.lines.join('\n')}`));
    });
  });
}

/** Signals a process dies of when it crashes, not when it is stopped. */
const CRASHES = new Set<NodeJS.Signals>(['SIGSEGV', 'SIGBUS', 'SIGILL', 'SIGFPE', 'SIGABRT']);

/** A process that crashed, at any time before or while it was stopped, fails the suite with its last lines. */
function crashed(proc: Proc, signal: NodeJS.Signals | null): Error | undefined {
  if (signal === null || !CRASHES.has(signal)) return undefined;
  return new Error(`quarry (pid ${proc.child.pid}) died of ${signal}:\n${proc.lines.slice(-40).join('\n')}`);
}

export async function stopProc(proc: Proc, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
    const crash = crashed(proc, proc.child.signalCode);
    if (crash) throw crash;
    return proc.child.exitCode;
  }
  return new Promise((resolve, reject) => {
    // A hang guard: a stop drains for its grace (seconds), longer on a busy machine; a stop that hangs
    // past this is killed, and its exit code (null) fails whoever asserts a clean stop.
    const timer = setTimeout(() => proc.child.kill('SIGKILL'), 60_000);
    proc.child.once('exit', (code, died) => {
      clearTimeout(timer);
      const crash = crashed(proc, died);
      if (crash) reject(crash);
      else resolve(code);
    });
    proc.child.kill(signal);
  });
}

/** Stops every process and the private Redis, whatever one of them did; then a crash fails the caller. */
async function stopAll(
  procs: Proc[],
  signal: NodeJS.Signals,
  redis: { stop(): Promise<unknown> } | undefined,
): Promise<Array<number | null>> {
  const settled = await Promise.allSettled(procs.map((p) => stopProc(p, signal)));
  await redis?.stop();
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s.status === 'fulfilled' ? s.value : null));
}

export interface RunningQuarry {
  baseUrl: string;
  /** The gateway process's ops port (/metrics, and probes with their causes), on loopback. */
  opsUrl: string;
  port: number;
  dataDir: string;
  topology: Topology;
  /** Every process's log lines, for assertions on logging. */
  logs(): string[];
  /** Split only: what every process shares (QUARRY_*_ADDR, REDIS_URL, QUARRY_INTERNAL_TOKEN), to reach a service directly. */
  wiring: Record<string, string> | undefined;
  /** The pids of the Quarry processes (one in `all`), for resource checks. */
  pids(): number[];
  /** Whether every Quarry process is still running. */
  alive(): boolean;
  /** SIGTERM to every process; resolves with their exit codes. */
  stop(): Promise<Array<number | null>>;
  /** SIGKILL to every process, as a crash would. */
  kill(): Promise<Array<number | null>>;
}

/**
 * Starts the real built stack: one process (QUARRY_TARGET=all) or the split deployment, one process per
 * service plus the gateway, wired by QUARRY_*_ADDR on loopback.
 */
export async function startQuarry(opts: StartOptions): Promise<RunningQuarry> {
  // The split processes (and their Redis) are given ports chosen a moment before they bind them: on this
  // busy machine another process can take one in between. Such a start is tried again with fresh ports,
  // twice at most; a start that fails for any other reason fails at once.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startQuarryOnce(opts);
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE|Address already in use/.test((err as Error).message)) throw err;
    }
  }
}

interface StartOptions {
  topology: Topology;
  dataDir: string;
  env?: Record<string, string>;
}

async function startQuarryOnce(opts: StartOptions): Promise<RunningQuarry> {
  // Every process gets an ops port (a free one): /metrics is only served there.
  const env = { QUARRY_DATA_DIR: opts.dataDir, QUARRY_OPS_PORT: '0', ...(opts.env ?? {}) };
  const procs: Proc[] = [];
  let redis: TestRedis | undefined;
  let wiring: Record<string, string> | undefined;
  try {
    let port: number | undefined;
    if (opts.topology === 'all') {
      const started = await spawnServe({ QUARRY_TARGET: 'all', ...env });
      procs.push(started.proc);
      port = started.port;
    } else {
      // Split processes share the chart queue through a Redis of their own.
      redis = new TestRedis(await freePort());
      await redis.start();
      // One deployment: every process holds the same internal credential, or the services refuse the gateway.
      const addrs: Record<string, string> = { REDIS_URL: redis.url, QUARRY_INTERNAL_TOKEN: E2E_INTERNAL_TOKEN };
      for (const s of ['QUERY', 'CROSSTAB', 'CHART', 'REPORTS', 'INGEST'])
        addrs[`QUARRY_${s}_ADDR`] = `127.0.0.1:${await freePort()}`;
      // Every one that started is kept for the clean-up below, also when another failed to.
      const services = await Promise.allSettled(
        ['query', 'crosstab', 'chart', 'reports', 'chart-worker', 'ingest'].map((t) =>
          spawnServe({ ...env, ...addrs, QUARRY_TARGET: t }),
        ),
      );
      for (const s of services) if (s.status === 'fulfilled') procs.push(s.value.proc);
      const failed = services.find((s) => s.status === 'rejected');
      if (failed) throw failed.reason;
      wiring = addrs;
      const gateway = await spawnServe({ ...env, ...addrs, QUARRY_TARGET: 'gateway' });
      procs.push(gateway.proc);
      port = gateway.port;
    }
    if (!port) throw new Error('no gateway port reported');
    const gatewayLines = procs[procs.length - 1].lines;
    const opsLine = gatewayLines.find((l) => l.includes('"ops endpoints listening"'));
    const opsPort = opsLine ? (JSON.parse(opsLine) as { port: number }).port : 0;
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      opsUrl: `http://127.0.0.1:${opsPort}`,
      port,
      dataDir: opts.dataDir,
      topology: opts.topology,
      logs: () => procs.flatMap((p) => p.lines),
      wiring,
      pids: () => procs.map((p) => p.child.pid ?? -1),
      alive: () => procs.every((p) => p.child.exitCode === null && p.child.signalCode === null),
      stop: () => stopAll(procs, 'SIGTERM', redis),
      kill: () => stopAll(procs, 'SIGKILL', redis),
    };
  } catch (err) {
    await stopAll(procs, 'SIGKILL', redis).catch(() => undefined);
    throw err;
  }
}

/** The uid a Deployment's securityContext runs as (runAsUser), used when this test runs as root. */
export const POD_UID = 1000;

/**
 * A folder as a Deployment's read-only mount is to its non-root process: mode 0555, and when the test
 * runs as root (whom modes do not stop) the process runs as POD_UID. Returns the spawn options.
 */
export function readOnlyForPod(dir: string): { uid?: number; gid?: number } {
  fs.chmodSync(dir, 0o555);
  return process.getuid?.() === 0 ? { uid: POD_UID, gid: POD_UID } : {};
}

/** A folder the pod's process may write (an emptyDir), owned by it when the test runs as root. */
export function writableForPod(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  if (process.getuid?.() === 0) fs.chownSync(dir, POD_UID, POD_UID);
  return dir;
}

/** Runs the CLI as an operator would; resolves with its exit code and output. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  opts: { cwd?: string; unset?: string[] } = {},
): Promise<{ code: number | null; signal?: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const name of opts.unset ?? []) delete childEnv[name];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [QUARRY_BIN, ...args], {
      env: childEnv,
      cwd: opts.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // 'close', not 'exit': the last of stderr can arrive after the process has exited.
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
