import { pickConfig, serviceAddr, type Config, type ServiceName } from '@quarry/config';
import type { GrpcTrust } from '@quarry/rpc';

/** `hosted` holds the addresses of services started in this process (their ports are only known then). */
export function gatewayConfig(config: Config, hosted: Partial<Record<ServiceName, string>>) {
  const addr = (s: ServiceName) => hosted[s] ?? serviceAddr(config, s);
  const serviceAddrs: Record<ServiceName, string> = {
    query: addr('query'),
    crosstab: addr('crosstab'),
    chart: addr('chart'),
    reports: addr('reports'),
    ingest: addr('ingest'),
  };
  /** The internal credential (and mTLS) every call to a service carries. */
  const grpcTrust: GrpcTrust = { internalToken: config.grpc.internalToken, tls: config.grpc.tls };
  return {
    host: config.http.host,
    port: config.http.port,
    /** The API's request limit (docs/api.md): 1 MB, counted on the raw bytes. */
    bodyLimitBytes: 1_048_576,
    grpcDeadlineMs: config.grpc.deadlineMs,
    graceMs: config.shutdownGraceMs,
    serviceAddrs,
    grpcTrust,
    bodyTimeoutMs: config.http.bodyTimeoutMs,
    corsOrigins: config.http.corsOrigins,
    /** The deployment's Redis (REDIS_URL, or this process's private one): rate limits shared by every replica. */
    redisUrl: config.redis.url,
    ...pickConfig(
      config,
      'rateLimit',
      'anonRateLimit',
      'embedSecret',
      'oidc',
      'embedTokensPerUser',
      'dataDir',
      'auditDays',
      'exportTtlS',
      'exportMaxRows',
      'uploadMaxBytes',
      'exportDir',
      'exportConcurrency',
      'exportMaxPerUser',
      'exportMinFreeBytes',
      'exportProgressMs',
      'deliveryLinks',
    ),
  };
}

export type GatewayConfig = ReturnType<typeof gatewayConfig>;
