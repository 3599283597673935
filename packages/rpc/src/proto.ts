import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType as QueryProto } from './generated/query';
import type { ProtoGrpcType as CrosstabProto } from './generated/crosstab';
import type { ProtoGrpcType as ChartProto } from './generated/chart';
import type { ProtoGrpcType as ReportsProto } from './generated/reports';
import type { ProtoGrpcType as IngestProto } from './generated/ingest';

/** proto/ at the repository root; the built package sits two levels below it. */
export const PROTO_ROOT = path.resolve(__dirname, '..', '..', '..', 'proto');

const FILES = [
  'quarry/v1/query.proto',
  'quarry/v1/crosstab.proto',
  'quarry/v1/chart.proto',
  'quarry/v1/reports.proto',
  'quarry/v1/ingest.proto',
];

// Must match the flags the type generator runs with (package.json "gen"), or the types lie.
const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
};

export type QuarryProto = QueryProto & CrosstabProto & ChartProto & ReportsProto & IngestProto;

let cached: QuarryProto | undefined;

export function loadQuarryProto(): QuarryProto {
  if (!cached) {
    const definition = protoLoader.loadSync(FILES, LOADER_OPTIONS);
    cached = grpc.loadPackageDefinition(definition) as unknown as QuarryProto;
  }
  return cached;
}
