import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { Job, Queue } from 'bullmq';
import IORedis from 'ioredis';
import { AppError } from '@quarry/errors';
import { silentLogger } from '@quarry/logger';
import { freePort, HeavyCallLimiter, threadEntry } from '@quarry/runtime';
import { describeIf, fastest } from '@quarry/testkit';
import { TestRedis } from '../../../../tests/support/redis';
import { buildChartOption } from '../domain/chart-option/build-chart-option';
import { chartKind } from '../domain/chart-types';
import { RenderChartUseCase } from '../domain/render-chart.use-case';
import { renderTimeoutError, type ChartRenderer, type RenderJob, type SvgRenderer } from '../ports/chart-renderer.port';
import { ChartWorkerModule } from '../worker/chart-worker.module';
import { BullMqChartQueue } from './bullmq-chart-queue.adapter';
import {
  CHART_QUEUE,
  EVENTS_MAX_LEN,
  KEEP_COMPLETED,
  QUEUE_FULL_RETRY_AFTER_SECONDS,
  RESULT_TTL_SECONDS,
  resultKey,
} from './bullmq-names';
import { ChromiumRenderer } from './chromium-renderer.adapter';
import { ThreadSvgRenderer } from './thread-svg-renderer.adapter';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Stands in for Chromium: these tests are about the queue around the renderer, not the drawing. */
class FakeRenderer implements ChartRenderer {
  calls = 0;
  constructor(private readonly draw: (job: RenderJob) => Promise<Buffer>) {}
  async start(): Promise<void> {}
  async ready(): Promise<void> {}
  async close(): Promise<void> {}
  render(job: RenderJob): Promise<Buffer> {
    this.calls++;
    return this.draw(job);
  }
}

/** A stand-in image about the size of a real 800x600 chart, that says which job it was drawn for. */
const image = (job: RenderJob, bytes = 48 * 1024) =>
  Buffer.concat([Buffer.from(`${job.width}x${job.height}|`), randomBytes(bytes)]);
const tagOf = (base64: string) => Buffer.from(base64, 'base64').toString('latin1').split('|')[0];
const renderJob = (width: number, height = 300): RenderJob => ({
  option: { title: { text: `chart ${width}` } },
  width,
  height,
});

function gate(): { wait: Promise<void>; open: () => void } {
  let open = () => undefined as void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** Polls `check` until it holds; the bound is a hang guard, generous for a loaded machine. */
async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );

