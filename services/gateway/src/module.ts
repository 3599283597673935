import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import IORedis from 'ioredis';
import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import type { AuditLog, MetadataStore } from '@quarry/metadata-store';
import type { QuarryModule } from '@quarry/runtime';
import { GrpcServiceClients } from './adapters/grpc-service-clients.adapter';
import { JoseEmbedSigner, loadEmbedKey } from './adapters/jose-embed-signer.adapter';
import { FlexibleRateLimiter } from './adapters/flexible-rate-limiter.adapter';
import type { GatewayConfig } from './config';
import { AuditRecorder } from './domain/audit-recorder';
import { AuthenticateUseCase } from './domain/authenticate.use-case';
import { CallMethodUseCase } from './domain/call-method.use-case';
import { EmbedTokenRegistry } from './domain/embed-token-registry';
import { CorsPolicy } from './transport/cors';
import { RunScheduledReportUseCase } from './domain/run-scheduled-report.use-case';
import type { ScheduledReportRunner, SchedulesModule } from './ports/schedules.port';
import { createHttpApp, rpcHandler } from './transport/http-app';

export interface GatewayOps {
  metrics: QuarryMetrics;
  /** Rejects while a store of this process cannot be reached (/readyz). */
  ready: () => Promise<void>;
  /** The built console to serve at /console (the composition root knows where it is). */
  consoleDir?: string;
  /** Scheduled deliveries: built with the runner of this gateway's use cases (absent without Redis). */
  scheduler?: (runner: ScheduledReportRunner) => SchedulesModule;
}

export class GatewayModule implements QuarryModule {
  readonly name = 'gateway';
  private server: Server | undefined;
  private clients: GrpcServiceClients | undefined;
  private audit: AuditRecorder | undefined;
  private embedTokens: EmbedTokenRegistry | undefined;
  private scheduler: SchedulesModule | undefined;
  private limitsRedis: IORedis | undefined;
  private readonly log: Logger;

  constructor(
    private readonly config: GatewayConfig,
    private readonly store: MetadataStore & AuditLog,
    log: Logger,
    private readonly ops?: GatewayOps,
  ) {
    this.log = log.child({ module: 'gateway' });
  }

  /** The bound HTTP port (PORT=0 picks a free one). */
  get port(): number {
    return (this.server?.address() as AddressInfo).port;
  }

  /** This gateway's JSON-RPC endpoint as it reaches itself: loopback when it binds every interface. */
  private selfRpcUrl(): string {
    const bound = this.server?.address() as AddressInfo;
    const host = ['0.0.0.0', '::', ''].includes(bound.address) ? '127.0.0.1' : bound.address;
    return `http://${host.includes(':') ? `[${host}]` : host}:${bound.port}/api/v1`;
  }

  async start(): Promise<void> {
    this.clients = new GrpcServiceClients(
      this.config.serviceAddrs,
      this.config.grpcDeadlineMs,
      this.config.grpcTrust,
      this.log,
    );
    const c = this.config;
    const signer = new JoseEmbedSigner(loadEmbedKey(c.embedSecret, c.dataDir));
    this.audit = new AuditRecorder(this.store, this.log.child({ part: 'audit' }), c.auditDays);
    this.audit.start();
    const cors = new CorsPolicy(c.corsOrigins);
    const embedTokens = new EmbedTokenRegistry(this.store, this.log.child({ part: 'embed-tokens' }), {
      livePerUser: c.embedTokensPerUser,
    });
    embedTokens.start();
    this.embedTokens = embedTokens;
    const authenticate = new AuthenticateUseCase(this.store, signer, Date.now, embedTokens);
    const callMethod = new CallMethodUseCase(this.clients, signer, embedTokens);
    if (this.ops?.scheduler) {
      const scheduler = this.ops.scheduler(new RunScheduledReportUseCase(authenticate, callMethod, this.audit));
      await scheduler.start();
      this.scheduler = scheduler;
      callMethod.useSchedules(scheduler);
    }
    const limitsStore = c.rateLimit ? await this.limitsStore(c.rateLimit.keyPrefix) : undefined;
    const deps = {
      authenticate,
      callMethod,
      checkReady: this.ops?.ready ?? (() => this.store.ping()),
      degraded: () => this.degraded(),
      log: this.log,
      bodyLimitBytes: c.bodyLimitBytes,
      bodyTimeoutMs: c.bodyTimeoutMs,
      metrics: this.ops?.metrics,
      consoleDir: this.ops?.consoleDir,
      rateLimiter: c.rateLimit && new FlexibleRateLimiter(c.rateLimit.perSecond, c.rateLimit.burst, limitsStore),
      // Per process: a flood from one address is refused by the replica it reaches, with no Redis round trip.
      addressLimiter: c.anonRateLimit && new FlexibleRateLimiter(c.anonRateLimit.perSecond, c.anonRateLimit.burst),
      audit: this.audit,
      cors,
      mcp: { authenticate, log: this.log.child({ part: 'mcp' }), rpcUrl: () => this.selfRpcUrl() },
    };
    const app = createHttpApp(deps);
    const rpc = rpcHandler(deps);
    const server = createServer((req, res) => {
      const api = req.url === '/api/v1' || req.url?.startsWith('/api/v1?');
      if (api && req.method === 'POST') rpc(req, res);
      else if (api && req.method === 'OPTIONS' && cors.enabled) cors.preflight(req, res);
      else app(req, res);
    });
    // Node's own backstop for a request that never completes (the body deadline above is the precise one).
    server.requestTimeout = c.bodyTimeoutMs + 5000;
    server.headersTimeout = Math.min(60_000, server.requestTimeout);
    server.listen(c.port, c.host);
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    this.server = server;
    const bound = server.address();
    const host = typeof bound === 'object' && bound ? bound.address : c.host;
    this.log.info({ port: this.port, host, services: this.config.serviceAddrs }, 'gateway listening');
  }

  /**
   * The optional stores that are away: the gateway serves searches, crosstabs and reports without
   * Redis (schedules refuse, rate limits count per replica), so Redis does not take it out of the endpoints.
   */
  async degraded(): Promise<string[]> {
    const away: string[] = [];
    if (this.scheduler?.ready) {
      try {
        await this.scheduler.ready();
      } catch (err) {
        away.push(err instanceof Error ? err.message : String(err));
      }
    }
    if (this.limitsRedis && this.limitsRedis.status !== 'ready')
      away.push(`Redis (shared rate limits) is unreachable: connection ${this.limitsRedis.status}`);
    return away;
  }

  /** With a Redis, the rate limits count there so every gateway replica shares them (issue #27). */
  private async limitsStore(keyPrefix: string): Promise<{ redis: IORedis; keyPrefix: string } | undefined> {
    if (!this.config.redisUrl) return undefined;
    // Fail fast to the in-memory insurance limiter rather than queueing requests while Redis is away.
    const redis = new IORedis(this.config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    redis.on('error', (err: Error) => this.log.warn({ err: err.message }, 'rate limits: Redis error'));
    this.limitsRedis = redis;
    // Not fatal: until it answers, each replica counts in its insurance limiter.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 3000);
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return { redis, keyPrefix };
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
    await this.scheduler?.stop();
    this.scheduler = undefined;
    this.clients?.close();
    await this.audit?.stop();
    this.embedTokens?.stop();
    this.limitsRedis?.disconnect();
    this.limitsRedis = undefined;
  }
}
