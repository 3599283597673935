import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface TlsFixtures {
  /** The deployment's CA and a peer certificate it signed (localhost and 127.0.0.1, server and client use). */
  ca: string;
  cert: string;
  key: string;
  /** A certificate of the same shape signed by another CA: what an outsider could make. */
  foreignCa: string;
  foreignCert: string;
  foreignKey: string;
}

const OPENSSL_CONFIG = `[req]
distinguished_name = dn
prompt = no
[dn]
CN = quarry-test
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[peer]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
`;

/** Throwaway mTLS material made with the openssl CLI into `dir` (file paths returned). */
export function makeTlsFixtures(dir: string): TlsFixtures {
  const conf = path.join(dir, 'openssl.cnf');
  fs.writeFileSync(conf, OPENSSL_CONFIG);
  const openssl = (...args: string[]) =>
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const issue = (prefix: string) => {
    openssl(
      'req',
      '-x509',
      '-config',
      conf,
      '-extensions',
      'ca',
      ...newKey,
      '-keyout',
      `${prefix}ca.key`,
      '-out',
      `${prefix}ca.crt`,
      '-days',
      '2',
      '-subj',
      `/CN=${prefix}quarry-test-ca`,
    );
    openssl(
      'req',
      '-new',
      '-config',
      conf,
      ...newKey,
      '-keyout',
      `${prefix}peer.key`,
      '-out',
      `${prefix}peer.csr`,
      '-subj',
      '/CN=localhost',
    );
    openssl(
      'x509',
      '-req',
      '-in',
      `${prefix}peer.csr`,
      '-CA',
      `${prefix}ca.crt`,
      '-CAkey',
      `${prefix}ca.key`,
      '-CAcreateserial',
      '-out',
      `${prefix}peer.crt`,
      '-days',
      '2',
      '-extfile',
      conf,
      '-extensions',
      'peer',
    );
    return {
      ca: path.join(dir, `${prefix}ca.crt`),
      cert: path.join(dir, `${prefix}peer.crt`),
      key: path.join(dir, `${prefix}peer.key`),
    };
  };
  const own = issue('');
  const foreign = issue('foreign-');
  return { ...own, foreignCa: foreign.ca, foreignCert: foreign.cert, foreignKey: foreign.key };
}

/**
 * A bound loopback address as a TLS client should dial it: by the name its certificate carries
 * (localhost). Dialled by IP, grpc-js hands the IP to TLS as the server name, which Node deprecates
 * with a warning on every connection (DEP0123, RFC 6066).
 */
export function tlsTarget(address: string): string {
  return address.replace(/^127\.0\.0\.1:/, 'localhost:');
}
