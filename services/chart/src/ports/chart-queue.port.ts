import type { RenderJob } from './chart-renderer.port';

/**
 * Hands a render to whichever chart worker takes it and waits for the PNG. Adapters must: reject at
 * once with AppError UNAVAILABLE when the queue's store cannot be reached (and work again once it
 * can, without a restart); retry a job whose worker died; reject with TIMEOUT after `timeoutMs`.
 */
export interface ChartQueue {
  /** The PNG, base64-encoded. */
  render(job: RenderJob, timeoutMs: number): Promise<string>;
  close(): Promise<void>;
}
