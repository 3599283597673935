import fs from 'node:fs';
import path from 'node:path';
import { PNG } from 'pngjs';
import { silentLogger } from '@quarry/logger';
import { describeIf } from '@quarry/testkit';
import { AppError } from '@quarry/errors';
import { trickyGrids } from '../test-support/chart-grids.fixtures';
import { buildChartOption } from '../domain/chart-option/build-chart-option';
import { CHART_KINDS } from '../domain/chart-types';
import { ChromiumRenderer } from './chromium-renderer.adapter';
import { renderSvg } from './echarts-svg-renderer.adapter';

/*
 * Every chart type at three sizes over the tricky grids, drawn as PNG through Chromium (and as SVG beside
 * it): the image has the asked size, is not blank, and has no dark pixel within 3 px of an edge (text or
 * marks cut off there would leave one). The images are kept in test-output/charts/gallery for people to
 * look at: `npm run charts:gallery` runs this file.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUT = path.resolve(__dirname, '..', '..', '..', '..', 'test-output', 'charts', 'gallery');
const SIZES: Array<[number, number]> = [
  [300, 200],
  [800, 600],
  [1600, 1000],
];
const EDGE = 3;
const GRIDS = ['money', 'moneyTwo', 'states', 'distributors', 'delays'] as const;

function edgeInk(png: PNG): string | undefined {
  for (let y = 0; y < png.height; y++) {
    for (let x = 0; x < png.width; x++) {
      if (x >= EDGE && y >= EDGE && x < png.width - EDGE && y < png.height - EDGE) continue;
      const i = (y * png.width + x) * 4;
      const lum = 0.299 * png.data[i] + 0.587 * png.data[i + 1] + 0.114 * png.data[i + 2];
      if (lum < 160) return `dark pixel at (${x},${y})`;
    }
  }
  return undefined;
}

function inked(png: PNG): number {
  let n = 0;
  for (let i = 0; i < png.data.length; i += 4)
    if (png.data[i] < 245 || png.data[i + 1] < 245 || png.data[i + 2] < 245) n++;
  return n;
}

describeIf(
  fs.existsSync(CHROMIUM),
  `no browser at ${CHROMIUM} (npm test installs Debian's chromium)`,
  'chart images: every type and size as PNG through Chromium',
  () => {
    let renderer: ChromiumRenderer;
    const grids = trickyGrids();

    beforeAll(async () => {
      fs.mkdirSync(OUT, { recursive: true });
      renderer = new ChromiumRenderer({ executablePath: CHROMIUM, pages: 2, renderTimeoutMs: 20000 }, silentLogger());
      await renderer.start();
    }, 60000);

    afterAll(() => renderer?.close());

    it.each(CHART_KINDS.map((k) => [k.name, k] as const))(
      '%s',
      async (_n, kind) => {
        const problems: string[] = [];
        let drawn = 0;
        for (const g of GRIDS) {
          for (const [width, height] of SIZES) {
            let option: Record<string, unknown>;
            try {
              option = buildChartOption(grids[g], kind, width, height, 'movies');
            } catch (err) {
              if (err instanceof AppError && err.code === 'INVALID_ARGUMENT') continue;
              throw err;
            }
            const buf = await renderer.render({ option, width, height });
            const name = `${kind.name}-${g}-${width}x${height}`;
            fs.writeFileSync(path.join(OUT, `${name}.png`), buf);
            fs.writeFileSync(path.join(OUT, `${name}.svg`), renderSvg({ option, width, height }));
            const png = PNG.sync.read(buf);
            drawn++;
            if (png.width !== width || png.height !== height) problems.push(`${name}: ${png.width}×${png.height}`);
            if (inked(png) < width * height * 0.01) problems.push(`${name}: blank`);
            const edge = edgeInk(png);
            if (edge) problems.push(`${name}: ${edge}`);
          }
        }
        expect(drawn).toBeGreaterThan(0);
        expect(problems).toEqual([]);
      },
      120000,
    );
  },
);
