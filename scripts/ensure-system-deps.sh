#!/usr/bin/env bash
# Installs from Debian what Quarry's embedded deployment and its tests need, only when missing:
# redis-server (chart queue), chromium and fonts (chart rendering); with --tests also docker-compose
# (the tests validate docker-compose.yml with it; no Docker engine is needed for that) and shellcheck (npm run lint).
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need+=(chromium)
[ -d /usr/share/fonts/truetype/dejavu ] || need+=(fonts-dejavu-core)
if [ "${1:-}" = "--tests" ]; then
  command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
  command -v shellcheck >/dev/null 2>&1 || need+=(shellcheck)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing from Debian: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
