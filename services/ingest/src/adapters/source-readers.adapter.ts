import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '@quarry/errors';
import type { SourceRead, SourceReaders, SourceReader, SourceSpec, SourceKind } from '../ports/source-reader.port';
import { MysqlSourceReader } from './mysql-source-reader.adapter';
import { PostgresSourceReader } from './postgres-source-reader.adapter';
import type { HostPolicy } from './source-host-policy';
import { databaseTarget, targetUrl } from './source-staging';
import { SqliteSourceReader, sqliteFile, sqlitePath } from './sqlite-source-reader.adapter';
import { UrlSourceReader } from './url-source-reader.adapter';

export interface SourceReadersOptions {
  /** QUARRY_SOURCE_ALLOW's policy. */
  hostAllowed: HostPolicy;
  /** QUARRY_SOURCE_FILE_DIRS: the folders SQLite sources may lie in (none: SQLite sources are refused). */
  fileDirs: readonly string[];
  /** The most bytes a URL's file may have once inflated (QUARRY_UPLOAD_MAX_MB, as an upload). */
  maxUrlBytes: number;
}

const DATABASES = {
  postgres: { schemes: ['postgres', 'postgresql'], port: 5432 },
  mysql: { schemes: ['mysql', 'mariadb'], port: 3306 },
} as const;

/** The four readers behind one door, each kind's own policy checked before anything is dialled or opened. */
export class DriverSourceReaders implements SourceReaders {
  private readonly readers: Record<SourceKind, SourceReader>;

  constructor(private readonly options: SourceReadersOptions) {
    const fileAllowed = (file: string) => this.fileAllowed(file);
    this.readers = {
      postgres: new PostgresSourceReader({ hostAllowed: options.hostAllowed }),
      mysql: new MysqlSourceReader({ hostAllowed: options.hostAllowed }),
      sqlite: new SqliteSourceReader({ fileAllowed }),
      url: new UrlSourceReader({ hostAllowed: options.hostAllowed, maxBytes: options.maxUrlBytes }),
    };
  }

  private fileAllowed(file: string): Promise<void> {
    if (this.options.fileDirs.length === 0)
      return Promise.reject(
        AppError.forbidden('SQLite sources are not enabled on this server (QUARRY_SOURCE_FILE_DIRS names no folder)'),
      );
    // The folder as written and as it really is: a path is judged before the file is looked at (so
    // nothing is said about files elsewhere), and the real file, links resolved, again after.
    const inside = this.options.fileDirs.some((dir) => {
      const given = path.resolve(dir);
      let real = given;
      try {
        real = fs.realpathSync(given);
      } catch {
        // A folder that is not there holds no file.
      }
      return [given, real].some((d) => {
        const rel = path.relative(d, file);
        return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
      });
    });
    if (!inside) return Promise.reject(AppError.forbidden(`${file} is not in a folder QUARRY_SOURCE_FILE_DIRS names`));
    return Promise.resolve();
  }

  async admit(spec: Pick<SourceSpec, 'kind' | 'connection'>): Promise<void> {
    switch (spec.kind) {
      case 'postgres':
      case 'mysql': {
        const db = DATABASES[spec.kind];
        const target = databaseTarget(spec.connection, [...db.schemes], db.port, spec.kind);
        await this.options.hostAllowed(targetUrl(spec.kind, target));
        return;
      }
      case 'sqlite': {
        // The path as named, before the file is looked at; then its real path (links resolved).
        const named = sqlitePath(spec);
        await this.fileAllowed(named);
        await this.fileAllowed(sqliteFile(named));
        return;
      }
      case 'url': {
        const raw = 'url' in spec.connection ? spec.connection.url : '';
        let url: URL;
        try {
          url = new URL(raw);
        } catch {
          throw AppError.invalid('connection.url is not a URL');
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:')
          throw AppError.invalid(`A url source is read over http or https, not ${url.protocol.replace(/:$/, '')}`);
        await this.options.hostAllowed(url);
        return;
      }
    }
  }

  read(spec: SourceSpec, options: Parameters<SourceReader['read']>[1]): Promise<SourceRead> {
    return this.readers[spec.kind].read(spec, options);
  }
}
