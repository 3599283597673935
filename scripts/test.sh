#!/usr/bin/env bash
# The one test command (README): installs what the tests need, builds, runs every jest project.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-system-deps.sh --tests
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # npm ci refuses this registry's lock file (it serves no foreign-platform optional packages, so the
  # lock cannot list them); npm install with the committed lock installs the same versions.
  npm install --no-audit --no-fund
fi
npx turbo run build --output-logs=errors-only
# Tests run through swc, which strips types: check them (and the sources) with tsc, strict, first.
npx tsc -p tsconfig.tests.json
mkdir -p test-output
status=0
npx jest --ci --json --outputFile=test-output/jest-results.json "$@" || status=$?
# A closing line CI can read whatever the runner: "N passed, N failed, N skipped".
node -e '
  const r = require("./test-output/jest-results.json");
  console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' || true
exit $status
