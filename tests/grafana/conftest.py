# SPDX-License-Identifier: Apache-2.0
"""pytest glue for tests/grafana: import path, the multi-node panel report and the
detection time-to-fire table."""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grafana_lib  # noqa: E402

MULTINODE_REPORT = pytest.StashKey[list]()
DETECTION_REPORT = pytest.StashKey[list]()


@pytest.fixture(autouse=True, scope="session")
def promtool_present():
    """The chosen promtool (grafana_lib.PROMTOOL) must exist: .ci/install-deps
    installs Debian's and builds the pinned Prometheus 3 one."""
    if not os.access(grafana_lib.PROMTOOL, os.X_OK):
        message = f"{grafana_lib.PROMTOOL} missing: run .ci/install-deps"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def multinode_report(request):
    """Lines for the terminal summary: panels only checked to parse cleanly."""
    return request.config.stash.setdefault(MULTINODE_REPORT, [])


@pytest.fixture(scope="session")
def detection_report(request):
    """Lines for the terminal summary: time to fire per detection scenario."""
    return request.config.stash.setdefault(DETECTION_REPORT, [])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    detection = config.stash.get(DETECTION_REPORT, [])
    if detection:
        terminalreporter.section("detection scenarios: time to fire (tests/grafana/test_detection.py)")
        for line in detection:
            terminalreporter.line(line)
    lines = config.stash.get(MULTINODE_REPORT, [])
    if lines:
        terminalreporter.section("panels empty on the healthy single-node test host (checked to parse cleanly only)")
        for line in lines:
            terminalreporter.line(line)
