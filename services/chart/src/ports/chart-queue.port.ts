import type { RenderJob } from './chart-renderer.port';

/** A render as it sits in the queue; requestId may be absent on jobs queued by an older producer. */
export interface QueuedRender extends RenderJob {
  requestId?: string;
}

/**
 * Hands a render to whichever chart worker takes it and waits for the PNG. Adapters must: reject at
 * once with AppError UNAVAILABLE when the queue's store cannot be reached (and work again once it
 * can, without a restart); retry a job whose worker died; reject with TIMEOUT after `timeoutMs`.
 */
export interface ChartQueue {
  /** The PNG, base64-encoded. The request id travels with the job so the worker's lines carry it. */
  render(job: RenderJob, options: { timeoutMs: number; requestId: string }): Promise<string>;
  close(): Promise<void>;
}
