import fs from 'node:fs';
import path from 'node:path';
import { silentLogger } from '@quarry/logger';
import { describeIf, inspectPng } from '@quarry/testkit';
import { AppError } from '@quarry/errors';
import { trickyGrids } from '../../test-support/chart-grids.fixtures';
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
        // Every grid and size at once: the renderer's 2 pages draw while the worker reads the last images.
        const jobs = GRIDS.flatMap((g) =>
          SIZES.map(async ([width, height]) => {
            let option: Record<string, unknown>;
            try {
              option = buildChartOption(grids[g], kind, width, height, 'movies');
            } catch (err) {
              if (err instanceof AppError && err.code === 'INVALID_ARGUMENT') return;
              throw err;
            }
            const buf = await renderer.render({ option, width, height });
            const name = `${kind.name}-${g}-${width}x${height}`;
            fs.writeFileSync(path.join(OUT, `${name}.png`), buf);
            fs.writeFileSync(path.join(OUT, `${name}.svg`), renderSvg({ option, width, height }));
            const png = await inspectPng(buf, { edge: EDGE });
            drawn++;
            if (png.width !== width || png.height !== height) problems.push(`${name}: ${png.width}×${png.height}`);
            if (png.inked < width * height * 0.01) problems.push(`${name}: blank`);
            if (png.edgeInk) problems.push(`${name}: ${png.edgeInk}`);
          }),
        );
        await Promise.all(jobs);
        expect(drawn).toBeGreaterThan(0);
        expect(problems).toEqual([]);
      },
      120000,
    );
  },
);
