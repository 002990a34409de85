#!/usr/bin/env bash
# Installs Strata's build and test dependencies from Debian's archive, only
# those that are missing (idempotent; safe to run on every build).
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build pkg-config
  liburing-dev libaio-dev libopenblas-dev libeigen3-dev libxxhash-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libfmt-dev
  librocksdb-dev libcpp-httplib-dev
  python3-dev pybind11-dev python3-numpy python3-pytest
  python3-pip python3-venv python3-setuptools python3-wheel
  # what big-ann-benchmarks' harness imports (tests/harness runs it with --nodocker)
  python3-scipy python3-h5py python3-yaml python3-psutil python3-docker python3-colors
  python3-requests python3-sklearn python3-pandas python3-matplotlib
  fio
  # the server's tests and measurements: headless Chromium drives /dashboard,
  # clang's libFuzzer runs the request-parsing fuzz target, wrk loads the server
  chromium clang libclang-rt-14-dev wrk
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
