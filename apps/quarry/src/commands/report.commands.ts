import fs from 'node:fs';
import { listing } from './listing';
import readline from 'node:readline';
import type { Config } from '@quarry/config';
import { AppError } from '@quarry/errors';
import type { MetadataStore } from '@quarry/metadata-store';
import {
  openReportStore,
  RestoreReportUseCase,
  trashLimit,
  type ReportRecord,
  type ReportStore,
} from '@quarry/reports';

async function withReports<T>(config: Config, fn: (store: ReportStore) => Promise<T>): Promise<T> {
  const store = await openReportStore({ dataDir: config.dataDir, mongo: config.mongo });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Every report (or one user's), newest first, paging through the store. */
async function* allReports(store: ReportStore, ownerName?: string): AsyncGenerator<ReportRecord> {
  let beforeSeq: number | undefined;
  for (;;) {
    const page = await store.find({ viewerId: undefined, words: [], types: [], beforeSeq, limit: 500, ownerName });
    for (const r of page) yield r;
    if (page.length < 500) return;
    beforeSeq = page[page.length - 1].seq;
  }
}

export async function listReports(config: Config, user?: string, trash = false): Promise<string> {
  return withReports(config, async (store) => {
    const lines: string[][] = [];
    if (trash) {
      // Only what can still come back.
      await store.purgeTrash(trashLimit(new Date(), config.reportTrashDays));
      const trashed = (await store.listTrash(user)).map((t) => [
        t.report.guid,
        t.report.type,
        t.report.ownerName,
        `deleted ${t.deletedAt}`,
        t.report.name,
      ]);
      return trashed.length ? listing(['guid', 'type', 'owner', 'deleted', 'name'], trashed) : 'the trash is empty';
    }
    for await (const r of allReports(store, user))
      lines.push([r.guid, r.type, r.ownerName, r.shared ? 'shared' : 'private', r.createdAt, r.name]);
    return lines.length ? listing(['guid', 'type', 'owner', 'sharing', 'created', 'name'], lines) : 'no reports';
  });
}

export async function deleteReport(config: Config, guid: string): Promise<string> {
  return withReports(config, async (store) => {
    await store.delete(guid);
    return `deleted report ${guid}`;
  });
}

export async function restoreReport(config: Config, guid: string, user?: string): Promise<string> {
  return withReports(config, async (store) => {
    const r = await new RestoreReportUseCase(store, config.reportTrashDays).restore(guid, user);
    return `restored report ${r.guid} ("${r.name}" of ${r.ownerName}, version ${r.version})`;
  });
}

/** JSON Lines, oldest first, owners by name: the form `report import` reads on another deployment. */
export async function exportReports(config: Config, out: NodeJS.WritableStream): Promise<number> {
  return withReports(config, async (store) => {
    const all: ReportRecord[] = [];
    for await (const r of allReports(store)) all.push(r);
    for (const r of all.reverse()) {
      const { seq: _seq, ownerId: _id, ...portable } = r;
      out.write(`${JSON.stringify(portable)}\n`);
    }
    return all.length;
  });
}

/** Reads an export; owners are matched by user name in this deployment. Existing guids are skipped. */
export async function importReports(config: Config, users: MetadataStore, file: string): Promise<string> {
  if (!fs.existsSync(file)) throw AppError.invalid(`No such file: ${file}`);
  return withReports(config, async (store) => {
    let imported = 0;
    let skipped = 0;
    const problems: string[] = [];
    let line = 0;
    const owners = new Map<string, string | null>();
    for await (const text of readline.createInterface({ input: fs.createReadStream(file) })) {
      line++;
      if (text.trim() === '') continue;
      let r: Omit<ReportRecord, 'seq' | 'ownerId'>;
      try {
        r = JSON.parse(text) as Omit<ReportRecord, 'seq' | 'ownerId'>;
      } catch {
        problems.push(`line ${line}: not JSON`);
        continue;
      }
      if (!owners.has(r.ownerName)) owners.set(r.ownerName, (await users.findUserByName(r.ownerName))?.id ?? null);
      const ownerId = owners.get(r.ownerName);
      if (!ownerId) {
        problems.push(`line ${line}: no user named "${r.ownerName}" here`);
        continue;
      }
      if (await store.get(r.guid)) {
        skipped++;
        continue;
      }
      try {
        // Index versions are this deployment's own: another's would name other snapshots.
        await store.insert({ ...r, ownerId, indexVersion: 0 });
        imported++;
      } catch (err) {
        problems.push(`line ${line}: ${err instanceof AppError ? err.detail : String(err)}`);
      }
    }
    return [`imported ${imported} report(s), skipped ${skipped} already present`, ...problems].join('\n');
  });
}
