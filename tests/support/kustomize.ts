import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ContainerEnv } from './manifests';
import { REPO_ROOT } from './quarry-process';

/* The kustomize builds of k8s/ as documents, and the environment each Quarry container gets from them. */

export type Doc = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
};

/** A kustomize build of k8s/DIR (an overlay, `overlays/dev`, or the `base`). */
export function kustomize(dir: string): Doc[] {
  const out = execFileSync('kubectl', ['kustomize', path.join(REPO_ROOT, 'k8s', dir)], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJS() as Doc);
}

export const PROD_SECRETS_DIR = path.join(REPO_ROOT, 'k8s', 'overlays', 'prod', 'secrets');

/**
 * The Secrets an overlay refers to but does not ship, as the operator creates them out of band: prod's,
 * one per credential, from their documented examples (secrets/NAME.env.example; a blank value, for the
 * operator to fill, gets a random stand-in). The internal token needs no entry: only its reference can be
 * checked (secretValue).
 */
export function outOfBandSecrets(overlay: string): Map<string, Record<string, string>> {
  if (overlay !== 'prod') return new Map();
  const out = new Map<string, Record<string, string>>();
  for (const file of fs.readdirSync(PROD_SECRETS_DIR).filter((f) => f.endsWith('.env.example'))) {
    const values: Record<string, string> = {};
    for (const line of fs.readFileSync(path.join(PROD_SECRETS_DIR, file), 'utf8').split('\n')) {
      if (!line.trim() || line.startsWith('#')) continue;
      const at = line.indexOf('=');
      values[line.slice(0, at)] = line.slice(at + 1) || randomBytes(32).toString('base64url');
    }
    out.set(`Secret/${file.replace(/\.env\.example$/, '')}`, values);
  }
  return out;
}

/** The ENTRYPOINT of the images (infra/Dockerfile: the quarry stage, which chart-worker builds on). */
export function imageEntrypoint(): string[] {
  const dockerfile = fs.readFileSync(path.join(REPO_ROOT, 'infra', 'Dockerfile'), 'utf8');
  const found = [...dockerfile.matchAll(/^ENTRYPOINT (\[.*\])$/gm)];
  if (found.length !== 1) throw new Error(`infra/Dockerfile has ${found.length} ENTRYPOINT lines, expected 1`);
  return JSON.parse(found[0][1]) as string[];
}

export type EnvEntry = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
export type Container = {
  name: string;
  image: string;
  env?: EnvEntry[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  ports?: Array<{ name?: string; containerPort: number }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  command?: string[];
  args?: string[];
};
export type PodTemplate = {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    containers: Container[];
    volumes?: Array<{ name: string; persistentVolumeClaim?: { claimName: string; readOnly?: boolean } }>;
  };
};

export const WORKLOAD_KINDS = ['Deployment', 'Job', 'StatefulSet'];
export const podTemplate = (d: Doc) => (d.spec as { template: PodTemplate }).template;

export function quarryContainers(d: Doc): Container[] {
  const podSpec = (d.spec as { template: { spec: { containers: Container[] } } }).template.spec;
  return podSpec.containers.filter((c) => String(c.image).includes('quarry'));
}

/**
 * A secretKeyRef's value: the Secret's when the build ships it (dev), else a stand-in, since the Secret
 * is made out of band (prod) and only its reference can be checked here.
 */
export function secretValue(
  sources: Map<string, Record<string, string>>,
  ref: { name: string; key: string },
  where: string,
): string {
  const secret = sources.get(`Secret/${ref.name}`);
  if (!secret) return randomBytes(32).toString('base64url');
  const value = secret[ref.key];
  if (value === undefined) throw new Error(`${where} refers to missing key ${ref.key} of Secret/${ref.name}`);
  return value;
}

/**
 * The environment each Quarry container of a kustomize build gets (Deployments, and the loader Job),
 * ConfigMaps and Secrets expanded, the out-of-band Secrets included.
 */
export function quarryEnvs(
  docs: Doc[],
  outOfBand: Map<string, Record<string, string>>,
): Array<ContainerEnv & { doc: Doc }> {
  const sources = new Map(outOfBand);
  for (const d of docs)
    if (d.kind === 'ConfigMap' || d.kind === 'Secret') sources.set(`${d.kind}/${d.metadata.name}`, contents(d));
  const out: Array<ContainerEnv & { doc: Doc }> = [];
  for (const d of docs.filter((x) => x.kind === 'Deployment' || x.kind === 'Job')) {
    const where = `${d.kind} ${d.metadata.name}`;
    for (const c of podTemplate(d).spec.containers) {
      if (!String(c.image).includes('quarry')) continue;
      const env: Record<string, string> = {};
      for (const ref of c.envFrom ?? []) {
        const key = ref.configMapRef ? `ConfigMap/${ref.configMapRef.name}` : `Secret/${ref.secretRef!.name}`;
        const src = sources.get(key);
        if (!src) throw new Error(`${d.metadata.name} refers to missing ${key}`);
        Object.assign(env, src);
      }
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        env[e.name] = ref ? secretValue(sources, ref, where) : (e.value ?? '');
      }
      out.push({
        doc: d,
        where,
        target: d.kind === 'Job' ? 'loader' : (env.QUARRY_TARGET as ContainerEnv['target']),
        env,
      });
    }
  }
  return out;
}

/** A ConfigMap's or Secret's values; a Secret's data is base64 (what kustomize's secretGenerator writes). */
export function contents(d: Doc): Record<string, string> {
  const data = Object.fromEntries(
    Object.entries(d.data ?? {}).map(([k, v]) => [
      k,
      d.kind === 'Secret' ? Buffer.from(v, 'base64').toString('utf8') : v,
    ]),
  );
  return { ...data, ...(d.stringData ?? {}) };
}
