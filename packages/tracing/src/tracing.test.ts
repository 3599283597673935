import os from 'node:os';
import { context, trace } from '@opentelemetry/api';
import type { TracingSettings } from '@quarry/config';
import { AppError } from '@quarry/errors';
import { KIND, OtlpReceiver } from '@quarry/testkit';
import {
  extractTraceContext,
  failSpan,
  injectTraceContext,
  inSpan,
  SpanKind,
  startTracing,
  traceCarrier,
  traceLogFields,
  tracingEnabled,
} from './index';
import * as sdk from './otel-sdk';

// Counts registrations: with tracing off, the SDK (provider, processor, exporter) is never set up.
jest.mock('./otel-sdk', () => {
  const actual = jest.requireActual<typeof sdk>('./otel-sdk');
  return { ...actual, registerSdk: jest.fn(actual.registerSdk) };
});

const settings = (url: string, protocol: TracingSettings['protocol']): TracingSettings => ({
  url: `${url}/v1/traces`,
  protocol,
  headers: { 'x-api-key': 'k1' },
  serviceName: 'quarry-unit',
  resourceAttributes: { 'deployment.environment': 'test' },
  sampler: 'parentbased_always_on',
  samplerRatio: 1,
  scheduleDelayMs: 60_000,
  timeoutMs: 10_000,
});

const warnings: string[] = [];
const warn = (m: string) => warnings.push(m);

describe('tracing off (no endpoint)', () => {
  it('adds no exporter, provider, context manager or propagator; every helper is a no-op', async () => {
    const running = await startTracing(undefined, warn);
    expect(sdk.registerSdk).not.toHaveBeenCalled();
    expect(tracingEnabled()).toBe(false);
    // The API's globals are still the no-op defaults.
    const probe = trace.getTracer('probe').startSpan('probe');
    expect(probe.isRecording()).toBe(false);
    expect(trace.getSpan(context.with(trace.setSpan(context.active(), probe), () => context.active()))).toBe(undefined);

    let seen: unknown = 'not called';
    await expect(
      inSpan('work', { kind: SpanKind.SERVER }, async (span) => {
        seen = span;
        const carrier: Record<string, string> = {};
        injectTraceContext((k, v) => (carrier[k] = v));
        return { carrier, job: traceCarrier(), log: traceLogFields() };
      }),
    ).resolves.toEqual({ carrier: {}, job: {}, log: {} });
    expect(seen).toBeUndefined();
    await expect(
      inSpan('failing', {}, async () => {
        throw AppError.invalid('bad');
      }),
    ).rejects.toThrow('bad');
    await running.shutdown();
    expect(warnings).toEqual([]);
  });
});

describe('tracing on', () => {
  const receiver = new OtlpReceiver();
  let endpoint: string;
  beforeAll(async () => {
    endpoint = await receiver.start();
  });
  afterAll(() => receiver.stop());

  it.each(['http/json', 'http/protobuf'] as const)(
    'exports over %s: nested spans linked, context in carriers and log fields, failures recorded',
    async (protocol) => {
      const running = await startTracing(settings(endpoint, protocol), warn);
      expect(tracingEnabled()).toBe(true);
      const carrier: Record<string, string> = {};
      let log: ReturnType<typeof traceLogFields> = {};
      let outerIds = { traceId: '', spanId: '' };
      await inSpan('outer', { kind: SpanKind.SERVER, attributes: { 'quarry.request_id': protocol } }, async (outer) => {
        outerIds = outer!.spanContext();
        await inSpan('inner', {}, async () => {
          injectTraceContext((k, v) => (carrier[k] = v));
          log = traceLogFields();
        });
        // A client's mistake: not an error status on a server span, an error on a client span.
        await inSpan('refused', { kind: SpanKind.SERVER }, async () => {
          throw AppError.invalid('no such field');
        }).catch(() => undefined);
        await inSpan('called', { kind: SpanKind.CLIENT }, async () => {
          throw AppError.notFound('gone');
        }).catch(() => undefined);
        await inSpan('crashed', {}, async () => {
          throw new TypeError('boom');
        }).catch(() => undefined);
      });
      // The carrier continues on the other side of a hop: a span under it joins the same trace.
      await inSpan('remote', { parent: extractTraceContext((k) => carrier[k]) }, async () => undefined);
      await running.forceFlush();
      await running.shutdown();
      expect(tracingEnabled()).toBe(false);

      const spans = await receiver.trace(outerIds.traceId, (s) => s.length >= 6);
      const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
      expect(Object.keys(byName).sort()).toEqual(['called', 'crashed', 'inner', 'outer', 'refused', 'remote']);
      expect(byName.outer).toMatchObject({
        parentSpanId: '',
        kind: KIND.SERVER,
        service: 'quarry-unit',
        attributes: { 'quarry.request_id': protocol },
      });
      expect(byName.outer.resource).toMatchObject({
        'deployment.environment': 'test',
        'service.name': 'quarry-unit',
        // One replica from another, one release from another.
        'service.instance.id': `${os.hostname()}/${process.pid}`,
        'service.version': '0.1.0',
      });
      for (const name of ['inner', 'refused', 'called', 'crashed'])
        expect(byName[name].parentSpanId).toBe(outerIds.spanId);
      expect(byName.remote.parentSpanId).toBe(byName.inner.spanId);
      expect(carrier.traceparent).toBe(`00-${outerIds.traceId}-${byName.inner.spanId}-01`);
      expect(log).toEqual({ trace_id: outerIds.traceId, span_id: byName.inner.spanId });
      expect(byName.refused).toMatchObject({ statusCode: 0, attributes: { 'error.type': 'INVALID_ARGUMENT' } });
      expect(byName.called).toMatchObject({ statusCode: 2, attributes: { 'error.type': 'NOT_FOUND' } });
      expect(byName.crashed).toMatchObject({ statusCode: 2, attributes: { 'error.type': 'INTERNAL' } });
      expect(receiver.rejected).toEqual([]);
      expect(receiver.contentTypes.at(-1)).toBe(
        protocol === 'http/json' ? 'application/json' : 'application/x-protobuf',
      );
      expect(warnings).toEqual([]);
    },
  );

  it('tells `warn` when the collector cannot be reached, and goes on', async () => {
    const unreachable = { ...settings('http://127.0.0.1:1', 'http/json'), scheduleDelayMs: 20, timeoutMs: 300 };
    const running = await startTracing(unreachable, warn);
    await inSpan('lost', {}, async () => undefined);
    // A hang guard: the failed export is told once its batch is sent and refused, later on a loaded machine.
    const deadline = Date.now() + 30_000;
    while (warnings.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await running.shutdown().catch(() => undefined);
    expect(warnings.join('\n')).toMatch(/ECONNREFUSED|export|timeout/i);
    warnings.length = 0;
  });

  it('failSpan without a span still gives the AppError', () => {
    expect(failSpan(undefined, new Error('x')).code).toBe('INTERNAL');
  });
});
