import type { ChartKind } from '../chart-types';
import { PAD, base, finite, noPositive, palette, sizes, tooMany, type Option, type Series, type Title } from './layout';
import { legendCapacity, planLegend } from './legend';

/** Pie, doughnut, funnel and pyramid slices under this share of the total are gathered into one "Other". */
export const OTHER_SHARE = 0.015;
/** Slices under this share carry no label of their own (the legend still names them). */
const LABEL_SHARE = 0.03;

/** Slices of one whole: positive values only (a pie cannot draw a negative or an empty slice). */
export function sliced(
  kind: ChartKind,
  categories: string[],
  s: Series,
  width: number,
  height: number,
  title: Title,
): Option {
  const fs = sizes(width, height).label;
  const items = categories
    .map((name, i) => ({ name, value: s.data[i] }))
    .filter((d): d is { name: string; value: number } => finite(d.value) && d.value > 0);
  if (!items.length) throw noPositive(kind, s.name);
  const total = items.reduce((a, d) => a + d.value, 0);
  // Funnels read top-down from the largest stage, as FusionCharts sorts them.
  if (kind.family === 'funnel' || kind.family === 'pyramid') items.sort((a, b) => b.value - a.value);
  const small = items.filter((d) => d.value < total * OTHER_SHARE);
  let shown = items;
  if (small.length >= 2) {
    const other = {
      name: `Other (${small.length} under ${OTHER_SHARE * 100}%)`,
      value: small.reduce((a, d) => a + d.value, 0),
    };
    shown = [...items.filter((d) => d.value >= total * OTHER_SHARE), other];
  }
  const avail = height - title.height - PAD;
  const names = shown.map((d) => d.name);
  const legend = planLegend(names, width, avail, fs);
  if (!legend) {
    const limit = legendCapacity(names, width, avail, fs);
    throw tooMany(
      kind,
      `slices (after gathering those under ${OTHER_SHARE * 100}% into Other)`,
      names.length,
      limit,
      width,
      height,
      'rowLimit',
    );
  }
  const box = {
    left: PAD,
    top: title.height,
    right: legend.side === 'right' ? legend.size + PAD : PAD,
    bottom: legend.side === 'bottom' ? legend.size + PAD : PAD,
  };
  const boxW = width - box.left - box.right;
  const boxH = height - box.top - box.bottom;
  const colours = palette(shown.length);
  if (kind.family === 'funnel' || kind.family === 'pyramid') {
    return {
      ...base(title, colours),
      legend: { ...legend.option, data: names },
      series: [
        {
          type: 'funnel',
          name: s.name,
          ...box,
          sort: kind.family === 'funnel' ? 'descending' : 'ascending',
          gap: 1,
          minSize: '8%',
          data: shown,
          label: {
            show: boxH / Math.max(1, shown.length) >= fs * 1.4,
            position: 'inside',
            formatter: '{d}%',
            fontSize: fs,
            color: '#fff',
            textBorderColor: '#333',
            textBorderWidth: 2,
          },
          labelLayout: { hideOverlap: true },
        },
      ],
    };
  }
  // Labels outside the pie need a ring of room; a small pie lets the legend speak alone.
  const labelCap = Math.min(140, Math.floor(boxW * 0.22));
  const withLabels = labelCap >= 50 && boxH >= 140;
  const radius = withLabels
    ? Math.max(10, Math.min(boxW / 2 - labelCap - 24, boxH / 2 - fs * 2 - 10))
    : Math.max(10, Math.min(boxW, boxH) / 2 - 4);
  return {
    ...base(title, colours),
    legend: { ...legend.option, data: names },
    series: [
      {
        type: 'pie',
        name: s.name,
        ...box,
        radius: kind.family === 'doughnut' ? [Math.round(radius * 0.55), Math.round(radius)] : Math.round(radius),
        center: ['50%', '50%'],
        data: shown.map((d) => ({ ...d, label: { show: withLabels && d.value >= total * LABEL_SHARE } })),
        label: {
          show: withLabels,
          formatter: '{b}: {d}%',
          fontSize: fs,
          width: labelCap,
          overflow: 'truncate',
          alignTo: 'labelLine',
          edgeDistance: 4,
          bleedMargin: 4,
        },
        labelLine: { show: withLabels, length: 8, length2: 8 },
        labelLayout: { hideOverlap: true },
        avoidLabelOverlap: true,
      },
    ],
  };
}
