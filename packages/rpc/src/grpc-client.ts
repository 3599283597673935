import * as grpc from '@grpc/grpc-js';
import { abortReason, AppError, ERROR_TABLE, toAppError } from '@quarry/errors';
import { injectTraceContext, inSpan, SpanKind, tracingEnabled } from '@quarry/tracing';
import { fromServiceError } from './grpc-errors';
import { INTERNAL_TOKEN_HEADER } from './internal-credential';
import { REQUEST_ID_HEADER } from './request-id';

export interface CallOptions {
  requestId: string;
  deadlineMs: number;
  /** The deployment's internal credential: services refuse a call without it. */
  internalToken: string;
  /** Cancels the call (the service's handler sees its own signal abort). */
  signal?: AbortSignal;
}

/** What a unary call needs of a generated method definition (`Service.service.Method`). */
export interface UnaryMethod<Req, Res> {
  path: string;
  requestSerialize: (value: Req) => Buffer;
  responseDeserialize: (bytes: Buffer) => Res;
}

/**
 * One unary call made on the channel itself rather than through grpc-js's Client: per call the Client
 * builds an interceptor chain, an EventEmitter and a caller stack trace, none of which Quarry uses, and
 * that was ~15 % of a loopback round trip's CPU (bench/README.md). The outcome is the Client's: request
 * id and internal credential in metadata, deadline, a missing or unparsable response is INTERNAL, any failure an AppError.
 */
export function callUnary<Req, Res>(
  service: string,
  channel: grpc.ChannelInterface,
  method: UnaryMethod<Req, Res>,
  request: Req,
  options: CallOptions,
): Promise<Res> {
  if (!tracingEnabled()) return send(service, channel, method, request, options);
  const path = method.path.slice(1);
  const slash = path.indexOf('/');
  return inSpan(
    path,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'rpc.system': 'grpc',
        'rpc.service': path.slice(0, slash),
        'rpc.method': path.slice(slash + 1),
        'server.address': channel.getTarget(),
      },
    },
    async (span) => {
      try {
        const res = await send(service, channel, method, request, options);
        span?.setAttribute('rpc.grpc.status_code', grpc.status.OK);
        return res;
      } catch (err) {
        // inSpan records the failure itself; the status code is the one the error came back as.
        span?.setAttribute('rpc.grpc.status_code', ERROR_TABLE[toAppError(err).code].grpc);
        throw err;
      }
    },
  );
}

function send<Req, Res>(
  service: string,
  channel: grpc.ChannelInterface,
  method: UnaryMethod<Req, Res>,
  request: Req,
  options: CallOptions,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    let payload: Buffer;
    try {
      payload = method.requestSerialize(request);
    } catch (err) {
      reject(AppError.internal('Internal error', err));
      return;
    }
    const metadata = new grpc.Metadata();
    metadata.set(REQUEST_ID_HEADER, options.requestId);
    metadata.set(INTERNAL_TOKEN_HEADER, options.internalToken);
    // The client span's context (W3C traceparent), so the service's span joins this trace.
    injectTraceContext((key, value) => metadata.set(key, value));
    // A channel closed by this process's stop throws ("Channel has been shut down"): said as what it is,
    // so that work in flight (an export's run) is handed back rather than failed for good.
    if (channel.getConnectivityState(false) === grpc.connectivityState.SHUTDOWN) {
      reject(AppError.unavailable(`The ${service} service cannot be called: this process is stopping`));
      return;
    }
    const call = channel.createCall(method.path, Date.now() + options.deadlineMs, null, null, grpc.propagate.DEFAULTS);
    let response: Res | undefined;
    let parseError: unknown;
    call.start(metadata, {
      onReceiveMetadata() {},
      onReceiveMessage(bytes: Buffer) {
        if (response !== undefined || parseError !== undefined) {
          call.cancelWithStatus(grpc.status.UNIMPLEMENTED, 'Too many responses received');
          return;
        }
        try {
          response = method.responseDeserialize(bytes);
        } catch (err) {
          parseError = err;
          call.cancelWithStatus(grpc.status.INTERNAL, 'Response message parsing error');
        }
      },
      onReceiveStatus(status: grpc.StatusObject) {
        if (parseError !== undefined) reject(AppError.internal('Internal error', parseError));
        else if (status.code !== grpc.status.OK) reject(fromServiceError(status, service));
        else if (response === undefined) reject(fromServiceError({ code: grpc.status.INTERNAL }, service));
        else resolve(response);
      },
    });
    const signal = options.signal;
    if (signal) {
      const cancel = () => call.cancelWithStatus(grpc.status.CANCELLED, 'Cancelled by the caller');
      if (signal.aborted) cancel();
      else signal.addEventListener('abort', cancel, { once: true });
    }
    call.startRead();
    call.sendMessageWithContext({}, payload);
    call.halfClose();
  });
}

