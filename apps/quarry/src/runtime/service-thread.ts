import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Config, ServiceName, Target } from '@quarry/config';
import type { MetricsSnapshot } from '@quarry/metrics';
import { NotReadyError } from '@quarry/runtime';
import type { RunningServices } from './start-services';

/*
 * The channel between a process and its services thread: every message type in one place, requests
 * carrying an id that their answer repeats. service-thread.worker.ts is the other end.
 */

export interface ServiceThreadData {
  config: Config;
  targets: Target[];
}

export type ToThread = { type: 'metrics'; id: number } | { type: 'readiness'; id: number } | { type: 'stop' };

export type FromThread =
  | { type: 'ready'; hosted: Partial<Record<ServiceName, string>> }
  | { type: 'error'; message: string }
  | { type: 'stopped' }
  | { type: 'metrics'; id: number; snapshot: MetricsSnapshot }
  | { type: 'readiness'; id: number; error: string | null; waitingFor?: string | null };

type Answer<K extends 'metrics' | 'readiness'> = Extract<FromThread, { type: K }>;

/** Waits for the thread's first message of `type` that `match` accepts; rejects after `timeoutMs`. */
function nextMessage<T extends FromThread>(
  worker: Worker,
  match: (m: FromThread) => m is T,
  timeoutMs: number,
  what: string,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`the service thread did not answer (${what})`));
    }, timeoutMs);
    const onMessage = (m: FromThread) => {
      if (!match(m)) return;
      done();
      resolve(m);
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    worker.on('message', onMessage);
    worker.once('error', onError);
  });
}

/**
 * Hosts the services on a worker thread of this process: still one process and still gRPC on loopback,
 * but the gateway's event loop and the services' no longer share one core.
 */
export async function startServiceThread(config: Config, targets: ReadonlySet<Target>): Promise<RunningServices> {
  const data: ServiceThreadData = { config, targets: [...targets] };
  const worker = new Worker(path.join(__dirname, 'service-thread.worker.js'), { workerData: data });
  const startTimeoutMs = 120_000;
  const first = await nextMessage(
    worker,
    (m): m is Extract<FromThread, { type: 'ready' | 'error' }> => m.type === 'ready' || m.type === 'error',
    startTimeoutMs,
    'start',
  ).catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });
  if (first.type === 'error') {
    await worker.terminate();
    throw new Error(first.message);
  }
  let seq = 0;
  const ask = <K extends 'metrics' | 'readiness'>(type: K): Promise<Answer<K>> => {
    const id = ++seq;
    const answer = nextMessage(worker, (m): m is Answer<K> => m.type === type && 'id' in m && m.id === id, 5000, type);
    const request: ToThread = { type, id };
    worker.postMessage(request);
    return answer;
  };
  return {
    hosted: first.hosted,
    metrics: async () => (await ask('metrics')).snapshot,
    ready: async () => {
      const r = await ask('readiness');
      if (r.error) throw new NotReadyError(r.waitingFor ?? 'the services', new Error(r.error));
    },
    stop: async () => {
      const stopped = nextMessage(
        worker,
        (m): m is Extract<FromThread, { type: 'stopped' }> => m.type === 'stopped',
        config.shutdownGraceMs + 5000,
        'stop',
      ).catch(() => undefined);
      const request: ToThread = { type: 'stop' };
      worker.postMessage(request);
      await stopped;
      await worker.terminate();
    },
  };
}
