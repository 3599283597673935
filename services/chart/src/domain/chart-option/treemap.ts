import type { ChartKind } from '../chart-types';
import { compactNumber } from '../text-metrics';
import {
  PAD,
  base,
  finite,
  lineHeight,
  noPositive,
  palette,
  sizes,
  tooMany,
  type Option,
  type Series,
  type Title,
} from './layout';

export function treemap(
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
    .filter((d): d is { name: string; value: number } => finite(d.value) && d.value > 0)
    // Each rectangle names its key and its value; the value's text is digits and a unit letter, so it is
    // safe in ECharts' label template, where the key (any text) only ever stands in as {b}.
    .map((d) => ({ ...d, label: { formatter: `{b}\n${compactNumber(d.value)}` } }));
  if (!items.length) throw noPositive(kind, s.name);
  const box = { left: PAD, top: title.height, right: PAD, bottom: PAD };
  const area = (width - 2 * PAD) * (height - title.height - PAD);
  // A rectangle needs about a short word's room to be told from its neighbours.
  const limit = Math.floor(area / 600);
  if (items.length > limit) throw tooMany(kind, 'rectangles', items.length, limit, width, height, 'rowLimit');
  return {
    ...base(title, palette(items.length)),
    series: [
      {
        type: 'treemap',
        name: s.name,
        ...box,
        roam: false,
        nodeClick: false,
        breadcrumb: { show: false },
        colorMappingBy: 'index',
        data: items,
        label: {
          show: true,
          formatter: '{b}',
          fontSize: fs,
          lineHeight: lineHeight(fs),
          overflow: 'truncate',
          ellipsis: '…',
        },
        upperLabel: { show: false },
        itemStyle: { borderColor: '#fff', borderWidth: 1, gapWidth: 1 },
        levels: [{ colorSaturation: [0.4, 0.7] }],
      },
    ],
  };
}
