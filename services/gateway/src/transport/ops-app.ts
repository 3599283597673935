import express from 'express';
import { mountProbes, notFound, type ProbeDeps } from './probes';
import { sendHttpProblem } from './http-responses';

/** What /healthz, /readyz and /metrics of the ops port need. */
export interface OpsDeps extends ProbeDeps {
  scrape?: () => Promise<{ contentType: string; text: string }>;
}

/** The probes with their causes, and the Prometheus endpoint: the ops port's routes. */
function mountOpsRoutes(app: express.Express, deps: OpsDeps): void {
  mountProbes(app, deps, true);
  app.get('/metrics', async (_req, res) => {
    if (!deps.scrape) {
      sendHttpProblem(res, 404, 'Not Found', 'metrics are not enabled');
      return;
    }
    try {
      const { contentType, text } = await deps.scrape();
      res.writeHead(200, { 'Content-Type': contentType });
      res.end(text);
    } catch (err) {
      deps.log.warn({ err }, 'metrics scrape failed');
      sendHttpProblem(res, 503, 'Service Unavailable', 'metrics are unavailable');
    }
  });
}

/** QUARRY_OPS_PORT (Kubernetes probes, Prometheus): never the API's port, loopback unless configured. */
export function createOpsApp(deps: OpsDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  mountOpsRoutes(app, deps);
  app.use(notFound);
  return app;
}
