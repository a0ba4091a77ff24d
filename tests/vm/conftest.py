# SPDX-License-Identifier: Apache-2.0
"""pytest glue for the VM suite: a run in which every test skipped exits 77, which
tests/vm/CMakeLists.txt declares as ctest's SKIP_RETURN_CODE, so ctest lists the
suite as skipped instead of passed. pytest.ini prints each skip's reason (-rs)."""


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter else {}
    if exitstatus == 0 and stats.get("skipped") and not stats.get("passed"):
        session.exitstatus = 77
