import { AppError } from '@quarry/errors';
import { trickyGrids } from '../../test-support/chart-grids.fixtures';
import { buildChartOption, OTHER_SHARE } from './chart-option/build-chart-option';
import { chartKind } from './chart-types';
import type { ChartGrid } from './chart-grid';
import { findChartType } from '@quarry/contract';
import { reviveChartOption } from '@quarry/client';
import { COMPACT, COMPACT_VALUE, upgradeLegacyFormatters } from './formatters';
import { axisNumbers, PLAIN_NUMBERS } from './axis-numbers';
import { compactNumber, fitText, textWidth, truncateText } from './text-metrics';

type O = Record<string, any>; // reading an ECharts option back
const grids = trickyGrids();
/** The grid with its first `n` totals, as the gateway hands it when chartTotals picks them. */
const firstTotals = (g: ChartGrid, n: number): ChartGrid =>
  n >= g.totals.length
    ? g
    : {
        ...g,
        totals: g.totals.slice(0, n),
        cells: g.cells.map((row) => row.map((cell) => cell.slice(0, n))),
        rowTotals: g.rowTotals.map((t) => t.slice(0, n)),
      };
const build = (grid: keyof typeof grids, type: string, w = 800, h = 600) => {
  const g = firstTotals(grids[grid], findChartType(type)?.maxMeasures ?? 1);
  return buildChartOption(g, chartKind(type, g.totals.length), w, h, 'movies') as O;
};

describe('text metrics and compact numbers', () => {
  it.each([
    [0, '0'],
    [950, '950'],
    [1234, '1.23K'],
    [35_000_000_000, '35B'],
    [1_250_000_000, '1.25B'],
    [-42_500_000, '-42.5M'],
    [0.125, '0.125'],
  ])('%p → %p', (v, s) => expect(compactNumber(v)).toBe(s));

  it('a smaller font before an ellipsis, and the ellipsis keeps within the width', () => {
    const long = 'Sum(Worldwide Gross), Sum(Production Budget) by Distributor';
    const w = textWidth(long, 16);
    expect(fitText(long, w - 1, 16, 11).fontSize).toBe(15);
    const cut = fitText(long, 100, 16, 11);
    expect(cut).toMatchObject({ fontSize: 11 });
    expect(cut.text.endsWith('…')).toBe(true);
    expect(textWidth(cut.text, 11)).toBeLessThanOrEqual(100);
    expect(truncateText('short', 1000, 12)).toBe('short');
  });

  it('named formatters become functions wherever they sit', () => {
    const o = reviveChartOption(
      upgradeLegacyFormatters({
        yAxis: [{ axisLabel: { ...COMPACT } }],
        series: [
          { label: { formatter: '{b}' } },
          { label: { ...COMPACT_VALUE } },
          { label: { formatter: 'quarry:compact' } },
        ],
      }),
      { compact: compactNumber },
    ) as O;
    expect(o.yAxis[0].axisLabel.formatter(3.5e9)).toBe('3.5B');
    expect(o.series[0].label.formatter).toBe('{b}');
    expect(o.series[1].label.formatter({ value: [0, 1, 1234567] })).toBe('1.23M');
    // What an older producer queued is still drawn compactly.
    expect(o.series[2].label.formatter(4200)).toBe('4.2K');
  });
});

