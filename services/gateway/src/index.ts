export { GatewayModule, type GatewayOps } from './module';
export { gatewayConfig, type GatewayConfig } from './config';
export { AUTH_FAILURES } from './domain/authenticate.use-case';
export { createOpsApp, type OpsDeps } from './transport/http-app';
