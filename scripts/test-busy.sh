#!/usr/bin/env bash
# The test command as CI runs it, on a machine kept busy: a fresh clone of HEAD (nothing installed, nothing
# built), CI's clean environment, and a busy loop holding one core for the whole run; `--runs N` in a row.
# Every run tests the commit HEAD was at the start, whatever is committed meanwhile. Prints each run's
# duration, result and slowest suites, and exits non-zero when any run failed.
# Usage: bash scripts/test-busy.sh [--runs N] [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=1
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: bash scripts/test-busy.sh [--runs N] [--keep]" >&2; exit 2 ;;
  esac
done
case "$runs" in '' | *[!0-9]* | 0) echo "--runs takes a whole number of at least 1" >&2; exit 2 ;; esac
repo=$(pwd)
commit=$(git rev-parse HEAD)
rev=$(git rev-parse --short HEAD)
# One core kept busy the whole time, by a process outside the run (as another tenant's job would be).
bash -c 'while :; do :; done' &
busy=$!
trap 'kill "$busy" 2>/dev/null || true' EXIT
failed=0
summary=()
for i in $(seq 1 "$runs"); do
  clone=$(mktemp -d /tmp/quarry-busy-run-XXXXXX)
  # As a clone CI makes: readable by the pods' non-root user (mktemp makes it the owner's alone).
  chmod 755 "$clone"
  git clone -q "$repo" "$clone"
  git -C "$clone" checkout -q "$commit"
  log="$clone.log"
  t0=$(date +%s)
  rc=0
  # CI's environment: no terminal, CI=true, nothing else of this shell's.
  env -i PATH="$PATH" HOME="$HOME" CI=true bash "$clone/.ci/run" </dev/null >"$log" 2>&1 || rc=$?
  secs=$(($(date +%s) - t0))
  result=$(grep -E '^jest: ' "$log" | tail -n 1 || true)
  summary+=("run $i of $runs ($rev): exit $rc in $secs s; ${result:-no jest summary}")
  echo "${summary[-1]} (log: $log)"
  sed -n '/^slowest suites:/,/^jest: /p' "$log" | head -n 11
  [ "$rc" -eq 0 ] || failed=1
  if [ "$keep" -eq 0 ] && [ "$rc" -eq 0 ]; then rm -rf "$clone"; fi
done
printf '%s\n' "${summary[@]}"
exit $failed
