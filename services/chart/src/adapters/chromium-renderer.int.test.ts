import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { silentLogger } from '@quarry/logger';
import { describeIf } from '@quarry/testkit';
import { buildChartOption } from '../domain/chart-option/build-chart-option';
import { chartKind } from '../domain/chart-types';
import { RendererUnavailableError } from '../ports/chart-renderer.port';
import { ChromiumRenderer } from './chromium-renderer.adapter';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const grid = {
  rowFields: ['Region'],
  columnFields: ['Year'],
  totals: ['Sales'],
  rows: [['North'], ['South'], ['East']],
  columns: [['2023'], ['2024']],
  cells: [
    [[1], [2]],
    [[3], [4]],
    [[5], [6]],
  ],
  rowTotals: [[3], [7], [11]],
};

/** Chromium processes this test process started (another test file's browsers running beside it are not ours). */
function chromiumProcesses(): number {
  const table = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
  const ours = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of table)
      if (ours.has(p.ppid) && !ours.has(p.pid)) {
        ours.add(p.pid);
        grew = true;
      }
  }
  return table.filter((p) => ours.has(p.pid) && p.args.includes('quarry-chromium-')).length;
}

describeIf(
  fs.existsSync(CHROMIUM),
  `no browser at ${CHROMIUM} (npm test installs Debian's chromium)`,
  'ChromiumRenderer',
  () => {
    let renderer: ChromiumRenderer;

    beforeAll(async () => {
      renderer = new ChromiumRenderer({ executablePath: CHROMIUM, pages: 2, renderTimeoutMs: 10000 }, silentLogger());
      await renderer.start();
    }, 60000);

    afterAll(async () => {
      await renderer?.close();
    });

    // The smallest size at which this two-series chart is still drawn (smaller is a 400: too small to read).
    const job = (w = 300, h = 200) => ({
      option: buildChartOption(grid, chartKind('MSColumn2D', grid.totals.length), w, h, 'test'),
      width: w,
      height: h,
    });

    it('renders a PNG of exactly the requested size', async () => {
      const png = PNG.sync.read(await renderer.render(job(333, 222)));
      expect([png.width, png.height]).toEqual([333, 222]);
    });

    it('leaks no page, context or process over 300 renders', async () => {
      const processesBefore = chromiumProcesses();
      const rssBefore = process.memoryUsage().rss;
      // Two at a time, as the two pages serve them: a page or context kept per render would be 300 here.
      for (let i = 0; i < 150; i++) await Promise.all([renderer.render(job()), renderer.render(job())]);
      expect(chromiumProcesses()).toBeLessThanOrEqual(processesBefore + 1);
      const browser = (
        renderer as unknown as { browser: { pages(): Promise<unknown[]>; browserContexts(): unknown[] } }
      ).browser;
      expect((await browser.pages()).length).toBeLessThanOrEqual(3);
      expect(browser.browserContexts().length).toBeLessThanOrEqual(3);
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
      // A hang guard, not a target: 300 renders take a minute or more on a loaded machine.
    }, 480_000);

    it('relaunches Chromium after it dies', async () => {
      const pid = renderer.browserPid();
      expect(pid).toBeDefined();
      process.kill(pid!, 'SIGKILL');
      // Until the renderer has heard of the death (it lets go of the browser), not a fixed pause a loaded
      // machine can outlast: a render sent before that goes to the dead browser's page.
      const deadline = Date.now() + 30_000;
      while (renderer.browserPid() === pid && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const png = PNG.sync.read(await renderer.render(job(200, 150)));
      expect(png.width).toBe(200);
      expect(renderer.browserPid()).not.toBe(pid);
    }, 60000);

    it('draws a chart sent the moment Chromium dies in a new Chromium, not as a failed chart', async () => {
      const pid = renderer.browserPid();
      expect(pid).toBeDefined();
      process.kill(pid!, 'SIGKILL');
      // Same tick: the renderer has not read the pipe's close yet and hands out the dead browser's page.
      const png = PNG.sync.read(await renderer.render(job(220, 160)));
      expect(png.width).toBe(220);
      expect(renderer.browserPid()).not.toBe(pid);
    }, 60000);

    it('says the renderer is unavailable (so the job goes back to the queue) when a dead Chromium cannot start again', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-once-'));
      const once = path.join(dir, 'chromium-once.sh');
      fs.writeFileSync(
        once,
        `#!/bin/sh\nif [ -e "${dir}/started" ]; then echo "chromium cannot start" >&2; exit 1; fi\n` +
          `touch "${dir}/started"\nexec ${CHROMIUM} "$@"\n`,
        { mode: 0o755 },
      );
      const fragile = new ChromiumRenderer({ executablePath: once, pages: 2, renderTimeoutMs: 30000 }, silentLogger());
      await fragile.start();
      try {
        expect(PNG.sync.read(await fragile.render(job(200, 150))).width).toBe(200);
        // The script's exec keeps its pid: the pid puppeteer knows is Chromium's own.
        process.kill(fragile.browserPid()!, 'SIGKILL');
        const failed = await fragile.render(job(200, 150)).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(failed).toBeInstanceOf(RendererUnavailableError);
        expect(String(failed)).toMatch(/Chromium does not launch \(.*chromium-once\.sh\)/);
      } finally {
        await fragile.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }, 60000);

    it('cuts off a render that takes too long and keeps serving', async () => {
      const hasty = new ChromiumRenderer({ executablePath: CHROMIUM, pages: 1, renderTimeoutMs: 1 }, silentLogger());
      await hasty.start();
      try {
        await expect(hasty.render(job(3000, 3000))).rejects.toThrow(/render exceeded 1 ms/);
        await expect(hasty.render(job(3000, 3000))).rejects.toThrow(/render exceeded 1 ms/);
        const browser = (hasty as unknown as { browser: { browserContexts(): unknown[] } }).browser;
        expect(browser.browserContexts().length).toBeLessThanOrEqual(2);
      } finally {
        await hasty.close();
      }
    }, 60000);

    describe('started on demand, closed when idle (QUARRY_CHROMIUM_IDLE_S)', () => {
      const alive = (pid: number) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      // A hang guard: closing Chromium (after the idle time) can take seconds on a loaded machine.
      const gone = async (pid: number) => {
        const deadline = Date.now() + 30000;
        while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        return !alive(pid);
      };
      const isPng = (png: Buffer, w: number, h: number) => {
        const img = PNG.sync.read(png);
        return img.width === w && img.height === h;
      };

      it('launches no Chromium at start, one on the first chart, and closes it after the idle time', async () => {
        const lazy = new ChromiumRenderer(
          // An idle time well above the pauses below: on a loaded machine (CI) a 400 ms one ran out between
          // the first chart and the next two, and the test saw a new browser.
          { executablePath: CHROMIUM, pages: 2, renderTimeoutMs: 10000, idleMs: 2500 },
          silentLogger(),
        );
        try {
          await lazy.start();
          await lazy.ready();
          expect(lazy.browserPid()).toBeUndefined();
          const firstPng = await lazy.render(job());
          const pid = lazy.browserPid()!;
          expect(alive(pid)).toBe(true);
          // Renders inside the idle time keep the same browser.
          await new Promise((r) => setTimeout(r, 200));
          await Promise.all([lazy.render(job()), lazy.render(job())]);
          expect(lazy.browserPid()).toBe(pid);
          expect(isPng(firstPng, 300, 200)).toBe(true);
          expect(await gone(pid)).toBe(true);
          expect(lazy.browserPid()).toBeUndefined();
          await lazy.ready();
          // The next chart starts a new one.
          expect(isPng(await lazy.render(job(320, 240)), 320, 240)).toBe(true);
          expect(lazy.browserPid()).not.toBe(pid);
        } finally {
          await lazy.close();
        }
      }, 60000);

      it('opens its other pages after the first chart, so a second chart finds one ready, and no more than asked', async () => {
        const lazy = new ChromiumRenderer(
          { executablePath: CHROMIUM, pages: 3, renderTimeoutMs: 10000, idleMs: 60000 },
          silentLogger(),
        );
        try {
          await lazy.start();
          expect(isPng(await lazy.render(job()), 300, 200)).toBe(true);
          const state = lazy as unknown as { idle: unknown[]; browser: { browserContexts(): unknown[] } };
          // The spares open in the background: wait for both (a hang guard of 30 s), then nothing more.
          const deadline = Date.now() + 30_000;
          while (state.idle.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
          expect(state.idle).toHaveLength(3);
          await Promise.all([lazy.render(job()), lazy.render(job()), lazy.render(job()), lazy.render(job())]);
          expect(state.idle).toHaveLength(3);
          // The default context and one per page.
          expect(state.browser.browserContexts()).toHaveLength(4);
        } finally {
          await lazy.close();
        }
      }, 60000);

      it('draws a chart that arrives while the idle close is under way, on a new browser', async () => {
        const lazy = new ChromiumRenderer(
          { executablePath: CHROMIUM, pages: 1, renderTimeoutMs: 10000, idleMs: 300 },
          silentLogger(),
        );
        let next: number | undefined;
        try {
          await lazy.render(job());
          const pid = lazy.browserPid()!;
          // Wait for the close to begin (the renderer lets go of the browser first), then ask at once.
          const deadline = Date.now() + 30_000;
          while (lazy.browserPid() === pid && Date.now() < deadline) await new Promise((r) => setImmediate(r));
          expect(lazy.browserPid()).toBeUndefined();
          const racing = await Promise.all([lazy.render(job()), lazy.render(job(310, 210))]);
          // The browser that drew them, read at once: with a 300 ms idle time it may close again while the
          // old one takes its time to go on a loaded machine.
          next = lazy.browserPid();
          expect(next).not.toBe(pid);
          expect(next !== undefined && alive(next)).toBe(true);
          expect(isPng(racing[0], 300, 200) && isPng(racing[1], 310, 210)).toBe(true);
          expect(await gone(pid)).toBe(true);
        } finally {
          await lazy.close();
        }
        expect(await gone(next!)).toBe(true);
      }, 60000);

      it('refuses at start-up a Chromium path that cannot be run', async () => {
        const missing = new ChromiumRenderer(
          { executablePath: '/nonexistent/chromium', pages: 1, renderTimeoutMs: 1000, idleMs: 1000 },
          silentLogger(),
        );
        await expect(missing.start()).rejects.toThrow('cannot run Chromium at /nonexistent/chromium (CHROMIUM_PATH)');
      });
    });
  },
);
