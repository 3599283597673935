import { METHODS, type MethodName } from '@quarry/contract';
import type { Scope } from '@quarry/metadata-store';

export { isMethodName, type MethodName } from '@quarry/contract';

/** The scope each method needs (the contract's catalogue). */
export function scopeOf(method: MethodName): Scope {
  return METHODS[method].scope;
}

/** Whether the method may save its execution as a report, which also needs reports:write. */
export function savesReports(method: MethodName): boolean {
  return METHODS[method].saves;
}

/** A second scope the method needs (REPORTS.EXECUTE runs a query, so query:execute too). */
export function alsoNeededScope(method: MethodName): Scope | undefined {
  return (METHODS[method] as { alsoNeeds?: Scope }).alsoNeeds;
}
