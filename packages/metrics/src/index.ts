import {
  AggregatorRegistry,
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';

export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

export type { Registry } from 'prom-client';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Every metric Quarry exports. One instance per process or worker thread, made in main and passed
 * down (no global registry): a thread's figures are merged into its process's /metrics on scrape.
 */
export class QuarryMetrics {
  readonly registry = new Registry();
  readonly rpcRequests = new Counter({
    name: 'quarry_rpc_requests_total',
    help: 'JSON-RPC calls by method and outcome code',
    labelNames: ['method', 'code'],
    registers: [this.registry],
  });
  readonly rpcDuration = new Histogram({
    name: 'quarry_rpc_duration_seconds',
    help: 'JSON-RPC call latency by method',
    labelNames: ['method'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly grpcCalls = new Counter({
    name: 'quarry_grpc_server_calls_total',
    help: 'gRPC calls served, by rpc and status code',
    labelNames: ['rpc', 'code'],
    registers: [this.registry],
  });
  readonly grpcDuration = new Histogram({
    name: 'quarry_grpc_server_duration_seconds',
    help: 'gRPC call latency by rpc',
    labelNames: ['rpc'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly storeDuration = new Histogram({
    name: 'quarry_store_operation_seconds',
    help: 'Store operation latency',
    labelNames: ['store', 'op'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly chartQueueJobs = new Gauge({
    name: 'quarry_chart_queue_jobs',
    help: 'Chart jobs in the queue by state',
    labelNames: ['state'],
    registers: [this.registry],
  });
  readonly chartRender = new Histogram({
    name: 'quarry_chart_render_seconds',
    help: 'Chart render time in the worker',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly resultCacheBytes = new Gauge({
    name: 'quarry_result_cache_bytes',
    help: 'Bytes held by the result cache (its entries as counted against QUARRY_CACHE_MB)',
    registers: [this.registry],
  });
  readonly resultCacheEntries = new Gauge({
    name: 'quarry_result_cache_entries',
    help: 'Entries in the result cache',
    registers: [this.registry],
  });
  readonly resultCacheLookups = new Counter({
    name: 'quarry_result_cache_lookups_total',
    help: 'Result cache lookups by outcome (hit or miss)',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  readonly computations = new Counter({
    name: 'quarry_computations_total',
    help: 'Searches and crosstabs past the result cache, by outcome: computed, joined (an identical one in flight answered it), cancelled (every caller gave up)',
    labelNames: ['kind', 'outcome'],
    registers: [this.registry],
  });
  readonly computationsInFlight = new Gauge({
    name: 'quarry_computations_in_flight',
    help: 'Searches and crosstabs being computed now (each perhaps awaited by several identical calls)',
    labelNames: ['kind'],
    registers: [this.registry],
  });

  constructor(labels: Record<string, string> = {}) {
    this.registry.setDefaultLabels(labels);
    collectDefaultMetrics({ register: this.registry });
  }

  /** Times an async operation into a histogram with the given labels. */
  async time<T>(histogram: Histogram<string>, labels: Record<string, string>, fn: () => Promise<T>): Promise<T> {
    const end = histogram.startTimer(labels);
    try {
      return await fn();
    } finally {
      end();
    }
  }
}

/**
 * Wraps every method of a store so each call lands in quarry_store_operation_seconds. Wrappers and
 * their labelled children are made once per method: this sits on the hot path of every request.
 */
export function instrumentStore<T extends object>(store: T, name: string, metrics: QuarryMetrics): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop, receiver) {
      const cached = wrapped.get(prop);
      if (cached) return cached;
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const fn = value as (...a: unknown[]) => unknown;
      let out: unknown;
      if (typeof prop !== 'string' || prop === 'close') {
        out = fn.bind(target);
      } else {
        const histogram = metrics.storeDuration.labels({ store: name, op: prop });
        out = (...args: unknown[]) => {
          const started = process.hrtime.bigint();
          const done = () => histogram.observe(Number(process.hrtime.bigint() - started) / 1e9);
          const result = fn.apply(target, args);
          if (result instanceof Promise) return result.finally(done);
          done();
          return result;
        };
      }
      wrapped.set(prop, out);
      return out;
    },
  });
}

/** Text exposition of several registries' JSON snapshots summed into one (process + its threads). */
export async function mergedMetrics(parts: MetricsSnapshot[]): Promise<{ contentType: string; text: string }> {
  const merged = AggregatorRegistry.aggregate(parts);
  return { contentType: merged.contentType, text: await merged.metrics() };
}
