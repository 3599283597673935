import type { Logger } from '@quarry/logger';
import type { AuditLog, IndexCatalog, MetadataStore } from '@quarry/metadata-store';
import type { QuarryModule } from '@quarry/runtime';
import { BullMqExportJobs } from './adapters/bullmq-export-jobs.adapter';
import { DATA_DIR_KEYS, loadDataDirKey } from '@quarry/config';
import { FsDeliveryFiles } from './adapters/fs-delivery-files.adapter';
import { StreamingRecordConverter } from './adapters/streaming-record-converter.adapter';
import { DeliveryOutputs } from './domain/delivery-outputs';
import { OpenSignedLinkUseCase } from './domain/open-signed-link.use-case';
import { SignedLinks } from './domain/signed-links';
import type { DeliveryFiles } from './ports/delivery-files.port';
import { FsExportStore } from './adapters/fs-export-store.adapter';
import { GrpcSearchExports } from './adapters/grpc-search-exports.adapter';
import { GrpcServiceClients } from './adapters/grpc-service-clients.adapter';
import type { RecordUploads } from './ports/record-uploads.port';
import { ExportStatusUseCase } from './domain/export-status.use-case';
import { RunCrosstabUseCase } from './domain/run-crosstab.use-case';
import { StartExportUseCase } from './domain/start-export.use-case';
import { JoseEmbedSigner, loadEmbedKey } from './adapters/jose-embed-signer.adapter';
import { JoseOidcVerifier } from './adapters/jose-oidc-verifier.adapter';
import { checkRealmTemplates } from './domain/oidc-claims';
import { OidcSignIn } from './domain/oidc-sign-in';
import type { GatewayConfig } from './config';
import { AuditRecorder } from './domain/audit-recorder';
import { AuthenticateUseCase } from './domain/authenticate.use-case';
import { DispatchMethodUseCase } from './domain/dispatch-method.use-case';
import { EmbedTokenRegistry } from './domain/embed-token-registry';
import { ReplayTokens, replayKey } from './domain/replay-tokens';
import { ManageTokensUseCase } from './domain/manage-tokens.use-case';
import { ManageUsersUseCase } from './domain/manage-users.use-case';
import { createMethodHandlers } from './domain/handlers/method-handlers';
import { RunScheduledReportUseCase } from './domain/run-scheduled-report.use-case';
import type { ScheduledReportRunner, SchedulesModule } from './ports/schedules.port';

/** The longest one export may write before it fails as timed out. */
const EXPORT_DEADLINE_MS = 6 * 3600_000;

/** What the gateway's HTTP module takes from its calls module once it has started. */
export interface GatewayCalls {
  authenticate: AuthenticateUseCase;
  dispatch: DispatchMethodUseCase;
  audit: AuditRecorder;
  exports?: { start: StartExportUseCase; status: ExportStatusUseCase };
  /** Deliveries' signed links, their files and who may still open them; absent when no such file is kept. */
  signedLinks?: { links: SignedLinks; files: DeliveryFiles; opens: OpenSignedLinkUseCase };
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
  private searchExports: GrpcSearchExports | undefined;
  private exportJobs: BullMqExportJobs | undefined;
  /** Starts this process's export worker; set once exports are set up. */
  private takeJobs: (() => void) | undefined;
  private exports: { start: StartExportUseCase; status: ExportStatusUseCase } | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private deliverySearches: GrpcSearchExports | undefined;
  private deliverySweeper: NodeJS.Timeout | undefined;
  /** The HTTP server's address once it listens: signed links start with it when QUARRY_PUBLIC_URL is unset. */
  private boundUrl: string | undefined;

  constructor(
    private readonly config: GatewayConfig,
    readonly store: MetadataStore & AuditLog & Pick<IndexCatalog, 'ownedIndexes' | 'getIndex'>,
    log: Logger,
  ) {
    this.log = log.child({ module: 'gateway' });
  }

  /** OpenID Connect sign-in when a provider is configured; its realm templates are checked here, before serving. */
  private signIn(): OidcSignIn | undefined {
    const o = this.config.oidc;
    if (!o) return undefined;
    checkRealmTemplates(o.realms);
    const verifier = new JoseOidcVerifier({ issuer: o.issuer, audience: o.audience });
    this.log.info({ issuer: o.issuer, audience: o.audience }, 'bearer JWTs from the OpenID provider are accepted');
    return new OidcSignIn(this.store, verifier, o);
  }

  async start(): Promise<void> {
    const c = this.config;
    this.clients = new GrpcServiceClients(c.serviceAddrs, c.grpcDeadlineMs, c.grpcTrust, this.log);
    const embedKey = loadEmbedKey(c.embedSecret, c.dataDir);
    const signer = new JoseEmbedSigner(embedKey);
    const audit = new AuditRecorder(this.store, this.log.child({ part: 'audit' }), c.auditDays);
    this.audit = audit;
    audit.start();
    const embedTokens = new EmbedTokenRegistry(this.store, this.log.child({ part: 'embed-tokens' }), {
      livePerUser: c.embedTokensPerUser,
    });
    embedTokens.start();
    this.embedTokens = embedTokens;
    const authenticate = new AuthenticateUseCase(
      this.store,
      signer,
      Date.now,
      embedTokens,
      (userId) => this.store.ownedIndexes(userId),
      this.signIn(),
    );
    const dispatch = new DispatchMethodUseCase(
      createMethodHandlers({
        services: this.clients,
        sources: this.clients,
        signer,
        embedTokens,
        schedules: () => this.scheduler,
        exports: await this.startExports(),
        users: new ManageUsersUseCase(this.store, this.store),
        tokens: new ManageTokensUseCase(this.store),
        replays: new ReplayTokens(replayKey(Buffer.from(embedKey))),
      }),
    );
    const deliveries = this.startDeliveries();
    this.runner = new RunScheduledReportUseCase(authenticate, dispatch, audit, deliveries?.outputs);
    const signedLinks = deliveries?.signed && {
      ...deliveries.signed,
      opens: new OpenSignedLinkUseCase(authenticate, dispatch),
    };
    this.started = { authenticate, dispatch, audit, exports: this.exports, signedLinks };
  }

