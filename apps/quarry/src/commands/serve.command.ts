import type { Config } from '@quarry/config';
import type { Logger } from '@quarry/logger';
import type { RunningTracing } from '@quarry/tracing';
import { startTargets } from '../runtime/start-targets';

/** What the modules' own bounded closes may add to the drain and the grace. */
const STOP_MARGIN_MS = 20_000;

/**
 * `quarry serve`: the modules of QUARRY_TARGET until SIGTERM/SIGINT, then one graceful stop; the spans
 * of the last calls are sent after the modules stopped.
 */
export async function serveCommand(config: Config, log: Logger, tracing: RunningTracing): Promise<void> {
  const running = await startTargets(config, log);
  log.info({ targets: config.targets, port: running.port }, 'quarry ready');
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    // Drain: out of the endpoints first (readiness off), then, once they have updated, no new calls; the
    // calls under way finish within QUARRY_SHUTDOWN_GRACE_MS.
    running.drain();
    log.info({ signal, drainDelayMs: config.drainDelayMs }, 'shutting down');
    // Every close is bounded, but a stop that still hangs must not keep a process that was told to end
    // (a terminal's Ctrl-C, an orchestrator's SIGTERM) running for ever.
    const limitMs = config.drainDelayMs + config.shutdownGraceMs + STOP_MARGIN_MS;
    setTimeout(() => {
      log.error({ limitMs }, 'the stop did not finish in time; exiting without it');
      log.flush();
      process.exit(1);
    }, limitMs).unref();
    new Promise((resolve) => setTimeout(resolve, config.drainDelayMs))
      .then(() => running.stop())
      .then(() => tracing.shutdown().catch((err: unknown) => log.warn({ err }, 'sending the last spans failed')))
      .then(
        () => {
          log.info('stopped');
          log.flush();
          setTimeout(() => process.exit(0), 50).unref();
        },
        (err: unknown) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
