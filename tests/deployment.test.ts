import { execFile, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, parse } from 'yaml';
import { DEFAULT_SERVICE_PORTS, loadConfig, type ServiceName } from '@quarry/config';
import {
  connectionAllowed,
  envProblems,
  selects,
  type ContainerEnv,
  type Endpoint,
  type LabelSelector,
  type NetworkPolicyDoc,
} from './support/manifests';
import { describeIf } from '@quarry/testkit';
import { VEGA } from './support/datasets';
import { QUARRY_BIN, REPO_ROOT, runCli } from './support/quarry-process';
import {
  contents,
  imageEntrypoint,
  kustomize,
  outOfBandSecrets,
  podTemplate,
  quarryContainers,
  quarryEnvs,
  WORKLOAD_KINDS,
  type Container,
  type Doc,
} from './support/kustomize';

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const hasCompose = spawnSync('docker-compose', ['version'], { encoding: 'utf8' }).status === 0;

/** kubernetes-models class for a document, by apiVersion and kind. */
function modelFor(doc: Doc): { validate(): void } {
  const [group, version] = doc.apiVersion.includes('/') ? doc.apiVersion.split('/') : ['', doc.apiVersion];
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/${version}`) as Record<
    string,
    new (d: unknown) => { validate(): void }
  >;
  const Model = mod[doc.kind];
  if (!Model) throw new Error(`no schema for ${doc.apiVersion} ${doc.kind}`);
  return new Model(doc);
}

/** A pod of a workload, as the NetworkPolicy check sees it: namespace, labels, named ports. */
function podOf(d: Doc): Endpoint {
  const t = podTemplate(d);
  const ports: Record<string, number> = {};
  for (const c of t.spec.containers) for (const p of c.ports ?? []) if (p.name) ports[p.name] = p.containerPort;
  return { pod: { namespace: d.metadata.namespace ?? '', labels: t.metadata.labels, ports } };
}

/** The names of the Secrets a workload reads, through envFrom or secretKeyRef. */
function secretRefs(d: Doc): Array<{ name: string; key?: string }> {
  return podTemplate(d).spec.containers.flatMap((c) => [
    ...(c.envFrom ?? []).flatMap((r) => (r.secretRef ? [{ name: r.secretRef.name }] : [])),
    ...(c.env ?? []).flatMap((e) =>
      e.valueFrom?.secretKeyRef ? [{ name: e.valueFrom.secretKeyRef.name, key: e.valueFrom.secretKeyRef.key }] : [],
    ),
  ]);
}

const DEFAULT_PORTS: Record<string, number> = {
  'http:': 80,
  'https:': 443,
  'mongodb:': 27017,
  'redis:': 6379,
  'rediss:': 6379,
};
// Any address outside the cluster (TEST-NET-2), for stores that are not in the build.
const EXTERNAL_HOST = '198.51.100.20';

/**
 * Where a connection to HOST:PORT from a pod of the build lands: the pods behind the Service of that
 * name, on the container port the Service sends it to, or an address outside the cluster.
 */
function destination(
  docs: Doc[],
  namespace: string,
  host: string,
  port: number,
): { to: Endpoint; port: number; service?: Doc; workloads: Doc[] } {
  const service = docs.find(
    (d) => d.kind === 'Service' && d.metadata.name === host && (d.metadata.namespace ?? '') === namespace,
  );
  if (!service) return { to: { ip: EXTERNAL_HOST }, port, workloads: [] };
  const spec = service.spec as {
    selector: Record<string, string>;
    ports: Array<{ port: number; targetPort?: number | string }>;
  };
  const workloads = docs.filter(
    (d) => WORKLOAD_KINDS.includes(d.kind) && selects({ matchLabels: spec.selector }, podTemplate(d).metadata.labels),
  );
  if (workloads.length === 0) throw new Error(`Service ${host} selects no pod of the build`);
  const to = podOf(workloads[0]);
  const servicePort = spec.ports.find((p) => p.port === port);
  if (!servicePort) throw new Error(`Service ${host} has no port ${port}`);
  const target = servicePort.targetPort ?? port;
  const containerPort = typeof target === 'number' ? target : 'pod' in to ? to.pod.ports?.[target] : undefined;
  if (containerPort === undefined) throw new Error(`Service ${host} port ${port} names no container port`);
  return { to, port: containerPort, service, workloads };
}

function hostPort(addr: string): { host: string; port: number } {
  const at = addr.lastIndexOf(':');
  return { host: addr.slice(0, at), port: Number(addr.slice(at + 1)) };
}

/** Every gRPC service the config knows, and the variable naming its address (QUARRY_QUERY_ADDR, ...). */
const SERVICES = Object.keys(DEFAULT_SERVICE_PORTS) as ServiceName[];
const addrVariable = (service: ServiceName) => `QUARRY_${service.toUpperCase()}_ADDR`;

for (const overlay of ['dev', 'prod'])
  describeIf(
    hasKubectl,
    'kubectl (with its built-in kustomize) is not installed on this machine',
    `k8s overlay ${overlay}`,
    () => {
      let docs: Doc[];
      let policies: NetworkPolicyDoc[];
      const outOfBand = outOfBandSecrets(overlay);
      const k8sContainers = (built: Doc[]): ContainerEnv[] =>
        quarryEnvs(built, outOfBand).map(({ where, target, env }) => ({ where, target, env }));
      const deployment = (name: string) => docs.find((d) => d.kind === 'Deployment' && d.metadata.name === name)!;
      beforeAll(() => {
        docs = kustomize(`overlays/${overlay}`);
        policies = docs.filter((d) => d.kind === 'NetworkPolicy') as unknown as NetworkPolicyDoc[];
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
        const deployments = docs
          .filter((d) => d.kind === 'Deployment')
          .map((d) => d.metadata.name)
          .sort();
        expect(deployments).toEqual(
          expect.arrayContaining(['chart', 'chart-worker', 'crosstab', 'gateway', 'ingest', 'query', 'reports']),
        );
        for (const d of docs.filter((x) => x.kind === 'Deployment' && quarryContainers(x).length > 0)) {
          const c = quarryContainers(d)[0] as Container & { securityContext: { readOnlyRootFilesystem: boolean } };
          expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
        }
      });

      // Liveness asks "does the process work", readiness "can it serve now", and
      // both reach it over plain HTTP, which needs no client certificate when the gRPC ports use mTLS.
      it('probes every Quarry container over HTTP: readiness on /readyz, liveness on /healthz, on a port it serves them on', () => {
        for (const d of docs.filter((x) => x.kind === 'Deployment' && quarryContainers(x).length > 0)) {
          for (const c of quarryContainers(d) as Array<Container & Record<string, unknown>>) {
            const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
            const probe = (kind: string) => {
              const p = c[kind] as { httpGet?: { path: string; port: string | number }; grpc?: unknown } | undefined;
              const port = p?.httpGet?.port;
              const number = typeof port === 'number' ? port : c.ports?.find((x) => x.name === port)?.containerPort;
              return { grpc: p?.grpc, path: p?.httpGet?.path, port: number };
            };
            // The gateway serves the probes on its HTTP port; every other target on QUARRY_OPS_PORT.
            const served = env.QUARRY_TARGET === 'gateway' ? Number(env.PORT) : Number(env.QUARRY_OPS_PORT);
            expect({
              deployment: d.metadata.name,
              readiness: probe('readinessProbe'),
              liveness: probe('livenessProbe'),
            }).toEqual({
              deployment: d.metadata.name,
              readiness: { grpc: undefined, path: '/readyz', port: served },
              liveness: { grpc: undefined, path: '/healthz', port: served },
            });
          }
        }
        expect(docs.some((d) => d.kind === 'HorizontalPodAutoscaler' && d.metadata.name === 'chart-worker')).toBe(true);
        // Budgets where Deployments run several pods; a laptop cluster of single pods has none to keep.
        expect(docs.filter((d) => d.kind === 'PodDisruptionBudget').length).toBe(overlay === 'prod' ? 6 : 0);
        expect(docs.some((d) => d.kind === 'NetworkPolicy')).toBe(true);
        if (overlay === 'dev')
          expect(
            docs
              .filter((d) => d.kind === 'StatefulSet')
              .map((d) => d.metadata.name)
              .sort(),
          ).toEqual(['mongo', 'redis', 'typesense']);
      });

      it('sets only environment variables the config schema knows, and every one each target needs', () => {
        const problems = k8sContainers(docs).flatMap(envProblems);
        expect(problems).toEqual([]);
      });

      it('gives every gRPC party QUARRY_INTERNAL_TOKEN from a Secret, and ships a value for it only in dev', () => {
        // The chart worker speaks no gRPC: it gets no internal credential.
        const deployments = docs.filter(
          (d) => d.kind === 'Deployment' && quarryContainers(d).length > 0 && d.metadata.name !== 'chart-worker',
        );
        expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
          'chart',
          'crosstab',
          'gateway',
          'ingest',
          'query',
          'reports',
        ]);
        for (const d of deployments) {
          for (const c of quarryContainers(d)) {
            const entries = (c.env ?? []).filter((e) => e.name === 'QUARRY_INTERNAL_TOKEN');
            expect({ deployment: d.metadata.name, entries }).toEqual({
              deployment: d.metadata.name,
              entries: [
                {
                  name: 'QUARRY_INTERNAL_TOKEN',
                  valueFrom: { secretKeyRef: { name: 'quarry-internal-token', key: 'token' } },
                },
              ],
            });
          }
        }
        // Not as a literal through a ConfigMap or the shared Secret either, where it would override or leak.
        for (const d of docs.filter(
          (x) => x.kind === 'ConfigMap' || (x.kind === 'Secret' && x.metadata.name !== 'quarry-internal-token'),
        )) {
          expect(Object.keys({ ...(d.data ?? {}), ...(d.stringData ?? {}) })).not.toContain('QUARRY_INTERNAL_TOKEN');
        }
        const secret = docs.find((d) => d.kind === 'Secret' && d.metadata.name === 'quarry-internal-token');
        if (overlay === 'dev') expect(secret?.stringData?.token).toMatch(/^[\x21-\x7e]{32,}$/);
        else expect(secret).toBeUndefined();
      });

      it('has the snapshot volume written by the ingest pods and the loader Job alone, read-only everywhere else, on storage that allows both', () => {
        const claim = docs.find((d) => d.kind === 'PersistentVolumeClaim' && d.metadata.name === 'quarry-snapshots')!;
        const modes = (claim.spec as { accessModes: string[] }).accessModes;
        // A claim is bound in one mode at a time: the writers writing and the services reading from other
        // nodes need ReadWriteMany; on a one-node laptop cluster ReadWriteOnce serves them all.
        expect(modes).toEqual(
          expect.arrayContaining(
            overlay === 'prod' ? ['ReadWriteMany'] : [expect.stringMatching(/^ReadWrite(Once|Many)$/)],
          ),
        );
        const writers: string[] = [];
        const readers: string[] = [];
        for (const d of docs.filter((x) => WORKLOAD_KINDS.includes(x.kind))) {
          const t = podTemplate(d);
          const volume = (t.spec.volumes ?? []).find((v) => v.persistentVolumeClaim?.claimName === 'quarry-snapshots');
          if (!volume) continue;
          const mounts = t.spec.containers.flatMap((c) => (c.volumeMounts ?? []).filter((m) => m.name === volume.name));
          expect({ workload: d.metadata.name, mounted: mounts.length }).toEqual({
            workload: d.metadata.name,
            mounted: t.spec.containers.length,
          });
          const readOnly = volume.persistentVolumeClaim!.readOnly === true && mounts.every((m) => m.readOnly === true);
          (readOnly ? readers : writers).push(`${d.kind}/${d.metadata.name}`);
        }
        // The ingest service (uploads) and its one-off form, the loader Job: no reader can change a version.
        expect(writers.sort()).toEqual(['Deployment/ingest', 'Job/quarry-loader']);
        // Only the pods that read snapshots mount them: a mount nobody reads only ties the pod to the volume.
        expect(readers.sort()).toEqual(['crosstab', 'query'].map((n) => `Deployment/${n}`));
        // A named class: no managed cluster's default serves ReadWriteMany, so the claim would stay Pending.
        const storageClass = (claim.spec as { storageClassName?: string }).storageClassName;
        if (overlay === 'prod') expect(storageClass).toEqual(expect.stringMatching(/\S/));
        const loader = podTemplate(docs.find((d) => d.kind === 'Job' && d.metadata.name === 'quarry-loader')!).spec
          .containers[0];
        expect([...(loader.command ?? []), ...(loader.args ?? [])].join(' ')).toContain('quarry index load');
      });

      // One Secret per credential, and each workload reads only those it uses.
      it('hands each workload only the credentials it uses: the chart worker Redis alone, the query pods a search-only Typesense key', () => {
        const fromSecrets = new Map<string, { names: string[]; secrets: string[] }>();
        const sources = new Map(outOfBand);
        for (const d of docs) if (d.kind === 'Secret') sources.set(`Secret/${d.metadata.name}`, contents(d));
        // Generated names carry a hash of their content (dev's secretGenerator): the base name is compared.
        const base = (name: string) => name.replace(/-[a-z0-9]{10}$/, '');
        for (const d of docs.filter((x) => WORKLOAD_KINDS.includes(x.kind) && quarryContainers(x).length > 0)) {
          const names = new Set<string>();
          const secrets = new Set<string>();
          for (const c of quarryContainers(d)) {
            for (const r of c.envFrom ?? []) {
              if (!r.secretRef) continue;
              secrets.add(base(r.secretRef.name));
              for (const key of Object.keys(sources.get(`Secret/${r.secretRef.name}`) ?? {})) names.add(key);
            }
            for (const e of c.env ?? [])
              if (e.valueFrom?.secretKeyRef) {
                names.add(e.name);
                secrets.add(base(e.valueFrom.secretKeyRef.name));
              }
          }
          fromSecrets.set(d.metadata.name, { names: [...names].sort(), secrets: [...secrets].sort() });
        }
        const token = 'quarry-internal-token';
        expect(Object.fromEntries(fromSecrets)).toEqual({
          gateway: {
            names: [
              'MONGODB_URL',
              'QUARRY_EMBED_SECRET',
              'QUARRY_INTERNAL_TOKEN',
              'QUARRY_LINK_KEY',
              'QUARRY_WEBHOOK_KEY',
              'REDIS_URL',
            ],
            secrets: [
              'quarry-embed-secret',
              'quarry-internal-token',
              'quarry-link-key',
              'quarry-mongodb',
              'quarry-redis',
              'quarry-webhook-key',
            ],
          },
          query: {
            names: ['MONGODB_URL', 'QUARRY_CURSOR_SECRET', 'QUARRY_INTERNAL_TOKEN', 'TYPESENSE_API_KEY'],
            secrets: ['quarry-cursor-secret', token, 'quarry-mongodb', 'quarry-typesense-search'],
          },
          crosstab: { names: ['MONGODB_URL', 'QUARRY_INTERNAL_TOKEN'], secrets: [token, 'quarry-mongodb'] },
          chart: { names: ['QUARRY_INTERNAL_TOKEN', 'REDIS_URL'], secrets: [token, 'quarry-redis'] },
          reports: {
            names: ['MONGODB_URL', 'QUARRY_CURSOR_SECRET', 'QUARRY_INTERNAL_TOKEN'],
            secrets: ['quarry-cursor-secret', token, 'quarry-mongodb'],
          },
          'chart-worker': { names: ['REDIS_URL'], secrets: ['quarry-redis'] },
          // As the loader: the metadata store and the Typesense admin key (a load creates collections); Redis
          // for the sources and their runs, and the key their passwords are encrypted with.
          ingest: {
            names: ['MONGODB_URL', 'QUARRY_INTERNAL_TOKEN', 'QUARRY_SOURCE_KEY', 'REDIS_URL', 'TYPESENSE_API_KEY'],
            secrets: [token, 'quarry-mongodb', 'quarry-redis', 'quarry-source-key', 'quarry-typesense-admin'],
          },
          'quarry-loader': {
            names: ['MONGODB_URL', 'TYPESENSE_API_KEY'],
            secrets: ['quarry-mongodb', 'quarry-typesense-admin'],
          },
        });
        // The admin key is the writers' alone (the loader's and ingest's); in prod the search key is another
        // Secret the operator scopes.
        expect(
          [...fromSecrets]
            .filter(([, v]) => v.secrets.includes('quarry-typesense-admin'))
            .map(([name]) => name)
            .sort(),
        ).toEqual(['ingest', 'quarry-loader']);
        const secretNames = docs.filter((d) => d.kind === 'Secret').map((d) => base(d.metadata.name));
        if (overlay === 'dev')
          expect(secretNames.sort()).toEqual([
            'quarry-cursor-secret',
            'quarry-embed-secret',
            'quarry-internal-token',
            'quarry-link-key',
            'quarry-mongodb',
            'quarry-redis',
            'quarry-redis-server',
            'quarry-source-key',
            'quarry-typesense-admin',
            'quarry-typesense-search',
            'quarry-webhook-key',
          ]);
        if (overlay === 'dev') {
          // The dev Redis asks for the password its clients' REDIS_URL carries.
          const redis = docs.find((d) => d.kind === 'StatefulSet' && d.metadata.name === 'redis')!;
          type Container = {
            args: string[];
            env: Array<{ name: string; valueFrom: { secretKeyRef: { name: string; key: string } } }>;
          };
          const container = (redis.spec as { template: { spec: { containers: Container[] } } }).template.spec
            .containers[0];
          expect(container.args).toEqual(['redis-server', '--appendonly', 'yes', '--requirepass', '$(REDIS_PASSWORD)']);
          const ref = container.env.find((e) => e.name === 'REDIS_PASSWORD')!.valueFrom.secretKeyRef;
          const secretOf = (name: string) => docs.find((d) => d.kind === 'Secret' && base(d.metadata.name) === name)!;
          expect(base(ref.name)).toBe('quarry-redis-server');
          const server = Buffer.from(secretOf('quarry-redis-server').data![ref.key], 'base64').toString();
          const url = Buffer.from(secretOf('quarry-redis').data!.REDIS_URL, 'base64').toString();
          expect(decodeURIComponent(new URL(url).password)).toBe(server);
        } else {
          const kustomization = fs.readFileSync(
            path.join(REPO_ROOT, 'k8s', 'overlays', 'prod', 'kustomization.yaml'),
            'utf8',
          );
          expect(kustomization).toMatch(/"actions":\["documents:search"\]/);
        }
      });

      // An init reaps Chromium's orphans. The image's ENTRYPOINT is tini (infra/Dockerfile,
      // checked below); a container that replaces it must start tini itself.
      it('runs every Quarry container under the init of the image', () => {
        const entrypoint = imageEntrypoint();
        for (const d of docs.filter((x) => WORKLOAD_KINDS.includes(x.kind) && quarryContainers(x).length > 0))
          for (const c of quarryContainers(d)) {
            const first = (c.command ?? entrypoint).slice(0, 3);
            expect({ workload: d.metadata.name, first }).toEqual({
              workload: d.metadata.name,
              first: ['/usr/bin/tini', '-s', '--'],
            });
          }
      });

      it('ships Secrets only in dev, and every Secret prod reads is one it documents creating out of band', () => {
        expect(kustomize('base').filter((d) => d.kind === 'Secret')).toEqual([]);
        const secrets = new Map(docs.filter((d) => d.kind === 'Secret').map((d) => [d.metadata.name, contents(d)]));
        const refs = docs
          .filter((d) => WORKLOAD_KINDS.includes(d.kind))
          .flatMap((d) => secretRefs(d).map((r) => ({ ...r, by: d.metadata.name })));
        expect(refs.length).toBeGreaterThan(0);
        if (overlay === 'prod') {
          expect([...secrets.keys()]).toEqual([]);
          const kustomization = fs.readFileSync(
            path.join(REPO_ROOT, 'k8s', 'overlays', 'prod', 'kustomization.yaml'),
            'utf8',
          );
          for (const name of new Set(refs.map((r) => r.name)))
            expect({ name, documented: kustomization.includes(`create secret generic ${name} `) }).toEqual({
              name,
              documented: true,
            });
          // An example for every Secret read but the internal token (made from a literal), and none more.
          expect([...outOfBand.keys()].sort()).toEqual(
            [...new Set(refs.map((r) => `Secret/${r.name}`))]
              .filter((n) => n !== 'Secret/quarry-internal-token')
              .sort(),
          );
        } else {
          for (const r of refs) {
            expect({ ref: r, found: secrets.has(r.name) }).toEqual({ ref: r, found: true });
            if (r.key) expect({ ref: r, found: r.key in secrets.get(r.name)! }).toEqual({ ref: r, found: true });
          }
        }
      });

      it('lets Prometheus, from its namespace, scrape the metrics port of every process, and no other namespace', () => {
        const prometheus: Endpoint = {
          pod: { namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus' } },
        };
        const stranger: Endpoint = {
          pod: { namespace: 'default', labels: { 'app.kubernetes.io/name': 'prometheus' } },
        };
        const scraped = docs.filter(
          (d) => d.kind === 'Deployment' && podTemplate(d).metadata.annotations?.['prometheus.io/scrape'] === 'true',
        );
        expect(scraped.map((d) => d.metadata.name).sort()).toEqual([
          'chart',
          'chart-worker',
          'crosstab',
          'gateway',
          'ingest',
          'query',
          'reports',
        ]);
        for (const d of scraped) {
          const port = Number(podTemplate(d).metadata.annotations!['prometheus.io/port']);
          expect({
            scrape: d.metadata.name,
            port,
            allowed: connectionAllowed(policies, prometheus, podOf(d), port),
          }).toEqual({ scrape: d.metadata.name, port, allowed: true });
          // The ops port, the gateway's included (/metrics left the public port), is Prometheus's alone.
          expect(port).toBe(9464);
          expect({ d: d.metadata.name, allowed: connectionAllowed(policies, stranger, podOf(d), port) }).toEqual({
            d: d.metadata.name,
            allowed: false,
          });
        }
      });

      it('lets every Quarry pod resolve names and reach its stores, and nothing else outside', () => {
        const kubeDns: Endpoint = { pod: { namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } } };
        const envs = quarryEnvs(docs, outOfBand);
        expect(envs.map((e) => e.doc.metadata.name).sort()).toEqual([
          'chart',
          'chart-worker',
          'crosstab',
          'gateway',
          'ingest',
          'quarry-loader',
          'query',
          'reports',
        ]);
        for (const { doc, env } of envs) {
          const pod = podOf(doc);
          const at = (what: string, allowed: boolean) => ({ from: doc.metadata.name, what, allowed });
          for (const protocol of ['UDP', 'TCP'])
            expect(at(`DNS ${protocol}`, connectionAllowed(policies, pod, kubeDns, 53, protocol))).toEqual(
              at(`DNS ${protocol}`, true),
            );
          // Isolated for egress: an arbitrary port outside, or DNS anywhere but the cluster's, is refused.
          expect(at('port 9999 outside', connectionAllowed(policies, pod, { ip: '203.0.113.10' }, 9999))).toEqual(
            at('port 9999 outside', false),
          );
          // Scheduled deliveries leave from the gateway alone: SMTP submission and webhooks (HTTPS, and the
          // overlay's own ports: prod's relay takes 587 and its receivers 8443).
          const delivers = doc.metadata.name === 'gateway';
          for (const port of [587, 443, 8443])
            expect(at(`delivery port ${port}`, connectionAllowed(policies, pod, { ip: '203.0.113.10' }, port))).toEqual(
              at(`delivery port ${port}`, delivers || port === 443),
            );
          // The base opens SMTP relay (25) and plain-HTTP webhooks; prod narrows the list to what it uses.
          expect(at('smtp 25', connectionAllowed(policies, pod, { ip: '203.0.113.10' }, 25))).toEqual(
            at('smtp 25', delivers && overlay === 'dev'),
          );
          expect(
            at(
              'DNS elsewhere',
              connectionAllowed(policies, pod, { pod: { namespace: 'default', labels: {} } }, 53, 'UDP'),
            ),
          ).toEqual(at('DNS elsewhere', false));
          // Each pod has the addresses of the stores it uses (its Secrets), and reaches them.
          for (const name of ['TYPESENSE_URL', 'MONGODB_URL', 'REDIS_URL']) {
            if (env[name] === undefined) continue;
            const url = new URL(env[name]);
            const port = url.port ? Number(url.port) : DEFAULT_PORTS[url.protocol];
            const dest = destination(docs, doc.metadata.namespace ?? '', url.hostname, port);
            expect(at(name, connectionAllowed(policies, pod, dest.to, dest.port))).toEqual(at(name, true));
          }
        }
      });

      it('has the gateway dial headless Services, straight to the pods of each service, which take gRPC from the gateway alone', () => {
        const gateway = quarryEnvs(docs, outOfBand).find((e) => e.doc.metadata.name === 'gateway')!;
        const gatewayPod = podOf(gateway.doc);
        const outsider: Endpoint = { pod: { namespace: 'default', labels: {} } };
        // Every service the config knows (ingest included): a missing address would dial the gateway's loopback.
        expect(SERVICES.filter((s) => gateway.env[addrVariable(s)] === undefined)).toEqual([]);
        for (const service of SERVICES) {
          const { host, port } = hostPort(gateway.env[addrVariable(service)]);
          // The address the gateway dials is the one the service's own pods listen on.
          const own = quarryEnvs(docs, outOfBand).filter((e) => e.env.QUARRY_TARGET === service);
          expect({ service, listens: own.map((e) => e.env[addrVariable(service)]) }).toEqual({
            service,
            listens: [gateway.env[addrVariable(service)]],
          });
          const dest = destination(docs, gateway.doc.metadata.namespace ?? '', host, port);
          // Without a cluster IP nothing translates ports: the address's port must be the pods' own.
          expect({
            service: host,
            clusterIP: (dest.service?.spec as { clusterIP?: string }).clusterIP,
            podPort: dest.port,
          }).toEqual({ service: host, clusterIP: 'None', podPort: port });
          expect(dest.workloads.map((w) => w.metadata.name)).toEqual([host]);
          expect({ host, fromGateway: connectionAllowed(policies, gatewayPod, dest.to, port) }).toEqual({
            host,
            fromGateway: true,
          });
          expect({ host, fromOutside: connectionAllowed(policies, outsider, dest.to, port) }).toEqual({
            host,
            fromOutside: false,
          });
          if (host !== 'query')
            expect({ host, fromQuery: connectionAllowed(policies, podOf(deployment('query')), dest.to, port) }).toEqual(
              { host, fromQuery: false },
            );
        }
      });

      it('admits gRPC to the ingest pods from the gateway on 50055 alone; nothing else reaches them but Prometheus', () => {
        const ingest = podOf(deployment('ingest'));
        const gateway = podOf(deployment('gateway'));
        const port = DEFAULT_SERVICE_PORTS.ingest;
        expect(connectionAllowed(policies, gateway, ingest, port)).toBe(true);
        // Not on another port, not even the ops port (Prometheus's alone).
        for (const other of [50051, 50052, 50053, 50054, 8080, 9464])
          expect({ other, allowed: connectionAllowed(policies, gateway, ingest, other) }).toEqual({
            other,
            allowed: false,
          });
        // No other pod of the build, nor a pod of this namespace or another outside it, may load an index.
        const others: Array<[string, Endpoint]> = docs
          .filter((d) => WORKLOAD_KINDS.includes(d.kind) && !['gateway', 'ingest'].includes(d.metadata.name))
          .map((d) => [d.metadata.name, podOf(d)]);
        others.push(
          ['a pod of the namespace', { pod: { namespace: deployment('ingest').metadata.namespace ?? '', labels: {} } }],
          ['another namespace', { pod: { namespace: 'default', labels: {} } }],
          ['outside the cluster', { ip: '203.0.113.10' }],
        );
        expect(others.length).toBeGreaterThan(6);
        for (const [name, from] of others)
          expect({ from: name, allowed: connectionAllowed(policies, from, ingest, port) }).toEqual({
            from: name,
            allowed: false,
          });
        // It calls no other service itself.
        for (const service of SERVICES.filter((s) => s !== 'ingest')) {
          const to = podOf(deployment(service));
          const servicePort = DEFAULT_SERVICE_PORTS[service];
          expect({ service, allowed: connectionAllowed(policies, ingest, to, servicePort) }).toEqual({
            service,
            allowed: false,
          });
        }
        // One replica everywhere, scaled apart from the readers: no autoscaler, no budget, its own Deployment.
        expect((deployment('ingest').spec as { replicas?: number }).replicas).toBe(1);
        for (const d of docs.filter((x) => ['HorizontalPodAutoscaler', 'PodDisruptionBudget'].includes(x.kind)))
          expect(d.metadata.name).not.toBe('ingest');
      });

      it('leaves the replica count of an autoscaled Deployment to its HorizontalPodAutoscaler', () => {
        const hpas = docs.filter((d) => d.kind === 'HorizontalPodAutoscaler');
        expect(hpas.length).toBeGreaterThan(0);
        for (const hpa of hpas) {
          const target = (hpa.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef;
          expect(target.kind).toBe('Deployment');
          expect({
            deployment: target.name,
            replicas: (deployment(target.name).spec as { replicas?: number }).replicas,
          }).toEqual({ deployment: target.name, replicas: undefined });
        }
      });

      it('has PodDisruptionBudgets that still let a drain evict a pod when a Deployment runs its fewest pods', () => {
        const hpaMin = new Map(
          docs
            .filter((d) => d.kind === 'HorizontalPodAutoscaler')
            .map((d) => {
              const spec = d.spec as { scaleTargetRef: { name: string }; minReplicas?: number };
              return [spec.scaleTargetRef.name, spec.minReplicas ?? 1] as const;
            }),
        );
        for (const pdb of docs.filter((d) => d.kind === 'PodDisruptionBudget')) {
          const spec = pdb.spec as {
            selector: LabelSelector;
            minAvailable?: number | string;
            maxUnavailable?: number | string;
          };
          const covered = docs.filter(
            (d) => d.kind === 'Deployment' && selects(spec.selector, podTemplate(d).metadata.labels),
          );
          expect({ pdb: pdb.metadata.name, deployments: covered.length }).toEqual({
            pdb: pdb.metadata.name,
            deployments: 1,
          });
          const pods = hpaMin.get(covered[0].metadata.name) ?? (covered[0].spec as { replicas?: number }).replicas ?? 1;
          // Percentages round up, as the disruption controller rounds them.
          const count = (v: number | string) => (typeof v === 'number' ? v : Math.ceil((parseInt(v, 10) / 100) * pods));
          const evictable =
            spec.maxUnavailable !== undefined ? count(spec.maxUnavailable) : pods - count(spec.minAvailable ?? 0);
          expect({ pdb: pdb.metadata.name, pods, evictable: Math.min(evictable, pods) >= 1 }).toEqual({
            pdb: pdb.metadata.name,
            pods,
            evictable: true,
          });
        }
      });
    },
  );

describeIf(
  hasKubectl,
  'kubectl (with its built-in kustomize) is not installed on this machine',
  "the loader Job's script (k8s/base/loader-job.yaml)",
  () => {
    it("loads both sample indexes with the image's CLI, and a second run keeps them", async () => {
      const job = kustomize('base').find((d) => d.kind === 'Job' && d.metadata.name === 'quarry-loader')!;
      const container = podTemplate(job).spec.containers[0];
      expect(container.command).toEqual(['/usr/bin/tini', '-s', '--', '/bin/sh', '-c']);
      const script = container.args![0];
      // The image's paths (infra/Dockerfile: /app, the sample copied to /app/sample), mapped onto this checkout.
      for (const p of ['/app/apps/quarry/bin/quarry.js', '/app/sample/movies.json', '/app/sample/airports.csv'])
        expect(script).toContain(p);
      const local = script
        .replaceAll('/app/apps/quarry/bin/quarry.js', QUARRY_BIN)
        .replaceAll('/app/sample/', `${VEGA}/`);
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-loader-job-'));
      const env = { QUARRY_DATA_DIR: dataDir };
      const cleanEnv = Object.fromEntries(
        Object.entries(process.env).filter(
          ([k]) => !k.startsWith('QUARRY_') && !['TYPESENSE_URL', 'MONGODB_URL', 'REDIS_URL'].includes(k),
        ),
      );
      const run = () => promisify(execFile)('sh', ['-c', local], { env: { ...cleanEnv, ...env }, encoding: 'utf8' });
      try {
        const first = await run();
        expect(first.stdout).toContain('published movies version 1');
        expect(first.stdout).toContain('published airports version 1');
        const second = await run();
        expect(second.stdout).not.toContain('published');
        const list = await runCli(['index', 'list'], env);
        expect(
          list.stdout
            .split('\n')
            .filter(Boolean)
            .map((l) => l.split('\t').slice(0, 2).join(' '))
            .sort(),
        ).toEqual(['airports v1', 'movies v1', 'name version']);
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  },
);

describeIf(
  hasCompose,
  'docker-compose is not installed (npm test installs it from Debian)',
  'docker-compose.yml',
  () => {
    let services: Record<
      string,
      {
        image?: string;
        profiles?: string[];
        environment?: Record<string, string | null>;
        entrypoint?: string[];
        healthcheck?: { test?: string[] };
        // docker-compose v1 prints SOURCE:TARGET:MODE, v2 the long form.
        volumes?: Array<string | { type: string; source: string; target: string; read_only?: boolean }>;
      }
    >;

    beforeAll(() => {
      const out = execFileSync('docker-compose', ['-f', path.join(REPO_ROOT, 'docker-compose.yml'), 'config'], {
        encoding: 'utf8',
        // What `docker compose up` needs from its user (the compose file refuses a well-known key).
        env: { ...process.env, TYPESENSE_API_KEY: 'compose-config-check-key' },
      });
      services = (parse(out) as { services: typeof services }).services;
    });

    it('validates (docker-compose config) with every store and every target', () => {
      // A profile's services start only when it is named (`--profile clickhouse`): the ClickHouse cluster.
      const plain = Object.keys(services).filter((name) => !services[name].profiles?.length);
      const profiled = Object.keys(services).filter((name) => services[name].profiles?.length);
      expect(profiled.every((name) => services[name].profiles?.includes('clickhouse'))).toBe(true);
      expect(profiled.sort()).toEqual([
        'clickhouse-keeper-1',
        'clickhouse-keeper-2',
        'clickhouse-keeper-3',
        'clickhouse-s1r1',
        'clickhouse-s1r2',
        'clickhouse-s2r1',
        'clickhouse-s2r2',
        'crosstab-clickhouse',
      ]);
      expect(plain.sort()).toEqual([
        'chart',
        'chart-worker',
        'crosstab',
        'gateway',
        'ingest',
        'loader',
        'mongo',
        'query',
        'redis',
        'reports',
        'typesense',
      ]);
    });

    it('sets only environment variables the config schema knows, and every one each target needs', () => {
      const containers: ContainerEnv[] = Object.entries(services)
        .filter(([, s]) => String(s.image).startsWith('quarry'))
        .map(([name, s]) => ({
          where: `compose service ${name}`,
          target: name === 'loader' ? 'loader' : ((s.environment?.QUARRY_TARGET ?? '') as ContainerEnv['target']),
          env: Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, v ?? ''])),
        }));
      expect(containers).toHaveLength(9);
      expect(containers.flatMap(envProblems)).toEqual([]);
    });

    // Every long-running Quarry container reports readiness over plain HTTP
    // (/readyz, on the port the process serves it on), and the gateway waits for the services to be ready.
    it('checks the readiness of every Quarry process over HTTP on the port it serves /readyz on', () => {
      const quarry = Object.entries(services).filter(
        ([name, s]) => String(s.image).startsWith('quarry') && name !== 'loader',
      );
      expect(quarry).toHaveLength(8);
      for (const [name, s] of quarry) {
        const env = s.environment ?? {};
        const port = env.QUARRY_TARGET === 'gateway' ? env.PORT : env.QUARRY_OPS_PORT;
        expect({ name, test: (s.healthcheck?.test ?? []).join(' ') }).toEqual({
          name,
          test: expect.stringContaining(`http://127.0.0.1:${port}/readyz`),
        });
      }
      const gateway = services.gateway as unknown as { depends_on: Record<string, { condition: string }> };
      for (const svc of SERVICES)
        expect({ svc, condition: gateway.depends_on[svc]?.condition }).toEqual({ svc, condition: 'service_healthy' });
    });

    it("names every service's address for the gateway, where that service listens", () => {
      const plain = Object.entries(services).filter(([, s]) => !s.profiles?.length);
      const gateway = services.gateway.environment ?? {};
      for (const service of SERVICES) {
        const listeners = plain.filter(([, s]) => s.environment?.QUARRY_TARGET === service);
        expect({ service, containers: listeners.map(([name]) => name) }).toEqual({ service, containers: [service] });
        // Compose resolves a service's name to its container: the address's host is the service itself.
        expect({ service, addr: gateway[addrVariable(service)] }).toEqual({
          service,
          addr: `${service}:${DEFAULT_SERVICE_PORTS[service]}`,
        });
        expect(listeners[0][1].environment?.[addrVariable(service)]).toBe(gateway[addrVariable(service)]);
      }
    });

    it('has the snapshots volume written by the loader and ingest alone, read-only in every other container', () => {
      const mounts = Object.entries(services).flatMap(([name, s]) =>
        (s.volumes ?? []).flatMap((v) => {
          const m =
            typeof v === 'string'
              ? { source: v.split(':')[0], target: v.split(':')[1], readOnly: v.split(':')[2] === 'ro' }
              : { source: v.source, target: v.target, readOnly: v.read_only === true };
          // Named volumes carry the project's prefix in the long form (quarry_snapshots, main_snapshots...).
          return m.source === 'snapshots' || m.source.endsWith('_snapshots') ? [{ name, ...m }] : [];
        }),
      );
      expect(
        mounts
          .filter((m) => !m.readOnly)
          .map((m) => m.name)
          .sort(),
      ).toEqual(['ingest', 'loader']);
      for (const m of mounts.filter((x) => !x.readOnly)) expect(m.target).toBe('/data');
      expect(mounts.filter((m) => m.readOnly).length).toBeGreaterThan(5);
    });

    it('runs every Quarry container under the init of the image', () => {
      const quarry = Object.entries(services).filter(([, s]) => String(s.image).startsWith('quarry'));
      for (const [name, s] of quarry)
        expect({ name, first: (s.entrypoint ?? imageEntrypoint()).slice(0, 3) }).toEqual({
          name,
          first: ['/usr/bin/tini', '-s', '--'],
        });
    });

    it('ships no literal Quarry secret: every process reads the ones the loader generates in /data/secrets', () => {
      const quarry = Object.entries(services).filter(([, s]) => String(s.image).startsWith('quarry'));
      expect(quarry).toHaveLength(9);
      for (const [name, s] of quarry) {
        const env = s.environment ?? {};
        expect({ name, cursor: env.QUARRY_CURSOR_SECRET, token: env.QUARRY_INTERNAL_TOKEN }).toEqual({
          name,
          cursor: undefined,
          token: undefined,
        });
        expect({ name, cursor: env.QUARRY_CURSOR_SECRET_FILE, token: env.QUARRY_INTERNAL_TOKEN_FILE }).toEqual({
          name,
          cursor: '/data/secrets/cursor-secret',
          token: '/data/secrets/internal-token',
        });
      }
      // The loader makes them before its first quarry command, which already reads them.
      expect(services.loader.entrypoint).toEqual(['/usr/bin/tini', '-s', '--', '/app/load-sample.sh']);
      const script = fs.readFileSync(path.join(REPO_ROOT, 'infra', 'load-sample.sh'), 'utf8');
      const init = script.indexOf('/app/init-secrets.sh /data/secrets');
      expect(init).toBeGreaterThan(0);
      expect(init).toBeLessThan(script.indexOf('quarry user'));
    });
  },
);

