import { words } from '@quarry/query-language';

/** The text a report is found by: the words of its name and description, lower-cased, space-separated. */
export function searchText(name: string, description: string): string {
  return ` ${words(`${name} ${description}`).join(' ')} `;
}

/**
 * The distinct words a report is found by (name and description, lower-cased): the tokenised field of
 * stores that index each word (MongoDB's multikey index), where a query word is a prefix of one of them.
 */
export function searchWords(name: string, description: string): string[] {
  return [...new Set(words(`${name} ${description}`))];
}
