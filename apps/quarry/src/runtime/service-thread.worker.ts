import { parentPort, workerData } from 'node:worker_threads';
import { NotReadyError } from '@quarry/runtime';
import type { FromThread, ServiceThreadData, ToThread } from './service-thread';
import { startServices } from './start-services';
import { startThreadObservability } from './thread-observability';

// The services of an all-in-one process, on their own thread (see service-thread.ts for the channel).
const { config, targets } = workerData as ServiceThreadData;
const port = parentPort;
if (!port) throw new Error('service-thread.worker must run as a worker thread');
const send = (m: FromThread) => port.postMessage(m);
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function main(): Promise<void> {
  // This thread traces on its own (the API's globals are per thread), to the same endpoint.
  const { log, tracing } = await startThreadObservability(config, { thread: 'services' });
  const running = await startServices(config, log, new Set(targets));
  port!.on('message', (m: ToThread) => {
    if (m.type === 'metrics') {
      void running.metrics().then((snapshot) => send({ type: 'metrics', id: m.id, snapshot }));
    } else if (m.type === 'readiness') {
      running.ready().then(
        () => send({ type: 'readiness', id: m.id, error: null }),
        (err: unknown) =>
          send({
            type: 'readiness',
            id: m.id,
            error: errorText(err),
            waitingFor: err instanceof NotReadyError ? err.waitingFor : null,
          }),
      );
    } else {
      // Stopped is said whatever failed on the way: the process is going away either way.
      running
        .stop()
        .catch((err: unknown) => log.error({ err }, 'stopping the services failed'))
        .then(() => tracing.shutdown())
        .catch(() => undefined)
        .then(() => {
          log.flush();
          send({ type: 'stopped' });
        });
    }
  });
  send({ type: 'ready', hosted: running.hosted });
}

main().catch((err: unknown) => send({ type: 'error', message: errorText(err) }));
