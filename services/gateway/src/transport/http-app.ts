import express from 'express';
import type { ExportStatusUseCase } from '../domain/export-status.use-case';
import { exportDownloadHandler } from './export-download';
import { mcpHandler, type McpDeps } from './mcp-endpoint';
import { mountConsole, type ConsoleSignIn } from './console-static';
import { JSON_TYPE, send, sendHttpProblem } from './http-responses';
import { discoverDocument } from './openrpc-discover';
import { mountProbes, notFound, type ProbeDeps } from './probes';
import { rpcHandler, type RpcEndpointDeps } from './rpc-endpoint';
import { signedDownloadHandler, type SignedDownloadDeps } from './signed-download';
import { uploadRecordsHandler, type UploadDeps } from './upload-records';

export interface HttpAppDeps extends RpcEndpointDeps, ProbeDeps {
  /** The built console's folder (apps/console/dist), served at /console. */
  consoleDir?: string;
  /** The console signs in with the OpenID provider when set. */
  consoleSignIn?: ConsoleSignIn;
  /** MCP at /mcp (Streamable HTTP): the contract's methods as tools, on the same tokens. */
  mcp?: McpDeps;
  /** Exports' downloads at GET /exports/<id>; absent, they answer 503. */
  exports?: () => ExportStatusUseCase | undefined;
  /** Deliveries' signed links at GET /exports/signed/<token>; absent, they answer 404. */
  signedLinks?: SignedDownloadDeps['links'];
  /** Uploads at POST /indexes/<name>/records, streamed to the ingest service; absent, they answer 404. */
  uploads?: Pick<UploadDeps, 'uploads' | 'maxBytes' | 'idleMs' | 'idempotency'>;
}

/**
 * The API port's app: the probes (up or down, no cause), the OpenRPC document, the console, JSON-RPC at
 * /api/v1 and MCP at /mcp. /metrics is the ops port's alone (ops-app.ts): it tells call counts and
 * timings per method.
 */
export function createHttpApp(deps: HttpAppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  mountProbes(app, deps, false);
  app.get('/openrpc.json', (req, res) => send(res, 200, JSON_TYPE, discoverDocument(req)));
  mountConsole(app, deps.consoleDir, deps.consoleSignIn);
  app.post('/api/v1', rpcHandler(deps));
  if (deps.mcp) app.all('/mcp', mcpHandler(deps.mcp));
  // Every route that takes a credential holds a request without a valid one to the per-address limit.
  const { addressLimiter } = deps;
  app.get(
    '/exports/signed/:token',
    signedDownloadHandler({ links: deps.signedLinks ?? (() => undefined), addressLimiter }),
  );
  app.get(
    '/exports/:id',
    exportDownloadHandler({
      authenticate: deps.authenticate,
      exports: deps.exports ?? (() => undefined),
      addressLimiter,
    }),
  );

  if (deps.uploads)
    app.post(
      '/indexes/:name/records',
      uploadRecordsHandler({
        ...deps.uploads,
        authenticate: deps.authenticate,
        log: deps.log,
        rateLimiter: deps.rateLimiter,
        addressLimiter,
        audit: deps.audit,
      }),
    );

  app.all('/api/v1', (_req, res) => {
    res.setHeader('Allow', 'POST');
    sendHttpProblem(res, 405, 'Method Not Allowed', 'Use POST /api/v1');
  });
  app.use(notFound);
  return app;
}