describeIf(
  hasCompose,
  'docker-compose is not installed (npm test installs it from Debian)',
  'docker-compose.yml: the Typesense health check',
  () => {
    it("runs infra/typesense-health.sh, mounted read-only into the container, on Typesense's port", () => {
      const out = execFileSync('docker-compose', ['-f', path.join(REPO_ROOT, 'docker-compose.yml'), 'config'], {
        encoding: 'utf8',
        // What `docker compose up` needs from its user (the compose file refuses a well-known key).
        env: { ...process.env, TYPESENSE_API_KEY: 'compose-config-check-key' },
      });
      const typesense = (
        parse(out) as {
          services: Record<
            string,
            {
              command: string[];
              healthcheck: { test: string[] };
              volumes: Array<string | { source: string; target: string; read_only?: boolean }>;
            }
          >;
        }
      ).services.typesense;
      expect(typesense.healthcheck.test).toEqual(['CMD', 'bash', '/quarry/typesense-health.sh', '8108']);
      const mounts = typesense.volumes.map((v) => {
        if (typeof v !== 'string') return { source: v.source, target: v.target, readOnly: v.read_only === true };
        const [source, target, mode] = v.split(':');
        return { source, target, readOnly: mode === 'ro' };
      });
      expect(mounts).toContainEqual({
        source: path.join(REPO_ROOT, 'infra', 'typesense-health.sh'),
        target: '/quarry/typesense-health.sh',
        readOnly: true,
      });
      // The port checked is the one the server listens on (its default: no --api-port given).
      expect(typesense.command).not.toContain('--api-port');
    });
  },
);

