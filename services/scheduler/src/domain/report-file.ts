import type { ReportOutput } from '../ports/report-runner.port';

const EXTENSIONS: Record<string, string> = {
  'text/html': 'html',
  'application/json': 'json',
  'text/csv': 'csv',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'image/png': 'png',
  'image/svg+xml': 'svg',
  'application/pdf': 'pdf',
  'application/vnd.apache.parquet': 'parquet',
  'application/jsonl': 'jsonl',
};

const BASE64_TYPES = new Set([
  'image/png',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/pdf',
  'application/vnd.apache.parquet',
]);

/** The output as the file a person opens: the bytes the API's base64 or text stands for. */
export function reportFile(output: ReportOutput, runAt: Date): { filename: string; content: Buffer } {
  const content = BASE64_TYPES.has(output.contentType)
    ? Buffer.from(String(output.data), 'base64')
    : typeof output.data === 'string'
      ? Buffer.from(output.data, 'utf8')
      : Buffer.from(JSON.stringify(output.data, null, 2), 'utf8');
  // A name any mail client and file system accepts: letters, digits, dot, dash and underscore.
  const base =
    output.name
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'report';
  const stamp = runAt.toISOString().slice(0, 16).replace(/[:T]/g, '-');
  return { filename: `${base}-${stamp}.${EXTENSIONS[output.contentType] ?? 'bin'}`, content };
}
