#!/bin/sh
# One-shot loader of docker-compose: an admin user, a token written to /data/admin-token.txt, and the
# sample indexes. Safe to run again: existing users and indexes are kept.
set -eu
quarry() { node /app/packages/cli/bin/quarry.js "$@"; }
quarry user list | grep -q '^admin' || quarry user create admin --admin
if ! quarry index list | grep -q '^movies'; then
  quarry index load movies /app/sample/movies.json --view Directors=Director --view Distributors=Distributor \
    --description "Films: US and worldwide gross, budgets, genres and ratings"
fi
if ! quarry index list | grep -q '^airports'; then
  quarry index load airports /app/sample/airports.csv --view States=state --description "US airports"
fi
quarry token create --user admin --scopes query:execute,indexes:read,reports:read,reports:write --expires-in 30d | tail -n 1 > /data/admin-token.txt
echo "admin token written to /data/admin-token.txt"
