import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { freePort, POD_UID, QUARRY_BIN, REPO_ROOT } from './quarry-process';
import { TestRedis } from './redis';

/*
 * A Deployment's container started as a process, the way the kubelet would start it on one node: its
 * command, its environment, its ports, its user and its mounts, and its probes polled on their schedule.
 * What a single machine cannot give is emulated and named where it is done: every pod shares the host's
 * network (each container port gets a free host port, and Service names resolve to them), a read-only
 * mount is a folder the pod's non-root user cannot write (chmod) or, for a volume another pod writes at
 * the same time, the folder bound read-only in the pod's own mount namespace (readOnlyMounts), an emptyDir
 * is a fresh folder.
 */

/**
 * Probe periods run this much faster than written (5 s → 1 s), so the rehearsal takes a minute, not five.
 * A startup probe's budget (periodSeconds × failureThreshold) stays the written one in real seconds: it is
 * how long the manifest lets a slow node start the process (a chart worker warms Chromium), and scaling it
 * would fail a start on a busy machine that the kubelet would have waited for.
 */
export const TIME_SCALE = 0.2;

/** How long the kubelet lets a startup probe fail before it restarts the container, in real milliseconds. */
export function startupBudgetMs(probe: HttpProbe): number {
  return (probe.periodSeconds ?? 10) * (probe.failureThreshold ?? 3) * 1000;
}

/** A kubelet probe (httpGet), or a compose healthcheck (exec: a command run beside the process). */
export interface HttpProbe {
  httpGet?: { path: string; port: number | string };
  exec?: { command: string[] };
  periodSeconds?: number;
  failureThreshold?: number;
  initialDelaySeconds?: number;
}

export interface PodPlan {
  name: string;
  /** The full command line: the image's ENTRYPOINT (without its init) and the container's args. */
  argv: string[];
  env: Record<string, string>;
  /** Container port → host port. */
  ports: Map<number, number>;
  namedPorts: Record<string, number>;
  probes: { startup?: HttpProbe; readiness?: HttpProbe; liveness?: HttpProbe };
  uid: number | undefined;
  terminationGracePeriodSeconds: number;
  /**
   * Host folders this pod mounts read-only while another pod writes them (the snapshot volume, which the
   * ingest pod writes): bound read-only in a mount namespace of the pod's own (READ_ONLY_MOUNTS).
   */
  readOnlyMounts?: string[];
}

// Binds each folder before `--` onto itself read-only, then runs the rest of the command line.
const BIND_READ_ONLY =
  'while [ "$1" != -- ]; do mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 125; shift; done; ' +
  'shift; exec "$@"';

/**
 * How a read-only mount of a volume that another pod writes is made here, as the kubelet makes one: the
 * folder bound read-only (EROFS on every write, whatever the file modes) in a mount namespace of the pod's
 * own, while the writer, outside it, writes the same folder and the pod sees each new file at once. As root
 * `unshare --mount`, the pod's user then taken by setpriv; as another user a user namespace too
 * (`unshare --user --map-root-user`), in which the process is that namespace's root. Undefined where
 * neither is allowed (a sandbox without namespaces): such mounts are then left writable.
 */
export const READ_ONLY_MOUNTS: 'mount namespace' | 'user and mount namespace' | undefined = (() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-ro-probe-'));
  try {
    const [cmd, ...args] = inMountsOfItsOwn([dir], ['sh', '-c', '! touch "$1/x" 2>/dev/null', 'sh', dir]);
    const probe = spawnSync(cmd, args, { stdio: 'ignore' });
    if (probe.status !== 0 || fs.existsSync(path.join(dir, 'x'))) return undefined;
    return process.getuid?.() === 0 ? 'mount namespace' : 'user and mount namespace';
  } catch {
    return undefined;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
})();

/**
 * A command line run in a mount namespace of its own where each of `dirs` is bound read-only. unshare and
 * sh each exec the next, so the process keeps the pid spawned and gets its signals.
 */
