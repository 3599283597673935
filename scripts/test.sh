#!/usr/bin/env bash
# The one test command (README): installs what the tests need, builds, runs every jest project.
set -euo pipefail
cd "$(dirname "$0")/.."
started_at=$(date +%s)
bash scripts/ensure-system-deps.sh --tests
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # npm ci refuses this registry's lock file; npm install with the committed lock installs the same
  # versions, and must leave the lock as it found it, so that a fresh setup leaves the tree clean.
  lock_before=$(sha256sum package-lock.json)
  npm install --no-audit --no-fund
  if [ "$(sha256sum package-lock.json)" != "$lock_before" ]; then
    echo "npm install changed package-lock.json: commit the lock it produces (it is what every newcomer gets)" >&2
    exit 1
  fi
fi
# chDB (ClickHouse as a library, about 550 MB) for the tests of the ClickHouse crosstab engine: beside the
# repository under .engines/ (ignored by git), never in what npm start installs; installed once, then reused.
if [ "$(node -p 'try { require("./.engines/chdb/node_modules/chdb/package.json").version } catch { "" }')" != "3.4.0" ]; then
  npm install --prefix .engines/chdb --no-save --no-audit --no-fund chdb@3.4.0
fi
npx turbo run build --output-logs=errors-only
# Tests run through swc, which strips types: check them (and the sources) with tsc, strict, first.
npx tsc -p tsconfig.tests.json
# House rules (docs/architecture.md): formatting, lint and import boundaries. A failure fails the run,
# after jest has still run, so one CI run shows both.
lint_status=0
npm run --silent lint || lint_status=$?
mkdir -p test-output
status=0
# Native crashes (a jest worker or a server dying of SIGSEGV) leave their only trace in the kernel's log:
# the ones logged during the run are printed at its end.
crashes_before=$( (dmesg 2>/dev/null || true) | grep -c segfault || true)
# Two workers on two cores: e2e suites mostly wait on the servers they start, so a second worker nearly
# halves the run; QUARRY_TEST_WORKERS=1 runs one file at a time.
npx jest --ci --maxWorkers="${QUARRY_TEST_WORKERS:-2}" --json --outputFile=test-output/jest-results.json "$@" || status=$?
# A closing line CI can read whatever the runner: "N passed, N failed, N skipped".
# shellcheck disable=SC2016 # the $ below is JavaScript's template, not the shell's
# Before it, the ten slowest suites (where a run's time goes, and the first place to look when it grows).
node -e '
  const r = require("./test-output/jest-results.json");
  const slow = r.testResults
    .map((t) => ({ s: (t.endTime - t.startTime) / 1000, f: require("node:path").relative(process.cwd(), t.name) }))
    .sort((a, b) => b.s - a.s)
    .slice(0, 10);
  console.log("slowest suites:");
  for (const t of slow) console.log(`  ${t.s.toFixed(1).padStart(7)} s  ${t.f}`);
  console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' || true
crashes=$( (dmesg 2>/dev/null || true) | grep segfault | tail -n +$((crashes_before + 1)) || true)
if [ -n "$crashes" ]; then
  echo "native crashes logged by the kernel during the run:" >&2
  echo "$crashes" >&2
fi
if [ $lint_status -ne 0 ]; then
  echo "house rules: npm run lint failed (see above)" >&2
  [ $status -ne 0 ] || status=$lint_status
fi
echo "test command: $(($(date +%s) - started_at)) s in all (install, build, checks and jest)"
exit $status
