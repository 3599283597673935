import { spawn, type ChildProcess } from 'node:child_process';

export interface TestRedisOptions {
  /** Persistence and password as a deployment's Redis has them (default: no persistence, no password). */
  args?: string[];
  /** SIGTERM lets an append-only Redis write its file out; SIGKILL (the default) is a crash. */
  stopSignal?: NodeJS.Signals;
}

/** A throwaway redis-server for tests that need to stop and restart it. */
export class TestRedis {
  private child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    private readonly options: TestRedisOptions = {},
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const args = this.options.args ?? ['--appendonly', 'no'];
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited ${code}: ${out}`));
      });
    });
    child.stdout!.resume();
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise((r) => {
      child.once('exit', r);
      child.kill(this.options.stopSignal ?? 'SIGKILL');
    });
  }
}
