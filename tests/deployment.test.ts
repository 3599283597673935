import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { envProblems, type ContainerEnv } from './support/manifests';
import { describeIf } from '@quarry/testkit';
import { REPO_ROOT } from './support/quarry-process';

type Doc = { apiVersion: string; kind: string; metadata: { name: string }; spec?: Record<string, unknown>; data?: Record<string, string>; stringData?: Record<string, string> };

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const hasCompose = spawnSync('docker-compose', ['version'], { encoding: 'utf8' }).status === 0;

function kustomize(overlay: string): Doc[] {
  const out = execFileSync('kubectl', ['kustomize', path.join(REPO_ROOT, 'k8s', 'overlays', overlay)], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJS() as Doc);
}

/** kubernetes-models class for a document, by apiVersion and kind. */
function modelFor(doc: Doc): { validate(): void } {
  const [group, version] = doc.apiVersion.includes('/') ? doc.apiVersion.split('/') : ['', doc.apiVersion];
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/${version}`) as Record<string, new (d: unknown) => { validate(): void }>;
  const Model = mod[doc.kind];
  if (!Model) throw new Error(`no schema for ${doc.apiVersion} ${doc.kind}`);
  return new Model(doc);
}

/** The environment each Quarry container of a kustomize build gets, ConfigMaps and Secrets expanded. */
function k8sContainers(docs: Doc[]): ContainerEnv[] {
  const sources = new Map<string, Record<string, string>>();
  for (const d of docs) if (d.kind === 'ConfigMap' || d.kind === 'Secret') sources.set(`${d.kind}/${d.metadata.name}`, { ...(d.data ?? {}), ...(d.stringData ?? {}) });
  const out: ContainerEnv[] = [];
  for (const d of docs.filter((x) => x.kind === 'Deployment')) {
    const podSpec = (d.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } }).template.spec;
    for (const c of podSpec.containers) {
      if (!String(c.image).includes('quarry')) continue;
      const env: Record<string, string> = {};
      for (const ref of (c.envFrom as Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>) ?? []) {
        const key = ref.configMapRef ? `ConfigMap/${ref.configMapRef.name}` : `Secret/${ref.secretRef!.name}`;
        const src = sources.get(key);
        if (!src) throw new Error(`${d.metadata.name} refers to missing ${key}`);
        Object.assign(env, src);
      }
      for (const e of (c.env as Array<{ name: string; value?: string }>) ?? []) env[e.name] = e.value ?? '';
      out.push({ where: `Deployment ${d.metadata.name}`, target: env.QUARRY_TARGET as ContainerEnv['target'], env });
    }
  }
  return out;
}

for (const overlay of ['dev', 'prod']) describeIf(hasKubectl, 'kubectl (with its built-in kustomize) is not installed on this machine', `k8s overlay ${overlay}`, () => {
  let docs: Doc[];
  beforeAll(() => {
    docs = kustomize(overlay);
  });

  it('builds and every object validates against the Kubernetes schemas', () => {
    expect(docs.length).toBeGreaterThan(15);
    const errors: string[] = [];
    for (const d of docs) {
      try {
        modelFor(d).validate();
      } catch (err) {
        errors.push(`${d.kind}/${d.metadata.name}: ${(err as Error).message.slice(0, 400)}`);
      }
    }
    expect(errors).toEqual([]);
  });

  it('has a Deployment and a probe for every target, an HPA for the chart worker, PDBs and a NetworkPolicy', () => {
    const deployments = docs.filter((d) => d.kind === 'Deployment').map((d) => d.metadata.name).sort();
    expect(deployments).toEqual(expect.arrayContaining(['chart', 'chart-worker', 'crosstab', 'gateway', 'query', 'reports']));
    for (const d of docs.filter((x) => x.kind === 'Deployment' && x.metadata.name !== 'chart-worker' && ['query', 'crosstab', 'chart', 'reports'].includes(x.metadata.name))) {
      const c = (d.spec as { template: { spec: { containers: Array<{ readinessProbe: { grpc?: unknown }; securityContext: { readOnlyRootFilesystem: boolean } }> } } }).template.spec.containers[0];
      expect(c.readinessProbe.grpc).toBeDefined();
      expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
    }
    expect(docs.some((d) => d.kind === 'HorizontalPodAutoscaler' && d.metadata.name === 'chart-worker')).toBe(true);
    expect(docs.filter((d) => d.kind === 'PodDisruptionBudget').length).toBeGreaterThanOrEqual(6);
    expect(docs.some((d) => d.kind === 'NetworkPolicy')).toBe(true);
    if (overlay === 'dev') expect(docs.filter((d) => d.kind === 'StatefulSet').map((d) => d.metadata.name).sort()).toEqual(['mongo', 'redis', 'typesense']);
  });

  it('sets only environment variables the config schema knows, and every one each target needs', () => {
    const problems = k8sContainers(docs).flatMap(envProblems);
    expect(problems).toEqual([]);
  });
});

describeIf(hasCompose, 'docker-compose is not installed (npm test installs it from Debian)', 'docker-compose.yml', () => {
  let services: Record<string, { image?: string; environment?: Record<string, string | null>; entrypoint?: string[] }>;

  beforeAll(() => {
    const out = execFileSync('docker-compose', ['-f', path.join(REPO_ROOT, 'docker-compose.yml'), 'config'], { encoding: 'utf8' });
    services = (parse(out) as { services: typeof services }).services;
  });

  it('validates (docker-compose config) with every store and every target', () => {
    expect(Object.keys(services).sort()).toEqual(['chart', 'chart-worker', 'crosstab', 'gateway', 'loader', 'mongo', 'query', 'redis', 'reports', 'typesense']);
  });

  it('sets only environment variables the config schema knows, and every one each target needs', () => {
    const containers: ContainerEnv[] = Object.entries(services)
      .filter(([, s]) => String(s.image).startsWith('quarry'))
      .map(([name, s]) => ({
        where: `compose service ${name}`,
        target: name === 'loader' ? 'loader' : ((s.environment?.QUARRY_TARGET ?? '') as ContainerEnv['target']),
        env: Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, v ?? ''])),
      }));
    expect(containers).toHaveLength(7);
    expect(containers.flatMap(envProblems)).toEqual([]);
  });
});

describe('the environment check itself', () => {
  it('fails on an unknown variable, a missing one and an invalid value', () => {
    const problems = envProblems({ where: 'x', target: 'chart', env: { QUARRY_TARGET: 'chart', QUARRY_CHART_ADDR: 'chart:50053', QUARRY_GRPC_LISTEN_HOST: '0.0.0.0', REDIS_HOST: 'redis', PORT: 'eighty' } });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('sets REDIS_HOST'),
        expect.stringContaining('leaves out REDIS_URL'),
        expect.stringContaining('PORT'),
      ]),
    );
  });
});
