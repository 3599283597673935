// The embedded adapter's entry point (`@quarry/metadata-store/sqlite`): only composition roots and tests
// import drivers, and only through such a subpath, so a domain import of the package reaches none.
export { SqliteMetadataStore } from './adapters/sqlite-metadata-store.adapter';
export { openSqlite } from './adapters/open-sqlite';
