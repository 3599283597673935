import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '@quarry/config';
import { describeIf } from '@quarry/testkit';
import { kustomize, type Doc } from './support/kustomize';
import { REPO_ROOT } from './support/quarry-process';

/*
 * The ClickHouse deployments as written (docker-compose.yml's clickhouse profile, k8s/overlays/clickhouse):
 * 2 shards x 2 replicas and three Keeper nodes, every host a server names resolving to one that exists,
 * the crosstab service's settings accepted by Quarry's own configuration. No ClickHouse server can run
 * here (no Docker engine; Debian's clickhouse-server is from 2018), so they are checked, not started:
 * the SQL itself runs on ClickHouse's engine in-process (chDB) in the adapter's tests.
 */
process.stderr.write(
  'NOTE "ClickHouse deployments": checked as manifests only; no ClickHouse server or Docker engine runs here\n',
);

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const hasCompose = spawnSync('docker-compose', ['version'], { encoding: 'utf8' }).status === 0;
const OVERLAY = path.join(REPO_ROOT, 'k8s', 'overlays', 'clickhouse');
const xml = (name: string) => fs.readFileSync(path.join(OVERLAY, name), 'utf8');
/** The environment variables a config file reads its hosts from (`<host from_env="X" />`). */
const hostVars = (text: string, tag: string) =>
  [...text.matchAll(new RegExp(`<${tag} from_env="(\\w+)"`, 'g'))].map((m) => m[1]);

describe('the ClickHouse cluster configuration (k8s/overlays/clickhouse/*.xml)', () => {
  it('names 2 shards of 2 replicas and 3 Keeper nodes, each from its own variable', () => {
    const cluster = xml('cluster.xml');
    expect(cluster.match(/<shard>/g)).toHaveLength(2);
    expect(hostVars(cluster, 'host')).toEqual([
      'CLICKHOUSE_S1R1_HOST',
      'CLICKHOUSE_S1R2_HOST',
      'CLICKHOUSE_S2R1_HOST',
      'CLICKHOUSE_S2R2_HOST',
      'CLICKHOUSE_KEEPER1_HOST',
      'CLICKHOUSE_KEEPER2_HOST',
      'CLICKHOUSE_KEEPER3_HOST',
    ]);
    expect(hostVars(xml('keeper.xml'), 'hostname')).toEqual([
      'CLICKHOUSE_KEEPER1_HOST',
      'CLICKHOUSE_KEEPER2_HOST',
      'CLICKHOUSE_KEEPER3_HOST',
    ]);
    expect(xml('users.xml')).toContain('<password from_env="CLICKHOUSE_QUARRY_PASSWORD" />');
  });
});

type ComposeService = { profiles?: string[]; environment?: Record<string, string>; volumes?: string[]; image?: string };

