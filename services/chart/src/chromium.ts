// The Chromium renderer's entry point (`@quarry/chart/chromium`): benchmarks and tests reach puppeteer-core
// only through a subpath that names it, so `@quarry/chart` itself exports no adapter.
export { ChromiumRenderer } from './adapters/chromium-renderer.adapter';
