import type { QuarryMetrics } from '@quarry/metrics';
import type { Span } from '@quarry/tracing';

// Labelled children are looked up once per (method, code): label hashing on every request is measurable.
const children = new WeakMap<
  QuarryMetrics,
  Map<string, { count: { inc(): void }; duration: { observe(v: number): void } }>
>();

/** One call counted in /metrics, and its span named for the method once that is known. */
export function countCall(
  metrics: QuarryMetrics | undefined,
  method: string,
  code: string,
  ms: number,
  span: Span | undefined,
): void {
  // The span is named for the method once it is known; '(invalid)' and '(unauthenticated)' are not methods.
  if (span && !method.startsWith('(')) {
    span.updateName(method);
    span.setAttribute('rpc.method', method);
  }
  const m = metrics;
  if (!m) return;
  let perMetrics = children.get(m);
  if (!perMetrics) children.set(m, (perMetrics = new Map()));
  const key = `${method} ${code}`;
  let child = perMetrics.get(key);
  if (!child)
    perMetrics.set(
      key,
      (child = { count: m.rpcRequests.labels({ method, code }), duration: m.rpcDuration.labels({ method }) }),
    );
  child.count.inc();
  child.duration.observe(ms / 1000);
}
