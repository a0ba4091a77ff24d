# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures for integration tests: the real numaprobe binary."""
import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def numaprobe_bin():
    path = os.environ.get("NUMAPROBE_BIN")
    if not path:
        pytest.fail("NUMAPROBE_BIN is not set: run through ctest, or export it to the built binary")
    return path


@pytest.fixture
def run(numaprobe_bin):
    """Runs numaprobe with arguments; returns the CompletedProcess (text)."""

    def _run(*args, timeout=120):
        return subprocess.run([numaprobe_bin, *args], capture_output=True, text=True, timeout=timeout)

    return _run
