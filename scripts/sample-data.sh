#!/usr/bin/env bash
# What `npm start` serves, in $QUARRY_DATA_DIR (default ./data): the vega-datasets `movies` and `airports`
# indexes (loaded once), the user `demo` (an admin) and its saved report "Dramas by MPAA rating" (scripts/sample-reports.jsonl,
# a fixed guid the examples use); prints a fresh 30-day token for demo on its last line
# (everything else goes to stderr). scripts/start.sh runs it after the build, and the end-to-end tests that
# run the examples of README.md, docs/ and the OpenRPC document start their server on exactly this data.
set -euo pipefail
cd "$(dirname "$0")/.."
export QUARRY_DATA_DIR="${QUARRY_DATA_DIR:-./data}"
quarry() { node apps/quarry/bin/quarry.js "$@"; }
DATA=node_modules/vega-datasets/data

if ! quarry index list 2>/dev/null | grep -q '^movies\b'; then
  quarry index load movies "$DATA/movies.json" --view Directors=Director --view Distributors=Distributor \
    --description "Films: US and worldwide gross, budgets, genres and ratings" >&2
fi
if ! quarry index list 2>/dev/null | grep -q '^airports\b'; then
  quarry index load airports "$DATA/airports.csv" --view States=state \
    --description "US airports with their city, state and location" >&2
fi
# demo is an admin, so that the examples of the admin API (USERS.*, TOKENS.* for another user) run as written.
quarry user list 2>/dev/null | grep -q '^demo\b' || quarry user create demo --indexes '*' --admin >/dev/null
quarry report import scripts/sample-reports.jsonl >&2
quarry token create --user demo --scopes query:execute,indexes:read,indexes:write,reports:read,reports:write,embed:create,users:admin,tokens:write --expires-in 30d |
  tail -n 1