describe('buildChartOption', () => {
  it('value axes use compact numbers and a name that clears its labels', () => {
    const o = build('money', 'MSColumn2D');
    expect(o.yAxis.axisLabel.quarryFormatter).toBe('compact');
    // ECharts itself prints its default numbers: no formatter string it would show as text.
    expect(o.yAxis.axisLabel.formatter).toBeUndefined();
    expect(o.yAxis.nameGap).toBeGreaterThan(o.yAxis.axisLabel.width);
    expect(o.grid.left).toBeGreaterThanOrEqual(o.yAxis.nameGap + 10);
  });

  it("a total's format writes its axis compactly in its own unit, a second total's axis in its own; labels measured so", () => {
    const euro = { options: { style: 'currency' as const, currency: 'EUR', maximumFractionDigits: 0 }, scale: 1 };
    const g: ChartGrid = { ...grids.moneyTwo, numberFormats: [euro, null] };
    const o = buildChartOption(g, chartKind('MSCombiDY2D', 2), 800, 600, 'movies') as O;
    expect(o.yAxis[0].axisLabel).toMatchObject({
      quarryFormatter: 'number',
      quarryNumberFormat: { style: 'currency', currency: 'EUR', notation: 'compact', maximumSignificantDigits: 3 },
      quarryScale: 1,
    });
    expect(o.yAxis[1].axisLabel.quarryFormatter).toBe('compact');
    const revived = reviveChartOption(o) as O;
    expect(revived.yAxis[0].axisLabel.formatter(33_200_000_000)).toBe('€33.2B');
    // Wider labels than plain compact numbers get a wider axis.
    const plain = buildChartOption(grids.moneyTwo, chartKind('MSCombiDY2D', 2), 800, 600, 'movies') as O;
    expect(o.yAxis[0].axisLabel.width).toBeGreaterThan(plain.yAxis[0].axisLabel.width);

    // A percentage (out of 100) in percent style: the scale turns 25 into 25%.
    const share: ChartGrid = { ...grids.money, numberFormats: [{ options: { style: 'percent' }, scale: 0.01 }] };
    const heat = reviveChartOption(buildChartOption(share, chartKind('Heatmap', 1), 800, 600, 'm')) as O;
    expect(heat.series[0].label.formatter({ value: [0, 0, 25] })).toBe('25%');
    // Totals with different formats on one axis: plain compact numbers; the same format: that format.
    const mixed: ChartGrid = { ...grids.moneyTwo, numberFormats: [euro, { options: { style: 'percent' }, scale: 1 }] };
    expect(axisNumbers(mixed, [0, 1])).toBe(PLAIN_NUMBERS);
    expect(axisNumbers({ ...mixed, numberFormats: [euro, euro] }, [0, 1]).formatter.quarryFormatter).toBe('number');
  });

  it('legends are plain (never paged) and hold every series', () => {
    const o = build('money', 'MSColumn2D');
    expect(o.legend.type).toBe('plain');
    expect(o.legend.data).toEqual(['G', 'PG', 'PG-13', 'R']);
  });

  it('a pie gathers slices under the stated share into one Other entry and keeps the rest exact', () => {
    const o = build('states', 'Pie2D');
    const data = o.series[0].data as Array<{ name: string; value: number }>;
    const total = grids.states.rowTotals.reduce((a, r) => a + (r[0] ?? 0), 0);
    const other = data.find((d) => d.name.startsWith('Other ('))!;
    const gathered = grids.states.rowTotals.filter((r) => (r[0] ?? 0) < total * OTHER_SHARE);
    expect(other.name).toBe(`Other (${gathered.length} under 1.5%)`);
    expect(other.value).toBe(gathered.reduce((a, r) => a + (r[0] ?? 0), 0));
    expect(data.reduce((a, d) => a + d.value, 0)).toBe(total);
    expect(o.legend).toMatchObject({ type: 'plain' });
    expect(o.legend.data).toHaveLength(data.length);
  });

  it('a pie too large for its legend at this size is a 400 naming the limit and rowLimit', () => {
    expect(() => build('states', 'Pie2D', 300, 200)).toThrow(
      /A Pie2D of 300×200 can draw at most \d+ slices .* this crosstab has \d+\. Use rowLimit: \d+ \(with rowOrder to choose which\)/,
    );
    try {
      build('states', 'Pie2D', 300, 200);
    } catch (err) {
      expect((err as AppError).code).toBe('INVALID_ARGUMENT');
    }
  });

  it('too many bars for the width is a 400 naming the limit', () => {
    expect(() => build('states', 'Column2D', 100, 100)).toThrow(
      /Column2D of 100×100 can draw at most \d+ categories legibly; this crosstab has 57\. Use rowLimit: \d+/,
    );
  });

  it('nulls stay gaps in lines and columns, and are zero only inside a stack', () => {
    const withGap = {
      ...grids.money,
      cells: grids.money.cells.map((r, i) => r.map((c, j) => (i === 0 && j === 0 ? [null] : c))),
    };
    const kind = chartKind('MSLine', 1);
    expect((buildChartOption(withGap, kind, 800, 600, '') as O).series[0].data[0]).toBeNull();
    expect((buildChartOption(withGap, chartKind('StackedColumn2D', 1), 800, 600, '') as O).series[0].data[0]).toBe(0);
  });

  it('MSCombiDY2D: first measure as columns on the left axis, second a line on the right', () => {
    const o = build('moneyTwo', 'MSCombiDY2D');
    expect(o.yAxis).toHaveLength(2);
    expect(o.series.map((s: O) => [s.type, s.name, s.yAxisIndex])).toEqual([
      ['bar', 'Sum(Worldwide Gross)', undefined],
      ['line', 'Count', 1],
    ]);
  });

  it('Scatter plots the first measure as x and the second as y, one point per row', () => {
    const o = build('moneyTwo', 'Scatter');
    expect(o.xAxis.name).toBe('Sum(Worldwide Gross)');
    expect(o.yAxis.name).toBe('Count');
    expect(o.series[0].data).toEqual(grids.moneyTwo.rowTotals.map((t) => [t[0], t[1]]));
  });

  it('Heatmap colours rows × columns by the first measure', () => {
    const o = build('money', 'Heatmap');
    expect(o.yAxis.data).toEqual(grids.money.rows.map((r) => r[0]));
    expect(o.xAxis.data).toEqual(['G', 'PG', 'PG-13', 'R']);
    expect(o.series[0].data).toContainEqual([2, 0, grids.money.cells[0][2][0]]);
    expect(o.visualMap.text).toEqual(['33.2B', '1.88M']);
  });

  it('Pareto sorts descending and adds the cumulative share on a 0–100 right axis', () => {
    const o = build('distributors', 'Pareto2D');
    const bars = o.series[0].data as number[];
    expect([...bars].sort((a, b) => b - a)).toEqual(bars);
    const cumulative = o.series[1].data as number[];
    expect(cumulative[cumulative.length - 1]).toBe(100);
    expect(o.yAxis[1]).toMatchObject({ min: 0, max: 100 });
  });

  it('Waterfall floats each step from the running total, across zero, and ends with the total', () => {
    const o = build('delays', 'Waterfall2D');
    const steps = grids.delays.rowTotals.map((t) => t[0] ?? 0);
    const boxes = o.series[0].data as number[][];
    expect(boxes).toHaveLength(steps.length + 1);
    expect(boxes[0].slice(0, 2)).toEqual([0, steps[0]]);
    expect(boxes[1].slice(0, 2)).toEqual([steps[0], steps[0] + steps[1]]);
    expect(boxes[boxes.length - 1].slice(0, 2)).toEqual([0, steps.reduce((a, v) => a + v, 0)]);
    expect(o.xAxis.data[o.xAxis.data.length - 1]).toBe('Total');
  });

  it.each([
    ['Spline', 'line', true],
    ['SplineArea', 'line', true],
    ['Funnel', 'funnel', undefined],
    ['Pyramid', 'funnel', undefined],
    ['Treemap', 'treemap', undefined],
    ['Radar', 'radar', undefined],
  ])('%s draws as ECharts %s', (type, echartsType, smooth) => {
    const o = build('money', type);
    expect(o.series[0].type).toBe(echartsType);
    if (smooth) expect(o.series[0].smooth).toBe(true);
  });

  it('a title longer than the image gets a smaller font, then an ellipsis', () => {
    const o = build('distributors', 'Column2D', 300, 300);
    expect(o.title.textStyle.fontSize).toBeLessThan(16);
    expect(textWidth(o.title.text, o.title.textStyle.fontSize)).toBeLessThanOrEqual(300 - 20);
  });

  it('a single category draws', () => {
    expect(build('single', 'MSColumn2D').xAxis.data).toEqual(['Musical']);
  });

  describe('two totals', () => {
    it.each(['MSColumn2D', 'StackedColumn2D', 'MSLine', 'MSArea', 'MSCombi2D'])(
      '%s: the second total on its own right axis, one legend entry per column',
      (type) => {
        const o = build('moneyTwoByRating', type);
        const g = grids.moneyTwoByRating;
        expect(o.yAxis).toHaveLength(2);
        expect(o.yAxis[0].name).toBe(g.totals[0]);
        expect(o.yAxis[1].name).toMatch(new RegExp(`^${g.totals[1]}`));
        const onRight = (o.series as O[]).filter((s) => s.yAxisIndex === 1);
        expect(onRight).toHaveLength(g.columns.length);
        const stacked = type.startsWith('Stacked');
        expect(onRight[0].data).toEqual(g.cells.map((row) => (stacked ? (row[0][1] ?? 0) : row[0][1])));
        expect(o.legend.data).toEqual(g.columns.map((c) => c.join(' / ')));
        // The two series of a column share its colour.
        const [a, b] = (o.series as O[]).filter((s) => s.name === o.legend.data[0]);
        expect(a.itemStyle.color).toBe(b.itemStyle.color);
        if (stacked) expect(new Set((o.series as O[]).map((s) => s.stack)).size).toBe(2);
      },
    );

    it('MSBar2D: the second value axis along the top', () => {
      const o = build('moneyTwoByRating', 'MSBar2D');
      expect(o.xAxis).toHaveLength(2);
      expect(o.xAxis[1].position).toBe('top');
      expect((o.series as O[]).filter((s) => s.xAxisIndex === 1)).toHaveLength(grids.moneyTwoByRating.columns.length);
    });

    it.each(['Heatmap', 'Pie2D', 'Column2D', 'Treemap', 'Radar'])(
      '%s refuses a second total, naming chartTotals',
      (type) => {
        expect(() => chartKind(type, 2)).toThrow(/draws at most 1 total; 2 would be drawn.*chartTotals/);
      },
    );

    it('no type draws three totals', () => {
      expect(() => chartKind('MSColumn2D', 3)).toThrow(/draws at most 2 totals.*chartTotals/);
      expect(() => chartKind('Scatter', 3)).toThrow(/chartTotals/);
    });
  });
});
