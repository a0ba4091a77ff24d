#!/usr/bin/env bash
# Builds numaprobe and runs every test: the layering and format checks, the
# release build's unit, integration, Prometheus/Grafana and multi-node VM
# suites, then the unit and integration suites again under ASan+UBSan and
# under TSan.
# This is the README's test command and exactly what .ci/run executes.
set -euo pipefail
cd "$(dirname "$0")/.."

bash .ci/check-layering
bash .ci/check-format

cmake --preset release
cmake --build --preset release
ctest --preset release

for preset in asan tsan; do
  cmake --preset "$preset"
  cmake --build --preset "$preset"
  ctest --preset "$preset"
done

cmake --preset fuzz
cmake --build --preset fuzz
ctest --preset fuzz
echo "run_all: every suite passed"
