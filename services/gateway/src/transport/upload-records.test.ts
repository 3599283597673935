import type { IncomingMessage } from 'node:http';
import querystring from 'node:querystring';
import { AppError } from '@quarry/errors';
import { uploadInput } from './upload-records';

const CSV = { 'content-type': 'text/csv' };
const TYPES = 'Content-Type must be text/csv, application/json, application/x-ndjson or application/vnd.apache.parquet';

/** What uploadInput threw, so a test can assert its code and exact detail. */
function refusal(query: Record<string, unknown>, headers: IncomingMessage['headers'] = CSV): AppError {
  try {
    uploadInput('sales', query, headers);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('uploadInput accepted what it should refuse');
}

describe('uploadInput', () => {
  it('defaults to a strict replace of a plain body', () => {
    expect(uploadInput('sales', {}, CSV)).toEqual({
      index: 'sales',
      mode: 'replace',
      onError: 'fail',
      format: 'csv',
      gzip: false,
    });
  });

  it('takes every parameter it knows, as the URL gave them', () => {
    expect(uploadInput('sales', { mode: 'upsert', key: 'id', onError: 'skip', maxErrors: '3' }, CSV)).toEqual({
      index: 'sales',
      mode: 'upsert',
      key: 'id',
      onError: 'skip',
      maxErrors: 3,
      format: 'csv',
      gzip: false,
    });
    expect(uploadInput('sales', { mode: 'append' }, CSV).mode).toBe('append');
  });

  it.each([
    ['text/csv; charset=utf-8', 'csv'],
    ['application/csv', 'csv'],
    ['Text/CSV', 'csv'],
    ['application/x-ndjson', 'jsonl'],
    ['application/jsonl', 'jsonl'],
    ['application/json', 'json'],
    ['application/json; charset=utf-8', 'json'],
    ['application/vnd.apache.parquet', 'parquet'],
    ['application/x-parquet', 'parquet'],
  ])('reads Content-Type %s as %s', (type, format) => {
    expect(uploadInput('sales', {}, { 'content-type': type }).format).toBe(format);
  });

  it('refuses a body without a Content-Type with 415, listing the types it takes', () => {
    const err = refusal({}, {});
    expect(err).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', detail: TYPES });
    expect(err.httpStatus).toBe(415);
  });

  it.each(['text/plain', 'application/xml', 'multipart/form-data; boundary=x'])(
    'refuses Content-Type %s with 415, naming what was sent',
    (type) => {
      expect(refusal({}, { 'content-type': type })).toMatchObject({
        code: 'UNSUPPORTED_MEDIA_TYPE',
        detail: `${TYPES}, got "${type.split(';')[0]}"`,
      });
    },
  );

  it.each([
    ['gzip', true],
    ['GZIP', true],
    ['identity', false],
  ])('reads Content-Encoding %s', (encoding, gzip) => {
    expect(uploadInput('sales', {}, { ...CSV, 'content-encoding': encoding }).gzip).toBe(gzip);
  });

  it.each(['br', 'deflate', 'gzip, br'])('refuses Content-Encoding %s with 415', (encoding) => {
    expect(refusal({}, { ...CSV, 'content-encoding': encoding })).toMatchObject({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      detail: `Content-Encoding must be gzip or absent, got "${encoding}"`,
    });
  });

  it('names every parameter it does not know, and those it does', () => {
    expect(refusal({ mode: 'append', format: 'csv', maxerrors: '3' })).toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: 'Unknown parameter "format", "maxerrors"; an upload takes mode, key, onError and maxErrors',
    });
  });

  it('says an unknown parameter before anything about the headers', () => {
    // A misspelt parameter is the caller's first problem even when the body's type is wrong too.
    expect(refusal({ onerror: 'skip' }, {})).toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it.each(['mode', 'key', 'onError', 'maxErrors'])('refuses %s given twice', (name) => {
    // What the query parser makes of `?name=a&name=b`.
    const query = querystring.parse(`${name}=skip&${name}=fail`);
    expect(Array.isArray(query[name])).toBe(true);
    expect(refusal(query)).toMatchObject({ code: 'INVALID_ARGUMENT', detail: `${name} is given once, as text` });
  });

  it('refuses a parameter given as an object (what qs makes of `key[b]=1`)', () => {
    expect(refusal({ key: { b: '1' } })).toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: 'key is given once, as text',
    });
    expect(refusal({ mode: { $ne: 'x' } })).toMatchObject({ detail: 'mode is given once, as text' });
    // `a[b]=1` itself: an unknown name, whichever parser read it (qs nests it, Express 5's default does not).
    expect(refusal({ a: { b: '1' } })).toMatchObject({ detail: expect.stringMatching(/^Unknown parameter "a";/) });
    expect(refusal(querystring.parse('a[b]=1'))).toMatchObject({
      detail: expect.stringMatching(/^Unknown parameter "a\[b\]";/),
    });
  });

  it('refuses a mode or onError it does not know, quoting it', () => {
    expect(refusal({ mode: 'merge' })).toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: 'mode must be replace, append or upsert, got "merge"',
    });
    expect(refusal({ onError: 'ignore' })).toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: 'onError must be fail or skip, got "ignore"',
    });
  });

  it.each([
    ['3', 3],
    ['0', 0],
    ['007', 7],
    ['999999999999999', 999_999_999_999_999],
  ])('reads maxErrors=%s as %d', (text, value) => {
    expect(uploadInput('sales', { onError: 'skip', maxErrors: text }, CSV).maxErrors).toBe(value);
  });

  it.each(['-1', '1e3', '99999999999999999', '3.5', '', ' 3', '0x10'])('refuses maxErrors=%p', (text) => {
    expect(refusal({ onError: 'skip', maxErrors: text })).toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: `maxErrors must be a whole number, got "${text}"`,
    });
  });

  it('quotes a huge refused value cut short', () => {
    const huge = 'm'.repeat(100_000);
    const err = refusal({ mode: huge });
    expect(err.detail).toBe(`mode must be replace, append or upsert, got "${'m'.repeat(100)}…" (100000 characters)`);
  });
});
