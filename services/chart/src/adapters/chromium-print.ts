import type { BrowserContext, Page } from 'puppeteer-core';
import type { TablePrint } from '../ports/chart-renderer.port';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES[c]);

/** A4's printable width in CSS pixels (96 per inch) between 10 mm side margins, each way up. */
const PORTRAIT_WIDTH_PX = Math.floor(((210 - 20) / 25.4) * 96);
const LANDSCAPE_WIDTH_PX = Math.floor(((297 - 20) / 25.4) * 96);
/** Chromium's own floor for a print scale. */
const MIN_SCALE = 0.1;

/**
 * The table laid out for paper: the header rows as a table-header-group, so Chromium repeats them atop
 * every page, the Total row once at the end (repeated, it would read as each page's total); no row cut
 * across a page break; no ligatures (a name searched in the PDF is found as typed); hairline borders and a
 * light header that print in grey.
 */
const PRINT_STYLE = `<style>
html,body{margin:0;background:#fff;color:#000}
body{font:8pt "DejaVu Sans",Arial,sans-serif;font-variant-ligatures:none}
table.quarry-crosstab{border-collapse:collapse}
table.quarry-crosstab thead{display:table-header-group}
table.quarry-crosstab tfoot{display:table-row-group}
table.quarry-crosstab tr{break-inside:avoid;page-break-inside:avoid}
table.quarry-crosstab th,table.quarry-crosstab td{border:0.5pt solid #888;padding:1.5pt 4pt;white-space:nowrap}
table.quarry-crosstab th{background:#e8e8e8;text-align:left;font-weight:bold;vertical-align:top}
table.quarry-crosstab .quarry-subtotal{background:#f3f3f3;font-weight:bold}
table.quarry-crosstab caption{caption-side:top;text-align:left;font-weight:bold;padding:0 0 4pt}
</style>`;

const TEMPLATE_STYLE = 'font:7pt "DejaVu Sans",Arial,sans-serif;width:100%;margin:0 10mm;color:#333';

/** The running head: the index's name in bold, the query beside it; both escaped, cut to one line. */
function headerTemplate(table: TablePrint): string {
  return `<div style='${TEMPLATE_STYLE};white-space:nowrap;overflow:hidden;text-overflow:ellipsis'><b>${escape(table.title)}</b>&nbsp;&nbsp;${escape(table.subtitle)}</div>`;
}

const FOOTER_TEMPLATE = `<div style='${TEMPLATE_STYLE};text-align:center'>Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>`;

/** A page that loads nothing from anywhere: what it shows is only what it is given (charts and tables alike). */
export async function blankPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    const url = req.url();
    if (url.startsWith('about:') || url.startsWith('data:')) void req.continue();
    else void req.abort('blockedbyclient');
  });
  return page;
}

/**
 * Prints a crosstab's HTML table on A4: portrait when the table fits its width, landscape when wider, and
 * scaled down to landscape's width past that (so no column is cut off). The running head names the index
 * and the query; the foot says "Page N of M".
 */
export async function printTable(context: BrowserContext, table: TablePrint): Promise<Buffer> {
  const page = await blankPage(context);
  try {
    // Laid out wide enough that the table takes its natural width, which decides the paper's orientation.
    await page.setViewport({ width: 4000, height: 1000, deviceScaleFactor: 1 });
    await page.emulateMediaType('print');
    // The title is the PDF's own (its /Title, what a viewer's window shows).
    await page.setContent(
      `<!doctype html><html><head><meta charset="utf-8"><title>${escape(table.title)}</title>${PRINT_STYLE}</head><body>${table.html}</body></html>`,
    );
    const width = await page.evaluate(() => {
      const t = document.querySelector('table');
      return t ? Math.ceil(t.getBoundingClientRect().width) : 0;
    });
    const landscape = width > PORTRAIT_WIDTH_PX;
    const scale = Math.max(MIN_SCALE, Math.min(1, LANDSCAPE_WIDTH_PX / Math.max(1, width)));
    const pdf = await page.pdf({
      format: 'a4',
      landscape,
      scale,
      printBackground: true,
      displayHeaderFooter: true,
      headerTemplate: headerTemplate(table),
      footerTemplate: FOOTER_TEMPLATE,
      margin: { top: '16mm', bottom: '14mm', left: '10mm', right: '10mm' },
    });
    return Buffer.from(pdf);
  } finally {
    await page.close().catch(() => undefined);
  }
}

/** The chart's heading as the option states it (ECharts takes one title object or a list). */
function chartTitle(option: Record<string, unknown>): string {
  const t = option.title;
  const first = (Array.isArray(t) ? t[0] : t) as { text?: unknown } | undefined;
  return typeof first?.text === 'string' ? first.text : 'chart';
}

/** The chart already drawn in `page` (as SVG), printed on one page of exactly its size. */
export async function printChart(
  page: Page,
  { option, width, height }: { option: Record<string, unknown>; width: number; height: number },
): Promise<Buffer> {
  // The PDF's own title (what a viewer's window shows) is the page's.
  await page.evaluate((title) => {
    document.title = title;
  }, chartTitle(option));
  const pdf = await page.pdf({
    width: `${width}px`,
    height: `${height}px`,
    printBackground: true,
    pageRanges: '1',
    margin: { top: 0, bottom: 0, left: 0, right: 0 },
  });
  return Buffer.from(pdf);
}
