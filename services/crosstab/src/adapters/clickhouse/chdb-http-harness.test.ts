import { withSettings } from '../../../test-support/chdb-http-server';

// The test harness that serves ClickHouse's HTTP interface from chDB (test-support/chdb-http-server.ts):
// how it turns a request's statement and URL settings into one statement for the engine.
describe('the chDB HTTP harness: statement, settings and format', () => {
  it('takes the output format from a trailing FORMAT and puts the settings before it', () => {
    expect(withSettings('SELECT 1 AS x\nFORMAT JSONEachRow', [['max_rows_to_group_by', '21']])).toEqual({
      sql: 'SELECT 1 AS x SETTINGS max_rows_to_group_by = 21',
      format: 'JSONEachRow',
    });
    // No FORMAT: the HTTP interface's default, TabSeparated; a trailing semicolon is dropped.
    expect(withSettings('SELECT 1;', [])).toEqual({ sql: 'SELECT 1', format: 'TabSeparated' });
  });

  it('quotes text settings (quotes and backslashes escaped) and keeps numbers bare', () => {
    expect(
      withSettings('SELECT 1', [
        ['session_timezone', "it's\\"],
        ['group_by_use_nulls', '1'],
      ]).sql,
    ).toBe("SELECT 1 SETTINGS session_timezone = 'it\\'s\\\\', group_by_use_nulls = 1");
  });

  it('an insert keeps its FORMAT (the body is in it) and takes its settings before it', () => {
    expect(withSettings('INSERT INTO `t` FORMAT Parquet', [['insert_distributed_sync', '1']])).toEqual({
      sql: 'INSERT INTO `t` SETTINGS insert_distributed_sync = 1 FORMAT Parquet',
      format: 'TabSeparated',
    });
  });

  it('refuses settings on DDL rather than dropping them, and ignores the HTTP layer’s own', () => {
    expect(() => withSettings('DROP TABLE IF EXISTS `t` SYNC', [['max_execution_time', '5']])).toThrow(
      /Code: 115\..*max_execution_time.*\(UNKNOWN_SETTING\)/,
    );
    expect(withSettings('CREATE TABLE t (x Int64) ENGINE = Memory', [['wait_end_of_query', '1']]).sql).toBe(
      'CREATE TABLE t (x Int64) ENGINE = Memory',
    );
  });
});
