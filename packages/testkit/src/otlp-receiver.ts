import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/*
 * A stand-in for an OpenTelemetry collector's OTLP/HTTP receiver (POST /v1/traces), written from the
 * OTLP specification: it decodes both encodings an exporter may send, http/json (hex ids, camelCase
 * fields) and http/protobuf (opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest), and
 * keeps every span with its resource's attributes.
 */

/** The part of the OTLP trace protocol a test reads, by its field numbers (trace.proto, common.proto). */
const OTLP = protobuf.Root.fromJSON({
  nested: {
    otlp: {
      nested: {
        AnyValue: {
          oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue'] } },
          fields: {
            stringValue: { type: 'string', id: 1 },
            boolValue: { type: 'bool', id: 2 },
            intValue: { type: 'int64', id: 3 },
            doubleValue: { type: 'double', id: 4 },
          },
        },
        KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
        Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        Status: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
        Span: {
          fields: {
            traceId: { type: 'bytes', id: 1 },
            spanId: { type: 'bytes', id: 2 },
            parentSpanId: { type: 'bytes', id: 4 },
            name: { type: 'string', id: 5 },
            kind: { type: 'int32', id: 6 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
            status: { type: 'Status', id: 15 },
          },
        },
        ScopeSpans: { fields: { spans: { rule: 'repeated', type: 'Span', id: 2 } } },
        ResourceSpans: {
          fields: {
            resource: { type: 'Resource', id: 1 },
            scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 },
          },
        },
        ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
      },
    },
  },
}).lookupType('otlp.ExportTraceServiceRequest');

/** SpanKind of trace.proto. */
export const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The resource's service.name. */
  service: string;
  resource: Record<string, string | number | boolean>;
}

interface WireKeyValue {
  key: string;
  value?: { stringValue?: string; boolValue?: boolean; intValue?: number | string; doubleValue?: number };
}

interface WireSpan {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: WireKeyValue[];
  status?: { code?: number };
}

interface WireRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: WireKeyValue[] };
    scopeSpans?: Array<{ spans?: WireSpan[] }>;
  }>;
}

function attributes(list: WireKeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (!value) continue;
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
  }
  return out;
}

function flatten(request: WireRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const resource = attributes(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId ?? '',
        spanId: s.spanId ?? '',
        parentSpanId: s.parentSpanId ?? '',
        name: s.name,
        kind: s.kind ?? 0,
        attributes: attributes(s.attributes),
        statusCode: s.status?.code ?? 0,
        service: String(resource['service.name'] ?? ''),
        resource,
      })),
    );
  });
}

function decodeProtobuf(body: Buffer): WireRequest {
  const message = OTLP.decode(body);
  // 64-bit integers as numbers; ids stay bytes until hexIds makes them what OTLP/JSON carries.
  return OTLP.toObject(message, { longs: Number, defaults: false }) as WireRequest;
}

function hexIds(request: WireRequest): WireRequest {
  for (const rs of request.resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? []) {
        const raw = s as unknown as Record<string, unknown>;
        for (const k of ['traceId', 'spanId', 'parentSpanId'] as const) {
          const v = raw[k];
          if (v instanceof Uint8Array) raw[k] = Buffer.from(v).toString('hex');
        }
      }
  return request;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** The Content-Type of every export received, in order. */
  readonly contentTypes: string[] = [];
  /** Exports that could not be decoded (each answered 400). */
  readonly rejected: string[] = [];
  private server: Server | undefined;

  /** Listens on a free loopback port; resolves with the base URL (OTEL_EXPORTER_OTLP_ENDPOINT). */
  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const type = String(req.headers['content-type'] ?? '');
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        try {
          const request = type.startsWith('application/x-protobuf')
            ? hexIds(decodeProtobuf(body))
            : (JSON.parse(body.toString('utf8')) as WireRequest);
          this.spans.push(...flatten(request));
          this.contentTypes.push(type);
          res.writeHead(200, { 'Content-Type': type.startsWith('application/json') ? 'application/json' : type });
          res.end(type.startsWith('application/json') ? '{}' : undefined);
        } catch (err) {
          this.rejected.push(`${type}: ${err instanceof Error ? err.message : String(err)}`);
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Every span of a trace, once `done` holds for them or `ms` pass (exports arrive in batches). */
  async trace(traceId: string, done: (spans: ReceivedSpan[]) => boolean, ms = 15000): Promise<ReceivedSpan[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      const spans = this.spans.filter((s) => s.traceId === traceId);
      if (done(spans) || Date.now() > deadline) return spans;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
