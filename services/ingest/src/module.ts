import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import type { IndexCatalog } from '@quarry/metadata-store';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import { FsUploadSpool } from './adapters/fs-upload-spool.adapter';
import type { IngestServiceConfig } from './config';
import { UploadRecordsUseCase } from './domain/upload-records.use-case';
import type { IndexLoader } from './ports/index-loader.port';
import { ingestHandlers } from './transport/grpc-ingest.handlers';

export interface IngestDeps {
  catalog: IndexCatalog & { ping(): Promise<void> };
  /**
   * The loader of `quarry index load`, with the search backend it makes a version searchable in: the
   * process that hosts the module puts it together (and closes it after the module stops).
   */
  loader: IndexLoader;
  metrics?: QuarryMetrics;
  onStop?: () => Promise<void>;
}

/** The ingest service: uploads loaded into indexes, one version published or nothing. */
export function createIngestModule(config: IngestServiceConfig, log: Logger, deps: IngestDeps): GrpcServiceModule {
  const moduleLog = log.child({ module: 'ingest' });
  const uploads = new UploadRecordsUseCase(deps.catalog, deps.loader, new FsUploadSpool(config.dataDir), {
    maxBytes: config.uploadMaxBytes,
  });
  return new GrpcServiceModule({
    name: 'ingest',
    log: moduleLog,
    listenAddr: config.listenAddr,
    graceMs: config.graceMs,
    serviceName: 'quarry.v1.IngestService',
    definition: loadQuarryProto().quarry.v1.IngestService.service,
    implementation: ingestHandlers(moduleLog, uploads),
    readiness: () => deps.catalog.ping(),
    metrics: deps.metrics,
    onStop: deps.onStop,
  });
}
