import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import IORedis from 'ioredis';
import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import type { QuarryModule } from '@quarry/runtime';
import { FlexibleRateLimiter } from './adapters/flexible-rate-limiter.adapter';
import { MemoryIdempotencyStore } from './adapters/memory-idempotency-store.adapter';
import { RedisIdempotencyStore } from './adapters/redis-idempotency-store.adapter';
import type { GatewayConfig } from './config';
import { IdempotentCall } from './domain/idempotent-call';
import { IdempotentUpload } from './domain/idempotent-upload';
import type { IdempotencyStore } from './ports/idempotency-store.port';
import type { GatewayCallsModule } from './gateway-calls.module';
import { CorsPolicy } from './transport/cors';
import { createHttpApp, type HttpAppDeps } from './transport/http-app';
import { rpcHandler } from './transport/rpc-endpoint';

export interface GatewayOps {
  metrics: QuarryMetrics;
  /** Rejects while a store of this process cannot be reached (/readyz). */
  ready: () => Promise<void>;
  /** The built console to serve at /console (the composition root knows where it is). */
  consoleDir?: string;
}

/**
 * The gateway's HTTP server: JSON-RPC, MCP, the OpenRPC document, the console and the API port's probes,
 * over the use cases of a started GatewayCallsModule (the scheduler module starts between the two).
 */
export class GatewayModule implements QuarryModule {
  readonly name = 'gateway';
  private server: Server | undefined;
  private limitsRedis: IORedis | undefined;
  private idempotencyRedis: IORedis | undefined;
  private readonly log: Logger;

  constructor(
    private readonly config: GatewayConfig,
    private readonly calls: GatewayCallsModule,
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
    const c = this.config;
    const { authenticate, dispatch, audit, exports, signedLinks } = this.calls.calls;
    const cors = new CorsPolicy(c.corsOrigins);
    const limitsStore = c.rateLimit ? await this.limitsStore(c.rateLimit.keyPrefix) : undefined;
    const idempotency = new IdempotentCall(this.idempotencyStore());
    const deps: HttpAppDeps = {
      authenticate,
      dispatch,
      checkReady: this.ops?.ready ?? (() => this.calls.store.ping()),
      degraded: () => this.degraded(),
      log: this.log,
      bodyLimitBytes: c.bodyLimitBytes,
      bodyTimeoutMs: c.bodyTimeoutMs,
      metrics: this.ops?.metrics,
      consoleDir: this.ops?.consoleDir,
      ...(c.oidc?.clientId
        ? { consoleSignIn: { issuer: c.oidc.issuer, clientId: c.oidc.clientId, audience: c.oidc.audience } }
        : {}),
      rateLimiter: c.rateLimit && new FlexibleRateLimiter(c.rateLimit.perSecond, c.rateLimit.burst, limitsStore),
      // Per process: a flood from one address is refused by the replica it reaches, with no Redis round trip.
      addressLimiter:
        c.anonRateLimit &&
        new FlexibleRateLimiter(c.anonRateLimit.perSecond, c.anonRateLimit.burst, undefined, 'address'),
      audit,
      exports: () => exports?.status,
      signedLinks: () => signedLinks,
      uploads: {
        uploads: () => this.calls.uploads,
        maxBytes: c.uploadMaxBytes,
        idleMs: c.bodyTimeoutMs,
        idempotency: new IdempotentUpload(idempotency),
      },
      cors,
      idempotency,
    };
    deps.mcp = {
      authenticate,
      log: this.log.child({ part: 'mcp' }),
      rpcUrl: () => this.selfRpcUrl(),
      addressLimiter: deps.addressLimiter,
      bodyLimitBytes: c.bodyLimitBytes,
      bodyTimeoutMs: c.bodyTimeoutMs,
    };
    const app = createHttpApp(deps);
    const rpc = rpcHandler(deps);
    const server = createServer((req, res) => {
      const api = req.url === '/api/v1' || req.url?.startsWith('/api/v1?');
      if (api && req.method === 'POST') rpc(req, res);
      else if (api && req.method === 'OPTIONS' && cors.enabled) cors.preflight(req, res);
      else app(req, res);
    });
    // No whole-request deadline: an upload's body takes as long as its size needs. Every route that reads
    // a body bounds it itself (JSON-RPC and MCP: QUARRY_BODY_TIMEOUT_MS for the whole body; uploads: that
    // long without a byte), and the headers still have to arrive in time.
    server.requestTimeout = 0;
    server.headersTimeout = Math.min(60_000, c.bodyTimeoutMs + 5000);
    server.listen(c.port, c.host);
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    this.server = server;
    // Links a delivery sends name the port this server got (PORT=0 picks one), unless QUARRY_PUBLIC_URL is set.
    this.calls.useBoundUrl(this.selfRpcUrl().replace(/\/api\/v1$/, ''));
    this.calls.takeExportJobs();
    const bound = server.address();
    const host = typeof bound === 'object' && bound ? bound.address : c.host;
    this.log.info({ port: this.port, host, services: c.serviceAddrs }, 'gateway listening');
  }

  /**
   * The optional stores that are away: the gateway serves searches, crosstabs and reports without
   * Redis (schedules refuse, rate limits count per replica), so Redis does not take it out of the endpoints.
   */
  async degraded(): Promise<string[]> {
    const away: string[] = [];
    try {
      await this.calls.schedulesReady();
    } catch (err) {
      away.push(err instanceof Error ? err.message : String(err));
    }
    if (this.limitsRedis && this.limitsRedis.status !== 'ready')
      away.push(`Redis (shared rate limits) is unreachable: connection ${this.limitsRedis.status}`);
    return away;
  }

  /** Idempotency keys in the deployment's Redis (every replica sees a key another took), else in this process. */
  private idempotencyStore(): IdempotencyStore {
    if (!this.config.redisUrl) return new MemoryIdempotencyStore();
    const redis = new IORedis(this.config.redisUrl, { maxRetriesPerRequest: 1 });
    redis.on('error', (err: Error) => this.log.warn({ err: err.message }, 'idempotency keys: Redis error'));
    this.idempotencyRedis = redis;
    return new RedisIdempotencyStore(redis, 'quarry:idempotency');
  }

  /** With a Redis, the rate limits count there so every gateway replica shares them. */
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

  /**
   * Stops accepting, lets in-flight requests finish (up to the grace period), then drops idle sockets; the
   * scheduler and the calls module stop after this, in the module map's reverse order.
   */
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
    this.limitsRedis?.disconnect();
    this.limitsRedis = undefined;
    this.idempotencyRedis?.disconnect();
    this.idempotencyRedis = undefined;
  }
}
