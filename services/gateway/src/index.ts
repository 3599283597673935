export { GatewayModule, type GatewayOps } from './module';
export { GatewayCallsModule, type GatewayCalls } from './gateway-calls.module';
export { gatewayConfig, type GatewayConfig } from './config';
export { AUTH_FAILURES } from './domain/authenticate.use-case';
export { createOpsApp, type OpsDeps } from './transport/ops-app';
// A saved report run for an explicit caller (scheduled deliveries run it as the schedule's owner).
export { RunReportUseCase, type ReportRun } from './domain/run-report.use-case';
export { RunSearchUseCase } from './domain/run-search.use-case';
export { RunCrosstabUseCase } from './domain/run-crosstab.use-case';
