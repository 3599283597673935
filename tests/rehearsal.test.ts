import { DuckDBInstance } from '@duckdb/node-api';
import { spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { parse } from 'yaml';
import { describeIf } from '@quarry/testkit';
import { QuarryMetrics } from '@quarry/metrics';
import { VEGA } from './support/datasets';
import { rpcClient } from './support/http';
import { createIdentity, type Identity } from './support/identities';
import {
  imageEntrypoint,
  kustomize,
  outOfBandSecrets,
  podTemplate,
  quarryContainers,
  quarryEnvs,
  type Container,
  type Doc,
} from './support/kustomize';
import { pngFacts } from './support/png';
import { freePort, QUARRY_BIN, REPO_ROOT } from './support/quarry-process';
import {
  commandLine,
  EndpointsProxy,
  podUid,
  podWritable,
  READ_ONLY_MOUNTS,
  readOnlyMountPoints,
  RehearsalRedis,
  RehearsedPod,
  TIME_SCALE,
  type HttpProbe,
  type PodPlan,
} from './support/rehearsal';
import { unwrap } from './support/stack';

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const hasRedis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;

type ProbedContainer = Container & {
  startupProbe?: HttpProbe;
  readinessProbe?: HttpProbe;
  livenessProbe?: HttpProbe;
};
type PodSpec = {
  securityContext?: { runAsUser?: number };
  terminationGracePeriodSeconds?: number;
  volumes?: Array<{
    name: string;
    emptyDir?: { sizeLimit?: string };
    persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  }>;
  automountServiceAccountToken?: boolean;
  topologySpreadConstraints?: Array<{ topologyKey: string }>;
};

const podSpec = (d: Doc) => podTemplate(d).spec as unknown as PodSpec;

/** Kubernetes quantities as bytes (the binary suffixes the manifests use). */
function bytes(q: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(q);
  if (!m) throw new Error(`not a quantity: ${q}`);
  return Number(m[1]) * { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[m[2] ?? '']!;
}

/** A webhook receiver: every POST, its headers and body. */
class Receiver {
  readonly got: Array<{ path: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      // A file a source reads (SOURCES.CREATE kind url), as an application's export would be served.
      if (req.method === 'GET' && req.url === '/orders.csv') {
        res.writeHead(200, { 'Content-Type': 'text/csv' }).end(ORDERS_CSV);
        return;
      }
      this.got.push({ path: req.url ?? '', headers: req.headers, body });
      res.writeHead(200).end('ok');
    });
  });
  port = 0;
  async start(): Promise<void> {
    this.port = await freePort();
    await new Promise<void>((r) => this.server.listen(this.port, '127.0.0.1', r));
  }
  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

/*
 * Hang guards, not targets: a set-up starts seven pods (two warm Chromium) and the manifests give each start
 * two minutes; a test that starts a pod waits up to that long for it. A busy 2-core machine must fit in them.
 */
const SETUP_GUARD_MS = 360_000;
const TEST_GUARD_MS = 240_000;

async function until<T>(what: string, read: () => Promise<T | undefined> | T | undefined, ms = 60000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A search export through the gateway: started, followed to done, downloaded; its records counted against
 * the index's total and its file found on the shared exports volume (the query pod wrote it, the gateway
 * published and served it).
 */
