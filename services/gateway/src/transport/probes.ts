import type express from 'express';
import { isAppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import { NotReadyError } from '@quarry/runtime';
import { JSON_TYPE, send, sendHttpProblem } from './http-responses';

/** What /healthz and /readyz ask of the process. */
export interface ProbeDeps {
  /** Rejects when a store this process needs cannot be reached. */
  checkReady: () => Promise<void>;
  /** Rejects when this process cannot do its work even after a restart-free wait (liveness). */
  checkLive?: () => Promise<void>;
  /** What this process serves without: optional stores that are away (named on the ops port's /readyz). */
  degraded?: () => Promise<string[]>;
  log: Logger;
  /** Say why /readyz fails in the words of any error (an internal port); else AppError details only. */
  readyDetails?: boolean;
}

/**
 * The probes, one implementation for the API port and the ops port. On the API port (`details` off) they
 * say up or down and nothing else: the cause is logged, and the ops port (loopback by default) tells it.
 */
export function mountProbes(app: express.Express, deps: ProbeDeps, details: boolean): void {
  const cause = (err: unknown) =>
    isAppError(err) ? err.detail : deps.readyDetails && err instanceof Error ? err.message : 'a store is unreachable';
  app.get('/healthz', async (_req, res) => {
    try {
      await deps.checkLive?.();
      send(res, 200, JSON_TYPE, { status: 'ok' });
    } catch (err) {
      deps.log.error({ err }, 'not live');
      send(res, 503, JSON_TYPE, details ? { status: 'not live', detail: cause(err) } : { status: 'not live' });
    }
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await deps.checkReady();
      const degraded = details ? ((await deps.degraded?.()) ?? []) : [];
      send(res, 200, JSON_TYPE, degraded.length ? { status: 'ready', degraded } : { status: 'ready' });
    } catch (err) {
      deps.log.warn({ err }, 'not ready');
      // What it waits for is said on either port; why (a host, a driver's words) only on the ops port.
      const waitingFor = err instanceof NotReadyError ? { waitingFor: err.waitingFor } : {};
      if (!details) return send(res, 503, JSON_TYPE, { status: 'not ready', ...waitingFor });
      send(res, 503, JSON_TYPE, { status: 'not ready', ...waitingFor, detail: cause(err) });
    }
  });
}

/** The last route of an app: a 404 problem naming what was asked. */
export function notFound(req: express.Request, res: express.Response): void {
  sendHttpProblem(res, 404, 'Not Found', `No route for ${req.method} ${req.path}`);
}
