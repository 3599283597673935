import { z } from 'zod';
import { envShape, SETTING_GROUPS } from './config.schema';
import { settingDocs, type Reader, type SettingDoc } from './setting';

const READER_ORDER: readonly Reader[] = [
  'every process',
  'gateway',
  'scheduler',
  'query',
  'crosstab',
  'chart',
  'chart-worker',
  'reports',
  'ingest',
  'CLI',
];

/** How a reader reads in the table: targets as QUARRY_TARGET spells them. */
const READER_TEXT: Record<Reader, string> = {
  'every process': 'every process',
  gateway: '`gateway`',
  scheduler: 'scheduler (in the gateway)',
  query: '`query`',
  crosstab: '`crosstab`',
  chart: '`chart`',
  'chart-worker': '`chart-worker`',
  reports: '`reports`',
  ingest: '`ingest`',
  CLI: '`quarry` CLI',
};

type Name = keyof typeof envShape;

/** The documentation of a setting; a setting declared without it is a mistake the table refuses. */
export function settingDoc(name: string): SettingDoc {
  const schema = (envShape as Record<string, z.ZodType>)[name];
  const doc = schema && settingDocs.get(schema);
  if (!doc) throw new Error(`${name} has no documentation: declare it with setting() or partOf()`);
  return doc;
}

/** The default as the table says it: the documented text, else the rule's own default, else "unset". */
function defaultText(name: string, inRowOf: boolean): string | undefined {
  const doc = settingDoc(name);
  if (doc.default !== undefined) return doc.default;
  const schema = (envShape as Record<string, z.ZodType>)[name];
  if (schema instanceof z.ZodDefault) {
    const value: unknown = schema.def.defaultValue;
    if (value === '') return 'empty';
    if (['string', 'number', 'boolean'].includes(typeof value)) return `\`${String(value)}\``;
    throw new Error(`${name}: say in its documentation how its default reads`);
  }
  // A partner with no default of its own adds nothing to its row's "unset".
  return inRowOf ? undefined : 'unset';
}

/** Markdown table cells: pipes and newlines would break the row. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

/** One row: a setting and the partners documented in its row. */
function row(name: string): string {
  const partners = Object.keys(envShape).filter((n) => settingDoc(n).rowOf === name);
  const names = [name, ...partners];
  const defaults = names.map((n, i) => defaultText(n, i > 0)).filter((d): d is string => d !== undefined);
  const readers = new Set(names.flatMap((n) => settingDoc(n).readBy));
  const readBy = READER_ORDER.filter((r) => readers.has(r)).map((r) => READER_TEXT[r]);
  const cells = [names.map((n) => `\`${n}\``).join(', '), defaults.join(', '), readBy.join(', '), settingDoc(name).doc];
  return `| ${cells.map(cell).join(' | ')} |`;
}

/**
 * The settings tables of docs/configuration.md, one per group under its own heading, as Markdown (not yet
 * aligned: the generator formats it with Prettier, as the rest of the page is).
 */
export function settingsTables(): string {
  const out: string[] = [];
  for (const group of SETTING_GROUPS) {
    out.push(`## ${group.title}`, '', '| variable | default | read by | meaning |', '| --- | --- | --- | --- |');
    for (const name of Object.keys(group.shape) as Name[]) {
      const doc = settingDoc(name);
      if (doc.rowOf !== undefined) {
        if (!(doc.rowOf in group.shape)) throw new Error(`${name}: its row, ${doc.rowOf}, is not in "${group.title}"`);
        continue;
      }
      out.push(row(name));
    }
    out.push('');
  }
  return out.join('\n');
}