describe('infra/typesense-health.sh (the Typesense health check of docker-compose.yml)', () => {
  const script = path.join(REPO_ROOT, 'infra', 'typesense-health.sh');

  /** A stand-in Typesense: answers one request with STATUS and BODY as given, and records the request. */
  async function check(status: number, body: string): Promise<{ healthy: boolean; request: string }> {
    let request = '';
    const server = net.createServer((socket) => {
      socket.on('data', (d: Buffer) => {
        request += d.toString('latin1');
        if (request.includes('\r\n\r\n'))
          socket.end(
            `HTTP/1.1 ${status} X\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      await promisify(execFile)('bash', [script, String(port)], { timeout: 5000 });
      return { healthy: true, request };
    } catch {
      return { healthy: false, request };
    } finally {
      server.close();
    }
  }

  // What Typesense means: a 200 whose body is a JSON object with "ok": true (JSON.parse as the judge).
  const meant = (status: number, body: string) => {
    try {
      const v = JSON.parse(body) as unknown;
      return (
        status === 200 &&
        typeof v === 'object' &&
        v !== null &&
        !Array.isArray(v) &&
        (v as { ok?: unknown }).ok === true
      );
    } catch {
      return false;
    }
  };

  it('is healthy on 200 {"ok":true} alone, and asks for /health over HTTP/1.0', async () => {
    const cases: Array<[number, string]> = [
      [200, '{"ok":true}'],
      [503, '{"ok":false}'],
      [200, '{"ok":false}'],
      [200, '{"ok":true,"resource_error":"OUT_OF_DISK"}'],
      [200, ' { "ok" : true } '],
      [503, '{"ok":true}'],
      [500, 'ok'],
      [200, 'ok'],
      [200, ''],
      [200, '{}'],
      [200, '{"ok":"true"}'],
      [200, '{"ok":1}'],
      [200, '{"ok":trueish}'],
      [200, '{"ok":true} trailing'],
      [200, '{"ok":true}{"ok":false}'],
      [200, '{"ok":true,"ok":false}'],
      [200, '{"ok":false,"ok":true}'],
      [200, '{"ok":false,"note":"ok"}'],
      [200, JSON.stringify({ note: '"ok":true', ok: false })],
      [200, JSON.stringify({ note: 'a \\"ok\\": true }', ok: true })],
      [200, '{"ok":true'],
      [200, '["ok",true]'],
      [200, '{"notok":true}'],
    ];
    for (const [status, body] of cases) {
      const { healthy, request } = await check(status, body);
      expect({ status, body, healthy }).toEqual({ status, body, healthy: meant(status, body) });
      expect(request).toBe('GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n');
    }
  });

  it('is unhealthy on what it cannot read, even when it might say ok, and when nothing listens', async () => {
    // An escaped member name and a nested value: valid JSON, judged unhealthy rather than half-read.
    for (const body of ['{"o\\u006b":true}', '{"ok":true,"nested":{"ok":false}}'])
      expect({ body, healthy: (await check(200, body)).healthy }).toEqual({ body, healthy: false });
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await expect(promisify(execFile)('bash', [script, String(port)], { timeout: 5000 })).rejects.toMatchObject({
      code: 1,
    });
    await expect(promisify(execFile)('bash', [script, '8108; touch /tmp/x'], { timeout: 5000 })).rejects.toMatchObject({
      code: 2,
    });
  });
});

describe("infra/init-secrets.sh (the loader's first step)", () => {
  const script = path.join(REPO_ROOT, 'infra', 'init-secrets.sh');
  const mode = (f: string) => fs.statSync(f).mode & 0o777;

  it('makes the secrets once, 0600 in a 0700 directory, and the config accepts them', () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-init-secrets-')), 'secrets');
    execFileSync('sh', [script, dir], { stdio: 'pipe' });
    const token = path.join(dir, 'internal-token');
    const cursor = path.join(dir, 'cursor-secret');
    const redisPassword = path.join(dir, 'redis-password');
    expect([mode(dir), mode(token), mode(cursor), mode(redisPassword)]).toEqual([0o700, 0o600, 0o600, 0o600]);
    expect(fs.readFileSync(redisPassword, 'utf8')).toMatch(/^[A-Za-z0-9_-]{43}\n$/);
    expect(
      loadConfig({ QUARRY_TARGET: 'chart-worker', REDIS_URL: 'redis://redis:6379', REDIS_PASSWORD_FILE: redisPassword })
        .redis.url,
    ).toBe(`redis://:${fs.readFileSync(redisPassword, 'utf8').trim()}@redis:6379`);
    const first = [fs.readFileSync(token, 'utf8'), fs.readFileSync(cursor, 'utf8')];
    for (const text of first) expect(text).toMatch(/^[A-Za-z0-9_-]{43}\n$/);
    expect(first[0]).not.toBe(first[1]);
    const config = loadConfig({
      QUARRY_TARGET: 'query',
      QUARRY_INTERNAL_TOKEN_FILE: token,
      QUARRY_CURSOR_SECRET_FILE: cursor,
    });
    expect([config.grpc.internalToken, config.cursorSecret]).toEqual(first.map((t) => t.trim()));
    // The webhook key: one for every gateway, read from the file (the gateway's /data is read-only).
    const webhookKey = path.join(dir, 'webhook-key');
    expect(mode(webhookKey)).toBe(0o600);
    expect(loadConfig({ QUARRY_TARGET: 'all', QUARRY_WEBHOOK_KEY_FILE: webhookKey }).schedules.webhookKey).toBe(
      fs.readFileSync(webhookKey, 'utf8').trim(),
    );
    // The link key of large deliveries likewise, and a key of its own (one leaked does not sign the other).
    const linkKey = path.join(dir, 'link-key');
    expect(mode(linkKey)).toBe(0o600);
    expect(loadConfig({ QUARRY_TARGET: 'all', QUARRY_LINK_KEY_FILE: linkKey }).deliveryLinks.key).toBe(
      fs.readFileSync(linkKey, 'utf8').trim(),
    );
    expect(fs.readFileSync(linkKey, 'utf8')).not.toBe(fs.readFileSync(webhookKey, 'utf8'));

    // A restart keeps them; an empty file (an interrupted first start) is made again.
    fs.writeFileSync(cursor, '');
    execFileSync('sh', [script, dir], { stdio: 'pipe' });
    expect(fs.readFileSync(token, 'utf8')).toBe(first[0]);
    expect(fs.readFileSync(cursor, 'utf8')).toMatch(/^[A-Za-z0-9_-]{43}\n$/);
    expect(fs.readFileSync(cursor, 'utf8')).not.toBe(first[1]);
  });
});

describe('Chromium in the split deployment', () => {
  type Env = Record<string, string>;
  const compose = parse(fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { environment?: Env }>;
  };
  const k8sWorker = parseAllDocuments(fs.readFileSync(path.join(REPO_ROOT, 'k8s', 'base', 'chart-worker.yaml'), 'utf8'))
    .map((d) => d.toJS() as Doc)
    .find((d) => d.kind === 'Deployment');
  const k8sEnv = (doc: Doc | undefined): Env => {
    const spec = doc?.spec as {
      template: { spec: { containers: Array<{ env?: Array<{ name: string; value?: string }> }> } };
    };
    return Object.fromEntries((spec.template.spec.containers[0].env ?? []).map((e) => [e.name, e.value ?? '']));
  };

  it('keeps Chromium warm in the chart worker pods of compose and k8s, and nowhere else asks for it', () => {
    const byTarget = Object.values(compose.services)
      .map((svc) => svc.environment ?? {})
      .filter((env) => env.QUARRY_TARGET);
    const workers = byTarget.filter((env) => env.QUARRY_TARGET === 'chart-worker');
    expect(workers.length).toBeGreaterThan(0);
    for (const env of workers) expect(env.QUARRY_CHROMIUM_IDLE_S).toBe('0');
    // The other targets draw no chart: they neither start Chromium nor set its idle time.
    for (const env of byTarget.filter((e) => e.QUARRY_TARGET !== 'chart-worker'))
      expect(env.QUARRY_CHROMIUM_IDLE_S).toBeUndefined();
    expect(k8sEnv(k8sWorker)).toMatchObject({ QUARRY_TARGET: 'chart-worker', QUARRY_CHROMIUM_IDLE_S: '0' });
  });
});

describe('infra/Dockerfile: an init as PID 1', () => {
  const dockerfile = fs.readFileSync(path.join(REPO_ROOT, 'infra', 'Dockerfile'), 'utf8');
  const stage = (name: string) => {
    const start = dockerfile.search(new RegExp(`^FROM \\S+ AS ${name}$`, 'm'));
    const rest = dockerfile.slice(start + 1);
    const next = rest.search(/^FROM /m);
    return next < 0 ? dockerfile.slice(start) : dockerfile.slice(start, start + 1 + next);
  };

  it('installs tini in the quarry stage, which the chart-worker image builds on, and starts Node under it', () => {
    expect(stage('quarry')).toMatch(/apt-get install -y --no-install-recommends tini/);
    expect(stage('chart-worker')).toMatch(/^FROM quarry AS chart-worker$/m);
    // -s: a subreaper too, so it reaps where it is not PID 1 (shareProcessNamespace, docker run --init).
    expect(imageEntrypoint()).toEqual(['/usr/bin/tini', '-s', '--', 'node', 'apps/quarry/bin/quarry.js']);
    // The ENTRYPOINT is in the quarry stage: a later stage does not replace it.
    expect(stage('quarry')).toContain('ENTRYPOINT');
    expect(stage('chart-worker')).not.toContain('ENTRYPOINT');
  });
});

describe('the environment check itself', () => {
  it('fails on an unknown variable, a missing one and an invalid value', () => {
    const problems = envProblems({
      where: 'x',
      target: 'chart',
      env: {
        QUARRY_TARGET: 'chart',
        QUARRY_CHART_ADDR: 'chart:50053',
        QUARRY_GRPC_LISTEN_HOST: '0.0.0.0',
        REDIS_HOST: 'redis',
        PORT: 'eighty',
      },
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('sets REDIS_HOST'),
        expect.stringContaining('leaves out REDIS_URL'),
        expect.stringContaining(
          'leaves out QUARRY_INTERNAL_TOKEN (or QUARRY_INTERNAL_TOKEN_FILE), which target chart needs',
        ),
        expect.stringContaining(
          'QUARRY_INTERNAL_TOKEN: is required when the gateway and the services run in different processes',
        ),
        expect.stringContaining('PORT'),
      ]),
    );
  });
});
