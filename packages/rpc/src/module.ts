import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import type { QuarryModule } from '@quarry/runtime';
import { bindGrpcServer, createGrpcServer, shutdownGrpcServer } from './grpc-server';
import { requireInternalCredential, serverCredentials, type GrpcTrust } from './internal-credential';

export interface GrpcServiceOptions {
  name: string;
  log: Logger;
  listenAddr: string;
  graceMs: number;
  /** Fully qualified name (quarry.v1.QueryService) for the health service, and its implementation. */
  serviceName: string;
  definition: grpc.ServiceDefinition;
  implementation: grpc.UntypedServiceImplementation;
  /** Rejects while a store this service needs is unreachable: health reports NOT_SERVING then. */
  readiness: () => Promise<void>;
  /** Work before the service first reports ready (it listens already; health says NOT_SERVING meanwhile). */
  warmUp?: () => Promise<void>;
  metrics?: QuarryMetrics;
  onStop?: () => Promise<void>;
}

const HEALTH_INTERVAL_MS = 2000;

/**
 * The grpc.health.v1 service name that answers "this process works" (liveness), SERVING from start to
 * stop whatever the stores say. '' and the service's own name answer "it can serve now" (readiness),
 * NOT_SERVING while a store this service needs fails its ping. A liveness probe on readiness restarts
 * every pod of a service during a store outage that no restart can fix (Kubernetes,
 * "Configure Liveness, Readiness and Startup Probes": liveness restarts the container, readiness only
 * takes it out of the Service's endpoints).
 */
export const LIVENESS_SERVICE = 'quarry.liveness';

/** Counts and times every call of an implementation by rpc and status code. */
function instrument(
  impl: grpc.UntypedServiceImplementation,
  metrics: QuarryMetrics,
): grpc.UntypedServiceImplementation {
  const out: grpc.UntypedServiceImplementation = {};
  for (const [rpc, handler] of Object.entries(impl)) {
    const unaryHandler = handler as grpc.handleUnaryCall<unknown, unknown>;
    const duration = metrics.grpcDuration.labels({ rpc });
    const ok = metrics.grpcCalls.labels({ rpc, code: String(grpc.status.OK) });
    out[rpc] = ((call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const started = process.hrtime.bigint();
      unaryHandler(call, (err, value) => {
        duration.observe(Number(process.hrtime.bigint() - started) / 1e9);
        if (err) metrics.grpcCalls.inc({ rpc, code: String(err.code ?? grpc.status.UNKNOWN) });
        else ok.inc();
        callback(err, value);
      });
    }) as grpc.UntypedHandleCall;
  }
  return out;
}

/**
 * A module that serves one gRPC service plus the standard grpc.health.v1 service: readiness ('' and
 * the service's name) SERVING only while its stores answer, liveness (LIVENESS_SERVICE) while it runs;
 * `address` is known once started (port 0 resolves then). Every call of the service must carry the
 * internal credential; health stays open, since probes carry no secret and it reveals nothing. With mTLS
 * on, a probe without a client certificate cannot reach this port at all: Kubernetes probes the ops
 * port's /healthz and /readyz instead, which say the same over plain HTTP.
 */
export class GrpcServiceModule implements QuarryModule {
  private server: grpc.Server | undefined;
  private bound: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly health = new HealthImplementation();

  constructor(private readonly options: GrpcServiceOptions) {
    this.health.setStatus('', 'NOT_SERVING');
    this.health.setStatus(options.serviceName, 'NOT_SERVING');
    this.health.setStatus(LIVENESS_SERVICE, 'NOT_SERVING');
  }

  get name(): string {
    return this.options.name;
  }

  get address(): string {
    if (!this.bound) throw new Error(`${this.options.name} is not started`);
    return this.bound;
  }

  ready(): Promise<void> {
    return this.options.readiness();
  }

  private async refreshHealth(): Promise<void> {
    const status = await this.options.readiness().then(
      () => 'SERVING' as const,
      () => 'NOT_SERVING' as const,
    );
    this.health.setStatus('', status);
    this.health.setStatus(this.options.serviceName, status);
  }

  /**
   * `trust` is required: without it the module refuses to start rather than serve everyone. It is a
   * parameter of start, not an option, so the process that hosts the module hands it to every service
   * from its one config.
   */
  async start(trust?: GrpcTrust): Promise<void> {
    if (!trust)
      throw new Error(`${this.options.name}: no internal credential given; a service does not serve without one`);
    const o = this.options;
    const server = createGrpcServer();
    // Refusals are counted in the metrics too (code 16), so the guard sits inside the instrumentation.
    const guarded = requireInternalCredential(o.definition, o.implementation, trust.internalToken, o.log);
    server.addService(o.definition, o.metrics ? instrument(guarded, o.metrics) : guarded);
    this.health.addToServer(server);
    this.bound = await bindGrpcServer(server, o.listenAddr, serverCredentials(trust.tls));
    this.server = server;
    this.health.setStatus(LIVENESS_SERVICE, 'SERVING');
    await o.warmUp?.();
    await this.refreshHealth();
    this.timer = setInterval(() => void this.refreshHealth(), HEALTH_INTERVAL_MS);
    this.timer.unref();
    o.log.info({ address: this.bound }, `${o.name} service listening`);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.health.setStatus('', 'NOT_SERVING');
    this.health.setStatus(this.options.serviceName, 'NOT_SERVING');
    this.health.setStatus(LIVENESS_SERVICE, 'NOT_SERVING');
    if (this.server) await shutdownGrpcServer(this.server, this.options.graceMs);
    this.server = undefined;
    await this.options.onStop?.();
  }
}
