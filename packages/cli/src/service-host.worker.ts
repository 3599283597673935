import { parentPort, workerData } from 'node:worker_threads';
import type { Config, Target } from '@quarry/config';
import { createRootLogger } from '@quarry/logger';
import { startServices } from './commands/serve.command';

// The services of an all-in-one process, on their own thread (see startServicesInWorker).
const { config, targets } = workerData as { config: Config; targets: Target[] };
const log = createRootLogger(config.logLevel).child({ thread: 'services' });
const port = parentPort;
if (!port) throw new Error('service-host.worker must run as a worker thread');

startServices(config, log, new Set(targets)).then(
  (running) => {
    port.on('message', (m: { type: string; id?: number }) => {
      if (m.type === 'metrics') {
        void running.metrics().then((snapshot) => port.postMessage({ type: 'metrics', id: m.id, snapshot }));
      } else if (m.type === 'readiness') {
        running.ready().then(
          () => port.postMessage({ type: 'readiness', id: m.id, error: null }),
          (err: unknown) => port.postMessage({ type: 'readiness', id: m.id, error: err instanceof Error ? err.message : String(err) }),
        );
      } else if (m.type === 'stop') {
        running.stop().then(
          () => {
            log.flush();
            port.postMessage({ type: 'stopped' });
          },
          () => port.postMessage({ type: 'stopped' }),
        );
      }
    });
    port.postMessage({ type: 'ready', hosted: running.hosted });
  },
  (err: unknown) => port.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) }),
);
