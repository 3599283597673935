import type { Logger } from '@quarry/logger';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import type { QueryServiceConfig } from './config';
import { queryHandlers } from './transport/grpc-query.handlers';

export function createQueryModule(config: QueryServiceConfig, log: Logger): GrpcServiceModule {
  const moduleLog = log.child({ module: 'query' });
  return new GrpcServiceModule('query', moduleLog, config.listenAddr, config.graceMs, (server) => {
    server.addService(loadQuarryProto().quarry.v1.QueryService.service, queryHandlers(moduleLog));
  });
}
