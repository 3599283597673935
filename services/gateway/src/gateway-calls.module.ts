import type { Logger } from '@quarry/logger';
import type { AuditLog, MetadataStore } from '@quarry/metadata-store';
import type { QuarryModule } from '@quarry/runtime';
import { GrpcServiceClients } from './adapters/grpc-service-clients.adapter';
import { JoseEmbedSigner, loadEmbedKey } from './adapters/jose-embed-signer.adapter';
import type { GatewayConfig } from './config';
import { AuditRecorder } from './domain/audit-recorder';
import { AuthenticateUseCase } from './domain/authenticate.use-case';
import { DispatchMethodUseCase } from './domain/dispatch-method.use-case';
import { EmbedTokenRegistry } from './domain/embed-token-registry';
import { createMethodHandlers } from './domain/handlers/method-handlers';
import { RunScheduledReportUseCase } from './domain/run-scheduled-report.use-case';
import type { ScheduledReportRunner, SchedulesModule } from './ports/schedules.port';

/** What the gateway's HTTP module takes from its calls module once it has started. */
export interface GatewayCalls {
  authenticate: AuthenticateUseCase;
  dispatch: DispatchMethodUseCase;
  audit: AuditRecorder;
}

/**
 * The gateway without its HTTP server: the service clients, authentication, the audit trail, embed tokens
 * and the method dispatch. A module of its own so that the scheduler, whose deliveries run reports
 * through this dispatch, can start after it and before the HTTP server takes calls, and stop after that
 * server has drained.
 */
export class GatewayCallsModule implements QuarryModule {
  readonly name = 'gateway-calls';
  private clients: GrpcServiceClients | undefined;
  private audit: AuditRecorder | undefined;
  private embedTokens: EmbedTokenRegistry | undefined;
  private runner: RunScheduledReportUseCase | undefined;
  private started: GatewayCalls | undefined;
  /** Scheduled deliveries, once their module runs (absent without Redis). */
  private scheduler: SchedulesModule | undefined;
  private readonly log: Logger;

  constructor(
    private readonly config: GatewayConfig,
    readonly store: MetadataStore & AuditLog,
    log: Logger,
  ) {
    this.log = log.child({ module: 'gateway' });
  }

  async start(): Promise<void> {
    const c = this.config;
    this.clients = new GrpcServiceClients(c.serviceAddrs, c.grpcDeadlineMs, c.grpcTrust, this.log);
    const signer = new JoseEmbedSigner(loadEmbedKey(c.embedSecret, c.dataDir));
    const audit = new AuditRecorder(this.store, this.log.child({ part: 'audit' }), c.auditDays);
    this.audit = audit;
    audit.start();
    const embedTokens = new EmbedTokenRegistry(this.store, this.log.child({ part: 'embed-tokens' }), {
      livePerUser: c.embedTokensPerUser,
    });
    embedTokens.start();
    this.embedTokens = embedTokens;
    const authenticate = new AuthenticateUseCase(this.store, signer, Date.now, embedTokens);
    const dispatch = new DispatchMethodUseCase(
      createMethodHandlers({ services: this.clients, signer, embedTokens, schedules: () => this.scheduler }),
    );
    this.runner = new RunScheduledReportUseCase(authenticate, dispatch, audit);
    this.started = { authenticate, dispatch, audit };
  }

  /** The use cases the HTTP module serves. */
  get calls(): GatewayCalls {
    if (!this.started) throw new Error('the gateway calls module is not started');
    return this.started;
  }

  /** What scheduled deliveries run reports through: REPORTS.EXECUTE as the schedule's owner. */
  get scheduledReportRunner(): ScheduledReportRunner {
    if (!this.runner) throw new Error('the gateway calls module is not started');
    return this.runner;
  }

  /** The scheduler module once it has started (REPORTS.SCHEDULE and its kin answer 503 without it). */
  useSchedules(scheduler: SchedulesModule | undefined): void {
    this.scheduler = scheduler;
  }

  /** Rejects, naming the store, while the schedules' store does not answer; nothing without schedules. */
  async schedulesReady(): Promise<void> {
    await this.scheduler?.ready?.();
  }

  async stop(): Promise<void> {
    this.scheduler = undefined;
    this.clients?.close();
    await this.audit?.stop();
    this.embedTokens?.stop();
  }
}