describe('BullMqChartQueue against a real redis-server', () => {
  let redis: TestRedis;
  let admin: IORedis;
  const open: Array<{ stop?: () => Promise<void>; close?: () => Promise<void> }> = [];

  beforeAll(async () => {
    redis = new TestRedis(await freePort());
    await redis.start();
    admin = new IORedis(redis.url);
  });

  afterAll(async () => {
    admin?.disconnect();
    await redis?.stop();
  });

  beforeEach(async () => {
    await admin.flushall();
    await admin.config('SET', 'maxmemory', '0');
  });

  afterEach(async () => {
    for (const m of open.splice(0).reverse()) await (m.close ?? m.stop)?.call(m);
  });

  async function startWorker(
    renderer: ChartRenderer,
    concurrency = 1,
    svg?: SvgRenderer,
    renderTimeoutMs = 10000,
  ): Promise<ChartWorkerModule> {
    const worker = new ChartWorkerModule(
      { redisUrl: redis.url, chromiumPath: CHROMIUM, concurrency, renderTimeoutMs },
      silentLogger(),
      undefined,
      renderer,
      svg,
    );
    await worker.start();
    open.push(worker);
    return worker;
  }

  async function startQueue(maxWaiting: number): Promise<BullMqChartQueue> {
    const queue = new BullMqChartQueue({ redisUrl: redis.url, maxWaiting });
    open.push(queue);
    await until('the producer is connected', () =>
      queue.ready().then(
        () => true,
        () => false,
      ),
    );
    return queue;
  }

  const waiting = async (queue: BullMqChartQueue) => (await queue.counts()).waiting;

  /** Every key of the queue's job hashes (bull:<queue>:<id>), not its lists, sets and streams. */
  async function jobHashes(): Promise<string[]> {
    const keys = await admin.keys(`bull:${CHART_QUEUE}:*`);
    return keys.filter((k) => /^bull:quarry-charts:\d+$/.test(k));
  }

  it('refuses at once, with UNAVAILABLE and a Retry-After, once the bound of waiting renders is reached', async () => {
    const held = gate();
    const renderer = new FakeRenderer(async (job) => {
      await held.wait;
      return image(job);
    });
    await startWorker(renderer);
    const queue = await startQueue(3);
    const pending: Array<Promise<string>> = [];
    pending.push(queue.render(renderJob(200), { timeoutMs: 30000, requestId: 'r0' }));
    await until('the worker holds the first job', () => renderer.calls === 1);
    for (let i = 1; i <= 3; i++) {
      pending.push(queue.render(renderJob(200 + i), { timeoutMs: 30000, requestId: `r${i}` }));
      await until(`${i} jobs wait`, async () => (await waiting(queue)) === i);
    }

    // The fastest of up to three refusals (fastest() says why): one that waited for room would be slow in each.
    const { ms, value: refusal } = await fastest(1000, () =>
      rejection(queue.render(renderJob(999), { timeoutMs: 30000, requestId: 'over' })),
    );
    expect(ms).toBeLessThan(1000);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({
      code: 'UNAVAILABLE',
      retryAfterSeconds: QUEUE_FULL_RETRY_AFTER_SECONDS,
      detail: 'The chart queue is full (3 waiting); try again shortly',
    });
    expect(await waiting(queue)).toBe(3);

    held.open();
    const images = await Promise.all(pending);
    // Each caller gets the image of its own job.
    expect(images.map(tagOf)).toEqual(['200x300', '201x300', '202x300', '203x300']);
    expect(tagOf(await queue.render(renderJob(999), { timeoutMs: 30000, requestId: 'after' }))).toBe('999x300');
    expect(renderer.calls).toBe(5);
  }, 60_000);

  it('keeps no image in Redis, at most the retained number of finished jobs, and a trimmed events stream', async () => {
    const renderer = new FakeRenderer(async (job) => image(job));
    await startWorker(renderer, 4);
    const queue = await startQueue(10000);
    const jobs = 500;
    for (let i = 0; i < jobs; i += 50) {
      const batch = Array.from({ length: 50 }, (_, j) =>
        queue.render(renderJob(1000 + i + j), { timeoutMs: 30000, requestId: `b${i + j}` }),
      );
      const images = await Promise.all(batch);
      expect(images.map(tagOf)).toEqual(Array.from({ length: 50 }, (_, j) => `${1000 + i + j}x300`));
    }
    expect(renderer.calls).toBe(jobs);

    // Retention: the completed set and the job hashes stop at the configured count.
    expect(await admin.zcard(`bull:${CHART_QUEUE}:completed`)).toBe(KEEP_COMPLETED.count);
    const hashes = await jobHashes();
    expect(hashes).toHaveLength(KEEP_COMPLETED.count);
    expect(await admin.hget(hashes[0], 'returnvalue')).toBe('null');
    // Every image was taken by its caller.
    expect(await admin.keys(`${CHART_QUEUE}:png:*`)).toEqual([]);

    // The events stream: far more events were written than it keeps; XTRIM MAXLEN ~ trims whole
    // stream nodes, so it may hold up to one node above the limit.
    const [, nodeMax] = (await admin.config('GET', 'stream-node-max-entries')) as [string, string];
    const info = (await admin.xinfo('STREAM', `bull:${CHART_QUEUE}:events`)) as unknown[];
    const added = Number(info[info.indexOf('entries-added') + 1]);
    const length = await admin.xlen(`bull:${CHART_QUEUE}:events`);
    expect(added).toBeGreaterThan(EVENTS_MAX_LEN + Number(nodeMax));
    expect(length).toBeLessThanOrEqual(EVENTS_MAX_LEN + Number(nodeMax));
    const entries = await admin.xrange(`bull:${CHART_QUEUE}:events`, '-', '+');
    const longest = Math.max(...entries.flatMap(([, fields]) => fields.map((f) => f.length)));
    expect(longest).toBeLessThan(200);
  }, 120000);

  it('grows Redis by far less than the images it passed on', async () => {
    const renderer = new FakeRenderer(async (job) => image(job));
    await startWorker(renderer, 4);
    const queue = await startQueue(10000);
    const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
    // Warm up first: the queue's own keys and scripts are not what is measured.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => queue.render(renderJob(100 + i), { timeoutMs: 30000, requestId: `w${i}` })),
    );
    const before = await usedMemory();
    let imageBytes = 0;
    for (let i = 0; i < 300; i += 30) {
      const images = await Promise.all(
        Array.from({ length: 30 }, (_, j) =>
          queue.render(renderJob(2000 + i + j), { timeoutMs: 30000, requestId: `m${i + j}` }),
        ),
      );
      imageBytes += images.reduce((n, b64) => n + b64.length, 0);
    }
    const growth = (await usedMemory()) - before;
    // Kept job hashes and events without images: a few hundred KB. One image copy per render would
    // be the whole of imageBytes (about 20 MB); BullMQ's defaults kept two.
    expect(growth).toBeLessThan(imageBytes / 20);
  }, 120000);

  it('attempts a render that exceeds its timeout exactly once and answers TIMEOUT', async () => {
    const renderer = new FakeRenderer(async () => {
      await new Promise((r) => setTimeout(r, 50));
      throw renderTimeoutError(50);
    });
    await startWorker(renderer);
    const queue = await startQueue(10);
    const err = await rejection(queue.render(renderJob(300), { timeoutMs: 20000, requestId: 'slow' }));
    expect(err).toMatchObject({ code: 'TIMEOUT', detail: 'The chart took longer than 50 ms to draw' });
    // Failed is final: a job due for another attempt would sit in delayed or wait instead.
    const inspect = new Queue(CHART_QUEUE, { connection: { url: redis.url } as never });
    try {
      const counts = await inspect.getJobCounts('failed', 'delayed', 'waiting', 'active');
      expect(counts).toEqual({ failed: 1, delayed: 0, waiting: 0, paused: 0, active: 0 });
      const [failed] = await inspect.getFailed();
      expect(failed.attemptsMade).toBe(1);
      expect(failed.failedReason).toBe('render exceeded 50 ms');
    } finally {
      await inspect.close();
    }
    expect(renderer.calls).toBe(1);
  }, 60_000);

  it('gives up at its own deadline with TIMEOUT and drops the job so no worker renders it later', async () => {
    const queue = await startQueue(10);
    // The fastest of up to three (fastest() says why): each gives up, a late give-up is late in every one.
    const { ms: waited, value: err } = await fastest(2000, () =>
      rejection(queue.render(renderJob(300), { timeoutMs: 400, requestId: 'nobody' })),
    );
    expect(err).toMatchObject({ code: 'TIMEOUT', detail: 'The chart was not rendered within 400 ms' });
    expect(waited).toBeGreaterThanOrEqual(400);
    expect(waited).toBeLessThan(2000);
    expect(await queue.counts()).toMatchObject({ waiting: 0, active: 0 });

    const renderer = new FakeRenderer(async (job) => image(job));
    await startWorker(renderer);
    await new Promise((r) => setTimeout(r, 500));
    expect(renderer.calls).toBe(0);
  }, 60_000);

  it('lets the image of a job that was already drawing when its caller gave up expire', async () => {
    const held = gate();
    const renderer = new FakeRenderer(async (job) => {
      await held.wait;
      return image(job);
    });
    await startWorker(renderer);
    const queue = await startQueue(10);
    // Its caller gives up only after the worker has taken it (the render is held until then): a 500 ms
    // wait could run out on a loaded machine before the worker even took the job, which it then dropped.
    const pending = rejection(queue.render(renderJob(300), { timeoutMs: 5000, requestId: 'late' }));
    await until('the worker took the job', () => renderer.calls === 1);
    expect(await pending).toMatchObject({ code: 'TIMEOUT' });
    held.open();
    const key = resultKey(
      (await admin.keys(`bull:${CHART_QUEUE}:*`)).map((k) => /^bull:quarry-charts:(\d+)$/.exec(k)?.[1]).find(Boolean)!,
    );
    await until('the late image is stored', async () => (await admin.exists(key)) === 1);
    const ttl = await admin.ttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(RESULT_TTL_SECONDS);
  }, 60_000);

  it('answers UNAVAILABLE with a Retry-After at once when Redis is full, and works again once it has room', async () => {
    const renderer = new FakeRenderer(async (job) => image(job));
    await startWorker(renderer);
    const queue = await startQueue(10);
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    try {
      // The fastest of up to three refusals (fastest() says why).
      const { ms, value: err } = await fastest(1000, () =>
        rejection(queue.render(renderJob(300), { timeoutMs: 20000, requestId: 'full' })),
      );
      expect(ms).toBeLessThan(1000);
      expect(err).toMatchObject({
        code: 'UNAVAILABLE',
        retryAfterSeconds: QUEUE_FULL_RETRY_AFTER_SECONDS,
        detail: 'The chart queue is out of memory; try again shortly',
      });
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
    expect(tagOf(await queue.render(renderJob(301), { timeoutMs: 20000, requestId: 'room' }))).toBe('301x300');
  }, 60_000);

  describeIf(
    fs.existsSync(CHROMIUM),
    `no browser at ${CHROMIUM} (npm test installs Debian's chromium)`,
    'with Chromium',
    () => {
      it('attempts a real render cut off by its timeout exactly once', async () => {
        const chromium = new ChromiumRenderer(
          { executablePath: CHROMIUM, pages: 1, renderTimeoutMs: 1 },
          silentLogger(),
        );
        let calls = 0;
        const counting: ChartRenderer = {
          start: () => chromium.start(),
          ready: () => chromium.ready(),
          close: () => chromium.close(),
          render: (job) => {
            calls++;
            return chromium.render(job);
          },
        };
        await startWorker(counting);
        const queue = await startQueue(10);
        const grid = {
          rowFields: ['Region'],
          columnFields: ['Year'],
          totals: ['Sales'],
          rows: [['North'], ['South']],
          columns: [['2023'], ['2024']],
          cells: [
            [[1], [2]],
            [[3], [4]],
          ],
          rowTotals: [[3], [7]],
        };
        const job = {
          option: buildChartOption(grid, chartKind('MSColumn2D', grid.totals.length), 3000, 3000, 'slow'),
          width: 3000,
          height: 3000,
        };
        const err = await rejection(queue.render(job, { timeoutMs: 20000, requestId: 'chromium-slow' }));
        expect(err).toMatchObject({ code: 'TIMEOUT', detail: 'The chart took longer than 1 ms to draw' });
        const jobId = /^bull:quarry-charts:(\d+)$/.exec((await jobHashes())[0])![1];
        const inspect = new Queue(CHART_QUEUE, { connection: { url: redis.url } as never });
        try {
          const failed = await Job.fromId(inspect, jobId);
          expect(await failed!.getState()).toBe('failed');
          expect(failed!.attemptsMade).toBe(1);
        } finally {
          await inspect.close();
        }
        expect(calls).toBe(1);
      }, 60000);
    },
  );

  // An SVG drawn on the worker's own loop for longer than the 5 s lock stopped BullMQ
  // renewing it (every 2.5 s, from that loop); the job was taken for stalled and drawn again.
  it("draws a slow SVG (7 s of one thread's CPU) once, without the job stalling or running again", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-slow-svg-'));
    const calls = path.join(dir, 'calls');
    const entry = path.join(dir, 'slow-svg.js');
    // The real thread module behind a synchronous 7 s hold, as a huge chart would keep the thread busy.
    fs.writeFileSync(
      entry,
      `const fs = require('node:fs');
       const draw = require(${JSON.stringify(threadEntry(path.join(__dirname), 'svg-render.worker'))}).default;
       module.exports = (job) => {
         fs.appendFileSync(${JSON.stringify(calls)}, 'x');
         const until = Date.now() + 7000;
         while (Date.now() < until);
         return draw(job);
       };`,
    );
    const svg = new ThreadSvgRenderer({ threads: 1, entry });
    const worker = await startWorker(new FakeRenderer(async (job) => image(job)), 1, svg, 20000);
    let stalled = 0;
    const events = new (await import('bullmq')).QueueEvents(CHART_QUEUE, { connection: { url: redis.url } as never });
    events.on('stalled', () => stalled++);
    await events.waitUntilReady();
    const queue = await startQueue(10);
    try {
      const out = await queue.render(
        { option: { series: [{ type: 'pie', data: [1, 2, 3] }] }, width: 320, height: 200, format: 'svg' },
        { timeoutMs: 30000, requestId: 'slow-svg' },
      );
      expect(out.startsWith('<svg width="320" height="200"')).toBe(true);
      // One more stalled-job check after the render: nothing is picked up again.
      await new Promise((r) => setTimeout(r, 2500));
      expect(fs.readFileSync(calls, 'utf8')).toBe('x');
      expect(stalled).toBe(0);
      const jobId = /^bull:quarry-charts:(\d+)$/.exec((await jobHashes())[0])![1];
      const done = await Job.fromId(new Queue(CHART_QUEUE, { connection: admin }), jobId);
      expect(await done!.getState()).toBe('completed');
      expect(done!.attemptsMade).toBe(1);
      expect(done!.stalledCounter ?? 0).toBe(0);
    } finally {
      await events.close();
      await worker.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60000);

  describe("behind the chart service's use case", () => {
    const pngOf = (width: number, height: number) => PNG.sync.write(new PNG({ width, height }));
    const grid = JSON.stringify({
      rowFields: ['genre'],
      columnFields: [],
      totals: ['Count'],
      rows: [['Drama'], ['Comedy']],
      columns: [[]],
      cells: [[[3]], [[4]]],
      rowTotals: [[3], [4]],
      columnTotals: [[7]],
      grandTotals: [7],
    });
    const input = (width: number) => ({
      gridJson: grid,
      chartType: 'Pie2D',
      width,
      height: 200,
      title: 't',
      imageFormat: '',
    });

    it("with an admission gate of 1, caller B's chart is rendered before caller A's remaining ones", async () => {
      const order: number[] = [];
      const held = gate();
      const renderer = new FakeRenderer(async (job) => {
        order.push(job.width);
        if (order.length === 1) await held.wait;
        return pngOf(job.width, job.height);
      });
      await startWorker(renderer, 1);
      const queue = await startQueue(100);
      const gateOfOne = new HeavyCallLimiter({ maxRunning: 1, perCaller: 1, maxQueued: 100 });
      const charts = new RenderChartUseCase(queue, 30000, (caller, signal, work) =>
        gateOfOne.run(caller, signal, work),
      );
      const a = [101, 102, 103, 104].map((w) => charts.render(input(w), `a${w}`, { caller: 'A' }));
      await until('the first chart of A is drawing', () => renderer.calls === 1);
      const b = charts.render(input(201), 'b', { caller: 'B' });
      // Only one job is ever in the queue: A's others and B's wait at the gate.
      expect(await waiting(queue)).toBe(0);
      held.open();
      await Promise.all([...a, b]);
      expect(order).toEqual([101, 201, 102, 103, 104]);
    }, 60_000);

    it('refuses a job completed by someone else with bytes that are not the chart asked for', async () => {
      // A rogue consumer on the queue's Redis (what any local process could be without the password):
      // it takes the job and leaves its own bytes where the image goes.
      const { Worker } = await import('bullmq');
      const forgeries = [Buffer.from('<script>forged</script>'), pngOf(50, 50)];
      let n = 0;
      const rogue = new Worker(
        CHART_QUEUE,
        async (job) => {
          await admin.set(resultKey(job.id!), forgeries[n++ % forgeries.length].toString('base64'), 'EX', 60);
          return undefined;
        },
        { connection: { url: redis.url, maxRetriesPerRequest: null } as never },
      );
      open.push({ close: () => rogue.close() });
      await rogue.waitUntilReady();
      const charts = new RenderChartUseCase(await startQueue(10), 30000);
      for (const what of ['no PNG', 'a PNG of 50x50 pixels where 300x200 were asked']) {
        const err = await rejection(charts.render(input(300), 'forged'));
        expect(err).toMatchObject({ code: 'INTERNAL' });
        expect((err as AppError).detail).toContain(what);
      }
    }, 60_000);
  });
});