async function exportThroughGateway(baseUrl: string, token: string, exportsVolume: string): Promise<void> {
  const rpc = rpcClient(baseUrl, token);
  const params = { index: 'movies', query: '*', sort: [{ field: 'Title' }] };
  const total = unwrap<{ total: number }>(await rpc.call('QUERIES.EXECUTE', { ...params, pageSize: 1 })).data!.total;
  const started = unwrap<{ exportId: string }>(
    await rpc.call('EXPORTS.START', { method: 'QUERIES.EXECUTE', params, format: 'jsonl' }),
  );
  expect(started.error).toBeUndefined();
  const id = started.data!.exportId;
  const status = await until('the export', async () => {
    const s = unwrap<{ state: string; rowsWritten: number; bytes: number; error?: string }>(
      await rpc.call('EXPORTS.STATUS', { exportId: id }),
    ).data!;
    return s.state === 'done' || s.state === 'failed' ? s : undefined;
  });
  expect(status).toMatchObject({ state: 'done', rowsWritten: total });
  const res = await fetch(`${baseUrl}/exports/${id}`, { headers: { Authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  const lines = (await res.text()).split('\n').filter(Boolean);
  expect(lines).toHaveLength(total);
  expect(total).toBeGreaterThan(1000);
  expect(fs.readdirSync(exportsVolume)).toContain(`${id}.jsonl`);
}

/** What an upload may do: write indexes (its own), beside reading them. */
const UPLOAD_SCOPES = 'query:execute,indexes:read,indexes:write';

/**
 * An upload through the gateway (POST /indexes/<name>/records, streamed to the ingest pod, which loads it
 * onto the snapshot volume), then its records found through the gateway by a search the query pod answers
 * from that volume; the upload's spool file on the volume is gone once it is loaded.
 */
async function uploadThroughGateway(baseUrl: string, token: string, snapshotVolume: string): Promise<void> {
  const csv = 'id,name,note\n1,apple,crisp rehearsal fruit\n2,pear,soft\n3,plum,a rehearsal stone fruit\n';
  const res = await fetch(`${baseUrl}/indexes/fruit/records`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/csv' },
    body: csv,
  });
  const body = (await res.json()) as Record<string, unknown>;
  expect({ status: res.status, body }).toMatchObject({
    status: 200,
    body: { index: 'fruit', version: 1, rowsRead: 3, loaded: 3, rejected: 0, rejects: [] },
  });
  const found = unwrap<{ total: number; records: Array<Record<string, unknown>> }>(
    await rpcClient(baseUrl, token).call('QUERIES.EXECUTE', {
      index: 'fruit',
      query: 'rehearsal',
      sort: [{ field: 'id' }],
    }),
  );
  expect(found.error).toBeUndefined();
  expect({ total: found.data!.total, names: found.data!.records.map((r) => r.name) }).toEqual({
    total: 2,
    names: ['apple', 'plum'],
  });
  const spool = path.join(snapshotVolume, 'tmp');
  expect(fs.existsSync(spool) ? fs.readdirSync(spool).filter((n) => n.startsWith('upload-')) : []).toEqual([]);
}

const ORDERS_CSV = 'order_id,customer,amount\n1,ada,12.50\n2,grace,7.25\n3,ada,1.00\n';

/**
 * A source through the gateway (SOURCES.CREATE, kind url, a host QUARRY_SOURCE_ALLOW names): its run a job
 * on the deployment's Redis taken by the ingest pod, which reads the file and loads it onto the snapshot
 * volume; its rows then found by a search the query pod answers.
 */
async function sourceThroughGateway(baseUrl: string, token: string, fileUrl: string): Promise<void> {
  const rpc = rpcClient(baseUrl, token);
  const created = unwrap<{ sourceId: string }>(
    await rpc.call('SOURCES.CREATE', { name: 'orders', index: 'orders', kind: 'url', connection: { url: fileUrl } }),
  );
  expect(created.error).toBeUndefined();
  const { sourceId } = created.data!;
  const ran = unwrap<{ runId: string }>(await rpc.call('SOURCES.RUN', { sourceId }));
  expect(ran.error).toBeUndefined();
  const run = await until('the source run to end', async () => {
    const { data } = unwrap<{ runs: Array<{ runId: string; state: string }> }>(
      await rpc.call('SOURCES.RUNS', { sourceId }),
    );
    const r = data?.runs.find((x) => x.runId === ran.data!.runId);
    return r && (r.state === 'done' || r.state === 'failed') ? r : undefined;
  });
  expect(run).toMatchObject({ state: 'done', rowsRead: 3, loaded: 3, version: 1 });
  const found = unwrap<{ total: number; records: Array<Record<string, unknown>> }>(
    await rpc.call('QUERIES.EXECUTE', { index: 'orders', query: 'customer:ada', sort: [{ field: 'order_id' }] }),
  );
  expect(found.data?.records.map((r) => r.order_id)).toEqual([1, 3]);
}

/** The index a delivery too large to attach is made of: one airport's departures as JSON Lines are over 10 MB. */
const LARGE_FILE = path.join(VEGA, 'flights-3m.parquet');
const LARGE_ORIGIN = 'DFW';

/**
 * What an operator does to add data (the loader Job's comment): the image's CLI run with the snapshot volume
 * mounted and the loader's environment, before the volume is handed to the readers.
 */
function loadLargeIndex(env: Record<string, string>, uid: number | undefined): void {
  const loaded = spawnSync(process.execPath, [QUARRY_BIN, 'index', 'load', 'flights', LARGE_FILE], {
    encoding: 'utf8',
    ...(uid !== undefined ? { uid, gid: uid } : {}),
    env,
  });
  expect(loaded.stderr + loaded.stdout).toContain('published flights version 1');
}

/**
 * A scheduled delivery over QUARRY_ATTACHMENT_MAX_BYTES as the manifests set it: the webhook carries a link
 * that starts with the manifests' QUARRY_PUBLIC_URL (what recipients reach, not a pod's address), and the
 * link opens, without a token, on every gateway it may be routed to (`gateways`: base URLs standing for
 * the public address), as each signs and checks with the deployment's one link key.
 */
async function deliverLargeAsLink(o: {
  call: <T>(method: string, params: unknown) => Promise<{ data?: T; error?: unknown }>;
  receiver: Receiver;
  env: Record<string, string>;
  gateways: string[];
  at: string;
}): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const counted = await c.runAndReadAll(
    `SELECT count(*)::INTEGER AS n FROM read_parquet('${LARGE_FILE}') WHERE origin = '${LARGE_ORIGIN}'`,
  );
  const records = Number(counted.getRowObjects()[0].n);
  c.closeSync();
  const saved = await o.call<{ report: { guid: string } }>('QUERIES.EXECUTE', {
    index: 'flights',
    query: `origin:${LARGE_ORIGIN}`,
    pageSize: 5,
    saveReport: { name: 'departures' },
  });
  expect(saved.error).toBeUndefined();
  const made = await o.call<{ scheduleId: string }>('REPORTS.SCHEDULE', {
    guid: saved.data!.report.guid,
    cron: '0 8 1 1 *',
    format: 'jsonl',
    deliver: { webhook: { url: `http://127.0.0.1:${o.receiver.port}${o.at}` } },
    runNow: true,
  });
  expect(made.error).toBeUndefined();
  const got = await until('the delivery', () => o.receiver.got.find((g) => g.path === o.at), 120000);
  const body = JSON.parse(got.body) as { data?: unknown; link?: { url: string; bytes: number; expiresAt: string } };
  expect(body.data).toBeUndefined();
  const link = body.link!;
  expect(link.bytes).toBeGreaterThan(Number(o.env.QUARRY_ATTACHMENT_MAX_BYTES));
  expect(Date.parse(link.expiresAt) - Date.now()).toBeGreaterThan(
    Number(o.env.QUARRY_SIGNED_LINK_TTL_S) * 1000 - 600_000,
  );
  const publicUrl = o.env.QUARRY_PUBLIC_URL.replace(/\/$/, '');
  expect(link.url.startsWith(`${publicUrl}/exports/signed/`)).toBe(true);
  for (const gateway of o.gateways) {
    const res = await fetch(gateway + link.url.slice(publicUrl.length));
    expect({ gateway, status: res.status }).toEqual({ gateway, status: 200 });
    const text = await res.text();
    expect(Buffer.byteLength(text)).toBe(link.bytes);
    expect(text.split('\n').filter(Boolean)).toHaveLength(records);
  }
}

/** What no single machine can rehearse, said once per run. */
const STAND_INS = [
  'MongoDB -> the embedded SQLite store, one file on a writable path of its own shared by every pod (MONGODB_URL dropped)',
  'Typesense -> the embedded search engine (QUARRY_SEARCH_BACKEND=embedded, TYPESENSE_* dropped)',
  'NetworkPolicies -> not enforced (every pod shares this host network); checked by tests/deployment.test.ts',
  READ_ONLY_MOUNTS
    ? `read-only mount of the snapshot volume the ingest pod writes -> the folder bound read-only in the pod's own ${READ_ONLY_MOUNTS}`
    : 'read-only mount of the snapshot volume the ingest pod writes -> NOT emulated (no mount namespace here): writable',
  'pod network -> each container port on a free loopback port, Service names resolved to them',
  `probe periods x${TIME_SCALE}; /dev/shm (a Memory emptyDir) is the host's`,
];

/**
 * An overlay's Deployments as processes. `full` runs every scenario; `start` only starts them all, checks
 * their probes and serves a search, a crosstab and a chart (the prod overlay: same code, its own env).
 */
function rehearseOverlay(overlay: 'dev' | 'prod', scenario: 'full' | 'start'): void {
  describeIf(
    hasKubectl && hasRedis,
    'kubectl (with kustomize) and redis-server are needed to rehearse the manifests',
    `the deployment as written: k8s/overlays/${overlay} started as processes`,
    () => {
      const docs = kustomize(`overlays/${overlay}`);
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-rehearsal-'));
      fs.chmodSync(root, 0o755);
      const deployments = docs.filter((d) => d.kind === 'Deployment' && quarryContainers(d).length > 0);
      const uid = podUid(podSpec(deployments[0]).securityContext?.runAsUser);
      const stores = podWritable(path.join(root, 'stores'), uid);
      const snapshots = podWritable(path.join(root, 'snapshots'), uid);
      // The exports claim: one folder every pod that mounts it shares, read-write.
      const exportsVolume = podWritable(path.join(root, 'exports'), uid);
      // Prod's Secrets are made out of band: the test makes them, from their examples, one value each.
      const outOfBand = outOfBandSecrets(overlay);
      if (overlay === 'prod')
        outOfBand.set('Secret/quarry-internal-token', { token: randomBytes(32).toString('base64url') });
      const envs = quarryEnvs(docs, outOfBand);
      const gatewayEnv = envs.find((e) => e.doc.metadata.name === 'gateway')!.env;
      // The Redis every pod's REDIS_URL names (dev: the backing-stores StatefulSet; prod: an external one).
      const redisUrl = new URL(gatewayEnv.REDIS_URL);
      const redisPassword = decodeURIComponent(redisUrl.password);
      const webhookKey = gatewayEnv.QUARRY_WEBHOOK_KEY;
      const receiver = new Receiver();
      let redis: RehearsalRedis;
      let analyst: Identity;
      let uploader: Identity;
      const pods: RehearsedPod[] = [];
      let gatewayService: EndpointsProxy;
      let baseUrl: string;
      let plans: Map<string, (name: string) => Promise<PodPlan>>;

      const byComponent = (c: string) => pods.filter((p) => p.plan.name.startsWith(`${c}-`) && !p.exit);

      /** Every pod's plan, ports allocated first so that each Service name resolves to its pods' host ports. */
      async function planPods(): Promise<Map<string, (name: string) => Promise<PodPlan>>> {
        const hostPorts = new Map<string, Map<number, number>>();
        for (const d of deployments) {
          const m = new Map<number, number>();
          for (const p of quarryContainers(d)[0].ports ?? []) m.set(p.containerPort, await freePort());
          hostPorts.set(d.metadata.name, m);
        }
        // Service NAME:PORT -> 127.0.0.1:host port of the pod behind it; Redis is the rehearsal's.
        const addresses = new Map<string, string>([
          [`${redisUrl.hostname}:${redisUrl.port || 6379}`, `127.0.0.1:${redis.port}`],
        ]);
        for (const s of docs.filter((d) => d.kind === 'Service')) {
          const spec = s.spec as {
            selector: Record<string, string>;
            ports: Array<{ port: number; targetPort?: string | number }>;
          };
          const target = deployments.find((d) =>
            Object.entries(spec.selector).every(([k, v]) => podTemplate(d).metadata.labels[k] === v),
          );
          if (!target) continue;
          const c = quarryContainers(target)[0];
          for (const p of spec.ports) {
            const tp = p.targetPort ?? p.port;
            const cp = typeof tp === 'number' ? tp : c.ports!.find((x) => x.name === tp)!.containerPort;
            addresses.set(`${s.metadata.name}:${p.port}`, `127.0.0.1:${hostPorts.get(target.metadata.name)!.get(cp)}`);
          }
        }
        const out = new Map<string, (name: string) => Promise<PodPlan>>();
        for (const d of deployments) {
          const c = quarryContainers(d)[0] as ProbedContainer;
          const spec = podSpec(d);
          const fromManifest = envs.find((e) => e.doc === d)!.env;
          out.set(d.metadata.name, async (name) => {
            // Each replica its own ports (the first keeps the ones Services resolve to), its own emptyDirs.
            let ports = hostPorts.get(d.metadata.name)!;
            if (!name.endsWith('-0')) {
              ports = new Map();
              for (const p of c.ports ?? []) ports.set(p.containerPort, await freePort());
            }
            const podDir = path.join(root, 'pods', name);
            const mounts = new Map<string, string>();
            const readOnlyMounts: string[] = [];
            for (const m of c.volumeMounts ?? []) {
              const volume = spec.volumes!.find((v) => v.name === m.name)!;
              if (m.mountPath === '/dev/shm') continue;
              if (volume.persistentVolumeClaim?.claimName === 'quarry-snapshots') {
                mounts.set(m.mountPath, snapshots);
                // The ingest pod writes it meanwhile: read-only as a mount, not by modes it would need.
                if (m.readOnly || volume.persistentVolumeClaim.readOnly) readOnlyMounts.push(snapshots);
              } else if (volume.persistentVolumeClaim?.claimName === 'quarry-exports')
                mounts.set(m.mountPath, exportsVolume);
              else if (volume.emptyDir) mounts.set(m.mountPath, podWritable(path.join(podDir, m.name), uid));
            }
            if (!mounts.has('/data')) {
              // Not mounted: /data is a folder of the read-only root filesystem, holding only the MongoDB stand-in.
              const rootData = path.join(podDir, 'rootfs-data');
              if (!fs.existsSync(rootData)) {
                fs.mkdirSync(rootData, { recursive: true });
                fs.symlinkSync(path.join(stores, 'quarry.db'), path.join(rootData, 'quarry.db'));
                fs.chmodSync(rootData, 0o555);
              }
              mounts.set('/data', rootData);
            }
            const env: Record<string, string> = {};
            for (const [k, v] of Object.entries(fromManifest)) {
              let value = v;
              for (const [from, to] of addresses) value = value.replaceAll(from, to);
              const own = [...(c.ports ?? [])].find((p) => String(p.containerPort) === value);
              if (own) value = String(ports.get(own.containerPort));
              const mount = [...mounts.keys()].find((mp) => value === mp || value.startsWith(`${mp}/`));
              if (mount) value = mounts.get(mount)! + value.slice(mount.length);
              env[k] = value;
            }
            delete env.MONGODB_URL;
            delete env.TYPESENSE_URL;
            delete env.TYPESENSE_API_KEY;
            if (env.QUARRY_SEARCH_BACKEND) env.QUARRY_SEARCH_BACKEND = 'embedded';
            // What the image's environment gives: PATH, and /tmp as the temporary folder.
            env.PATH = process.env.PATH ?? '/usr/bin:/bin';
            env.TMPDIR = mounts.get('/tmp') ?? os.tmpdir();
            env.HOME = env.TMPDIR;
            if (d.metadata.name === 'gateway') env.QUARRY_WEBHOOK_ALLOW = `127.0.0.1:${receiver.port}`;
            return {
              name,
              argv: commandLine(c.command ?? imageEntrypoint(), c.args ?? []),
              env,
              ports,
              namedPorts: Object.fromEntries((c.ports ?? []).map((p) => [p.name!, p.containerPort])),
              probes: { startup: c.startupProbe, readiness: c.readinessProbe, liveness: c.livenessProbe },
              uid,
              terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 30,
              readOnlyMounts,
            };
          });
        }
        return out;
      }

      /** A new pod of a Deployment (a replica, a restart, a rollout's new pod), with free ports of its own. */
      async function startPod(
        deployment: string,
        name: string,
        change?: (env: Record<string, string>) => void,
      ): Promise<RehearsedPod> {
        const plan = await plans.get(deployment)!(name);
        change?.(plan.env);
        const pod = new RehearsedPod(plan);
        pods.push(pod);
        return pod;
      }

      beforeAll(async () => {
        process.stderr.write(`Rehearsal stand-ins:\n  ${STAND_INS.join('\n  ')}\n`);
        await receiver.start();
        redis = new RehearsalRedis(await freePort(), redisPassword);
        await redis.start();
        // The loader Job: its script as written, the image's paths mapped here, writing the snapshot volume.
        const job = docs.find((d) => d.kind === 'Job' && d.metadata.name === 'quarry-loader')!;
        const script = podTemplate(job)
          .spec.containers[0].args![0].replaceAll('/app/apps/quarry/bin/quarry.js', QUARRY_BIN)
          .replaceAll('/app/sample/', `${VEGA}/`);
        fs.symlinkSync(path.join(stores, 'quarry.db'), path.join(snapshots, 'quarry.db'));
        const loaderTmp = podWritable(path.join(root, 'pods', 'loader', 'tmp'), uid);
        const loaderEnv = { ...envs.find((e) => e.doc === job)!.env };
        for (const name of ['MONGODB_URL', 'TYPESENSE_URL', 'TYPESENSE_API_KEY']) delete loaderEnv[name];
        const loaded = spawnSync('sh', ['-c', script], {
          encoding: 'utf8',
          ...(uid !== undefined ? { uid, gid: uid } : {}),
          env: {
            PATH: process.env.PATH,
            HOME: loaderTmp,
            TMPDIR: loaderTmp,
            ...loaderEnv,
            QUARRY_SEARCH_BACKEND: 'embedded',
            QUARRY_DATA_DIR: snapshots,
            QUARRY_DUCKDB_TEMP_DIR: loaderTmp,
          },
        });
        expect(loaded.stderr + loaded.stdout).toContain('published movies version 1');
        if (scenario === 'full')
          loadLargeIndex(
            {
              PATH: process.env.PATH ?? '/usr/bin:/bin',
              HOME: loaderTmp,
              TMPDIR: loaderTmp,
              ...loaderEnv,
              QUARRY_SEARCH_BACKEND: 'embedded',
              QUARRY_DATA_DIR: snapshots,
              QUARRY_DUCKDB_TEMP_DIR: loaderTmp,
            },
            uid,
          );
        // From here on the ingest pod writes the snapshot volume (uploads), and the readers mount it read-only.
        analyst = await createIdentity(stores, 'analyst', { indexes: '*' });
        uploader = await createIdentity(stores, 'uploader', { indexes: '*', scopes: UPLOAD_SCOPES });
        if (uid !== undefined) for (const f of fs.readdirSync(stores)) fs.chownSync(path.join(stores, f), uid, uid);

        plans = await planPods();
        for (const d of deployments) {
          // Dev runs one replica of each; the chart worker's HPA would add one under load: two here.
          const replicas = d.metadata.name === 'chart-worker' ? 2 : 1;
          for (let i = 0; i < replicas; i++)
            await startPod(d.metadata.name, `${d.metadata.name}-${i}`, (env) => {
              // What an operator sets for the hosts sources read: here the test's file server.
              if (d.metadata.name === 'ingest') env.QUARRY_SOURCE_ALLOW = `127.0.0.1:${receiver.port}`;
            });
        }
        gatewayService = new EndpointsProxy(() => byComponent('gateway'), 'main');
        baseUrl = await gatewayService.start();
        await Promise.all(pods.map((p) => p.untilReady()));
      }, SETUP_GUARD_MS);

      afterAll(async () => {
        await gatewayService?.stop();
        await Promise.all(pods.map((p) => p.kill()));
        await redis?.stop();
        await receiver.stop();
      });

      const call = <T>(method: string, params: unknown) =>
        rpcClient(baseUrl, analyst.token)
          .call(method, params)
          .then((r) => unwrap<T>(r));
      const chart = (width: number, height: number) =>
        call<{ data: string; contentType: string }>('CROSSTAB.EXECUTE', {
          index: 'movies',
          rows: ['Major Genre'],
          columns: [{ field: 'MPAA Rating' }],
          totals: [{ aggregationType: 'Count' }],
          chartType: 'MSColumn2D',
          width,
          height,
        });
      const rendered = (p: RehearsedPod) => p.lines.filter((l) => l.includes('"chart rendered"')).length;

      it('starts every Deployment as a non-root process on read-only mounts; startup probes pass before liveness counts', () => {
        expect(pods.map((p) => p.plan.name).sort()).toEqual([
          'chart-0',
          'chart-worker-0',
          'chart-worker-1',
          'crosstab-0',
          'gateway-0',
          'ingest-0',
          'query-0',
          'reports-0',
        ]);
        for (const p of pods) {
          expect({ pod: p.plan.name, started: p.started, ready: p.ready, restarts: p.wouldRestart }).toEqual({
            pod: p.plan.name,
            started: true,
            ready: true,
            restarts: 0,
          });
          const first = p.events.findIndex((e) => e.probe !== 'startup');
          expect(p.events.slice(0, first).some((e) => e.probe === 'startup' && e.ok)).toBe(true);
          if (uid !== undefined) expect(fs.statSync(`/proc/${p.pid}`).uid).toBe(uid);
        }
        // The snapshot volume: mounted read-write by the ingest pod alone, read-only by the readers.
        const onVolume = pods.filter((p) => p.plan.env.QUARRY_DATA_DIR === snapshots);
        const readers = onVolume.filter((p) => p.plan.readOnlyMounts?.includes(snapshots));
        expect(readers.map((p) => p.plan.name).sort()).toEqual(['crosstab-0', 'query-0']);
        expect(onVolume.filter((p) => !readers.includes(p)).map((p) => p.plan.name)).toEqual(['ingest-0']);
        if (READ_ONLY_MOUNTS)
          for (const p of onVolume)
            expect({ pod: p.plan.name, readOnly: readOnlyMountPoints(p.pid!).includes(snapshots) }).toEqual({
              pod: p.plan.name,
              readOnly: readers.includes(p),
            });
      });

      it(
        'searches, computes a crosstab and draws PNG charts on both chart workers, through the gateway',
        async () => {
          const found = await call<{ total: number }>('QUERIES.EXECUTE', { index: 'movies', query: '"star wars"' });
          expect(found.error).toBeUndefined();
          expect(found.data!.total).toBeGreaterThan(0);
          const table = await call<{ contentType: string; rowCount: number }>('CROSSTAB.EXECUTE', {
            index: 'movies',
            rows: ['Major Genre'],
            totals: [{ aggregationType: 'Count' }],
          });
          expect(table.data).toMatchObject({ contentType: 'text/html' });
          const charts = await Promise.all(Array.from({ length: 6 }, () => chart(1200, 800)));
          for (const c of charts) {
            expect(c.error).toBeUndefined();
            expect(await pngFacts(Buffer.from(c.data!.data, 'base64'))).toMatchObject({ width: 1200, height: 800 });
          }
          for (const w of byComponent('chart-worker')) expect(rendered(w)).toBeGreaterThan(0);
        },
        TEST_GUARD_MS,
      );

      it(
        'exports a search through the gateway: written by the query pod on the shared exports volume, downloaded whole',
        async () => {
          await exportThroughGateway(baseUrl, analyst.token, exportsVolume);
        },
        TEST_GUARD_MS,
      );

      it(
        'takes a CSV upload through the gateway: loaded by the ingest pod onto the snapshot volume, then searched',
        async () => {
          await uploadThroughGateway(baseUrl, uploader.token, snapshots);
        },
        TEST_GUARD_MS,
      );

      it(
        'runs a source through the gateway: a job on Redis the ingest pod takes, its file read and loaded, then searched',
        async () => {
          await sourceThroughGateway(baseUrl, uploader.token, `http://127.0.0.1:${receiver.port}/orders.csv`);
        },
        TEST_GUARD_MS,
      );

      if (scenario === 'full') {
        it(
          "delivers a scheduled webhook signed with the deployment's one webhook key (its Secret)",
          async () => {
            const saved = await call<{ report: { guid: string } }>('CROSSTAB.EXECUTE', {
              index: 'movies',
              rows: ['Major Genre'],
              totals: [{ aggregationType: 'Count' }],
              format: 'csv',
              saveReport: { name: 'rehearsal' },
            });
            expect(saved.error).toBeUndefined();
            const made = await call<{ scheduleId: string; secret: string }>('REPORTS.SCHEDULE', {
              guid: saved.data!.report.guid,
              cron: '0 8 1 1 *',
              format: 'json',
              deliver: { webhook: { url: `http://127.0.0.1:${receiver.port}/rehearsal` } },
              runNow: true,
            });
            expect(made.error).toBeUndefined();
            // The secret any gateway replica derives from the Secret's key: a key made per pod would differ.
            const keyBytes = createHmac('sha256', Buffer.from(webhookKey))
              .update(`webhook:${made.data!.scheduleId}`)
              .digest();
            expect(made.data!.secret).toBe(`whsec_${keyBytes.toString('base64')}`);
            const got = await until('the webhook', () => receiver.got.find((g) => g.path === '/rehearsal'));
            const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
            expect(new Webhook(made.data!.secret).verify(got.body, headers)).toBeDefined();
            const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(got.headers['quarry-signature']))!;
            const legacy = `whsec_${keyBytes.toString('base64url')}`;
            expect(createHmac('sha256', legacy).update(`${m[1]}.${got.body}`).digest('hex')).toBe(m[2]);
          },
          TEST_GUARD_MS,
        );

        it(
          'delivers an output over 10 MB as a link naming QUARRY_PUBLIC_URL, which every gateway replica opens (one link key)',
          async () => {
            // A second gateway replica, as prod runs three: the link one signs, the other must open.
            const second = await startPod('gateway', 'gateway-link-1');
            await second.untilReady();
            try {
              await deliverLargeAsLink({
                call,
                receiver,
                env: gatewayEnv,
                gateways: [baseUrl, `http://127.0.0.1:${second.plan.ports.get(second.plan.namedPorts.main)}`],
                at: '/rehearsal-link',
              });
            } finally {
              await second.kill();
            }
          },
          TEST_GUARD_MS,
        );

        it(
          'loses no chart when a chart worker is killed mid-render; its restart takes jobs again',
          async () => {
            const [victim, survivor] = byComponent('chart-worker');
            const started = victim.lines.filter((l) => l.includes('"chart render started"')).length;
            const pending = Promise.all(Array.from({ length: 4 }, () => chart(2400, 1600)));
            await until('a render on the victim', () =>
              victim.lines.filter((l) => l.includes('"chart render started"')).length > started ? true : undefined,
            );
            await victim.kill();
            for (const r of await pending) {
              expect(r.error).toBeUndefined();
              expect((await pngFacts(Buffer.from(r.data!.data, 'base64'))).width).toBe(2400);
            }
            expect(rendered(survivor)).toBeGreaterThan(0);
            // The kubelet restarts the container: a new process, ready by its probes, serving again.
            const restarted = await startPod('chart-worker', 'chart-worker-2');
            await restarted.untilReady();
            expect(restarted.wouldRestart).toBe(0);
          },
          TEST_GUARD_MS,
        );

        it(
          'takes a chart worker whose Chromium cannot start again off the queue and fails its liveness; no chart lost',
          async () => {
            // Chromium starts once, then never again (a full /dev/shm, a broken node): the kubelet must restart the pod.
            const once = path.join(root, 'chromium-once.sh');
            fs.writeFileSync(
              once,
              '#!/bin/sh\nif [ -e "$TMPDIR/started" ]; then echo "chromium cannot start" >&2; exit 1; fi\n' +
                'touch "$TMPDIR/started"\nexec /usr/bin/chromium "$@"\n',
              { mode: 0o755 },
            );
            const broken = await startPod('chart-worker', 'chart-worker-broken', (env) => {
              env.CHROMIUM_PATH = once;
            });
            await broken.untilReady();
            // Its Chromium dies (by pid: the children of this pod's process).
            const children = fs
              .readdirSync('/proc')
              .filter((d) => /^\d+$/.test(d))
              .filter((d) => {
                try {
                  return fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(broken.pid);
                } catch {
                  return false;
                }
              });
            expect(children.length).toBeGreaterThan(0);
            for (const pid of children) process.kill(Number(pid), 'SIGKILL');
            const answers: Array<Awaited<ReturnType<typeof chart>>> = [];
            await until('the broken worker to stop taking jobs', async () => {
              answers.push(...(await Promise.all(Array.from({ length: 4 }, () => chart(640, 480)))));
              return broken.lines.some((l) => l.includes('stops taking jobs')) ? true : undefined;
            });
            for (const r of answers) expect(r.error).toBeUndefined();
            // Not live: the kubelet restarts it, rather than let it fail every job in milliseconds.
            await until('its liveness to fail', () => (broken.wouldRestart > 0 ? true : undefined));
            const failed = broken.events.filter((e) => e.probe === 'liveness' && !e.ok);
            expect(failed[failed.length - 1].status).toBe(503);
            expect(broken.lines.filter((l) => l.includes('"chart render failed"'))).toEqual([]);
            await broken.kill();
          },
          TEST_GUARD_MS,
        );

        it(
          'rides out a Redis restart: search goes on, the gateway stays ready, charts and schedules come back',
          async () => {
            const before = (await call<{ schedules: Array<{ scheduleId: string }> }>('REPORTS.SCHEDULES', {})).data!
              .schedules;
            expect(before.length).toBeGreaterThan(0);
            await redis.stop();
            const gateway = byComponent('gateway')[0];
            const search = await call('QUERIES.EXECUTE', { index: 'movies', pageSize: 1 });
            expect(search.error).toBeUndefined();
            const ops = await fetch(gateway.url('metrics', '/readyz'));
            expect(ops.status).toBe(200);
            expect(((await ops.json()) as { degraded?: string[] }).degraded?.join(' ')).toMatch(/Redis/);
            await redis.start();
            const back = await until(
              'a chart after the restart',
              async () => {
                const r = await chart(800, 600);
                return r.error ? undefined : r;
              },
              90000,
            );
            expect(back.data!.contentType).toBe('image/png');
            // The append-only file kept the schedules: those made before are still listed.
            const list = await call<{ schedules: Array<{ scheduleId: string }> }>('REPORTS.SCHEDULES', {});
            expect(list.data!.schedules.map((s) => s.scheduleId).sort()).toEqual(
              before.map((s) => s.scheduleId).sort(),
            );
            for (const p of pods.filter((x) => !x.exit))
              expect({ pod: p.plan.name, restarts: p.wouldRestart }).toEqual({ pod: p.plan.name, restarts: 0 });
          },
          TEST_GUARD_MS,
        );

        it(
          'rolls the gateway with SIGTERM during calls: no call is lost, and the old pod drains within its grace',
          async () => {
            const [old] = byComponent('gateway');
            const fresh = await startPod('gateway', 'gateway-1');
            await fresh.untilReady();
            let stop = false;
            const results: Array<string | undefined> = [];
            const load = Promise.all(
              Array.from({ length: 4 }, async () => {
                while (!stop) {
                  const r = await call<{ total: number }>('CROSSTAB.EXECUTE', {
                    index: 'movies',
                    rows: ['Major Genre', 'MPAA Rating'],
                    totals: [{ aggregationType: 'Count' }],
                  }).catch((err: Error) => ({ error: { message: err.message } }) as const);
                  results.push(r.error ? JSON.stringify(r.error) : undefined);
                }
              }),
            );
            // The SIGTERM must land among calls under way: a few have answered through both gateways first.
            await until('calls under way', () => (results.length >= 4 ? true : undefined));
            // Deletion: out of the endpoints (seen by the proxies a second later) and SIGTERM at once.
            gatewayService.deleting(old);
            const ended = await old.terminate();
            stop = true;
            await load;
            expect(ended).toMatchObject({ code: 0, killed: false });
            expect(ended.ms).toBeLessThan(old.plan.terminationGracePeriodSeconds * 1000);
            // It said not ready while it drained, then stopped.
            expect(old.events.some((e) => e.probe === 'readiness' && e.status === 503)).toBe(true);
            expect(results.length).toBeGreaterThan(10);
            expect(results.filter(Boolean)).toEqual([]);
          },
          TEST_GUARD_MS,
        );
      }
    },
  );
}

