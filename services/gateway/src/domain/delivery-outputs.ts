import type { ScheduleFormat } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { DeliveryFiles, RecordFileConverter } from '../ports/delivery-files.port';
import type { SearchExports } from '../ports/search-exports.port';
import type { Caller, RequestTrace } from '../ports/service-clients.port';
import { readParams } from './method-params';
import type { SignedLinks } from './signed-links';

/** Each output a delivery carries: its file's extension and media type, and whether the API's text is base64. */
export const DELIVERY_TYPES: Record<ScheduleFormat, { ext: string; contentType: string; base64: boolean }> = {
  html: { ext: 'html', contentType: 'text/html', base64: false },
  json: { ext: 'json', contentType: 'application/json', base64: false },
  csv: { ext: 'csv', contentType: 'text/csv', base64: false },
  xlsx: { ext: 'xlsx', contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', base64: true },
  pdf: { ext: 'pdf', contentType: 'application/pdf', base64: true },
  png: { ext: 'png', contentType: 'image/png', base64: true },
  svg: { ext: 'svg', contentType: 'image/svg+xml', base64: false },
  parquet: { ext: 'parquet', contentType: 'application/vnd.apache.parquet', base64: true },
  jsonl: { ext: 'jsonl', contentType: 'application/jsonl', base64: false },
};

/** The media type a link's file is served with, by its extension. */
export function linkedContentType(ext: string): string {
  return Object.values(DELIVERY_TYPES).find((t) => t.ext === ext)?.contentType ?? 'application/octet-stream';
}

/** The formats a saved search is delivered in: every matching record, not a page. */
export const SEARCH_DELIVERY_FORMATS = ['csv', 'xlsx', 'parquet', 'jsonl', 'json'] as const satisfies ScheduleFormat[];

/** On whose behalf a delivery's link opens: the schedule's API token and the report (see LinkedFile). */
export interface LinkGrant {
  tokenId: string;
  guid: string;
}

/** An output as a delivery carries it: the data inline, or a signed link to its file. */
export interface DeliveredOutput {
  contentType: string;
  /** JSON as a value; HTML, CSV, JSON Lines and SVG as text; the binary formats as base64. Null with a link. */
  data: unknown;
  link?: { url: string; expiresAt: string; bytes: number };
}

export interface DeliveryOutputsDeps {
  files: DeliveryFiles;
  converter: RecordFileConverter;
  searches: SearchExports;
  /** Absent: no link key could be had, and an output over the bound fails to deliver, saying so. */
  links: SignedLinks | undefined;
  /** QUARRY_EXPORT_MAX_ROWS */
  maxRows: number;
  /** QUARRY_ATTACHMENT_MAX_BYTES */
  attachmentMaxBytes: number;
  /** QUARRY_SIGNED_LINK_TTL_S */
  linkTtlS: number;
  now?: () => number;
}

/** The file name a person saves: the report's name in safe characters, the run's minute, the extension. */
export function deliveryFileName(name: string, ext: string, at: Date): string {
  const base =
    name
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'report';
  return `${base}-${at.toISOString().slice(0, 16).replace(/[:T]/g, '-')}.${ext}`;
}

/**
 * What a scheduled delivery carries: a saved search's every matching record written by the query
 * service's engine (the export writer), converted where its engine writes no such file; and any output
 * over the attachment bound kept as a file behind a signed link that expires.
 */
export class DeliveryOutputs {
  private readonly now: () => number;

  constructor(private readonly deps: DeliveryOutputsDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** A saved search's records in `format`, as `caller` may read them (realms apply), up to maxRows. */
  async search(
    caller: Caller,
    saved: Record<string, unknown>,
    fields: readonly string[],
    report: { name: string; index: string },
    format: ScheduleFormat,
    trace: RequestTrace,
    grant: LinkGrant,
  ): Promise<DeliveredOutput & { rows: number }> {
    const { files, converter, searches } = this.deps;
    const type = DELIVERY_TYPES[format];
    const req = { search: readParams('QUERIES.EXECUTE', saved).complete };
    const count = await searches.count(caller, req, trace);
    if (count > this.deps.maxRows)
      throw AppError.invalid(
        `format: the search now matches ${count} records, more than QUARRY_EXPORT_MAX_ROWS (${this.deps.maxRows}) a delivery may hold`,
      );
    const out = files.reserve(type.ext);
    const staged = format === 'xlsx' || format === 'json' ? files.reserve('jsonl') : undefined;
    let rows: number;
    try {
      if (!staged) rows = await searches.write(caller, req, format as 'csv' | 'jsonl' | 'parquet', out.path, trace);
      else {
        // The engine writes JSON Lines; a workbook or one JSON array is made from them as they are read.
        rows = await searches.write(caller, req, 'jsonl', staged.path, trace);
        if (format === 'xlsx') await converter.toXlsx(staged.path, out.path, fields, report.index);
        else await converter.toJsonArray(staged.path, out.path);
      }
    } catch (err) {
      await files.remove(out.id, type.ext);
      throw err;
    } finally {
      if (staged) await files.remove(staged.id, 'jsonl');
    }
    return { ...(await this.fromFile(out.id, format, report.name, grant)), rows };
  }

  /** An output the gateway holds (a crosstab's): inline under the bound, else written and linked. */
  async bounded(
    name: string,
    format: ScheduleFormat,
    contentType: string,
    data: unknown,
    grant: LinkGrant,
  ): Promise<DeliveredOutput> {
    const type = DELIVERY_TYPES[format];
    const bytes =
      typeof data !== 'string'
        ? Buffer.from(JSON.stringify(data, null, 2), 'utf8')
        : Buffer.from(data, type.base64 ? 'base64' : 'utf8');
    if (bytes.length <= this.deps.attachmentMaxBytes) return { contentType, data };
    const { id } = this.deps.files.reserve(type.ext);
    await this.deps.files.write(id, type.ext, bytes);
    return { contentType, data: null, link: this.link(id, type.ext, name, bytes.length, grant) };
  }

  /** Removes the files whose links have expired. */
  sweep(): Promise<void> {
    return this.deps.files.sweep(this.deps.linkTtlS * 1000);
  }

  private async fromFile(id: string, format: ScheduleFormat, name: string, grant: LinkGrant): Promise<DeliveredOutput> {
    const { files } = this.deps;
    const type = DELIVERY_TYPES[format];
    const bytes = await files.size(id, type.ext);
    if (bytes > this.deps.attachmentMaxBytes)
      return { contentType: type.contentType, data: null, link: this.link(id, type.ext, name, bytes, grant) };
    const content = await files.read(id, type.ext);
    await files.remove(id, type.ext);
    const text = content.toString(type.base64 ? 'base64' : 'utf8');
    return { contentType: type.contentType, data: format === 'json' ? (JSON.parse(text) as unknown) : text };
  }

  private link(id: string, ext: string, name: string, bytes: number, grant: LinkGrant): DeliveredOutput['link'] {
    const links = this.deps.links;
    if (!links) {
      void this.deps.files.remove(id, ext);
      throw AppError.unavailable(
        `The output (${bytes} bytes) is over QUARRY_ATTACHMENT_MAX_BYTES and no link key is available (set QUARRY_LINK_KEY)`,
      );
    }
    const expires = Math.floor(this.now() / 1000) + this.deps.linkTtlS;
    const filename = deliveryFileName(name, ext, new Date(this.now()));
    return {
      url: links.url({ id, ext, filename, expires, ...grant }),
      expiresAt: new Date(expires * 1000).toISOString(),
      bytes,
    };
  }
}
