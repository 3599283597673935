// The in-process SVG renderer's entry point (`@quarry/chart/echarts`): ECharts is loaded by those that
// name it, never by an import of `@quarry/chart`.
export { renderSvg } from './adapters/echarts-svg-renderer.adapter';