describe("docker-compose.yml's clickhouse profile", () => {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
  const services = (parse(text, { merge: true }) as { services: Record<string, ComposeService> }).services;
  const profiled = Object.entries(services).filter(([, s]) => s.profiles?.includes('clickhouse'));
  const servers = profiled.filter(([, s]) => s.image?.startsWith('clickhouse/clickhouse-server'));
  const keepers = profiled.filter(([, s]) => s.image?.startsWith('clickhouse/clickhouse-keeper'));

  it('runs 2 shards x 2 replicas and 3 Keeper nodes; every host a server or keeper names is a service', () => {
    expect(servers.map(([, s]) => `${s.environment!.CLICKHOUSE_SHARD}/${s.environment!.CLICKHOUSE_REPLICA}`)).toEqual([
      '01/clickhouse-s1r1',
      '01/clickhouse-s1r2',
      '02/clickhouse-s2r1',
      '02/clickhouse-s2r2',
    ]);
    expect(keepers.map(([, s]) => s.environment!.CLICKHOUSE_KEEPER_ID)).toEqual(['1', '2', '3']);
    for (const [name, s] of [...servers, ...keepers]) {
      const named = s.image!.includes('keeper')
        ? hostVars(xml('keeper.xml'), 'hostname')
        : hostVars(xml('cluster.xml'), 'host');
      for (const v of named)
        expect({ name, v, service: services[s.environment![v]] !== undefined }).toEqual({ name, v, service: true });
      // Every mounted configuration file is in the repository.
      for (const m of s.volumes ?? []) {
        const source = m.split(':')[0];
        if (source.startsWith('./')) expect(fs.existsSync(path.join(REPO_ROOT, source))).toBe(true);
      }
    }
  });

  it('serves crosstabs from the cluster with settings Quarry accepts, where plain `up` starts none of it', () => {
    const crosstab = services['crosstab-clickhouse'];
    expect(crosstab.profiles).toEqual(['clickhouse']);
    const env = Object.fromEntries(
      Object.entries(crosstab.environment!).map(([k, v]) => [
        k,
        v.replace(/\$\{(\w+):-([^}]*)\}/g, (_, name: string, dflt: string) =>
          name === 'CLICKHOUSE_PASSWORD' ? 'pw' : dflt,
        ),
      ]),
    );
    delete env.TYPESENSE_API_KEY;
    delete env.REDIS_PASSWORD_FILE;
    delete env.QUARRY_CURSOR_SECRET_FILE;
    delete env.QUARRY_INTERNAL_TOKEN_FILE;
    // Typesense and the secret files are other services' concerns here.
    const config = loadConfig({
      ...env,
      QUARRY_SEARCH_BACKEND: 'embedded',
      TYPESENSE_URL: undefined,
      QUARRY_INTERNAL_TOKEN: 'k'.repeat(32),
    });
    expect(config).toMatchObject({ pivotEngine: 'clickhouse', clickhouse: { cluster: 'quarry', database: 'quarry' } });
    const host = new URL(config.clickhouse!.url).hostname;
    expect(servers.map(([n]) => n)).toContain(host);
    expect(new URL(config.clickhouse!.url).password).toBe('pw');
    expect(servers[0][1].environment!.CLICKHOUSE_QUARRY_PASSWORD).toBe('${CLICKHOUSE_PASSWORD:-}');
  });

  (hasCompose ? it : it.skip)('docker-compose config: valid without the profile and with it', () => {
    const env = { ...process.env, TYPESENSE_API_KEY: 'k', CLICKHOUSE_PASSWORD: 'pw' };
    const plain = spawnSync('docker-compose', ['config', '--services'], { cwd: REPO_ROOT, env, encoding: 'utf8' });
    // This docker-compose lists a profile's services among all of them; the rehearsal starts only the others.
    expect(plain.status).toBe(0);
    const full = spawnSync('docker-compose', ['--profile', 'clickhouse', 'config', '--services'], {
      cwd: REPO_ROOT,
      env,
      encoding: 'utf8',
    });
    expect(full.status).toBe(0);
    expect(full.stdout.split('\n').filter((s) => s.startsWith('clickhouse-'))).toHaveLength(7);
  });
});

