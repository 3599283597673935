import { words } from '@quarry/query-language';

/** The text a report is found by: the words of its name and description, lower-cased, space-separated. */
export function searchText(name: string, description: string): string {
  return ` ${words(`${name} ${description}`).join(' ')} `;
}
