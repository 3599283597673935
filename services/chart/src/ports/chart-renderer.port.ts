export interface RenderJob {
  option: Record<string, unknown>;
  width: number;
  height: number;
  /** "png" when absent (jobs from an older producer); "pdf" prints the chart, or `table` when given. */
  format?: 'png' | 'svg' | 'pdf';
  /** With format "pdf": a crosstab's HTML table to print for paper instead of a chart (option is then empty). */
  table?: TablePrint;
}

/** A table printed on A4: its HTML (the crosstab service's), and what heads every page. */
export interface TablePrint {
  html: string;
  title: string;
  subtitle: string;
}

/**
 * Draws a chart, or prints one or a table. Adapters must guarantee: a PNG of exactly width x height pixels; a
 * PDF of one width x height page for a chart, of A4 pages for a table; a render that hangs
 * is cut off after the configured timeout and rejects with renderTimeoutError; a crashed browser is
 * replaced for the next call; nothing (pages, contexts, processes) accumulates across calls.
 */
export interface ChartRenderer {
  /** Warms the renderer up before the worker takes jobs. */
  start(): Promise<void>;
  render(job: RenderJob): Promise<Buffer>;
  /** Rejects while the renderer cannot draw (its browser is gone). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** Draws a chart as SVG text without blocking the caller's event loop; an abort stops the drawing. */
export interface SvgRenderer {
  render(job: RenderJob, signal?: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

/**
 * The renderer cannot draw anything at all (its browser does not launch): not the chart's fault, so the
 * job goes back to the queue for another worker, and this one stops taking jobs.
 */
export class RendererUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RendererUnavailableError';
  }
}

// The reason crosses the queue as plain text (a failed job keeps only its message), so both sides
// agree on its wording here.
const RENDER_TIMEOUT = /^render exceeded (\d+) ms$/;

export function renderTimeoutError(timeoutMs: number): Error {
  return new Error(`render exceeded ${timeoutMs} ms`);
}

/** The timeout of a render that was cut off, read back from a failed job's reason. */
export function renderTimeoutOf(reason: string): number | undefined {
  const m = RENDER_TIMEOUT.exec(reason);
  return m ? Number(m[1]) : undefined;
}
