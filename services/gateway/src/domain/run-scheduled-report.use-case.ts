import { randomUUID } from 'node:crypto';
import { AppError } from '@quarry/errors';
import type { AlertCondition, AlertOutcome, ReportsMetadataResult, ScheduleFormat } from '@quarry/contract';
import { RawJson } from '../ports/raw-json';
import type {
  ScheduledDeliveryAudit,
  ScheduledOutput,
  ScheduledReportRunner,
  ScheduleOwner,
} from '../ports/schedules.port';
import type { AuditRecorder } from './audit-recorder';
import type { AuthenticateUseCase } from './authenticate.use-case';
import type { DispatchMethodUseCase } from './dispatch-method.use-case';
import { SEARCH_DELIVERY_FORMATS, type DeliveryOutputs } from './delivery-outputs';
import { callerOf, type Principal } from './principal';
import { applyParameters } from './report-parameters';
import { alertTotal, evaluateAlert } from './schedule-alert';

/**
 * REPORTS.EXECUTE's params that run the saved report in `format` (its parameters at their defaults), or a
 * 400 naming format when the report has no such output, or guid when it requires a parameter: a search
 * report is its records (csv, xlsx, parquet, jsonl, json), png and svg need a report saved as a chart, and
 * a chart report's table is what its chart is drawn from. A search runs for one record here: its checks
 * and fields; the delivery's records are the export writer's.
 */
export function executeParams(report: ReportsMetadataResult, format: ScheduleFormat): Record<string, unknown> {
  const guid = report.guid;
  // A delivery runs with the parameters' defaults: one that must be given has none to run with.
  const required = report.parameters.find((p) => p.required);
  if (required)
    throw AppError.invalid(
      `guid: the report requires the parameter ${JSON.stringify(required.name)}, and a schedule runs with the parameters' defaults`,
    );
  if (report.method === 'QUERIES.EXECUTE') {
    if (!(SEARCH_DELIVERY_FORMATS as readonly string[]).includes(format))
      throw AppError.invalid(
        `format: a search report is delivered as ${SEARCH_DELIVERY_FORMATS.join(', ')}, not ${format}`,
      );
    return { guid, pageSize: 1 };
  }
  if (format === 'parquet' || format === 'jsonl')
    throw AppError.invalid(
      `format: ${format} is for search reports; a crosstab report is delivered as html, csv, xlsx, json, pdf, png or svg`,
    );
  if (format === 'png' || format === 'svg') {
    if (typeof report.params.chartType !== 'string')
      throw AppError.invalid(`format: ${format} needs a report saved as a chart (with chartType)`);
    return { guid, imageFormat: format };
  }
  return { guid, format };
}

/** What `quarry audit` shows as the method of a scheduled delivery's try. */
export const DELIVERY_AUDIT_METHOD = '(delivery)';

/** JSON text the query service produced, parsed for a webhook body or an attachment. */
function plain(data: unknown): unknown {
  if (data === null || typeof data !== 'object') return data;
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, v instanceof RawJson ? (JSON.parse(v.text) as unknown) : v]),
  );
}

/**
 * Runs a saved report for a scheduled delivery as the schedule's owner, with the rights that owner's
 * token has now: every check a request gets (revoked, expired, owner removed, scopes, realms).
 */
export class RunScheduledReportUseCase implements ScheduledReportRunner {
  constructor(
    private readonly authenticate: AuthenticateUseCase,
    private readonly dispatch: DispatchMethodUseCase,
    private readonly trail?: AuditRecorder,
    /** Absent (no exports folder): search reports cannot be delivered, and outputs are never linked. */
    private readonly outputs?: DeliveryOutputs,
  ) {}

  /**
   * A delivery in the audit trail: method "(delivery)", the owner, the outcome and rows, and in the
   * request column the schedule, where it went and the report version (`sch_…/host/v3`).
   */
  audit(r: ScheduledDeliveryAudit): void {
    this.trail?.record({
      time: new Date().toISOString(),
      userId: r.owner.userId,
      userName: r.owner.userName,
      tokenId: null,
      embedId: null,
      method: DELIVERY_AUDIT_METHOD,
      index: null,
      paramsDigest: null,
      outcome: r.outcome,
      durationMs: r.durationMs,
      returned: r.rows,
      requestId: `${r.scheduleId}/${r.destination}/${r.version === null ? '-' : `v${r.version}`}`,
    });
  }

