import { serviceAddr, type Config, type ServiceName } from '@quarry/config';
import type { GrpcTrust } from '@quarry/rpc';

export interface GatewayConfig {
  host: string;
  port: number;
  /** The API's request limit (docs/api.md): 1 MB, counted on the raw bytes. */
  bodyLimitBytes: number;
  grpcDeadlineMs: number;
  graceMs: number;
  serviceAddrs: Record<ServiceName, string>;
  /** The internal credential (and mTLS) every call to a service carries. */
  grpcTrust: GrpcTrust;
  /** An authenticated call's body must have arrived within this, else 408 (QUARRY_BODY_TIMEOUT_MS). */
  bodyTimeoutMs: number;
  /** Browser origins allowed to call /api/v1 (QUARRY_CORS_ORIGINS). */
  corsOrigins: string[];
  /** `keyPrefix` (QUARRY_RATE_LIMIT_PREFIX) names this deployment's counters in a Redis others may share. */
  rateLimit: { perSecond: number; burst: number; keyPrefix: string } | undefined;
  /** Calls without a valid token, per client address (QUARRY_ANON_RATE_LIMIT). */
  anonRateLimit: { perSecond: number; burst: number } | undefined;
  /** The deployment's Redis (REDIS_URL, or this process's private one): rate limits shared by every replica. */
  redisUrl: string | undefined;
  /** Signs embed tokens; unset: the key file in `dataDir`. */
  embedSecret: string | undefined;
  /** Live embed tokens one user may hold (QUARRY_EMBED_TOKENS_PER_USER). */
  embedTokensPerUser: number;
  dataDir: string;
  auditDays: number;
}

/** `hosted` holds the addresses of services started in this process (their ports are only known then). */
export function gatewayConfig(config: Config, hosted: Partial<Record<ServiceName, string>>): GatewayConfig {
  const addr = (s: ServiceName) => hosted[s] ?? serviceAddr(config, s);
  return {
    host: config.http.host,
    port: config.http.port,
    bodyLimitBytes: 1_048_576,
    grpcDeadlineMs: config.grpc.deadlineMs,
    graceMs: config.shutdownGraceMs,
    serviceAddrs: { query: addr('query'), crosstab: addr('crosstab'), chart: addr('chart'), reports: addr('reports') },
    grpcTrust: { internalToken: config.grpc.internalToken, tls: config.grpc.tls },
    bodyTimeoutMs: config.http.bodyTimeoutMs,
    corsOrigins: config.http.corsOrigins,
    rateLimit: config.rateLimit,
    anonRateLimit: config.anonRateLimit,
    redisUrl: config.redis.url,
    embedSecret: config.embedSecret,
    embedTokensPerUser: config.embedTokensPerUser,
    dataDir: config.dataDir,
    auditDays: config.auditDays,
  };
}
