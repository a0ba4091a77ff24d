"""What the tests in tests/deploy need from their environment: the built binary
(ctest sets NUMAPROBE_BIN) and host tools, skipped with the reason when absent."""
import os
import shutil

import pytest


def on_ci():
    return os.environ.get("CI", "").strip().lower() == "true"


def numaprobe_bin():
    path = os.environ.get("NUMAPROBE_BIN")
    if not path:
        pytest.skip("NUMAPROBE_BIN is not set (ctest sets it to the built binary)")
    return path


def need(tool):
    path = shutil.which(tool)
    if not path:
        pytest.skip(f"{tool} is not installed")
    return path
