import type { FieldDef, FieldType } from '@quarry/query-language';
import { AppError } from '@quarry/errors';

/**
 * Checks the source's columns against what the load names (declared types, views, reserved names)
 * and, when appending, against the published version's fields: the columns in that version's order,
 * with its types declared.
 */
export function checkColumns(
  found: Array<{ name: string; type: string }>,
  req: {
    types: Record<string, FieldType>;
    views: Array<{ name: string; field: string }>;
    append?: { fields: FieldDef[] };
  },
  label: string,
): { columns: Array<{ name: string; type: string }>; declared: Record<string, FieldType> } {
  let columns = found;
  if (columns.length === 0) throw AppError.invalid(`${label} has no columns`);
  for (const name of Object.keys(req.types)) {
    if (!columns.some((col) => col.name === name)) throw AppError.invalid(`--type names the unknown field "${name}"`);
  }
  if (columns.some((col) => col.name.startsWith('__')))
    throw AppError.invalid('Field names starting with "__" are reserved');
  const seenViews = new Set<string>(['records']);
  for (const v of req.views) {
    if (!columns.some((col) => col.name === v.field))
      throw AppError.invalid(`View "${v.name}" names the unknown field "${v.field}"`);
    if (seenViews.has(v.name.toLowerCase()))
      throw AppError.invalid(`View name "${v.name}" is used twice (or is the built-in Records)`);
    seenViews.add(v.name.toLowerCase());
  }

  let declared: Record<string, FieldType> = req.types;
  if (req.append) {
    const want = req.append.fields.map((f) => f.name);
    const have = columns.map((col) => col.name);
    const missing = want.filter((n) => !have.includes(n));
    const extra = have.filter((n) => !want.includes(n));
    if (missing.length > 0 || extra.length > 0) {
      throw AppError.invalid(
        `--append needs the fields of the published version; ${label} ${[
          missing.length > 0 ? `lacks ${missing.map((n) => `"${n}"`).join(', ')}` : '',
          extra.length > 0 ? `has ${extra.map((n) => `"${n}"`).join(', ')} it does not` : '',
        ]
          .filter(Boolean)
          .join(' and ')}`,
      );
    }
    // Appended rows take the published types: a value that does not fit is a malformed row.
    declared = Object.fromEntries(req.append.fields.map((f) => [f.name, f.type]));
    columns = want.map((n) => columns.find((col) => col.name === n) ?? { name: n, type: 'VARCHAR' });
  }
  return { columns, declared };
}
