// The house rules of imports (docs/architecture.md "Floors and boundaries"), checked by `npm run lint:deps`
// as part of `npm test`. Every rule is an error: a rule that only warns is a rule held by habit.

/** Packages that talk to a store, an engine, a browser or the network: reached only through adapters. */
const DRIVERS = ['@duckdb/', 'better-sqlite3', 'mongodb', 'typesense', 'ioredis', 'bullmq', 'puppeteer-core', '@grpc/'];
const driverPath = `(^|/)node_modules/(${DRIVERS.map((d) => d.replace(/[/.]/g, (c) => `\\${c}`)).join('|')})`;

/** Test code: may reach into anything (a test of a port runs its adapters). */
const TEST_CODE = ['\\.test\\.ts$', '\\.conformance\\.ts$', '/test-support/', '^tests/', '^bench/'];

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes load order decide behaviour and hides which module is the lower one.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'services-not-into-apps',
      severity: 'error',
      comment: 'Imports run apps -> services -> packages; a service never depends on a composition root.',
      from: { path: '^services/' },
      to: { path: '^apps/' },
    },
    {
      name: 'service-not-into-other-service',
      severity: 'error',
      comment: 'Services talk over gRPC, never by import: what two services share is a package (the contract, a port).',
      from: { path: '^services/([^/]+)/', pathNot: TEST_CODE },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'packages-not-into-services-or-apps',
      severity: 'error',
      comment: 'Packages are libraries: they know nothing of the services and apps built on them.',
      from: { path: '^packages/', pathNot: TEST_CODE },
      to: { path: '^(services|apps)/' },
    },
    {
      name: 'domain-not-into-adapters-or-transport',
      severity: 'error',
      comment: 'Domain code depends on ports (interfaces); adapters and transports depend on the domain.',
      from: { path: '/src/domain/', pathNot: TEST_CODE },
      to: { path: '/src/(adapters|transport)/' },
    },
    {
      name: 'domain-not-into-drivers',
      severity: 'error',
      comment: 'Domain code names no engine, store, queue, browser or wire: those live in adapters behind a port.',
      from: { path: '/src/domain/', pathNot: TEST_CODE },
      to: { path: driverPath },
    },
    {
      name: 'domain-not-into-fs-or-net',
      severity: 'error',
      comment: 'Files and sockets are adapters; domain code stays testable without either.',
      from: { path: '/src/domain/', pathNot: TEST_CODE },
      to: { dependencyTypes: ['core'], path: '^(node:)?(fs|fs/promises|net)$' },
    },
    {
      name: 'no-deep-imports-across-workspaces',
      severity: 'error',
      comment:
        'Another workspace is reached through its entry (src/index.ts) or a named subpath entry at the top of its src (e.g. @quarry/metadata-store/sqlite), never through its folders.',
      from: { path: '^(apps|services|packages)/([^/]+)/' },
      to: { path: '^(services|packages)/[^/]+/src/.+/', pathNot: ['^$1/$2/', '/generated/'] },
    },
    {
      name: 'main-entry-names-no-adapter',
      severity: 'error',
      comment:
        "A workspace's main entry exports no adapter: drivers are reached through a subpath that names them (@quarry/query/duckdb), so importing the package loads none.",
      from: { path: '^(services|packages)/[^/]+/src/index\\.ts$' },
      to: { path: '/src/adapters/' },
    },
    {
      name: 'no-test-code-in-production',
      severity: 'error',
      comment: 'Fixtures, oracles and test helpers never ship: production code does not import them.',
      from: { pathNot: TEST_CODE },
      to: { path: TEST_CODE },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing is a typo or a missing dependency.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['(^|/)dist/', '\\.d\\.ts$'] },
    includeOnly: {
      path: ['^(apps|services|packages)/[^/]+/(src|test-support)/', '^tests/', '^node_modules/', '^(node:)?[a-z_/]+$'],
    },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.tests.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
  },
};
