import { parentPort, workerData } from 'node:worker_threads';
import { createRootLogger } from '@quarry/logger';
import type { FromThread, ServiceThreadData, ToThread } from './service-thread';
import { startServices } from './start-services';

// The services of an all-in-one process, on their own thread (see service-thread.ts for the channel).
const { config, targets } = workerData as ServiceThreadData;
const log = createRootLogger(config.logLevel).child({ thread: 'services' });
const port = parentPort;
if (!port) throw new Error('service-thread.worker must run as a worker thread');
const send = (m: FromThread) => port.postMessage(m);
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

startServices(config, log, new Set(targets)).then(
  (running) => {
    port.on('message', (m: ToThread) => {
      if (m.type === 'metrics') {
        void running.metrics().then((snapshot) => send({ type: 'metrics', id: m.id, snapshot }));
      } else if (m.type === 'readiness') {
        running.ready().then(
          () => send({ type: 'readiness', id: m.id, error: null }),
          (err: unknown) => send({ type: 'readiness', id: m.id, error: errorText(err) }),
        );
      } else {
        running.stop().then(
          () => {
            log.flush();
            send({ type: 'stopped' });
          },
          () => send({ type: 'stopped' }),
        );
      }
    });
    send({ type: 'ready', hosted: running.hosted });
  },
  (err: unknown) => send({ type: 'error', message: errorText(err) }),
);
