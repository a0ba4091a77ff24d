#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run_fuzzer.sh FUZZER SEED_CORPUS WORK_DIR: runs one libFuzzer target for
# NUMAPROBE_FUZZ_SECONDS (default 60) from the seed corpus (never modified:
# new inputs go to WORK_DIR/corpus). libFuzzer exits non-zero on a crash,
# leak, sanitizer report or a >10 s input, leaving the input in WORK_DIR.
set -euo pipefail
fuzzer=$1 seeds=$2 work=$3
seconds=${NUMAPROBE_FUZZ_SECONDS:-60}
mkdir -p "$work/corpus"
# -fork would use more cores; the CI has 2 and other suites, so one process.
exec "$fuzzer" "$work/corpus" "$seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$work/" -print_final_stats=1
