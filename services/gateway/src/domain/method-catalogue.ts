import type { Scope } from '@quarry/metadata-store';

/** SPEC.md "Method catalogue": the scope each method needs. */
export const METHOD_SCOPES = {
  'QUERIES.EXECUTE': 'query:execute',
  'INDEXES.FIND': 'indexes:read',
  'CROSSTAB.EXECUTE': 'query:execute',
  'REPORTS.FIND': 'reports:read',
  'REPORTS.METADATA': 'reports:read',
} as const satisfies Record<string, Scope>;

export type MethodName = keyof typeof METHOD_SCOPES;

/** Methods that may save their execution as a report, which also needs reports:write. */
export const SAVING_METHODS: ReadonlySet<MethodName> = new Set(['QUERIES.EXECUTE', 'CROSSTAB.EXECUTE']);

export function isMethodName(value: string): value is MethodName {
  return Object.prototype.hasOwnProperty.call(METHOD_SCOPES, value);
}
