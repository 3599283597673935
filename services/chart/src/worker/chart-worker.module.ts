import { UnrecoverableError, WaitingError, Worker } from 'bullmq';
import IORedis from 'ioredis';
import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import { closeBullmqWorker, lostAfterReady, type QuarryModule } from '@quarry/runtime';
import { extractTraceContext, inSpan, SpanKind } from '@quarry/tracing';
import { ChromiumRenderer } from '../adapters/chromium-renderer.adapter';
import { ThreadSvgRenderer } from '../adapters/thread-svg-renderer.adapter';
import {
  CHART_QUEUE,
  KEEP_COMPLETED,
  KEEP_FAILED,
  LOCK_DURATION_MS,
  MAX_STALLED_COUNT,
  RESULT_TTL_SECONDS,
  STALLED_INTERVAL_MS,
  resultKey,
} from '../adapters/bullmq-names';
import type { QueuedRender } from '../ports/chart-queue.port';
import {
  RendererUnavailableError,
  renderTimeoutError,
  type ChartRenderer,
  type SvgRenderer,
} from '../ports/chart-renderer.port';

export interface ChartWorkerConfig {
  redisUrl: string;
  chromiumPath: string;
  concurrency: number;
  renderTimeoutMs: number;
  /** QUARRY_CHROMIUM_IDLE_S in ms: Chromium closes after this long without a chart; 0 keeps it warm from start-up. */
  chromiumIdleMs?: number;
}

const retryStrategy = (n: number) => Math.min(n * 200, 2000);
const RENDER_CLOSE_WAIT_MS = 10_000;
const GONE_CLOSE_WAIT_MS = 3000;

/**
 * The chart-worker target: takes render jobs from the shared queue and draws them in a warm Chromium
 * page pool. Any number of these share one queue; a job whose worker dies is picked up by another
 * once its lock expires (BullMQ stalled-job recovery), once.
 */
export class ChartWorkerModule implements QuarryModule {
  readonly name = 'chart-worker';
  private worker: Worker | undefined;
  private results: IORedis | undefined;
  private resultsLost: () => boolean = () => false;
  /** Why this worker cannot draw at all (Chromium does not launch): it takes no more jobs and is not live. */
  private broken: Error | undefined;
  readonly renderer: ChartRenderer;
  private readonly svg: SvgRenderer;
  private readonly log: Logger;

  /** `renderer` replaces Chromium, `svg` the SVG thread pool (tests of the queue around them). */
  constructor(
    private readonly config: ChartWorkerConfig,
    log: Logger,
    private readonly metrics?: QuarryMetrics,
    renderer?: ChartRenderer,
    svg?: SvgRenderer,
  ) {
    this.log = log.child({ module: 'chart-worker' });
    this.renderer =
      renderer ??
      new ChromiumRenderer(
        {
          executablePath: config.chromiumPath,
          pages: config.concurrency,
          renderTimeoutMs: config.renderTimeoutMs,
          idleMs: config.chromiumIdleMs ?? 0,
        },
        this.log,
      );
    this.svg = svg ?? new ThreadSvgRenderer({ threads: config.concurrency });
  }

  /**
   * SVG in a pool thread: drawn on this loop, a big one kept BullMQ from renewing the
   * job's lock, and the job ran again as stalled. Cut off like a PNG render after renderTimeoutMs.
   */
  private async drawSvg(job: QueuedRender): Promise<string> {
    const limit = this.config.renderTimeoutMs;
    try {
      return await this.svg.render(job, AbortSignal.timeout(limit));
    } catch (err) {
      if (err instanceof Error && err.name === 'AbortError') throw renderTimeoutError(limit);
      throw err;
    }
  }

