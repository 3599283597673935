import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import fs from 'node:fs';

/** A secret is a line of text; a PEM bundle a few certificates. Anything larger is the wrong file. */
export const MAX_SECRET_FILE_BYTES = 4096;
export const MAX_PEM_FILE_BYTES = 1024 * 1024;

/**
 * The text of a file named by a setting, or a problem. Only a small regular file is read: a FIFO would
 * block start-up (hence O_NONBLOCK on open) and /dev/zero would never end. The content is never quoted
 * in a problem, since it is a secret.
 */
export function readSettingFile(file: string, maxBytes: number): { text: string } | { problem: string } {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (err) {
    return { problem: `cannot read "${file}" (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return { problem: `"${file}" is not a regular file` };
    // One byte more than allowed tells a file at the limit from one past it, whatever stat said.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = fs.readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > maxBytes) return { problem: `"${file}" is larger than ${maxBytes} bytes` };
    return { text: buffer.subarray(0, length).toString('utf8') };
  } catch (err) {
    return { problem: `cannot read "${file}" (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  } finally {
    fs.closeSync(fd);
  }
}

/** PEM text of the gRPC mTLS material: the same certificate serves as server and as client certificate. */
export interface GrpcTlsFiles {
  cert: string;
  key: string;
  ca: string;
}

/**
 * Reads and checks the mTLS files once at start: each must parse, the key must belong to the certificate
 * and the certificate must be in date, so a wrong file fails start-up instead of every handshake.
 */
export function loadGrpcTls(paths: GrpcTlsFiles, now = new Date()): { tls: GrpcTlsFiles } | { problems: string[] } {
  const problems: string[] = [];
  const read = (name: string, file: string) => {
    const r = readSettingFile(file, MAX_PEM_FILE_BYTES);
    if ('problem' in r) problems.push(`${name}: ${r.problem}`);
    return 'text' in r ? r.text : undefined;
  };
  const certPem = read('QUARRY_GRPC_TLS_CERT', paths.cert);
  const keyPem = read('QUARRY_GRPC_TLS_KEY', paths.key);
  const caPem = read('QUARRY_GRPC_TLS_CA', paths.ca);
  const parse = <T>(name: string, text: string | undefined, what: string, fn: (t: string) => T): T | undefined => {
    if (text === undefined) return undefined;
    try {
      return fn(text);
    } catch {
      problems.push(`${name}: is not ${what}`);
      return undefined;
    }
  };
  const cert = parse('QUARRY_GRPC_TLS_CERT', certPem, 'a PEM certificate', (t) => new X509Certificate(t));
  const key = parse('QUARRY_GRPC_TLS_KEY', keyPem, 'an unencrypted PEM private key', (t): KeyObject =>
    createPrivateKey(t),
  );
  parse('QUARRY_GRPC_TLS_CA', caPem, 'a PEM certificate', (t) => new X509Certificate(t));
  if (cert && key && !cert.checkPrivateKey(key))
    problems.push('QUARRY_GRPC_TLS_KEY: does not belong to the certificate of QUARRY_GRPC_TLS_CERT');
  if (cert && (now < new Date(cert.validFrom) || now > new Date(cert.validTo))) {
    problems.push(`QUARRY_GRPC_TLS_CERT: is valid only from ${cert.validFrom} to ${cert.validTo}`);
  }
  if (problems.length > 0 || certPem === undefined || keyPem === undefined || caPem === undefined) return { problems };
  return { tls: { cert: certPem, key: keyPem, ca: caPem } };
}
