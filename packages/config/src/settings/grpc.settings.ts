import { z } from 'zod';
import { partOf, setting, settingGroup, type Reader } from '../setting';
import { durationMs, filePath, hostPort, internalToken } from '../setting-rules';

const SERVICES: Reader[] = ['query', 'crosstab', 'chart', 'reports', 'ingest'];
const PARTIES: Reader[] = ['gateway', ...SERVICES];

export const grpcSettings = settingGroup('Between processes (gRPC)', {
  QUARRY_QUERY_ADDR: setting(hostPort.optional(), {
    doc: 'where each gRPC service listens / is reached',
    default: '`127.0.0.1:50051`…`50055` (hosted with the gateway: a free loopback port)',
    readBy: PARTIES,
  }),
  QUARRY_CROSSTAB_ADDR: partOf('QUARRY_QUERY_ADDR', hostPort.optional(), { readBy: ['gateway', 'crosstab'] }),
  QUARRY_CHART_ADDR: partOf('QUARRY_QUERY_ADDR', hostPort.optional(), { readBy: ['gateway', 'chart'] }),
  QUARRY_REPORTS_ADDR: partOf('QUARRY_QUERY_ADDR', hostPort.optional(), { readBy: ['gateway', 'reports'] }),
  QUARRY_INGEST_ADDR: partOf('QUARRY_QUERY_ADDR', hostPort.optional(), { readBy: ['gateway', 'ingest'] }),
  QUARRY_GRPC_LISTEN_HOST: setting(z.string().min(1).optional(), {
    doc: 'bind host for services (`0.0.0.0` in containers)',
    default: "the address's host",
    readBy: SERVICES,
  }),
  QUARRY_GRPC_DEADLINE_MS: setting(durationMs.default(30000), {
    doc: 'deadline of gateway → service calls',
    readBy: ['gateway'],
  }),
  QUARRY_INTERNAL_TOKEN: setting(internalToken.optional(), {
    doc:
      'credential every gateway → service gRPC call carries; services refuse calls without it ' +
      '(`UNAUTHENTICATED`; the gateway answers 503). ≥ 32 printable ASCII chars, the same in every process; ' +
      '**required** whenever the gateway and a service run in different processes (e.g. `openssl rand -base64 32`)',
    default: 'random per process when one process runs the gateway and every service',
    readBy: PARTIES,
  }),
  QUARRY_INTERNAL_TOKEN_FILE: setting(filePath.optional(), {
    doc:
      'read `QUARRY_INTERNAL_TOKEN` from this file instead (docker-compose generates it in `/data/secrets`; not ' +
      'both)',
    readBy: PARTIES,
  }),
  QUARRY_GRPC_TLS_CERT: setting(filePath.optional(), {
    doc:
      'PEM files, all three or none: mTLS between the processes. The certificate serves as both server and ' +
      "client certificate (SANs of the service addresses' hosts, `127.0.0.1` for services hosted with the " +
      'gateway; `serverAuth` and `clientAuth`); peers must present one signed by the CA. Read once at start',
    readBy: PARTIES,
  }),
  QUARRY_GRPC_TLS_KEY: partOf('QUARRY_GRPC_TLS_CERT', filePath.optional(), { readBy: PARTIES }),
  QUARRY_GRPC_TLS_CA: partOf('QUARRY_GRPC_TLS_CERT', filePath.optional(), { readBy: PARTIES }),
  QUARRY_CURSOR_SECRET: setting(z.string().min(32, 'must be at least 32 characters').optional(), {
    doc:
      'HMAC key for pagination cursors (≥ 32 chars; set it when processes on several machines serve one ' +
      'deployment)',
    default: 'a key in the data dir',
    readBy: ['query', 'reports'],
  }),
  QUARRY_CURSOR_SECRET_FILE: setting(filePath.optional(), {
    doc: 'read `QUARRY_CURSOR_SECRET` from this file instead (a mounted secret; trailing newline ignored; not both)',
    readBy: ['query', 'reports'],
  }),
});
