import * as grpc from '@grpc/grpc-js';
import { fromServiceError } from './grpc-errors';
import { REQUEST_ID_HEADER } from './request-id';

export interface CallOptions {
  requestId: string;
  deadlineMs: number;
}

/** Promise wrapper over a generated unary method: request id in metadata, deadline, AppError on failure. */
export function callUnary<Res>(
  service: string,
  invoke: (metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<Res>) => grpc.ClientUnaryCall,
  options: CallOptions,
): Promise<Res> {
  const metadata = new grpc.Metadata();
  metadata.set(REQUEST_ID_HEADER, options.requestId);
  return new Promise((resolve, reject) => {
    invoke(metadata, { deadline: Date.now() + options.deadlineMs }, (err, value) => {
      if (err) reject(fromServiceError(err, service));
      else if (value === undefined) reject(fromServiceError({ code: grpc.status.INTERNAL }, service));
      else resolve(value);
    });
  });
}

export const CLIENT_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
  'grpc.keepalive_time_ms': 30000,
};