describeIf(hasKubectl, 'kubectl (with kustomize) is needed to build the overlay', 'k8s/overlays/clickhouse', () => {
  const docs = hasKubectl ? kustomize('overlays/clickhouse') : [];
  const find = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name)!;
  type Spec = {
    replicas?: number;
    serviceName?: string;
    template: {
      spec: {
        containers: Array<{
          env?: Array<{ name: string; value?: string }>;
          envFrom?: Array<{ secretRef?: { name: string } }>;
        }>;
      };
    };
  };
  const spec = (d: Doc) => d.spec as unknown as Spec;
  const envOf = (d: Doc) =>
    Object.fromEntries((spec(d).template.spec.containers[0].env ?? []).map((e) => [e.name, e.value]));
  /** The pods' stable DNS names of a StatefulSet (`<name>-<i>.<service>`). */
  const podNames = (d: Doc) =>
    Array.from({ length: spec(d).replicas ?? 1 }, (_, i) => `${d.metadata.name}-${i}.${spec(d).serviceName}`);
  /** A Secret's values, by its name as a pod refers to it (a generated name ends in a hash). */
  const secret = (name: string) => {
    const s = docs.find(
      (d) => d.kind === 'Secret' && (d.metadata.name === name || d.metadata.name.startsWith(`${name}-`)),
    )!;
    return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  };

  it('runs one StatefulSet of 2 replicas per shard and 3 keepers; every host named is a pod of them', () => {
    const shards = [find('StatefulSet', 'clickhouse-s1'), find('StatefulSet', 'clickhouse-s2')];
    const keeper = find('StatefulSet', 'clickhouse-keeper');
    expect(shards.map((s) => spec(s).replicas)).toEqual([2, 2]);
    expect(spec(keeper).replicas).toBe(3);
    const pods = new Set([...shards.flatMap(podNames), ...podNames(keeper)]);
    const named = (d: Doc) =>
      d === keeper ? hostVars(xml('keeper.xml'), 'hostname') : hostVars(xml('cluster.xml'), 'host');
    for (const d of [...shards, keeper]) {
      const env = envOf(d);
      for (const v of named(d))
        expect({ sts: d.metadata.name, v, pod: pods.has(env[v] ?? '') }).toEqual({
          sts: d.metadata.name,
          v,
          pod: true,
        });
    }
    expect(shards.map((s) => envOf(s).CLICKHOUSE_SHARD)).toEqual(['01', '02']);
    for (const name of ['clickhouse-s1', 'clickhouse-s2', 'clickhouse-keeper'])
      expect((find('Service', name).spec as { clusterIP?: string }).clusterIP).toBe('None');
  });

  it('points the crosstab pods at the cluster, with the password the servers hold, in settings Quarry accepts', () => {
    const crosstab = find('Deployment', 'crosstab');
    const env = envOf(crosstab);
    const refs = spec(crosstab).template.spec.containers[0].envFrom!.map((e) => e.secretRef?.name ?? '');
    // The crosstab pods read the Secret by the very name it has.
    const ref = refs.find((r) =>
      docs.some((d) => d.kind === 'Secret' && d.metadata.name === r && d.data?.CLICKHOUSE_URL),
    );
    expect(ref).toBeDefined();
    const { CLICKHOUSE_URL } = secret(ref!) as { CLICKHOUSE_URL: string };
    const config = loadConfig({
      QUARRY_TARGET: 'crosstab',
      QUARRY_INTERNAL_TOKEN: 'k'.repeat(32),
      QUARRY_PIVOT_ENGINE: env.QUARRY_PIVOT_ENGINE,
      CLICKHOUSE_CLUSTER: env.CLICKHOUSE_CLUSTER,
      CLICKHOUSE_URL,
    });
    expect(config).toMatchObject({ pivotEngine: 'clickhouse', clickhouse: { cluster: 'quarry' } });
    const url = new URL(CLICKHOUSE_URL);
    expect(url.password).toBe(secret('quarry-clickhouse-server').CLICKHOUSE_QUARRY_PASSWORD);
    const service = find('Service', url.hostname).spec as {
      ports: Array<{ port: number }>;
      selector: Record<string, string>;
    };
    expect(service.ports.map((p) => p.port)).toContain(Number(url.port));
    expect(service.selector).toEqual({
      'app.kubernetes.io/name': 'quarry-clickhouse',
      'app.kubernetes.io/component': 'server',
    });
    // The base denies the crosstab pods every egress this overlay does not open.
    const egress = find('NetworkPolicy', 'quarry-crosstab-to-clickhouse').spec as {
      egress: Array<{ ports: Array<{ port: number }> }>;
    };
    expect(egress.egress[0].ports.map((p) => p.port)).toEqual([8123]);
  });
});
