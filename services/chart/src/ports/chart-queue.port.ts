import type { RenderJob } from './chart-renderer.port';

/**
 * A render as it sits in the queue; requestId may be absent on jobs queued by an older producer.
 * `traceparent` and `tracestate` are the W3C trace context of the producer's span, there when it traces,
 * so the worker's spans join the caller's trace.
 */
export interface QueuedRender extends RenderJob {
  requestId?: string;
  traceparent?: string;
  tracestate?: string;
}

/**
 * Hands a render to whichever chart worker takes it and waits for the PNG. Adapters must: reject at
 * once with AppError UNAVAILABLE when the queue's store cannot be reached (and work again once it
 * can, without a restart); reject at once with UNAVAILABLE and a retryAfterSeconds when the queue
 * holds its bound of waiting renders or its store is full; run a job again once if its worker died,
 * but never retry a render that failed or timed out; reject with TIMEOUT after `timeoutMs`.
 */
export interface ChartQueue {
  /** The PNG base64-encoded, or the SVG text. The request id travels with the job so the worker's lines carry it. */
  render(job: RenderJob, options: { timeoutMs: number; requestId: string }): Promise<string>;
  close(): Promise<void>;
}
