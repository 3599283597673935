export const FIELD_TYPES = ['string', 'integer', 'number', 'boolean', 'date'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const DATE_GRAINS = ['day', 'month', 'year'] as const;
export type DateGrain = (typeof DATE_GRAINS)[number];

export interface FieldDef {
  name: string;
  type: FieldType;
  /** For dates: how a crosstab axis groups them (day unless declared otherwise). */
  grain?: DateGrain;
}

/** Parses a declared type: string, integer, number, boolean, date, or date:day|month|year. */
export function parseDeclaredType(text: string): { type: FieldType; grain?: DateGrain } | null {
  const [type, grain] = text.split(':');
  if (!isFieldType(type)) return null;
  if (grain === undefined) return { type };
  if (type !== 'date' || !(DATE_GRAINS as readonly string[]).includes(grain)) return null;
  return { type, grain: grain as DateGrain };
}

export function isFieldType(value: string): value is FieldType {
  return (FIELD_TYPES as readonly string[]).includes(value);
}

export function isNumeric(type: FieldType): boolean {
  return type === 'integer' || type === 'number';
}

/** Field lookup as users type names: exact first, then case-insensitive when that is unambiguous. */
export class FieldResolver {
  private readonly exact = new Map<string, FieldDef>();
  private readonly folded = new Map<string, FieldDef[]>();

  constructor(readonly fields: readonly FieldDef[]) {
    for (const f of fields) {
      this.exact.set(f.name, f);
      const key = f.name.toLowerCase();
      this.folded.set(key, [...(this.folded.get(key) ?? []), f]);
    }
  }

  find(name: string): FieldDef | undefined {
    const hit = this.exact.get(name);
    if (hit) return hit;
    const folded = this.folded.get(name.toLowerCase());
    return folded && folded.length === 1 ? folded[0] : undefined;
  }

  textFields(): FieldDef[] {
    return this.fields.filter((f) => f.type === 'string');
  }
}
