import { Worker } from 'bullmq';
import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import type { QuarryModule } from '@quarry/rpc';
import { ChromiumRenderer } from '../adapters/chromium-renderer.adapter';
import { CHART_QUEUE, LOCK_DURATION_MS, STALLED_INTERVAL_MS } from '../adapters/bullmq-names';
import type { QueuedRender } from '../ports/chart-queue.port';

export interface ChartWorkerConfig {
  redisUrl: string;
  chromiumPath: string;
  concurrency: number;
  renderTimeoutMs: number;
}

/**
 * The chart-worker target: takes render jobs from the shared queue and draws them in a warm Chromium
 * page pool. Any number of these share one queue; a job whose worker dies is picked up by another
 * once its lock expires (BullMQ stalled-job recovery).
 */
export class ChartWorkerModule implements QuarryModule {
  readonly name = 'chart-worker';
  private worker: Worker | undefined;
  readonly renderer: ChromiumRenderer;
  private readonly log: Logger;

  constructor(
    private readonly config: ChartWorkerConfig,
    log: Logger,
    private readonly metrics?: QuarryMetrics,
  ) {
    this.log = log.child({ module: 'chart-worker' });
    this.renderer = new ChromiumRenderer({ executablePath: config.chromiumPath, pages: config.concurrency, renderTimeoutMs: config.renderTimeoutMs }, this.log);
  }

  async start(): Promise<void> {
    const started = Date.now();
    await this.renderer.start();
    this.worker = new Worker(
      CHART_QUEUE,
      async (job) => {
        const { requestId, ...data } = job.data as QueuedRender;
        const log = this.log.child({ requestId, jobId: job.id });
        const t = Date.now();
        log.info({ attempt: job.attemptsMade + 1 }, 'chart render started');
        const png = this.metrics ? await this.metrics.time(this.metrics.chartRender, {}, () => this.renderer.render(data)) : await this.renderer.render(data);
        log.info({ ms: Date.now() - t, attempt: job.attemptsMade + 1 }, 'chart rendered');
        return png.toString('base64');
      },
      {
        connection: { url: this.config.redisUrl, maxRetriesPerRequest: null, retryStrategy: (n: number) => Math.min(n * 200, 2000) } as never,
        concurrency: this.config.concurrency,
        lockDuration: LOCK_DURATION_MS,
        stalledInterval: STALLED_INTERVAL_MS,
        maxStalledCount: 2,
      },
    );
    this.worker.on('error', (err) => this.log.warn({ err: err.message }, 'chart queue connection problem'));
    this.worker.on('failed', (job, err) => this.log.warn({ requestId: (job?.data as QueuedRender | undefined)?.requestId, jobId: job?.id, err: err.message }, 'chart render failed'));
    await this.worker.waitUntilReady();
    this.log.info({ concurrency: this.config.concurrency, warmMs: Date.now() - started }, 'chart worker ready');
  }

  /** Ready while the worker consumes the queue and Chromium is up. */
  async ready(): Promise<void> {
    if (!this.worker?.isRunning()) throw new Error('the chart worker is not running');
    if (this.renderer.browserPid() === undefined) throw new Error('Chromium is not running');
  }

  async stop(): Promise<void> {
    await this.worker?.close().catch(() => undefined);
    await this.renderer.close();
  }
}
