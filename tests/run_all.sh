#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds numaprobe and runs every test: the layering and format checks, the
# release build's unit, integration, Prometheus/Grafana, packaging and
# multi-node VM suites, the unit and integration suites again under
# ASan+UBSan and under TSan, short libFuzzer runs, and the arm64 cross build
# (release-aarch64: unit tests under qemu-user, the VM suite in arm64 guests,
# the arm64 .deb).
# This is the README's test command and exactly what .ci/run executes.
# Each stage prints its wall time, so a slow stage is visible in the CI log
# (docs/testing.md keeps the figures).
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
stage() {
  local name=$1 t0=$SECONDS
  shift
  "$@"
  echo "run_all: stage $name took $((SECONDS - t0)) s (total $((SECONDS - started)) s)"
}
build_and_test() {
  cmake --preset "$1"
  cmake --build --preset "$1"
  ctest --preset "$1"
}

stage checks bash -c 'bash .ci/check-layering && bash .ci/check-format && bash .ci/check-references && python3 .ci/check-kinds && python3 .ci/check-license'
for preset in release asan tsan fuzz release-aarch64; do
  stage "$preset" build_and_test "$preset"
done
echo "run_all: every suite passed in $((SECONDS - started)) s"