rehearseOverlay('dev', 'full');
rehearseOverlay('prod', 'start');

describeIf(
  hasKubectl,
  'kubectl (with kustomize) is needed to build the overlays',
  'the manifests as the rehearsal relies on them',
  () => {
    for (const overlay of ['dev', 'prod']) {
      const docs = kustomize(`overlays/${overlay}`);
      const envs = quarryEnvs(docs, outOfBandSecrets(overlay));
      const deployments = docs.filter((d) => d.kind === 'Deployment' && quarryContainers(d).length > 0);

      it(`${overlay}: every Quarry container has a startup probe, a drain within its grace, bounded spill`, () => {
        for (const d of deployments) {
          const name = d.metadata.name;
          const c = quarryContainers(d)[0] as ProbedContainer;
          const spec = podSpec(d);
          const env = envs.find((e) => e.doc === d)!.env;
          expect({ name, startup: c.startupProbe?.httpGet?.path }).toEqual({ name, startup: '/healthz' });
          const drain = Number(env.QUARRY_DRAIN_DELAY_MS ?? 0);
          const grace = Number(env.QUARRY_SHUTDOWN_GRACE_MS ?? 10000);
          const deadline = Number(env.QUARRY_GRPC_DEADLINE_MS ?? 30000);
          expect({ name, graceCoversDeadline: grace > deadline }).toEqual({ name, graceCoversDeadline: true });
          expect({
            name,
            podGraceCoversDrain: (spec.terminationGracePeriodSeconds ?? 30) * 1000 > drain + grace,
          }).toEqual({
            name,
            podGraceCoversDrain: true,
          });
          expect({ name, drains: drain > 0 }).toEqual({ name, drains: true });
          for (const v of spec.volumes ?? [])
            if (v.emptyDir)
              expect({ name, volume: v.name, sizeLimit: v.emptyDir.sizeLimit }).toEqual({
                name,
                volume: v.name,
                sizeLimit: expect.any(String),
              });
          // DuckDB's cap fits in the volume it spills to, once per DuckDB of the process (the query service
          // writes exports with a DuckDB of its own beside the searches').
          const tmp = (c.volumeMounts ?? []).find((m) => m.mountPath === env.QUARRY_DUCKDB_TEMP_DIR);
          const volume = spec.volumes?.find((v) => v.name === tmp?.name)?.emptyDir;
          const duckdbs = { query: 2, crosstab: 1 }[name as 'query' | 'crosstab'];
          if (duckdbs)
            expect(duckdbs * Number(env.QUARRY_DUCKDB_TEMP_MAX_MB) * 1024 ** 2).toBeLessThan(bytes(volume!.sizeLimit!));
          expect({ name, token: spec.automountServiceAccountToken }).toEqual({ name, token: false });
          expect(spec.topologySpreadConstraints?.map((t) => t.topologyKey)).toEqual(
            expect.arrayContaining(['kubernetes.io/hostname', 'topology.kubernetes.io/zone']),
          );
        }
        const gateway = envs.find((e) => e.doc.metadata.name === 'gateway')!.env;
        expect(gateway.REDIS_URL).toBeDefined();
        expect(gateway.QUARRY_WEBHOOK_KEY?.length).toBeGreaterThanOrEqual(32);
      });

      it(`${overlay}: scales the chart workers on the depth of the chart queue, a metric the chart pods export`, () => {
        const hpa = docs.find((d) => d.kind === 'HorizontalPodAutoscaler' && d.metadata.name === 'chart-worker')!;
        const metrics = (
          hpa.spec as {
            metrics: Array<{
              type: string;
              external?: { metric: { name: string; selector: { matchLabels: Record<string, string> } } };
            }>;
          }
        ).metrics;
        const external = metrics.find((m) => m.type === 'External')!.external!;
        expect(external.metric.selector.matchLabels).toEqual({ state: 'waiting' });
        const exported = new QuarryMetrics().registry.getSingleMetric(external.metric.name);
        expect(exported).toBeDefined();
        // The chart pods (which own the queue's producer side) are the ones Prometheus scrapes for it.
        const chart = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'chart')!;
        expect(podTemplate(chart).metadata.annotations?.['prometheus.io/scrape']).toBe('true');
        const job = docs.find((d) => d.kind === 'Job')!;
        expect((job.spec as { ttlSecondsAfterFinished: number }).ttlSecondsAfterFinished).toBe(0);
      });
    }
  },
);

