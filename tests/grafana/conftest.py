"""pytest glue for tests/grafana: import path and the multi-node panel report."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

MULTINODE_REPORT = pytest.StashKey[list]()


@pytest.fixture
def multinode_report(request):
    """Lines for the terminal summary: panels only checked to parse cleanly."""
    return request.config.stash.setdefault(MULTINODE_REPORT, [])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    lines = config.stash.get(MULTINODE_REPORT, [])
    if lines:
        terminalreporter.section("panels needing more than one NUMA node (checked to parse cleanly only)")
        for line in lines:
            terminalreporter.line(line)