  private async principal(owner: ScheduleOwner): Promise<Principal> {
    const p = await this.authenticate.fromTokenHash(owner.tokenHash);
    if (p.user.id !== owner.userId) throw new AppError('UNAUTHENTICATED', 'Token owner could not be resolved');
    return p;
  }

  private async metadata(p: Principal, guid: string, requestId: string): Promise<ReportsMetadataResult> {
    const { data } = await this.dispatch.call(p, 'REPORTS.METADATA', { guid }, { requestId });
    return data as ReportsMetadataResult;
  }

  async check(owner: ScheduleOwner, guid: string, format: ScheduleFormat, when?: AlertCondition): Promise<void> {
    const p = await this.principal(owner);
    const report = await this.metadata(p, guid, `schedule-${randomUUID()}`);
    if (when) alertTotal(report, when);
    executeParams(report, format);
  }

  /** The alert tested on the report's JSON table, run as the delivery runs it. */
  private async alert(
    p: Principal,
    report: ReportsMetadataResult,
    when: AlertCondition,
    requestId: string,
  ): Promise<{ outcome: AlertOutcome; version: number }> {
    alertTotal(report, when);
    const { data } = await this.dispatch.call(
      p,
      'REPORTS.EXECUTE',
      { ...executeParams(report, 'json') },
      { requestId },
    );
    const ran = plain(data) as { data: unknown; report: { version: number } };
    const table = typeof ran.data === 'string' ? (JSON.parse(ran.data) as unknown) : ran.data;
    return {
      outcome: evaluateAlert(report, when, table as Parameters<typeof evaluateAlert>[2]),
      version: ran.report.version,
    };
  }

  /** Through REPORTS.EXECUTE as the owner's token would call it: the same scopes, realms and rules. */
  async run(
    owner: ScheduleOwner,
    guid: string,
    format: ScheduleFormat,
    when?: AlertCondition,
  ): Promise<ScheduledOutput> {
    const requestId = `delivery-${randomUUID()}`;
    const p = await this.principal(owner);
    const report = await this.metadata(p, guid, requestId);
    let alert: AlertOutcome | undefined;
    if (when) {
      const tested = await this.alert(p, report, when, requestId);
      alert = tested.outcome;
      // Nothing is delivered: the asked format need not be produced.
      if (!alert.holds)
        return { name: report.name, version: tested.version, contentType: '', data: null, rows: null, alert };
    }
    const { data, returned } = await this.dispatch.call(p, 'REPORTS.EXECUTE', executeParams(report, format), {
      requestId,
    });
    const {
      report: ran,
      indexVersion: _ran,
      ...out
    } = plain(data) as Record<string, unknown> & {
      report: { version: number };
      indexVersion: number;
    };
    const base = { name: report.name, version: ran.version, rows: returned ?? null, ...(alert ? { alert } : {}) };
    if (report.method === 'QUERIES.EXECUTE') {
      if (!this.outputs)
        throw AppError.unavailable('Search deliveries need the exports folder, which this gateway lacks');
      const fields = (out.fields as Array<{ name: string }>).map((f) => f.name);
      // The records the report's query (with its parameters' defaults) selects, as REPORTS.EXECUTE runs it.
      const query = applyParameters(
        typeof report.params.query === 'string' ? report.params.query : undefined,
        report.parameters,
        undefined,
      );
      const { rows, ...delivered } = await this.outputs.search(
        callerOf(p),
        query !== undefined ? { ...report.params, query } : report.params,
        fields,
        { name: report.name, index: report.index },
        format,
        { requestId },
        { tokenId: p.tokenId, guid },
      );
      return { ...base, rows, ...delivered };
    }
    const contentType = String(out.contentType);
    if (!this.outputs) return { ...base, contentType, data: out.data };
    return {
      ...base,
      ...(await this.outputs.bounded(report.name, format, contentType, out.data, { tokenId: p.tokenId, guid })),
    };
  }
}