  async start(): Promise<void> {
    const started = Date.now();
    await this.renderer.start();
    const results = new IORedis(this.config.redisUrl, { maxRetriesPerRequest: 1, retryStrategy });
    results.on('error', () => undefined);
    this.results = results;
    this.resultsLost = lostAfterReady(results);
    this.worker = new Worker(
      CHART_QUEUE,
      async (job, token) => {
        const { requestId, traceparent, tracestate, ...data } = job.data as QueuedRender;
        const jobId = job.id;
        if (!jobId) throw new UnrecoverableError('a chart job without an id has nowhere to put its image');
        // The consumer span continues the producer's trace (its W3C context came in the job data).
        const parent = extractTraceContext((key) =>
          key === 'traceparent' ? traceparent : key === 'tracestate' ? tracestate : undefined,
        );
        const attempt = job.attemptsMade + 1;
        return inSpan(
          `process ${CHART_QUEUE}`,
          {
            kind: SpanKind.CONSUMER,
            parent,
            attributes: {
              'messaging.system': 'bullmq',
              'messaging.operation.type': 'process',
              'messaging.destination.name': CHART_QUEUE,
              'messaging.message.id': jobId,
              'quarry.request_id': requestId ?? '',
              'quarry.chart.attempt': attempt,
            },
          },
          async () => {
            const log = this.log.child({ requestId, jobId });
            const t = Date.now();
            log.info({ attempt }, 'chart render started');
            let image: string;
            try {
              // SVG needs no browser: ECharts draws it in a thread of this process. PNG goes through Chromium.
              const svg = data.format === 'svg';
              const draw = () =>
                inSpan(
                  svg ? 'echarts svg render' : 'chromium render',
                  { attributes: { 'quarry.chart.width': data.width, 'quarry.chart.height': data.height } },
                  async () => (svg ? this.drawSvg(data) : (await this.renderer.render(data)).toString('base64')),
                );
              image = this.metrics ? await this.metrics.time(this.metrics.chartRender, {}, draw) : await draw();
            } catch (err) {
              if (err instanceof RendererUnavailableError) {
                // Another worker can draw it: back to the queue now, and this one stops taking jobs (a
                // worker that failed each job in milliseconds would drain the queue).
                await this.stopConsuming(err);
                await job.moveToWait(token);
                throw new WaitingError();
              }
              // Drawing the same chart again fails the same way (or hangs as long): never retried, even
              // when an older producer queued the job with more attempts.
              throw new UnrecoverableError(err instanceof Error ? err.message : String(err));
            }
            await results.set(resultKey(jobId), image, 'EX', RESULT_TTL_SECONDS);
            log.info({ ms: Date.now() - t, attempt }, 'chart rendered');
            // Nothing returned: a return value would be copied into the events stream (see resultKey).
            return undefined;
          },
        );
      },
      {
        connection: { url: this.config.redisUrl, maxRetriesPerRequest: null, retryStrategy } as never,
        concurrency: this.config.concurrency,
        lockDuration: LOCK_DURATION_MS,
        stalledInterval: STALLED_INTERVAL_MS,
        maxStalledCount: MAX_STALLED_COUNT,
        // For jobs that carry no retention of their own; the producer sets the same.
        removeOnComplete: KEEP_COMPLETED,
        removeOnFail: KEEP_FAILED,
      },
    );
    this.worker.on('error', (err) => this.log.warn({ err: err.message }, 'chart queue connection problem'));
    this.worker.on('failed', (job, err) =>
      this.log.warn(
        { requestId: (job?.data as QueuedRender | undefined)?.requestId, jobId: job?.id, err: err.message },
        'chart render failed',
      ),
    );
    // Not awaited: BullMQ waits for Redis for ever, and a worker that never answers its probes is
    // restarted in a loop while Redis is away. It takes jobs once Redis answers; /readyz says so till then.
    this.worker.waitUntilReady().then(
      () => this.log.info('chart worker connected to Redis'),
      (err: unknown) => this.log.warn({ err: (err as Error).message }, 'chart worker: Redis connection failed'),
    );
    this.log.info({ concurrency: this.config.concurrency, warmMs: Date.now() - started }, 'chart worker ready');
  }

  private async stopConsuming(err: Error): Promise<void> {
    if (this.broken) return;
    this.broken = err;
    this.log.error({ err: err.message }, 'chart worker stops taking jobs: the renderer cannot draw');
    // Jobs under way on other pages finish or come back the same way; nothing new is taken.
    await this.worker?.pause(true);
  }

  /** Ready while the worker consumes the queue, its Redis answers and the renderer is up. */
  async ready(): Promise<void> {
    if (this.broken) throw this.broken;
    if (!this.worker?.isRunning()) throw new Error('the chart worker is not running');
    const status = this.results?.status;
    if (status !== 'ready') throw new Error(`Redis (chart queue) is unreachable: connection ${status ?? 'closed'}`);
    await this.renderer.ready();
  }

  /** Not live once the renderer cannot launch: a restart is what mends it. */
  async live(): Promise<void> {
    if (this.broken) throw this.broken;
  }

  async stop(): Promise<void> {
    // Renders under way finish within the wait; with Redis gone no image could be handed back, so the
    // worker closes by force at once (bounded either way: BullMQ's close waits on Redis).
    const redisGone = this.resultsLost();
    await closeBullmqWorker(this.worker, {
      lost: redisGone,
      graceMs: RENDER_CLOSE_WAIT_MS,
      goneMs: GONE_CLOSE_WAIT_MS,
    });
    this.results?.disconnect();
    await this.renderer.close();
    await this.svg.close();
  }
}
