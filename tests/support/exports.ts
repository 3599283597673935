import { Readable } from 'node:stream';
import { parse as parseStream } from 'csv-parse';
import { rawRequest, rpcClient } from './http';
import type { Identity } from './identities';

export interface ExportStatus {
  state: string;
  rowsWritten: number;
  bytes: number;
  error?: string;
  expiresAt?: string;
}

/** EXPORTS.START, EXPORTS.STATUS and GET /exports/<id> over HTTP, against whichever server `baseUrl` names now. */
export function exportCalls(baseUrl: () => string) {
  const call = (who: Identity, method: string, params: unknown) => rpcClient(baseUrl(), who.token).call(method, params);
  const download = (who: Identity, id: string) =>
    rawRequest(baseUrl(), { method: 'GET', path: `/exports/${id}`, headers: { Authorization: `Bearer ${who.token}` } });

  async function start(who: Identity, params: Record<string, unknown>): Promise<string> {
    const res = await call(who, 'EXPORTS.START', params);
    const body = res.json as { result?: { data: { exportId: string } }; error?: unknown };
    if (!body.result) throw new Error(JSON.stringify(body.error));
    return body.result.data.exportId;
  }

  async function status(who: Identity, exportId: string): Promise<ExportStatus> {
    const body = (await call(who, 'EXPORTS.STATUS', { exportId })).json as { result?: { data: ExportStatus } };
    if (!body.result) throw new Error(JSON.stringify(body));
    return body.result.data;
  }

  /** The export's settled status; `timeoutMs` is a hang guard for a busy machine, not a target. */
  async function finished(who: Identity, exportId: string, timeoutMs = 180_000): Promise<ExportStatus> {
    for (const end = Date.now() + timeoutMs; Date.now() < end;) {
      const s = await status(who, exportId);
      if (s.state === 'done' || s.state === 'failed') return s;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(
      `the export did not finish in ${timeoutMs / 1000} s: ${JSON.stringify(await status(who, exportId))}`,
    );
  }

  /**
   * The first status that says the export is running with rows written (for a workbook: the conversion is
   * under way); one that settles first, or none within `timeoutMs`, throws. The bound is a hang guard: a
   * large export stages its records first, for minutes on a loaded machine.
   */
  async function underWay(who: Identity, exportId: string, pollMs = 20, timeoutMs = 300_000): Promise<ExportStatus> {
    for (const end = Date.now() + timeoutMs; Date.now() < end;) {
      const s = await status(who, exportId);
      if (s.state === 'running' && s.rowsWritten > 0) return s;
      if (s.state !== 'queued' && s.state !== 'running') throw new Error(JSON.stringify(s));
      await new Promise((r) => setTimeout(r, pollMs));
    }
    throw new Error('the export did not get under way');
  }

  /** The records of a downloaded CSV, counted by a streaming parser: a file of millions is never held whole. */
  async function countCsvRecords(who: Identity, id: string): Promise<number> {
    const res = await fetch(new URL(`/exports/${id}`, baseUrl()), {
      headers: { Authorization: `Bearer ${who.token}` },
    });
    if (res.status !== 200) throw new Error(`download: HTTP ${res.status}`);
    return countCsv(Readable.fromWeb(res.body as never));
  }

  return { call, download, start, status, finished, underWay, countCsvRecords };
}

/** The records of a CSV stream (with its header), parsed as they come. */
export async function countCsv(stream: NodeJS.ReadableStream): Promise<number> {
  let n = 0;
  for await (const row of stream.pipe(parseStream({ columns: true }))) if (row) n++;
  return n;
}
