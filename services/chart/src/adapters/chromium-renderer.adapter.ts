import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core';
import type { Logger } from '@quarry/logger';
import {
  RendererUnavailableError,
  renderTimeoutError,
  type ChartRenderer,
  type RenderJob,
} from '../ports/chart-renderer.port';
import { blankPage, printChart, printTable } from './chromium-print';

const ECHARTS = fs.readFileSync(require.resolve('echarts/dist/echarts.min.js'), 'utf8');

interface Slot {
  context: BrowserContext;
  page: Page;
}

export interface ChromiumSettings {
  executablePath: string;
  pages: number;
  renderTimeoutMs: number;
  /**
   * 0 (the default): Chromium is launched with its pages by start() and kept. Otherwise it is launched
   * by the first render and closed after this long without one (QUARRY_CHROMIUM_IDLE_S): it holds
   * hundreds of MB resident whether or not a chart is ever drawn.
   */
  idleMs?: number;
}

/**
 * A pool of headless Chromium pages, each in its own browser context (parallel screenshots in one
 * context can hang), with ECharts inlined and every network request refused; warm from start-up, or
 * started on demand and closed when idle.
 */
export class ChromiumRenderer implements ChartRenderer {
  private browser: Browser | undefined;
  private launching: Promise<Browser> | undefined;
  private readonly idle: Slot[] = [];
  private readonly waiters: Array<(slot: Slot) => void> = [];
  private userDataDir: string | undefined;
  private closed = false;
  private live = 0;
  /** Renders under way (waiting for a page or drawing): the idle clock runs only at 0. */
  private busy = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  /** An idle close under way: a launch waits for it rather than race its cleanup. */
  private closing: Promise<void> | undefined;

  constructor(
    private readonly settings: ChromiumSettings,
    private readonly log: Logger,
  ) {}

  private get onDemand(): boolean {
    return (this.settings.idleMs ?? 0) > 0;
  }

  async start(): Promise<void> {
    if (this.onDemand) {
      // Launched by the first chart; a path that cannot be run is still refused at start-up.
      try {
        fs.accessSync(this.settings.executablePath, fs.constants.X_OK);
      } catch {
        throw new Error(`cannot run Chromium at ${this.settings.executablePath} (CHROMIUM_PATH)`);
      }
      return;
    }
    const slots = await Promise.all(Array.from({ length: this.settings.pages }, () => this.newSlot()));
    for (const s of slots) this.release(s);
  }

  private launch(): Promise<Browser> {
    if (this.browser?.connected) return Promise.resolve(this.browser);
    this.launching ??= (async () => {
      await this.closing;
      if (this.closed) throw new Error('the renderer is closed');
      const started = Date.now();
      const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-chromium-'));
      this.userDataDir = userDataDir;
      const browser = await puppeteer
        .launch({
          executablePath: this.settings.executablePath,
          headless: true,
          // A pipe, not a port: if this process dies, Chromium sees the pipe close and exits too.
          pipe: true,
          userDataDir: this.userDataDir,
          args: [
            '--no-sandbox',
            '--disable-gpu',
            '--disable-dev-shm-usage',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--disable-quic',
            '--no-first-run',
            '--font-render-hinting=none',
          ],
        })
        .catch((err: unknown) => {
          fs.rmSync(userDataDir, { recursive: true, force: true });
          throw new RendererUnavailableError(
            `Chromium does not launch (${this.settings.executablePath}): ${err instanceof Error ? err.message : String(err)}`,
            { cause: err },
          );
        });
      browser.on('disconnected', () => {
        // An idle close has already let go of this browser, and a newer one may be serving by now.
        if (this.browser !== browser) return;
        this.browser = undefined;
        this.idle.length = 0;
        this.live = 0;
        if (!this.closed) this.log.warn('chromium went away; it is relaunched on the next render');
      });
      this.browser = browser;
      this.log.info({ pid: browser.process()?.pid, ms: Date.now() - started }, 'chromium started');
      return browser;
    })().finally(() => {
      this.launching = undefined;
    });
    return this.launching;
  }

