import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import type { MetadataStore } from '@quarry/metadata-store';
import type { QuarryModule } from '@quarry/runtime';
import { GrpcServiceClients } from './adapters/grpc-service-clients.adapter';
import type { GatewayConfig } from './config';
import { AuthenticateUseCase } from './domain/authenticate.use-case';
import { CallMethodUseCase } from './domain/call-method.use-case';
import { createHttpApp, rpcHandler } from './transport/http-app';

export interface GatewayOps {
  metrics: QuarryMetrics;
  /** The Prometheus text of this whole process. */
  scrape: () => Promise<{ contentType: string; text: string }>;
  /** Rejects while a store of this process cannot be reached (/readyz). */
  ready: () => Promise<void>;
  /** The built console to serve at /console (the composition root knows where it is). */
  consoleDir?: string;
}

export class GatewayModule implements QuarryModule {
  readonly name = 'gateway';
  private server: Server | undefined;
  private clients: GrpcServiceClients | undefined;
  private readonly log: Logger;

  constructor(
    private readonly config: GatewayConfig,
    private readonly store: MetadataStore,
    log: Logger,
    private readonly ops?: GatewayOps,
  ) {
    this.log = log.child({ module: 'gateway' });
  }

  /** The bound HTTP port (PORT=0 picks a free one). */
  get port(): number {
    return (this.server?.address() as AddressInfo).port;
  }

  async start(): Promise<void> {
    this.clients = new GrpcServiceClients(
      this.config.serviceAddrs,
      this.config.grpcDeadlineMs,
      this.config.grpcTrust,
      this.log,
    );
    const deps = {
      authenticate: new AuthenticateUseCase(this.store),
      callMethod: new CallMethodUseCase(this.clients),
      checkReady: this.ops?.ready ?? (() => this.store.ping()),
      log: this.log,
      bodyLimitBytes: this.config.bodyLimitBytes,
      metrics: this.ops?.metrics,
      scrape: this.ops?.scrape,
      consoleDir: this.ops?.consoleDir,
    };
    const app = createHttpApp(deps);
    const rpc = rpcHandler(deps);
    const server = createServer((req, res) => {
      if (req.method === 'POST' && (req.url === '/api/v1' || req.url?.startsWith('/api/v1?'))) rpc(req, res);
      else app(req, res);
    });
    server.listen(this.config.port, this.config.host);
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    this.server = server;
    this.log.info({ port: this.port, services: this.config.serviceAddrs }, 'gateway listening');
  }

  /** Stops accepting, lets in-flight requests finish (up to the grace period), then drops idle sockets. */
  async stop(): Promise<void> {
    const server = this.server;
    if (server) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.closeAllConnections();
          resolve();
        }, this.config.graceMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
    }
    this.server = undefined;
    this.clients?.close();
  }
}
