#!/usr/bin/env bash
# Runs the node suite against strata serve: run_node_tests.sh <strata binary>.
# Exit 77 (CTest's skip code here) when node is not installed; npm ci when
# node_modules lacks a dependency (package-lock.json pins the client and ajv).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: node is not installed; the Qdrant client suite needs node >= 18" >&2
  exit 77
fi
if [ ! -d node_modules/@qdrant/js-client-rest ] || [ ! -d node_modules/ajv ]; then
  npm ci --no-audit --no-fund
fi
STRATA_BIN="$1" exec node --test