/** What a client-streaming call needs of a generated method definition. */
export interface ClientStreamMethod<Req, Res> {
  path: string;
  requestSerialize: (value: Req) => Buffer;
  responseDeserialize: (bytes: Buffer) => Res;
}

/**
 * A call whose client streams (an upload's body): the messages are written as `messages` yields them,
 * each waiting for the transport to take the last (HTTP/2 flow control), so a slow service slows the
 * reading of the source instead of filling memory. A source that throws cancels the call and rejects with
 * its own error; any failure is an AppError, as for unary calls.
 */
export function callClientStream<Req, Res>(
  service: string,
  client: grpc.Client,
  method: ClientStreamMethod<Req, Res>,
  messages: AsyncIterable<Req>,
  options: CallOptions,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const metadata = new grpc.Metadata();
    metadata.set(REQUEST_ID_HEADER, options.requestId);
    metadata.set(INTERNAL_TOKEN_HEADER, options.internalToken);
    injectTraceContext((key, value) => metadata.set(key, value));
    if (client.getChannel().getConnectivityState(false) === grpc.connectivityState.SHUTDOWN) {
      reject(AppError.unavailable(`The ${service} service cannot be called: this process is stopping`));
      return;
    }
    let sourceFailed: unknown;
    // Once the call has its answer (or failed), the source is not read any further: a refusal on the
    // header must not go on pulling the rest of an upload's body.
    let settled = false;
    let wake: (() => void) | undefined;
    const signal = options.signal;
    const call = client.makeClientStreamRequest<Req, Res>(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      metadata,
      { deadline: Date.now() + options.deadlineMs },
      (err, res) => {
        settled = true;
        wake?.();
        // Listened to until the answer, not until the body is sent: a load after the last byte is
        // cancelled too when the caller goes away.
        signal?.removeEventListener('abort', cancel);
        // The caller's own cancellation is said as the caller's reason (not as a service away, nor as the
        // source's error that the same cancellation caused).
        if (signal?.aborted) reject(abortReason(signal));
        else if (sourceFailed !== undefined) reject(toAppError(sourceFailed));
        else if (err) reject(fromServiceError(err, service));
        else if (res === undefined) reject(fromServiceError({ code: grpc.status.INTERNAL }, service));
        else resolve(res);
      },
    );
    function cancel() {
      call.cancel();
    }
    if (signal?.aborted) cancel();
    else signal?.addEventListener('abort', cancel, { once: true });
    void (async () => {
      try {
        for await (const message of messages) {
          if (settled) break;
          if (!call.write(message) && !settled)
            await new Promise<void>((r) => {
              wake = r;
              call.once('drain', r);
            });
          wake = undefined;
          if (settled) break;
        }
        if (!settled) call.end();
      } catch (err) {
        if (!settled) {
          sourceFailed = err;
          call.cancel();
        }
      }
    })();
  });
}

/** Bytes either side of a connection may send before the other acknowledges (see CLIENT_OPTIONS). */
export const FLOW_CONTROL_WINDOW = 16 * 1024 * 1024;

export const CLIENT_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
  'grpc.keepalive_time_ms': 30000,
  // HTTP/2's default 64 KB window makes a large answer (a crosstab's HTML) wait on a WINDOW_UPDATE per
  // 64 KB; a window as large as the biggest message lets it flow in one go.
  'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW,
  // Calls spread over every address the name resolves to (the pods of a headless Service) rather than
  // all riding the first one (pick_first, grpc-js's default). One address: the same single connection.
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  // The policy is ours: no TXT record in DNS may replace it.
  'grpc.service_config_disable_resolution': 1,
};

/**
 * The target a client dials for a configured HOST:PORT: grpc-js's DNS resolver, named explicitly, so
 * that every address it returns is balanced over, and a host that happens to be spelled like a
 * resolver scheme (`unix:`, `ipv4:`...) is still read as a host.
 */
export function dialTarget(hostPort: string): string {
  return `dns:///${hostPort}`;
}
