import type { IndexesFindResult, QuarryClient } from '@quarry/client';

export type IndexInfo = IndexesFindResult['indexes'][number];
export type Field = IndexInfo['fields'][number];

/** What the panels share: the connection, and the indexes it may read. */
export const app: { client?: QuarryClient; token?: string; indexes: IndexInfo[]; chartTypes: string[] } = {
  indexes: [],
  chartTypes: [],
};

export function indexNamed(name: string): IndexInfo | undefined {
  return app.indexes.find((i) => i.name === name);
}
