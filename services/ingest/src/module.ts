import path from 'node:path';
import IORedis from 'ioredis';
import { DATA_DIR_KEYS, requireDataDirKey } from '@quarry/config';
import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import type { Credential, IndexCatalog } from '@quarry/metadata-store';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import { AesSecretBox } from './adapters/aes-secret-box.adapter';
import { BullMqSourceJobs } from './adapters/bullmq-source-jobs.adapter';
import { FsRunStaging } from './adapters/fs-run-staging.adapter';
import { FsUploadSpool } from './adapters/fs-upload-spool.adapter';
import { MetadataOwnerRights } from './adapters/metadata-owner-rights.adapter';
import { RedisSourceStore } from './adapters/redis-source-store.adapter';
import { makeHostPolicy } from './adapters/source-host-policy';
import { unavailableWhenDown } from './adapters/unavailable-when-down';
import { DriverSourceReaders } from './adapters/source-readers.adapter';
import type { IngestServiceConfig } from './config';
import { RunSourceUseCase } from './domain/run-source.use-case';
import { SourcesUseCases } from './domain/sources.use-cases';
import { UploadRecordsUseCase } from './domain/upload-records.use-case';
import type { IndexLoader } from './ports/index-loader.port';
import { ingestHandlers } from './transport/grpc-ingest.handlers';

/** A queued run holds its source this long at most, unless a worker takes it (a lost job is failed sooner: SOURCES.RUN, RUNS). */
const QUEUED_CLAIM_TTL_MS = 60 * 60_000;
/** A running run holds its source this long past its worker's last renewal (every WATCH_MS): a dead worker frees it soon. */
const RUNNING_CLAIM_TTL_MS = 30_000;
const WATCH_MS = 1_000;
/** How long a run waits for another load of its index (an upload, the CLI) before it fails. */
const LOCK_WAIT_MS = 60 * 60_000;

export interface IngestDeps {
  catalog: IndexCatalog & { ping(): Promise<void>; findCredential(hash: string): Promise<Credential | null> };
  /**
   * The loader of `quarry index load`, with the search backend it makes a version searchable in: the
   * process that hosts the module puts it together (and closes it after the module stops).
   */
  loader: IndexLoader;
  metrics?: QuarryMetrics;
  onStop?: () => Promise<void>;
}

/** Sources kept in the deployment's Redis, their runs taken as jobs by this process's worker. */
function startSources(config: IngestServiceConfig, log: Logger, deps: IngestDeps, redisUrl: string) {
  // A call gives up after two retries while Redis is away (a 503 the caller retries), rather than wait for
  // it for ever; the worker has a connection of its own, which waits (BullMQ needs that).
  const redis = new IORedis(redisUrl, { maxRetriesPerRequest: 2 });
  redis.on('error', (err) => log.warn({ err: err.message }, 'sources: Redis error'));
  const store = unavailableWhenDown(new RedisSourceStore(redis), 'The sources store (Redis)');
  const jobs = unavailableWhenDown(new BullMqSourceJobs(redis, redisUrl, log), 'The source run queue (Redis)');
  const box = new AesSecretBox(
    requireDataDirKey({ ...DATA_DIR_KEYS.source, configured: config.sources.key, dataDir: config.dataDir }),
  );
  const readers = new DriverSourceReaders({
    hostAllowed: makeHostPolicy(config.sources.allow),
    fileDirs: config.sources.fileDirs,
    maxUrlBytes: config.uploadMaxBytes,
  });
  const sources = new SourcesUseCases(store, jobs, readers, box, deps.catalog, {
    perUser: config.sources.perUser,
    minIntervalSeconds: config.scheduleMinIntervalSeconds,
    claimTtlMs: QUEUED_CLAIM_TTL_MS,
  });
  const runs = new RunSourceUseCase(
    store,
    jobs,
    readers,
    deps.loader,
    deps.catalog,
    new MetadataOwnerRights(deps.catalog),
    box,
    sources,
    new FsRunStaging(path.join(config.dataDir, 'ingest', 'staging')),
    {
      claimTtlMs: RUNNING_CLAIM_TTL_MS,
      watchMs: WATCH_MS,
      lockWaitMs: LOCK_WAIT_MS,
      queuedClaimTtlMs: QUEUED_CLAIM_TTL_MS,
    },
    log,
  );
  jobs.work((job) => runs.execute(job), config.sources.concurrency);
  return {
    sources,
    ping: async () => void (await redis.ping()),
    close: async () => {
      await jobs.close();
      redis.disconnect();
    },
  };
}

/** The ingest service: uploads and source runs loaded into indexes, one version published or nothing. */
export function createIngestModule(config: IngestServiceConfig, log: Logger, deps: IngestDeps): GrpcServiceModule {
  const moduleLog = log.child({ module: 'ingest' });
  const uploads = new UploadRecordsUseCase(deps.catalog, deps.loader, new FsUploadSpool(config.dataDir), {
    maxBytes: config.uploadMaxBytes,
  });
  const sources = config.redisUrl ? startSources(config, moduleLog, deps, config.redisUrl) : undefined;
  return new GrpcServiceModule({
    name: 'ingest',
    log: moduleLog,
    listenAddr: config.listenAddr,
    graceMs: config.graceMs,
    serviceName: 'quarry.v1.IngestService',
    definition: loadQuarryProto().quarry.v1.IngestService.service,
    implementation: ingestHandlers(moduleLog, uploads, sources?.sources),
    readiness: () => deps.catalog.ping(),
    metrics: deps.metrics,
    onStop: async () => {
      await sources?.close();
      await deps.onStop?.();
    },
  });
}
