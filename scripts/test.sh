#!/usr/bin/env bash
# The one test command (README): installs what the tests need, builds, runs every jest project.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-system-deps.sh
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npx turbo run build --output-logs=errors-only
npx jest --ci "$@"
