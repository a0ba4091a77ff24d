# SPDX-License-Identifier: Apache-2.0
"""SIGKILL during a state write, 100 times: <state_directory>/state.json is
always one of the two complete versions, never missing, truncated or a mix.
Drives the real write path (FormatState, WriteStateFile) through tests/daemon/state_write_loop.cc,
which alternates two large baselines until killed; its `check` mode reads the
file back with ReadStateFile and ParseState, the daemon's own loader."""
import os
import random
import subprocess
import time

import pytest

SANITIZED = os.environ.get("NUMAPROBE_SANITIZED") == "1"
# Under ASan/TSan kills rarely land mid-write (below), so the guarantee's proof
# is the release build's 100; there the run checks the write and load paths
# for memory and thread errors, which 30 cycles do as well as 100 (each cycle
# there is about a second: 100 took 89 s under ASan).
KILLS = 30 if SANITIZED else 100


@pytest.fixture(scope="module")
def writer():
    path = os.environ.get("NUMAPROBE_STATE_WRITER")
    if not path:
        pytest.fail("NUMAPROBE_STATE_WRITER is not set: run through ctest (ctest -R state_kill)")
    return path


# How long after "ready" a kill may land: a few writes' time. Under ASan/TSan a
# write of the 300 KB baseline takes tens of times longer (within 30 ms no
# second write had completed in 100 kills under ASan).
KILL_WINDOW = 0.5 if SANITIZED else 0.03


def check(writer, directory):
    r = subprocess.run([writer, "check", directory], capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout.strip()


def test_sigkill_mid_write_leaves_old_or_new_file(writer, tmp_path):
    directory = str(tmp_path / "state")
    rng = random.Random(os.environ.get("NUMAPROBE_KILL_SEED", "13"))
    seen = {"a": 0, "b": 0}
    mid_write = 0  # kills that left a temp file behind: the write was in progress
    start = time.monotonic()
    for i in range(KILLS):
        proc = subprocess.Popen([writer, "write", directory], stdout=subprocess.PIPE, text=True)
        # After "ready" the first version is complete on disk and the loop is
        # writing; the kill lands anywhere in the next writes.
        assert proc.stdout.readline().strip() == "ready", f"writer did not start (exit {proc.wait()})"
        time.sleep(rng.uniform(0, KILL_WINDOW))
        proc.kill()
        proc.wait()
        proc.stdout.close()
        code, out = check(writer, directory)
        assert code == 0, f"kill {i + 1}: the state file is not one complete version: {out}"
        seen[out] += 1
        leftovers = [n for n in os.listdir(directory) if n.startswith(".state.json.tmp.")]
        if leftovers:
            mid_write += 1
            for name in leftovers:
                os.unlink(os.path.join(directory, name))
    elapsed = time.monotonic() - start
    print(f"{KILLS} kills in {elapsed:.1f} s: a={seen['a']} b={seen['b']}, {mid_write} mid-write")
    # Proof the kills hit the window the guarantee is about, and the file changed.
    # Under ASan/TSan formatting the 300 KB baseline takes most of each cycle,
    # so kills rarely land between the temp file's creation and the rename
    # (0 of 100 seen under ASan): there the release build's run is the proof.
    if not SANITIZED:
        assert mid_write >= KILLS // 10, f"only {mid_write} of {KILLS} kills landed during a write"
    assert seen["a"] > 0 and seen["b"] > 0, seen
