#!/usr/bin/env bash
# Runs dashboard_check.mjs against strata serve: run_dashboard_check.sh <strata binary>.
# Exit 77 (CTest's skip code here) when node or chromium is not installed.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: node is not installed; the dashboard check needs node >= 18" >&2
  exit 77
fi
STRATA_BIN="$1" exec node dashboard_check.mjs
