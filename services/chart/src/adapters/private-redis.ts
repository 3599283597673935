import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '@quarry/rpc';

export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
}

/** A redis-server on a free loopback port, without persistence, owned by this process. */
export async function startPrivateRedis(binary: string): Promise<PrivateRedis> {
  const port = await freePort();
  const child: ChildProcess = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out.slice(-500)}`)), 10000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${binary}: ${err.message} (install redis-server or set REDIS_URL)`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${out.slice(-500)}`));
    });
  });
  child.stdout?.resume();
  child.stderr?.resume();
  // Never outlive the process that started it.
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        process.off('exit', kill);
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