function inMountsOfItsOwn(dirs: string[], argv: string[]): string[] {
  const namespaces = process.getuid?.() === 0 ? ['--mount'] : ['--user', '--map-root-user', '--mount'];
  return [
    'unshare',
    ...namespaces,
    '--propagation',
    'private',
    '--',
    'sh',
    '-c',
    BIND_READ_ONLY,
    'sh',
    ...dirs,
    '--',
    ...argv,
  ];
}

/** The command line and user a pod's process is spawned with, its read-only mounts made first. */
function launch(plan: PodPlan): { argv: string[]; uid: number | undefined } {
  if (!plan.readOnlyMounts?.length || !READ_ONLY_MOUNTS) return { argv: plan.argv, uid: plan.uid };
  // As root the mounts are made first, then setpriv takes the pod's user (and execs the process in turn).
  const asUser =
    READ_ONLY_MOUNTS === 'mount namespace' && plan.uid !== undefined
      ? ['setpriv', `--reuid=${plan.uid}`, `--regid=${plan.uid}`, '--clear-groups', '--']
      : [];
  return { argv: inMountsOfItsOwn(plan.readOnlyMounts, [...asUser, ...plan.argv]), uid: undefined };
}

/** The mount points a process sees read-only (its /proc/PID/mountinfo). */
export function readOnlyMountPoints(pid: number): string[] {
  return fs
    .readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' '))
    .filter((f) => f[5].split(',').includes('ro'))
    .map((f) => f[4].replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8))));
}

export interface ProbeEvent {
  at: number;
  probe: 'startup' | 'readiness' | 'liveness';
  ok: boolean;
  status: number | string;
}

/** A running pod: its process, log lines, and the kubelet's view of it. */
export class RehearsedPod {
  readonly lines: string[] = [];
  readonly events: ProbeEvent[] = [];
  started = false;
  ready = false;
  /** Consecutive liveness failures past the threshold: the kubelet would have restarted the container. */
  wouldRestart = 0;
  /** Why the startup probe gave up (its budget spent), which the kubelet would answer with a restart. */
  startupFailed: string | undefined;
  exit: { code: number | null; signal: NodeJS.Signals | null; atMs: number } | undefined;
  private readonly child: ChildProcess;
  private timers: NodeJS.Timeout[] = [];
  private readonly bornAt = Date.now();

