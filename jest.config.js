// One jest run for the whole repo; `unit` tests sit next to the code, `integration` are *.int.test.ts,
// `e2e` start the real built stack from tests/.
const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
  ],
  // @open-rpc/spec and spec-types ship ES modules only; jest on Node 20 needs them as CommonJS.
  // OpenTelemetry's OTLP transport loads node:http with import(), which jest's CommonJS sandbox cannot run
  // without --experimental-vm-modules; compiled, it is a require like any other.
  '^.+/node_modules/(@open-rpc/spec(-types)?|@opentelemetry/otlp-exporter-base)/.+\\.js$': [
    '@swc/jest',
    { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } },
  ],
};
const transformIgnorePatterns = ['/node_modules/(?!@open-rpc/spec(-types)?/|@opentelemetry/otlp-exporter-base/)'];
const moduleNameMapper = {
  '^@quarry/([a-z-]+)$': ['<rootDir>/packages/$1/src', '<rootDir>/services/$1/src'],
  // Dynamic imports name the emitted .js file (Node's ESM rules); jest reads the .ts beside it.
  '^(\\.{1,2}/.*)\\.js$': '$1',
  // Subpath exports (`@quarry/metadata-store/sqlite`) are files at the top of src.
  '^@quarry/([a-z-]+)/([a-z-]+)$': ['<rootDir>/packages/$1/src/$2', '<rootDir>/services/$1/src/$2'],
};
const base = { transform, transformIgnorePatterns, moduleNameMapper, testEnvironment: 'node', rootDir: __dirname };
module.exports = {
  globalSetup: '<rootDir>/tests/global-setup.js',
  globalTeardown: '<rootDir>/tests/global-teardown.js',
  // A hang guard, not a target: the e2e suites must pass on a busy 2-core machine, several times slower
  // than an idle one; a test that needs longer says so itself.
  testTimeout: 180000,
  projects: [
    {
      ...base,
      displayName: 'unit',
      testMatch: ['<rootDir>/{packages,services,apps}/*/src/**/*.test.ts'],
      testPathIgnorePatterns: ['\\.int\\.test\\.ts$'],
    },
    { ...base, displayName: 'integration', testMatch: ['<rootDir>/{packages,services,apps}/*/src/**/*.int.test.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/tests/**/*.test.ts'] },
  ],
};
