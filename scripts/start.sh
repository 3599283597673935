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
quarry() { node apps/quarry/bin/quarry.js "$@"; }
DATA=node_modules/vega-datasets/data

if ! quarry index list | grep -q '^movies'; then
  quarry index load movies "$DATA/movies.json" --view Directors=Director --view Distributors=Distributor \
    --description "Films: US and worldwide gross, budgets, genres and ratings"
fi
if ! quarry index list | grep -q '^airports'; then
  quarry index load airports "$DATA/airports.csv" --view States=state --description "US airports with their city, state and location"
fi
quarry user list | grep -q '^demo' || quarry user create demo --indexes '*' >/dev/null
TOKEN=$(quarry token create --user demo --scopes query:execute,indexes:read,reports:read,reports:write --expires-in 30d | tail -n 1)

node apps/quarry/bin/quarry.js serve &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null; wait $SERVER' INT TERM
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done

cat <<MSG

Quarry is running on http://127.0.0.1:$PORT (data in $QUARRY_DATA_DIR).
Demo token (user "demo", expires in 30 days):

  $TOKEN

Try:

  curl -s http://127.0.0.1:$PORT/api/v1 \\
    -H 'Content-Type: application/json' \\
    -H 'Authorization: Bearer $TOKEN' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"QUERIES.EXECUTE","params":{"index":"movies","query":"\"star wars\"","pageSize":3,"sort":[{"field":"IMDB Rating","direction":"desc"}]}}'

Or open the console in a browser and paste the token as "API token":

  http://127.0.0.1:$PORT/console

The API describes itself: http://127.0.0.1:$PORT/openrpc.json (OpenRPC; also rpc.discover).

Stop with Ctrl-C.
MSG
wait $SERVER
