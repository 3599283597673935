#!/usr/bin/env bash
# Starts Quarry on this machine with sample data: installs what it needs, builds, loads real data sets
# (vega-datasets movies and airports) once, creates a demo user and a fresh token, serves, and prints a
# curl example that works. Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-system-deps.sh
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # npm ci refuses this registry's lock file (it serves no foreign-platform optional packages, so the
  # lock cannot list them); npm install with the committed lock installs the same versions.
  npm install --no-audit --no-fund
fi
npx turbo run build --output-logs=errors-only

export QUARRY_DATA_DIR="${QUARRY_DATA_DIR:-./data}"
export PORT="${PORT:-8080}"
# Sample data and the demo user (scripts/sample-data.sh prints the token on its last line).
QUARRY_TOKEN=$(bash scripts/sample-data.sh | tail -n 1)

# The address to call: HOST unless it binds every interface. HOST gets its default here, once, so no
# branch below meets it unset (set -u), and the server binds the address the banner names.
export HOST="${HOST:-127.0.0.1}"
case "$HOST" in
  0.0.0.0 | :: | '') URL_HOST=127.0.0.1 ;;
  *:*) URL_HOST="[$HOST]" ;;
  *) URL_HOST=$HOST ;;
esac
QUARRY_URL="http://$URL_HOST:$PORT"

node apps/quarry/bin/quarry.js serve &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null; wait $SERVER' INT TERM
for _ in $(seq 1 100); do
  curl -fs "$QUARRY_URL/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done

# tests/readme.test.ts runs the "Try" command below as printed (every example of README.md and docs/ uses these
# two variables).
cat <<MSG

Quarry is running on $QUARRY_URL (data in $QUARRY_DATA_DIR).
Demo token: user "demo", expires in 30 days. Every example in README.md and docs/ uses these two variables:

  export QUARRY_URL=$QUARRY_URL
  export QUARRY_TOKEN=$QUARRY_TOKEN

Try (the Toy Story films, by worldwide gross, with their ratings):

  curl -s "\$QUARRY_URL/api/v1" \\
    -H 'Content-Type: application/json' \\
    -H "Authorization: Bearer \$QUARRY_TOKEN" \\
    -d '{"jsonrpc":"2.0","id":1,"method":"QUERIES.EXECUTE","params":{"index":"movies","query":"\"toy story\"","pageSize":3,"sort":[{"field":"Worldwide Gross","direction":"desc"}]}}'

Or open the console in a browser and paste the token as "API token":

  $QUARRY_URL/console

The API describes itself: $QUARRY_URL/openrpc.json (OpenRPC; also rpc.discover).

Stop with Ctrl-C.
MSG
wait $SERVER
