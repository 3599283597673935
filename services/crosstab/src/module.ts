import type { Logger } from '@quarry/logger';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import type { CrosstabServiceConfig } from './config';
import { crosstabHandlers } from './transport/grpc-crosstab.handlers';

export function createCrosstabModule(config: CrosstabServiceConfig, log: Logger): GrpcServiceModule {
  const moduleLog = log.child({ module: 'crosstab' });
  return new GrpcServiceModule('crosstab', moduleLog, config.listenAddr, config.graceMs, (server) => {
    server.addService(loadQuarryProto().quarry.v1.CrosstabService.service, crosstabHandlers(moduleLog));
  });
}
