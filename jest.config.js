// One jest run for the whole repo; `unit` tests sit next to the code, `integration` are *.int.test.ts,
// `e2e` start the real built stack from tests/.
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }] };
const moduleNameMapper = { '^@quarry/([a-z-]+)$': ['<rootDir>/packages/$1/src', '<rootDir>/services/$1/src'] };
const base = { transform, moduleNameMapper, testEnvironment: 'node', rootDir: __dirname };
module.exports = {
  globalSetup: '<rootDir>/tests/global-setup.js',
  testTimeout: 60000,
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/{packages,services}/*/src/**/*.test.ts'], testPathIgnorePatterns: ['\\.int\\.test\\.ts$'] },
    { ...base, displayName: 'integration', testMatch: ['<rootDir>/{packages,services}/*/src/**/*.int.test.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/tests/**/*.test.ts'] },
  ],
};
