const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// Removes what the run's e2e suites shared (tests/support/stack.ts names it after QUARRY_E2E_RUN).
module.exports = async function globalTeardown() {
  const run = process.env.QUARRY_E2E_RUN;
  if (!run) return;
  const template = path.join(os.tmpdir(), `quarry-e2e-samples-${run}`);
  for (const p of [template, `${template}.lock`, `${template}.building`, `${template}.failed`])
    fs.rmSync(p, { recursive: true, force: true });
};
