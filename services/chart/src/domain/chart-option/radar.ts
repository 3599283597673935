import type { ChartKind } from '../chart-types';
import { textWidth, truncateText } from '../text-metrics';
import { PAD, base, finite, lineHeight, palette, sizes, tooMany, type Option, type Series, type Title } from './layout';
import { seriesLegend } from './legend';

export function radar(
  kind: ChartKind,
  categories: string[],
  series: Series[],
  width: number,
  height: number,
  title: Title,
): Option {
  const fs = sizes(width, height).label;
  const names = series.map((s) => s.name);
  const avail = height - title.height - PAD;
  const legend = seriesLegend(kind, names, width, height, avail, fs);
  const boxW = width - 2 * PAD - (legend?.side === 'right' ? legend.size : 0);
  const boxH = height - title.height - PAD - (legend?.side === 'bottom' ? legend.size : 0);
  const nameCap = Math.min(Math.max(...categories.map((c) => textWidth(c, fs))), Math.floor(boxW * 0.22));
  const nameGap = 6;
  const radius = Math.min(boxW / 2 - nameCap - nameGap - 4, boxH / 2 - lineHeight(fs) - nameGap - 4);
  // An axis name needs its line of text around the rim, and a few letters at least.
  const limit =
    radius < 20 || nameCap < Math.min(textWidth('Abcd…', fs), Math.max(...categories.map((c) => textWidth(c, fs))))
      ? 0
      : Math.floor((2 * Math.PI * (radius + fs)) / (fs * 1.6));
  if (categories.length > limit) throw tooMany(kind, 'categories', categories.length, limit, width, height, 'rowLimit');
  const values = series.flatMap((s) => s.data.filter(finite));
  const max = Math.max(1, ...values) * 1.05;
  const min = Math.min(0, ...values);
  return {
    ...base(title, palette(series.length)),
    legend: legend ? { ...legend.option, data: names } : undefined,
    radar: {
      center: [PAD + boxW / 2, title.height + boxH / 2],
      radius,
      // Radar axis names take no width limit in ECharts 5: shortened here.
      indicator: categories.map((name) => ({ name: truncateText(name, nameCap, fs), max, min })),
      axisName: { color: '#333', fontSize: fs },
      axisNameGap: nameGap,
      axisLabel: { show: false },
      splitNumber: 4,
    },
    series: [
      {
        type: 'radar',
        symbolSize: 4,
        data: series.map((s) => ({ name: s.name, value: s.data.map((v) => (finite(v) ? v : 0)) })),
        areaStyle: { opacity: 0.12 },
      },
    ],
  };
}