type ComposeService = {
  image?: string;
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  tmpfs?: string[];
  read_only?: boolean;
  stop_grace_period?: string;
  healthcheck?: { test: string[]; interval?: string; retries?: number };
  deploy?: { replicas?: number };
  ports?: string[];
  /** Started only with `--profile` (the clickhouse profile: tests/clickhouse-deployment.test.ts). */
  profiles?: string[];
};

/** Compose's interpolation: ${NAME}, ${NAME:-default}, ${NAME:?error} (an unset NAME with :? refuses). */
function interpolate(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (_all, name: string, op?: string, arg?: string) => {
    const v = vars[name];
    if (v !== undefined && v !== '') return v;
    if (op === '-') return arg ?? '';
    if (op === '?') throw new Error(`${name}: ${arg}`);
    return '';
  });
}

const seconds = (d: string | undefined, fallback: number) => (d ? Number(/^(\d+)s$/.exec(d)![1]) : fallback);

describeIf(
  hasRedis,
  'redis-server is needed to rehearse docker-compose.yml',
  'the deployment as written: docker-compose.yml started as processes',
  () => {
    const composeText = fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-rehearsal-compose-'));
    fs.chmodSync(root, 0o755);
    // The image's user (infra/Dockerfile: node, uid 1000) when this test runs as root.
    const uid = podUid(1000);
    const snapshots = podWritable(path.join(root, 'snapshots'), uid);
    const stores = podWritable(path.join(root, 'stores'), uid);
    // The named volumes other than the snapshots (exports): one folder each, shared by the services mounting it.
    const named = new Map<string, string>();
    const namedVolume = (name: string) => {
      if (!named.has(name)) named.set(name, podWritable(path.join(root, 'volumes', name), uid));
      return named.get(name)!;
    };
    const receiver = new Receiver();
    const pods: RehearsedPod[] = [];
    let services: Record<string, ComposeService>;
    let redis: RehearsalRedis;
    let gatewayUrl: string;
    let token: string;

    const mapPaths = (v: string, mounts: Map<string, string>) => {
      const at = [...mounts.keys()].find((mp) => v === mp || v.startsWith(`${mp}/`));
      return at ? mounts.get(at)! + v.slice(at.length) : v;
    };

    beforeAll(async () => {
      process.stderr.write(`Compose rehearsal stand-ins:\n  ${STAND_INS.join('\n  ')}\n`);
      // No well-known fallback key: compose refuses to start without one.
      expect(() => interpolate(composeText, {})).toThrow(/TYPESENSE_API_KEY/);
      services = (
        parse(interpolate(composeText, { TYPESENSE_API_KEY: 'rehearsal-typesense-key' }), { merge: true }) as {
          services: Record<string, ComposeService>;
        }
      ).services;
      await receiver.start();
      const standIns = (env: Record<string, string>) => {
        const out = { ...env };
        for (const n of ['MONGODB_URL', 'TYPESENSE_URL', 'TYPESENSE_API_KEY']) delete out[n];
        out.QUARRY_SEARCH_BACKEND = 'embedded';
        return out;
      };

      // The loader: its entrypoint script (secrets, an admin token, the sample indexes) on the volume.
      fs.symlinkSync(path.join(stores, 'quarry.db'), path.join(snapshots, 'quarry.db'));
      const loader = services.loader;
      const script = fs
        .readFileSync(path.join(REPO_ROOT, 'infra', 'load-sample.sh'), 'utf8')
        .replaceAll('/data', snapshots)
        .replaceAll('/app/init-secrets.sh', path.join(REPO_ROOT, 'infra', 'init-secrets.sh'))
        .replaceAll('/app/apps/quarry/bin/quarry.js', QUARRY_BIN)
        .replaceAll('/app/sample/', `${VEGA}/`);
      expect(loader.entrypoint?.slice(-1)).toEqual(['/app/load-sample.sh']);
      const loaderTmp = podWritable(path.join(root, 'loader-tmp'), uid);
      const loaderEnv = Object.fromEntries(
        Object.entries(standIns(loader.environment!)).map(([k, v]) => [
          k,
          mapPaths(v, new Map([['/data', snapshots]])),
        ]),
      );
      delete loaderEnv.REDIS_URL;
      delete loaderEnv.REDIS_PASSWORD_FILE;
      const loaded = spawnSync('sh', ['-c', script], {
        encoding: 'utf8',
        ...(uid !== undefined ? { uid, gid: uid } : {}),
        env: { PATH: process.env.PATH, HOME: loaderTmp, TMPDIR: loaderTmp, ...loaderEnv },
      });
      expect(loaded.stdout + loaded.stderr).toContain('admin token written');
      token = fs.readFileSync(path.join(snapshots, 'admin-token.txt'), 'utf8').trim();
      loadLargeIndex(
        { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: loaderTmp, TMPDIR: loaderTmp, ...loaderEnv },
        uid,
      );
      // From here on the ingest container writes the snapshots volume; the others mount it read-only.

      // Redis with the password the loader made (the redis service reads the same file).
      redis = new RehearsalRedis(
        await freePort(),
        fs.readFileSync(path.join(snapshots, 'secrets', 'redis-password'), 'utf8').trim(),
      );
      await redis.start();

      // Every container has its own address in compose; here each port is a free one on loopback.
      // What `docker compose up` starts: no service of a profile.
      const quarry = Object.entries(services).filter(
        ([name, s]) => name !== 'loader' && s.image?.startsWith('quarry') && !s.profiles,
      );
      const addresses = new Map<string, string>([['redis:6379', `127.0.0.1:${redis.port}`]]);
      const ownPorts = new Map<string, Map<string, string>>();
      for (const [name, s] of quarry) {
        const own = new Map<string, string>();
        for (const key of ['PORT', 'QUARRY_OPS_PORT']) {
          const v = s.environment?.[key];
          if (v) own.set(v, String(await freePort()));
        }
        const addr = s.environment?.[`QUARRY_${name.toUpperCase()}_ADDR`];
        if (addr) addresses.set(addr, `127.0.0.1:${await freePort()}`);
        ownPorts.set(name, own);
      }
      for (const [name, s] of quarry) {
        const replicas = s.deploy?.replicas ?? 1;
        for (let i = 0; i < replicas; i++) {
          const podName = `${name}-${i}`;
          const mounts = new Map<string, string>();
          const readOnlyMounts: string[] = [];
          for (const v of s.volumes ?? []) {
            const [src, target, mode] = v.includes(':') ? v.split(':') : [undefined, v];
            if (src === 'snapshots' && mode === 'ro') readOnlyMounts.push(snapshots);
            mounts.set(
              target,
              src === 'snapshots'
                ? snapshots
                : src && !src.startsWith('.') && !src.startsWith('/')
                  ? namedVolume(src)
                  : podWritable(path.join(root, podName, target), uid),
            );
          }
          for (const t of s.tmpfs ?? []) {
            const target = t.split(':')[0];
            mounts.set(target, podWritable(path.join(root, podName, target), uid));
          }
          // A second replica binds ports of its own (compose gives it its own address).
          const own = new Map(ownPorts.get(name)!);
          if (i > 0) for (const k of own.keys()) own.set(k, String(await freePort()));
          const env: Record<string, string> = {};
          for (const [k, v] of Object.entries(standIns(s.environment ?? {}))) {
            let value = own.get(v) ?? v;
            for (const [from, to] of addresses) value = value.replaceAll(from, to);
            env[k] = mapPaths(value, mounts);
          }
          env.PATH = process.env.PATH ?? '/usr/bin:/bin';
          env.TMPDIR = mounts.get('/tmp') ?? os.tmpdir();
          env.HOME = env.TMPDIR;
          if (name === 'gateway') env.QUARRY_WEBHOOK_ALLOW = `127.0.0.1:${receiver.port}`;
          const check = s.healthcheck!;
          const plan: PodPlan = {
            name: podName,
            argv: commandLine(s.entrypoint ?? imageEntrypoint(), s.command ?? ['serve']),
            env,
            ports: new Map(),
            namedPorts: {},
            probes: {
              // Compose's healthcheck gates depends_on and is what a proxy in front would follow: readiness.
              readiness: {
                exec: {
                  command: check.test
                    .slice(1)
                    .map((a) => [...own].reduce((x, [from, to]) => x.replaceAll(`:${from}/`, `:${to}/`), a))
                    .map((a) => (a === 'node' ? process.execPath : a)),
                },
                periodSeconds: seconds(check.interval, 30),
                failureThreshold: check.retries ?? 3,
              },
            },
            uid,
            terminationGracePeriodSeconds: seconds(s.stop_grace_period, 10),
            readOnlyMounts,
          };
          if (name === 'gateway') gatewayUrl = `http://127.0.0.1:${own.get(s.environment!.PORT)}`;
          pods.push(new RehearsedPod(plan));
        }
      }
      await Promise.all(pods.map((p) => p.untilReady()));
    }, SETUP_GUARD_MS);

    afterAll(async () => {
      await Promise.all(pods.map((p) => p.kill()));
      await redis?.stop();
      await receiver.stop();
    });

    const call = <T>(method: string, params: unknown) =>
      rpcClient(gatewayUrl, token)
        .call(method, params)
        .then((r) => unwrap<T>(r));

    it('starts every Quarry service (two chart workers) as the image user, healthy by its own healthcheck', () => {
      expect(pods.map((p) => p.plan.name).sort()).toEqual([
        'chart-0',
        'chart-worker-0',
        'chart-worker-1',
        'crosstab-0',
        'gateway-0',
        'ingest-0',
        'query-0',
        'reports-0',
      ]);
      for (const p of pods) expect({ pod: p.plan.name, ready: p.ready }).toEqual({ pod: p.plan.name, ready: true });
      // The snapshots volume is written by the ingest container alone, read-only in every other.
      expect(pods.filter((p) => !p.plan.readOnlyMounts?.includes(snapshots)).map((p) => p.plan.name)).toEqual([
        'ingest-0',
      ]);
      if (READ_ONLY_MOUNTS)
        for (const p of pods)
          expect({ pod: p.plan.name, readOnly: readOnlyMountPoints(p.pid!).includes(snapshots) }).toEqual({
            pod: p.plan.name,
            readOnly: p.plan.name !== 'ingest-0',
          });
    });

    it(
      'searches, computes a crosstab, draws a PNG and delivers a signed scheduled webhook',
      async () => {
        const found = await call<{ total: number }>('QUERIES.EXECUTE', { index: 'movies', query: '"star wars"' });
        expect(found.data!.total).toBeGreaterThan(0);
        const png = await call<{ contentType: string; data: string; report: { guid: string } }>('CROSSTAB.EXECUTE', {
          index: 'movies',
          rows: ['Major Genre'],
          totals: [{ aggregationType: 'Count' }],
          chartType: 'Pie2D',
          saveReport: { name: 'compose rehearsal' },
        });
        expect(png.error).toBeUndefined();
        expect((await pngFacts(Buffer.from(png.data!.data, 'base64'))).width).toBeGreaterThan(0);
        const made = await call<{ scheduleId: string; secret: string }>('REPORTS.SCHEDULE', {
          guid: png.data!.report.guid,
          cron: '0 8 1 1 *',
          format: 'json',
          deliver: { webhook: { url: `http://127.0.0.1:${receiver.port}/compose` } },
          runNow: true,
        });
        expect(made.error).toBeUndefined();
        // Derived from the loader's webhook-key file, the one every gateway reads.
        const key = fs.readFileSync(path.join(snapshots, 'secrets', 'webhook-key'), 'utf8').trim();
        expect(made.data!.secret).toBe(
          `whsec_${createHmac('sha256', Buffer.from(key)).update(`webhook:${made.data!.scheduleId}`).digest('base64')}`,
        );
        await until('the webhook', () => receiver.got.find((g) => g.path === '/compose'));
      },
      TEST_GUARD_MS,
    );

    it(
      'exports a search through the gateway onto the exports volume the query container writes',
      async () => {
        await exportThroughGateway(gatewayUrl, token, namedVolume('exports'));
      },
      TEST_GUARD_MS,
    );

    it(
      "takes a CSV upload through the gateway with the loader's token, loaded by the ingest container, then searched",
      async () => {
        await uploadThroughGateway(gatewayUrl, token, snapshots);
      },
      TEST_GUARD_MS,
    );

    it(
      'delivers an output over 10 MB as a link naming QUARRY_PUBLIC_URL (the published port), signed with the loader-made key',
      async () => {
        const env = services.gateway.environment!;
        expect(env.QUARRY_PUBLIC_URL).toBe('http://localhost:8080');
        expect(services.gateway.ports).toContain('8080:8080');
        await deliverLargeAsLink({ call, receiver, env, gateways: [gatewayUrl], at: '/compose-link' });
      },
      TEST_GUARD_MS,
    );

    it(
      'stops the gateway on SIGTERM within stop_grace_period, finishing the calls under way',
      async () => {
        const gateway = pods.find((p) => p.plan.name === 'gateway-0')!;
        const inFlight = Array.from({ length: 4 }, () =>
          call('CROSSTAB.EXECUTE', {
            index: 'movies',
            rows: ['Major Genre', 'MPAA Rating'],
            totals: [{ aggregationType: 'Count' }],
          }),
        );
        await new Promise((r) => setTimeout(r, 50));
        const ended = await gateway.terminate();
        for (const r of await Promise.all(inFlight)) expect(r.error).toBeUndefined();
        expect(ended).toMatchObject({ code: 0, killed: false });
        expect(gateway.plan.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(50);
      },
      TEST_GUARD_MS,
    );
  },
);