  constructor(readonly plan: PodPlan) {
    const { argv, uid } = launch(plan);
    this.child = spawn(argv[0], argv.slice(1), {
      cwd: REPO_ROOT,
      env: plan.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(uid !== undefined ? { uid, gid: uid } : {}),
    });
    const onLine = (line: string) => {
      this.lines.push(line);
      if (this.lines.length > 5000) this.lines.shift();
    };
    readline.createInterface({ input: this.child.stdout! }).on('line', onLine);
    readline.createInterface({ input: this.child.stderr! }).on('line', onLine);
    this.child.once('exit', (code, signal) => {
      this.exit = { code, signal, atMs: Date.now() };
      this.stopProbing();
    });
    this.startProbing();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  hostPort(port: number | string): number {
    const containerPort = typeof port === 'number' ? port : this.plan.namedPorts[port];
    const host = this.plan.ports.get(containerPort);
    if (host === undefined) throw new Error(`${this.plan.name} has no container port ${port}`);
    return host;
  }

  url(port: number | string, route = ''): string {
    return `http://127.0.0.1:${this.hostPort(port)}${route}`;
  }

  private async check(kind: ProbeEvent['probe'], probe: HttpProbe): Promise<boolean> {
    if (probe.exec) {
      const [cmd, ...args] = probe.exec.command;
      const code = await new Promise<number | null>((resolve) => {
        const c = spawn(cmd, args, { stdio: 'ignore', env: this.plan.env, timeout: 3000 });
        c.once('exit', (n) => resolve(n));
        c.once('error', () => resolve(-1));
      });
      this.events.push({ at: Date.now() - this.bornAt, probe: kind, ok: code === 0, status: `exit ${code}` });
      return code === 0;
    }
    const get = probe.httpGet!;
    let status: number | string;
    try {
      const res = await fetch(this.url(get.port, get.path), { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      status = res.status;
    } catch (err) {
      status = (err as Error).name === 'TimeoutError' ? 'timeout' : 'refused';
    }
    // The kubelet's rule: any status from 200 to 399 succeeds.
    const ok = typeof status === 'number' && status >= 200 && status < 400;
    this.events.push({ at: Date.now() - this.bornAt, probe: kind, ok, status });
    return ok;
  }

  /** The kubelet: startup first (liveness and readiness wait for it), then both on their own periods. */
  private startProbing(): void {
    const { startup, readiness, liveness } = this.plan.probes;
    const every = (probe: HttpProbe, fn: () => Promise<void>) => {
      let busy = false;
      const t = setInterval(
        () => {
          if (busy || this.exit) return;
          busy = true;
          fn().finally(() => (busy = false));
        },
        (probe.periodSeconds ?? 10) * 1000 * TIME_SCALE,
      );
      this.timers.push(t);
    };
    const afterStart = () => {
      this.started = true;
      if (readiness) {
        let fails = 0;
        every(readiness, async () => {
          if (await this.check('readiness', readiness)) {
            fails = 0;
            this.ready = true;
          } else if (++fails >= (readiness.failureThreshold ?? 3)) this.ready = false;
        });
      } else this.ready = true;
      if (liveness) {
        let fails = 0;
        every(liveness, async () => {
          if (await this.check('liveness', liveness)) fails = 0;
          else if (++fails === (liveness.failureThreshold ?? 3)) this.wouldRestart++;
        });
      }
    };
    if (!startup) return afterStart();
    let fails = 0;
    // Polled TIME_SCALE times as often as written, so as many more failures fit in the written budget.
    const allowed = Math.ceil((startup.failureThreshold ?? 3) / TIME_SCALE);
    const t = setInterval(
      () => {
        if (this.started || this.exit) return;
        void this.check('startup', startup).then((ok) => {
          if (this.started) return;
          if (ok) {
            clearInterval(t);
            afterStart();
          } else if (++fails >= allowed) {
            clearInterval(t);
            this.wouldRestart++;
            this.startupFailed =
              `its startup probe failed ${fails} times in a row over ${startupBudgetMs(startup) / 1000} s ` +
              `(the kubelet would restart it); last probes: ${JSON.stringify(this.events.slice(-3))}`;
          }
        });
      },
      (startup.periodSeconds ?? 10) * 1000 * TIME_SCALE,
    );
    this.timers.push(t);
  }

  private stopProbing(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  /**
   * Pod deletion as the kubelet does it: SIGTERM, then SIGKILL once terminationGracePeriodSeconds have
   * passed (real seconds: the drain is what is rehearsed). Resolves with how it ended and how long it took.
   */
  async terminate(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number; killed: boolean }> {
    const t = Date.now();
    if (this.exit) return { code: this.exit.code, signal: this.exit.signal, ms: 0, killed: false };
    let killed = false;
    const done = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    const timer = setTimeout(() => {
      killed = true;
      this.child.kill('SIGKILL');
    }, this.plan.terminationGracePeriodSeconds * 1000);
    this.child.kill('SIGTERM');
    await done;
    clearTimeout(timer);
    return { code: this.exit!.code, signal: this.exit!.signal, ms: Date.now() - t, killed };
  }

  /** The startup budget the manifest gives (two minutes where it has no startup probe), and a minute more. */
  readyBoundMs(): number {
    const { startup } = this.plan.probes;
    return (startup ? startupBudgetMs(startup) : 120_000) + 60_000;
  }

  /** A crash (OOM kill, node loss): SIGKILL, no drain. */
  async kill(): Promise<void> {
    if (this.exit) return;
    const done = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGKILL');
    await done;
  }

  /**
   * Resolves once the pod is ready. Fails at once when it exits or its startup probe gives up; otherwise the
   * bound is a hang guard past what the manifest itself allows a start (its startup budget), not a target.
   */
  async untilReady(ms = this.readyBoundMs()): Promise<void> {
    const until = Date.now() + ms;
    while (!this.ready) {
      if (this.exit) throw new Error(`${this.plan.name} exited (${this.exit.code}):\n${this.lines.join('\n')}`);
      if (this.startupFailed)
        throw new Error(`${this.plan.name} did not start: ${this.startupFailed}\n${this.lines.slice(-30).join('\n')}`);
      if (Date.now() > until)
        throw new Error(
          `${this.plan.name} not ready in ${ms} ms; probes: ${JSON.stringify(this.events.slice(-5))}\n${this.lines.slice(-30).join('\n')}`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * A Service in front of some pods, as kube-proxy and the endpoints controller make one: requests go round
 * robin to the pods that are ready and not terminating; a pod being deleted leaves the endpoints at once,
 * and the proxies see that `lagMs` later (the propagation the drain delay has to cover).
 */
export class EndpointsProxy {
  private server: http.Server | undefined;
  private next = 0;
  private readonly leaving = new Map<RehearsedPod, number>();
  port = 0;

  constructor(
    private readonly pods: () => RehearsedPod[],
    private readonly targetPort: string | number,
    private readonly lagMs = 1000,
  ) {}

  /** The pod is being deleted: out of the endpoints, seen by the proxy after the lag. */
  deleting(pod: RehearsedPod): void {
    this.leaving.set(pod, Date.now() + this.lagMs);
  }

  private endpoints(): RehearsedPod[] {
    const now = Date.now();
    return this.pods().filter((p) => p.ready && !p.exit && (this.leaving.get(p) ?? Infinity) > now);
  }

  async start(): Promise<string> {
    this.port = await freePort();
    this.server = http.createServer((req, res) => {
      const ready = this.endpoints();
      if (ready.length === 0) {
        res.writeHead(503).end('no endpoints');
        return;
      }
      const pod = ready[this.next++ % ready.length];
      const upstream = http.request(
        {
          host: '127.0.0.1',
          port: pod.hostPort(this.targetPort),
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502);
        res.end(`upstream ${pod.plan.name}: ${err.message}`);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    return `http://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The Redis of the dev overlay (backing-stores.yaml): append-only, with its password; restartable. */
export class RehearsalRedis extends TestRedis {
  constructor(
    port: number,
    password: string,
    readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-rehearsal-redis-')),
  ) {
    super(port, { args: ['--appendonly', 'yes', '--requirepass', password, '--dir', dir], stopSignal: 'SIGTERM' });
  }
}

/** A folder the pod's user owns and writes (an emptyDir, a writable volume). */
export function podWritable(dir: string, uid: number | undefined): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  if (uid !== undefined) fs.chownSync(dir, uid, uid);
  return dir;
}

/** The uid a pod's process runs as here: its runAsUser when this test runs as root, else this user. */
export function podUid(runAsUser: number | undefined): number | undefined {
  return process.getuid?.() === 0 ? (runAsUser ?? POD_UID) : undefined;
}

/**
 * The image's ENTRYPOINT and the container's args as a command line here: the init (tini) is left out,
 * `node` is this Node and the image's /app is this checkout.
 */
export function commandLine(entrypoint: string[], args: string[]): string[] {
  const withoutInit = entrypoint[0].endsWith('/tini') ? entrypoint.slice(entrypoint.indexOf('--') + 1) : entrypoint;
  return [...withoutInit, ...args].map((a) =>
    a === 'node'
      ? process.execPath
      : a === 'apps/quarry/bin/quarry.js'
        ? QUARRY_BIN
        : a.replace(/^\/app\//, `${REPO_ROOT}/`),
  );
}