  /** The ingest service's uploads (POST /indexes/<name>/records), once started. */
  get uploads(): RecordUploads | undefined {
    return this.clients;
  }

  /** Called by the HTTP module once it listens, so links name the port it got. */
  useBoundUrl(url: string): void {
    this.boundUrl = url;
  }

  /**
   * Called by the HTTP module once it listens: this process's worker starts taking export jobs. A process
   * that fails to start (a port taken, a store away) never takes one, so it cannot fail one by dying.
   */
  takeExportJobs(): void {
    this.takeJobs?.();
    this.takeJobs = undefined;
  }

  /**
   * What scheduled deliveries write: a search's records (by the query service, into the exports' folder)
   * and outputs too large to attach, behind links signed with the data dir's link key (QUARRY_LINK_KEY).
   */
  private startDeliveries() {
    const c = this.config;
    let files: FsDeliveryFiles;
    try {
      files = new FsDeliveryFiles(c.exportDir);
    } catch (err) {
      this.log.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'deliveries: no writable exports folder',
      );
      return undefined;
    }
    const loaded = loadDataDirKey({ ...DATA_DIR_KEYS.link, configured: c.deliveryLinks.key, dataDir: c.dataDir });
    if (!loaded.key)
      this.log.warn({ reason: loaded.reason }, 'deliveries: outputs over the attachment bound cannot be linked');
    const publicUrl = () =>
      c.deliveryLinks.publicUrl ??
      this.boundUrl ??
      `http://${['0.0.0.0', '::', ''].includes(c.host) ? '127.0.0.1' : c.host}:${c.port}`;
    const links = loaded.key ? new SignedLinks(loaded.key, publicUrl) : undefined;
    this.deliverySearches = new GrpcSearchExports(
      c.serviceAddrs.query,
      c.grpcTrust,
      c.grpcDeadlineMs,
      EXPORT_DEADLINE_MS,
    );
    const outputs = new DeliveryOutputs({
      files,
      converter: new StreamingRecordConverter(),
      searches: this.deliverySearches,
      links,
      maxRows: c.exportMaxRows,
      attachmentMaxBytes: c.deliveryLinks.attachmentMaxBytes,
      linkTtlS: c.deliveryLinks.ttlS,
    });
    const sweep = () => outputs.sweep().catch((err: unknown) => this.log.warn({ err }, 'deliveries: sweep failed'));
    void sweep();
    this.deliverySweeper = setInterval(sweep, 60_000);
    this.deliverySweeper.unref();
    return { outputs, signed: links && { links, files } };
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

  /**
   * Exports: jobs on the deployment's Redis, run by this process's worker (and every other gateway's), files
   * on the exports volume written by the query service. Expired files are swept every minute, and records
   * whose jobs died with their runs are failed.
   */
  private async startExports() {
    const c = this.config;
    if (!c.redisUrl) {
      this.log.warn('exports: no Redis for their jobs; EXPORTS.* answer 503');
      return undefined;
    }
    let store: FsExportStore;
    try {
      store = new FsExportStore(c.exportDir);
    } catch (err) {
      // A gateway without a writable exports volume serves everything else; EXPORTS.* answer 503.
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'exports: no writable exports folder');
      return undefined;
    }
    // An expired export's record stays as long again, so its download says 410 rather than 404.
    const keepRecordsMs = c.exportTtlS * 1000;
    const jobs = new BullMqExportJobs(c.redisUrl, 2 * c.exportTtlS, this.log);
    this.exportJobs = jobs;
    // An export is background work that may take minutes: the interactive deadline is for its count only.
    this.searchExports = new GrpcSearchExports(c.serviceAddrs.query, c.grpcTrust, c.grpcDeadlineMs, EXPORT_DEADLINE_MS);
    const status = new ExportStatusUseCase(store, jobs);
    const start = new StartExportUseCase(
      store,
      jobs,
      this.searchExports,
      this.clients!,
      new RunCrosstabUseCase(this.clients!),
      {
        maxRows: c.exportMaxRows,
        ttlMs: c.exportTtlS * 1000,
        perUser: 2,
        maxPerUser: c.exportMaxPerUser,
        minFreeBytes: c.exportMinFreeBytes,
        progressMs: c.exportProgressMs,
      },
      Date.now,
      new StreamingRecordConverter(),
    );
    // Jobs are taken once the process is up (takeExportJobs): a process that dies at start takes none.
    this.takeJobs = () => jobs.work((job, run) => start.run(job, run), c.exportConcurrency);
    const sweep = () =>
      status.sweep(keepRecordsMs).catch((err: unknown) => this.log.warn({ err }, 'exports: sweep failed'));
    void sweep();
    this.sweeper = setInterval(() => void sweep(), 60_000);
    this.sweeper.unref();
    this.exports = { start, status };
    return this.exports;
  }

  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    // Runs under way go back to the queue, for this process after a restart or another gateway.
    await this.exportJobs?.close();
    if (this.deliverySweeper) clearInterval(this.deliverySweeper);
    this.deliverySearches?.close();
    this.searchExports?.close();
    this.scheduler = undefined;
    this.clients?.close();
    await this.audit?.stop();
    this.embedTokens?.stop();
  }
}
