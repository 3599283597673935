import { z } from 'zod';
import { partOf, setting, settingGroup } from '../setting';
import { filePath } from '../setting-rules';

const patterns = z
  .string()
  .refine(
    (v) =>
      v
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)
        .every((p) => /^(?:[A-Za-z0-9*_-]+(?:\.[A-Za-z0-9*_-]+)*|\[[0-9A-Fa-f:.]+\])(?::(?:\d{1,5}|\*))?$/.test(p)),
    'must be comma-separated host[:port] patterns (`*` allowed in the host, `:*` for any port), e.g. db.example.com:5432,*.files.example.com',
  )
  .default('');

export const sourceSettings = settingGroup('Sources (SOURCES.CREATE, refreshes)', {
  QUARRY_SOURCE_ALLOW: setting(patterns, {
    doc:
      'comma-separated `host[:port]` patterns a source may connect to (a database or a URL; `*` in the host, ' +
      '`:*` any port; no port: the kind’s own, 5432, 3306, 80 and 443). Checked at SOURCES.CREATE and before ' +
      'each run and redirect on the addresses the host resolves to then; a loopback, link-local or private ' +
      'address only when a pattern without `*` names the host',
    default: 'empty: database and URL sources refused',
    readBy: ['ingest'],
  }),
  QUARRY_SOURCE_FILE_DIRS: setting(z.string().default(''), {
    doc: 'comma-separated folders a SQLite source’s file may lie in (links resolved first)',
    default: 'empty: SQLite sources refused',
    readBy: ['ingest'],
  }),
  // Encrypts sources' passwords; unset, a key kept in the data directory (data-dir-key.ts).
  QUARRY_SOURCE_KEY: setting(z.string().min(32, 'must be at least 32 characters').optional(), {
    doc:
      'encrypts the passwords sources keep (AES-256-GCM; ≥ 32 chars). One value for every ingest replica ' +
      '(k8s: the `quarry-source-key` Secret, read through `QUARRY_SOURCE_KEY_FILE`); changed, the kept ' +
      'passwords must be given again',
    default: 'a key in the data dir (`source.key`, mode 0600)',
    readBy: ['ingest'],
  }),
  QUARRY_SOURCE_KEY_FILE: partOf('QUARRY_SOURCE_KEY', filePath.optional(), { readBy: ['ingest'] }),
  QUARRY_SOURCES_PER_USER: setting(z.coerce.number().int().min(0).max(100_000).default(50), {
    doc: 'sources one user may have; one more is a 400',
    readBy: ['ingest'],
  }),
  QUARRY_SOURCE_CONCURRENCY: setting(z.coerce.number().int().min(1).max(64).default(2), {
    doc: 'source runs one ingest process runs at once (BullMQ jobs on the deployment’s Redis; one load per index at a time)',
    readBy: ['ingest'],
  }),
});