  /** After idleMs without a render: Chromium and its pages go; the next render launches it again. */
  private armIdleClose(): void {
    if (!this.onDemand || this.closed || this.busy > 0) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.busy > 0 || !this.browser || this.closing) return;
      const browser = this.browser;
      const dir = this.userDataDir;
      this.browser = undefined;
      this.idle.length = 0;
      this.live = 0;
      this.closing = (async () => {
        const pid = browser.process()?.pid;
        await browser.close().catch(() => undefined);
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
        this.log.info({ pid, idleMs: this.settings.idleMs }, 'chromium closed after idling');
      })().finally(() => {
        this.closing = undefined;
      });
    }, this.settings.idleMs);
    this.idleTimer.unref();
  }

  /** A page counts as live from the moment it is asked for, so pages opened at once never exceed `pages`. */
  private async newSlot(): Promise<Slot> {
    this.live++;
    try {
      return await this.openSlot();
    } catch (err) {
      this.live = Math.max(0, this.live - 1);
      throw err;
    }
  }

  private async openSlot(): Promise<Slot> {
    const browser = await this.launch();
    const context = await browser.createBrowserContext();
    const page = await blankPage(context);
    await page.setContent(
      '<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0;background:#fff"><div id="chart"></div></body></html>',
    );
    await page.addScriptTag({ content: ECHARTS });
    return { context, page };
  }

  private acquire(): Promise<Slot> {
    this.forgetIfDead(this.browser);
    const slot = this.idle.pop();
    if (slot) return Promise.resolve(slot);
    if (this.live < this.settings.pages) {
      const opened = this.newSlot();
      this.openSpares();
      return opened;
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * On demand, the first chart opens the other pages too, in the background: a second caller's chart
   * then finds a page ready instead of waiting to open one behind a big render.
   */
  private openSpares(): void {
    if (!this.onDemand) return;
    while (this.live < this.settings.pages) {
      this.newSlot().then(
        (spare) => {
          // An idle close may have let go of the browser it was opened in.
          if (this.browser && spare.context.browser() === this.browser) this.release(spare);
          else void spare.context.close().catch(() => undefined);
        },
        () => undefined,
      );
    }
  }

  private release(slot: Slot): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(slot);
    else this.idle.push(slot);
  }

  /** A page that failed or hung is thrown away with its context; a fresh one takes its place. */
  private async discard(slot: Slot): Promise<void> {
    this.live = Math.max(0, this.live - 1);
    await slot.context.close().catch(() => undefined);
    const waiter = this.waiters.shift();
    if (waiter) this.newSlot().then(waiter, () => this.waiters.unshift(waiter));
  }

  async render(job: RenderJob): Promise<Buffer> {
    this.busy++;
    clearTimeout(this.idleTimer);
    try {
      return await this.draw(job);
    } finally {
      this.busy--;
      this.armIdleClose();
    }
  }

  /**
   * A Chromium killed a moment ago still looks alive until its pipe's close is read: its pages are
   * forgotten here, so the next page is opened in a new Chromium (or the launch says it cannot start).
   */
  private forgetIfDead(browser: Browser | undefined): boolean {
    if (!browser || browser.connected) return false;
    if (this.browser === browser) {
      this.browser = undefined;
      this.idle.length = 0;
      this.live = 0;
    }
    return true;
  }

  /**
   * A chart whose Chromium died under it is drawn once more in a new one: the chart was not at fault.
   * If no Chromium starts, that launch's RendererUnavailableError hands the job to another worker.
   */
  private async draw(job: RenderJob, again = false): Promise<Buffer> {
    const slot = await this.acquire();
    let timer: NodeJS.Timeout | undefined;
    try {
      const work = (async () => {
        if (job.format === 'pdf' && job.table) return printTable(slot.context, job.table);
        await slot.page.setViewport({ width: job.width, height: job.height, deviceScaleFactor: 1 });
        await slot.page.evaluate(
          (option, width, height, renderer) => {
            const el = document.getElementById('chart') as HTMLDivElement;
            el.style.width = `${width}px`;
            el.style.height = `${height}px`;
            const w = window as unknown as {
              echarts: {
                getInstanceByDom(e: HTMLElement): { dispose(): void } | undefined;
                init(
                  e: HTMLElement,
                  t: null,
                  o: object,
                ): { setOption(o: object): void; on(event: 'finished', f: () => void): void };
              };
            };
            w.echarts.getInstanceByDom(el)?.dispose();
            // @quarry/client's reviveChartOption and domain/formatters.ts's legacy names, rebuilt here:
            // this function runs in the page and cannot import them.
            const compactFormat = new Intl.NumberFormat('en', { notation: 'compact', maximumSignificantDigits: 3 });
            const compact = (v: number) => (Number.isFinite(v) ? compactFormat.format(v) : '');
            const valueOf = (p: unknown) => {
              if (typeof p === 'number') return p;
              const v = (p as { value?: unknown } | null)?.value;
              return Number(Array.isArray(v) ? v[v.length - 1] : v);
            };
            const functions: Record<string, (x: unknown) => string> = {
              compact: (x) => compact(Number(x)),
              compactValue: (p) => compact(valueOf(p)),
            };
            const legacy: Record<string, string> = {
              'quarry:compact': 'compact',
              'quarry:compactValue': 'compactValue',
            };
            // A total's format: Intl options and a scale beside the name ("number", "numberValue").
            const numberFormatter = (o: Record<string, unknown>, ofItem: boolean) => {
              const scale = typeof o.quarryScale === 'number' ? o.quarryScale : 1;
              let intl = compactFormat;
              try {
                intl = new Intl.NumberFormat('en-US', (o.quarryNumberFormat ?? {}) as Intl.NumberFormatOptions);
              } catch {
                // Options this Chromium does not know: compact numbers still read right.
              }
              return (x: unknown) => {
                const v = ofItem ? valueOf(x) : Number(x);
                return Number.isFinite(v) ? intl.format(v * scale) : '';
              };
            };
            const revive = (node: unknown): void => {
              if (Array.isArray(node)) node.forEach(revive);
              else if (node && typeof node === 'object') {
                const o = node as Record<string, unknown>;
                const named = o.quarryFormatter ?? (typeof o.formatter === 'string' ? legacy[o.formatter] : undefined);
                if (named === 'number' || named === 'numberValue')
                  o.formatter = numberFormatter(o, named === 'numberValue');
                else if (typeof named === 'string' && functions[named]) o.formatter = functions[named];
                for (const v of Object.values(o)) revive(v);
              }
            };
            revive(option);
            const chart = w.echarts.init(el, null, { renderer, width, height, devicePixelRatio: 1 });
            // Some series paint their labels a frame after the shapes (a Treemap's names): the screenshot
            // waits for ECharts to say the frame is finished, and for a second frame at most.
            return new Promise<void>((resolve) => {
              let frames = 0;
              const done = () => {
                if (++frames === 1) requestAnimationFrame(() => requestAnimationFrame(() => resolve()));
              };
              chart.on('finished', done);
              chart.setOption(option);
              setTimeout(done, 1000);
            });
          },
          job.option,
          job.width,
          job.height,
          // Printed, the chart stays vector (SVG shapes and text in the PDF), as sharp at any zoom.
          job.format === 'pdf' ? 'svg' : 'canvas',
        );
        if (job.format === 'pdf') return printChart(slot.page, job);
        const png = await slot.page.screenshot({
          type: 'png',
          clip: { x: 0, y: 0, width: job.width, height: job.height },
        });
        return Buffer.from(png);
      })();
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(renderTimeoutError(this.settings.renderTimeoutMs)),
          this.settings.renderTimeoutMs,
        );
      });
      const png = await Promise.race([work, timeout]);
      this.release(slot);
      return png;
    } catch (err) {
      const died = this.forgetIfDead(slot.context.browser());
      await this.discard(slot);
      if (died && !again && !this.closed) {
        this.log.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'chromium died under a chart; drawn again',
        );
        return this.draw(job, true);
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Warm: while Chromium runs. On demand it is not running while idle, and a render starts it. */
  async ready(): Promise<void> {
    if (this.closed) throw new Error('the renderer is closed');
    if (this.onDemand) return;
    if (this.browserPid() === undefined) throw new Error('Chromium is not running');
  }

  /** Chromium's processes, for the benchmark's RSS figure. */
  browserPid(): number | undefined {
    return this.browser?.process()?.pid;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    await this.closing;
    await this.launching?.catch(() => undefined);
    await this.browser?.close().catch(() => undefined);
    this.browser = undefined;
    if (this.userDataDir) fs.rmSync(this.userDataDir, { recursive: true, force: true });
  }
}
