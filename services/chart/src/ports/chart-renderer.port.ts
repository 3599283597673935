export interface RenderJob {
  option: Record<string, unknown>;
  width: number;
  height: number;
}

/**
 * Draws a chart. Adapters must guarantee: a PNG of exactly width x height pixels; a render that hangs
 * is cut off after the configured timeout and rejects; a crashed browser is replaced for the next call;
 * nothing (pages, contexts, processes) accumulates across calls.
 */
export interface ChartRenderer {
  render(job: RenderJob): Promise<Buffer>;
  close(): Promise<void>;
}
