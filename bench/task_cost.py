#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CPU per probe task and per buffer preparation, on the real daemon at the
default probe settings (config/numaprobe.yaml), for bench/round_cost_vm.py.

The daemon runs with `targets.per_cpu: true`, so on a one-node host every
kind measures node 0 from each allowed CPU: one visit per kind and round whose
first task also prepares the buffers (latency: the flushed chase buffer;
bandwidth: 256 MiB, faulted in and checked page by page) and whose later tasks
only measure. Its debug log gives each task's CPU ("...: ok (52.1 ms CPU)",
measurement threads and preparation on the worker included, as charged to
the budget). Preparation = first task of a visit - a later task of the same
variant. Medians over the rounds seen.

    python3 bench/task_cost.py build/release/numaprobe [--seconds 90] > costs.json
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASK = re.compile(r'msg="(?:(\w+) )?(latency|bandwidth|core-to-core) cpu (\d+) (?:->|<->) (?:node|cpu) (\d+): ok \(([\d.]+) ms CPU\)"')


def config(tmp: str) -> str:
    with open(os.path.join(SRC, "config", "numaprobe.yaml")) as f:
        text = f.read()
    text = re.sub(r"(?m)^state_directory:.*$", f"state_directory: {tmp}/state", text)
    text = re.sub(r"(?m)^probe_lock_file:.*$", 'probe_lock_file: ""', text)
    text = re.sub(r"(?m)^  per_cpu: false", "  per_cpu: true", text)
    text = re.sub(r"(?m)^  duty_cycle: .*$", "  duty_cycle: 0.3", text)
    text = re.sub(r"(?m)^  interval: .*$", "  interval: 2s", text)
    path = os.path.join(tmp, "numaprobe.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--seconds", type=float, default=90)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log_path = os.path.join(tmp, "log")
        with open(log_path, "w") as log:
            proc = subprocess.Popen([args.binary, "serve", "--config.file", config(tmp), "--log.level", "debug",
                                     "--web.listen-address", "127.0.0.1:0"], stdout=log, stderr=subprocess.STDOUT)
            time.sleep(args.seconds)
            proc.terminate()
            proc.wait(timeout=30)
        with open(log_path) as f:
            lines = f.read().splitlines()
    # Group consecutive tasks of one kind into visits, in log order.
    first, later = {}, {}
    previous_kind = None
    for line in lines:
        m = TASK.search(line)
        if not m:
            if "starting" not in line:
                previous_kind = None if "level=warning" in line else previous_kind
            continue
        variant, kind, _, _, ms = m.groups()
        key = f"{kind}/{variant}" if variant else kind
        (later if kind == previous_kind else first).setdefault(key, []).append(float(ms))
        previous_kind = kind
    out = {"first_of_visit_ms": {k: statistics.median(v) for k, v in first.items()},
           "later_ms": {k: statistics.median(v) for k, v in later.items()},
           "runs": {k: len(first.get(k, [])) + len(later.get(k, [])) for k in set(first) | set(later)}}
    prep = {}
    for kind in ("latency", "bandwidth/read"):
        if kind in out["first_of_visit_ms"] and kind in out["later_ms"]:
            prep[kind.split("/")[0]] = out["first_of_visit_ms"][kind] - out["later_ms"][kind]
    out["prep_ms"] = prep
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0 if prep else 1


if __name__ == "__main__":
    sys.exit(main())
