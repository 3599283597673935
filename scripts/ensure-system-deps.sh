#!/usr/bin/env bash
# Installs from Debian what Quarry's embedded deployment and its tests need, only when missing:
# redis-server (chart queue), chromium and fonts (chart rendering); with --tests also docker-compose
# (the tests validate docker-compose.yml with it; no Docker engine is needed for that), shellcheck (npm run lint),
# Debian's python3 with mypy (the Python client), and PostgreSQL (15 on bookworm) and MariaDB (10.11), whose servers the source tests start privately in temp folders
# (tests/support/postgres.ts, tests/support/mariadb.ts): the packages' own system services are not started.
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need+=(chromium)
[ -d /usr/share/fonts/truetype/dejavu ] || need+=(fonts-dejavu-core)
if [ "${1:-}" = "--tests" ]; then
  command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
  command -v shellcheck >/dev/null 2>&1 || need+=(shellcheck)
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
  [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
  # Debian's python3 and mypy for the Python client's tests (tests/python-client.test.ts).
  [ -x /usr/bin/python3 ] || need+=(python3)
  /usr/bin/python3 -c 'import mypy' >/dev/null 2>&1 || need+=(python3-mypy)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing from Debian: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  # Installing a database server starts its system service (a cluster on 5432, mysqld on 3306) unless
  # policy-rc.d says no: the tests never use those, so while installing, a policy refuses every start
  # (left as it was when the machine has its own, as containers do).
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# written by quarry scripts/ensure-system-deps.sh while installing\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    trap '$SUDO rm -f "$policy"' EXIT
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
