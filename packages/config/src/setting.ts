import { z } from 'zod';

/** Who reads a setting: a target (QUARRY_TARGET), the scheduler beside the gateway, or the `quarry` CLI. */
export type Reader =
  | 'every process'
  | 'gateway'
  | 'scheduler'
  | 'query'
  | 'crosstab'
  | 'chart'
  | 'chart-worker'
  | 'reports'
  | 'ingest'
  | 'CLI';

/** What the settings table of docs/configuration.md says of a setting, kept beside its rule. */
export interface SettingDoc {
  /** What it does, in Markdown; empty for a setting documented in another's row (`rowOf`). */
  doc: string;
  /** How the default reads; absent: the rule's default in backticks, or "unset" when it has none. */
  default?: string;
  readBy: readonly Reader[];
  /** Shown in this other setting's row: a pair read together (MONGODB_URL, MONGODB_DB). */
  rowOf?: string;
}

/** The documentation of every setting, by its rule: docs/configuration.md's table is written from it. */
export const settingDocs = z.registry<SettingDoc>();

/** A setting: its rule (zod), and beside it what it does, its default and who reads it. */
export function setting<S extends z.ZodType>(schema: S, doc: Omit<SettingDoc, 'rowOf'>): S {
  settingDocs.add(schema as z.ZodType, doc);
  return schema;
}

/** A setting documented in the row of `rowOf`, its partner (a value and its _FILE, a URL and its database). */
export function partOf<S extends z.ZodType>(
  rowOf: string,
  schema: S,
  doc: { readBy: readonly Reader[]; default?: string },
): S {
  settingDocs.add(schema as z.ZodType, { doc: '', ...doc, rowOf });
  return schema;
}

/** Settings read together, under one heading of the table. */
export interface SettingGroup<Shape extends Record<string, z.ZodType>> {
  title: string;
  shape: Shape;
}

export function settingGroup<Shape extends Record<string, z.ZodType>>(
  title: string,
  shape: Shape,
): SettingGroup<Shape> {
  return { title, shape };
}
