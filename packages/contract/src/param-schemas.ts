import type { z } from 'zod';
import type { crosstabExecuteParams } from './params/crosstab-params';
import type { indexesFindParams, queriesExecuteParams, queriesReplayParams } from './params/query-params';
import type {
  reportsDeleteParams,
  reportsExecuteParams,
  reportsFindParams,
  reportsMetadataParams,
  reportsUpdateParams,
} from './params/report-params';
import type { reportsScheduleParams, reportsSchedulesParams, reportsUnscheduleParams } from './params/schedule-params';
import type { saveReportParam } from './params/shared-params';
import type { tokensEmbedParams, tokensRevokeEmbedParams, tokensWhoamiParams } from './params/token-params';

/*
 * The JSON shapes of each method's params (docs/api.md, generated from these schemas). The contract owns types, ranges
 * and defaults; services own what needs data (does the index or field exist, does the query parse).
 * Every string has a length cap, so a hostile megabyte is a fast 400 at the gateway instead of travelling
 * to a service.
 *
 * Messages say `{param}` where the parameter goes: parseParams puts the exact path there
 * (`sort[2].field`), which no message written per schema can know. Descriptions and defaults (`.meta`)
 * are what the OpenRPC document shows; the defaults are applied by the gateway, not by zod, so that a
 * saved report records what the caller sent.
 */

export { CROSS, PARAM } from './params/param-builders';
export { saveReportParam } from './params/shared-params';
export {
  parameterDeclaration,
  parameterDeclarations,
  parameterSettings,
  type ParameterDeclaration,
  type ParameterSetting,
  type ParameterSettings,
} from './params/report-parameter-params';
export { indexesFindParams, queriesExecuteParams, queriesReplayParams } from './params/query-params';
export { headerNamedTotals, resolveChartTotals, totalDisplayName } from './params/crosstab-parts';
export { crosstabExecuteParams } from './params/crosstab-params';
export {
  reportsDeleteParams,
  reportsExecuteParams,
  reportsFindParams,
  reportsMetadataParams,
  reportsUpdateParams,
} from './params/report-params';
export { reportsScheduleParams, reportsSchedulesParams, reportsUnscheduleParams } from './params/schedule-params';
export { tokensEmbedParams, tokensRevokeEmbedParams, tokensWhoamiParams } from './params/token-params';

export type QueriesExecuteParams = z.input<typeof queriesExecuteParams>;
export type QueriesReplayParams = z.input<typeof queriesReplayParams>;
export type TokensEmbedParams = z.input<typeof tokensEmbedParams>;
export type TokensRevokeEmbedParams = z.input<typeof tokensRevokeEmbedParams>;
export type TokensWhoamiParams = z.input<typeof tokensWhoamiParams>;
export type IndexesFindParams = z.input<typeof indexesFindParams>;
export type CrosstabExecuteParams = z.input<typeof crosstabExecuteParams>;
export type ReportsFindParams = z.input<typeof reportsFindParams>;
export type ReportsMetadataParams = z.input<typeof reportsMetadataParams>;
export type ReportsScheduleParams = z.input<typeof reportsScheduleParams>;
export type ReportsSchedulesParams = z.input<typeof reportsSchedulesParams>;
export type ReportsUnscheduleParams = z.input<typeof reportsUnscheduleParams>;
export type ReportsExecuteParams = z.input<typeof reportsExecuteParams>;
export type ReportsUpdateParams = z.input<typeof reportsUpdateParams>;
export type ReportsDeleteParams = z.input<typeof reportsDeleteParams>;
export type SaveReportParam = z.input<typeof saveReportParam>;
