#!/bin/sh
# One-shot loader of docker-compose: the deployment's secrets, an admin user, a token written to
# /data/admin-token.txt, and the sample indexes. Safe to run again: existing secrets, users and indexes
# are kept.
set -eu
# First: every quarry command below reads the secrets through QUARRY_*_FILE.
/app/init-secrets.sh /data/secrets
quarry() { node /app/apps/quarry/bin/quarry.js "$@"; }
quarry user list | grep -q '^admin' || quarry user create admin --admin
if ! quarry index list | grep -q '^movies'; then
  quarry index load movies /app/sample/movies.json --view Directors=Director --view Distributors=Distributor \
    --description "Films: US and worldwide gross, budgets, genres and ratings"
fi
if ! quarry index list | grep -q '^airports'; then
  quarry index load airports /app/sample/airports.csv --view States=state --description "US airports"
fi
# A bearer token for every index, uploads included (indexes:write): readable by Quarry's user only, like the secrets.
(umask 077 && quarry token create --user admin --scopes query:execute,indexes:read,indexes:write,reports:read,reports:write,embed:create --expires-in 30d | tail -n 1 > /data/admin-token.txt)
echo "admin token written to /data/admin-token.txt"
