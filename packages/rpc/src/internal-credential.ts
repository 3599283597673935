import { createHash, timingSafeEqual } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { AppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import { toServiceError } from './grpc-errors';

/** The metadata key carrying the deployment's internal credential on every call to a service. */
export const INTERNAL_TOKEN_HEADER = 'x-quarry-internal-token';

/** mTLS material as PEM text (read once at start by the config). */
export interface GrpcTls {
  ca: string;
  cert: string;
  key: string;
}

/** What makes a call trusted between Quarry's processes: the shared credential, and mTLS when configured. */
export interface GrpcTrust {
  internalToken: string;
  tls: GrpcTls | undefined;
}

/** Client certificates are required: with mTLS on, a peer without one does not get past the handshake. */
export function serverCredentials(tls: GrpcTls | undefined): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(
    Buffer.from(tls.ca),
    [{ cert_chain: Buffer.from(tls.cert), private_key: Buffer.from(tls.key) }],
    true,
  );
}

export function channelCredentials(tls: GrpcTls | undefined): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(Buffer.from(tls.ca), Buffer.from(tls.key), Buffer.from(tls.cert));
}

const digest = (value: string | Buffer) => createHash('sha256').update(value).digest();

/**
 * Whether call metadata carries exactly the expected credential. Both sides are hashed first so the
 * constant-time comparison sees equal lengths and the token's length leaks nothing either; a repeated
 * header is refused rather than guessed at.
 */
export function makeCredentialCheck(expected: string): (metadata: grpc.Metadata) => boolean {
  const want = digest(expected);
  return (metadata) => {
    const sent = metadata.get(INTERNAL_TOKEN_HEADER);
    if (sent.length !== 1) return false;
    const [value] = sent;
    return timingSafeEqual(digest(value!), want);
  };
}

const REFUSED = 'The internal credential is missing or wrong: services accept calls from the gateway only';

/**
 * Puts the credential check in front of every handler of a service implementation, before anything of
 * the request is read. A method whose client streams (an upload) is called as a unary one is, with the
 * metadata first; one that streams its answer would not be guarded, so it is refused at start.
 */
export function requireInternalCredential(
  definition: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
  expected: string,
  log: Logger,
): grpc.UntypedServiceImplementation {
  if (expected.length === 0) throw new Error('an empty internal credential would let anyone in');
  for (const [name, method] of Object.entries(definition)) {
    if (method.responseStream)
      throw new Error(
        `${name} streams its answer: the internal credential check covers unary and client-streaming methods only`,
      );
  }
  const accepts = makeCredentialCheck(expected);
  const guarded: grpc.UntypedServiceImplementation = {};
  for (const [rpc, handler] of Object.entries(implementation)) {
    const unaryHandler = handler as grpc.handleUnaryCall<unknown, unknown>;
    guarded[rpc] = ((call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      if (accepts(call.metadata)) {
        unaryHandler(call, callback);
        return;
      }
      // The peer is logged, not the value sent: it may be a near miss of the real one.
      log.warn({ rpc, peer: call.getPeer() }, 'gRPC call refused: internal credential missing or wrong');
      callback(toServiceError(new AppError('UNAUTHENTICATED', REFUSED)), null);
    }) as grpc.UntypedHandleCall;
  }
  return guarded;
}
