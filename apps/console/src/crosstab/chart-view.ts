import { reviveChartOption, type EChartsOptionJson } from '@quarry/client';
import { el } from '../dom';
import { formatNumber } from '../number-format';

/*
 * An interactive chart from the ECharts option the server answers (imageFormat "echarts"): the option
 * Quarry's own images are drawn from, with tooltips added, legend entries that hide and show their
 * series, sized to its card and resized with it. ECharts is the gateway's own copy (/console/echarts.min.js,
 * from node_modules, under the page's CSP), loaded the first time a chart is drawn.
 */

// Types only: echarts ships ESM types, the console bundles as a script; the code is the gateway's copy.
type EChartsGlobal = typeof import('echarts', { with: { 'resolution-mode': 'import' } });
type Chart = ReturnType<EChartsGlobal['init']>;
let loading: Promise<EChartsGlobal> | undefined;

function loadECharts(): Promise<EChartsGlobal> {
  loading ??= new Promise<EChartsGlobal>((resolve, reject) => {
    const script = el('script', { src: '/console/echarts.min.js' });
    script.addEventListener('load', () => resolve((window as unknown as { echarts: EChartsGlobal }).echarts));
    script.addEventListener('error', () => {
      loading = undefined;
      reject(new Error('ECharts could not be loaded from /console/echarts.min.js'));
    });
    document.head.append(script);
  });
  return loading;
}

/** The size to ask the server for: the card's width, a height that suits it. */
export function chartSize(card: HTMLElement): { width: number; height: number } {
  const width = Math.max(300, Math.min(4000, Math.floor(card.clientWidth || 900)));
  return { width, height: Math.max(300, Math.min(600, Math.round(width * 0.6))) };
}

let current: { chart: Chart; observer: ResizeObserver } | undefined;

/** Disposes of the chart on screen (a new answer, an error, another tab's result). */
export function disposeChart(): void {
  current?.observer.disconnect();
  current?.chart.dispose();
  current = undefined;
}

/** Tooltips as text drawn by ECharts (no HTML: the CSP allows no inline style, and labels stay text). */
function interactive(option: EChartsOptionJson): EChartsOptionJson {
  const series = (Array.isArray(option.series) ? option.series : [option.series]) as Array<{ type?: string }>;
  const byItem = !option.xAxis || series.some((s) => s.type === 'heatmap' || s.type === 'scatter');
  return {
    ...option,
    animation: true,
    tooltip: {
      trigger: byItem ? 'item' : 'axis',
      renderMode: 'richText',
      confine: true,
      valueFormatter: (v: unknown) => (typeof v === 'number' ? formatNumber(v) : String(v ?? '')),
    },
  };
}

export async function drawChart(
  host: HTMLElement,
  option: EChartsOptionJson,
  size: { width: number; height: number },
  label: string,
): Promise<void> {
  disposeChart();
  const echarts = await loadECharts();
  const box = el('div', { class: 'echart', role: 'img', 'aria-label': label });
  box.style.height = `${size.height}px`;
  host.replaceChildren(box);
  const chart = echarts.init(box, null, {
    renderer: 'canvas',
    width: host.clientWidth || size.width,
    height: size.height,
  });
  chart.setOption(interactive(reviveChartOption(option)) as Parameters<Chart['setOption']>[0]);
  const observer = new ResizeObserver(() => {
    if (host.clientWidth > 0) chart.resize({ width: host.clientWidth, height: size.height });
  });
  observer.observe(host);
  current = { chart, observer };
}
