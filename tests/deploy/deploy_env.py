# SPDX-License-Identifier: Apache-2.0
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


def unavailable(reason):
    """A prerequisite is missing: skip, or fail under CI=true (CI installs
    everything with .ci/install-deps, so a gap there is a bug)."""
    if on_ci():
        pytest.fail(f"{reason} (CI=true: a missing prerequisite fails the test)", pytrace=False)
    pytest.skip(reason)


def require(tool):
    """Path of `tool` on PATH (or /usr/sbin, /sbin), else unavailable()."""
    path = shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    if not path:
        unavailable(f"{tool} is not installed (run .ci/install-deps as root)")
    return path


def tools_dir():
    """Where .ci/install-deps puts the pinned Python and npm validators."""
    return os.environ.get("NUMAPROBE_TOOLS_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "numaprobe-tools")


def deb_path():
    """The .deb the package_build fixture made (ctest sets NUMAPROBE_DEB)."""
    path = os.environ.get("NUMAPROBE_DEB")
    if not path:
        unavailable("NUMAPROBE_DEB is not set (ctest sets it in a build configured with "
                    "CMAKE_INSTALL_PREFIX=/usr, e.g. the release preset)")
    if not os.path.isfile(path):
        unavailable(f"{path} does not exist: the package_build test makes it "
                    "(ctest -L package), or run cpack in the build directory")
    return path


def reference_keys(root) -> set[str]:
    """Every dotted key of docs/numaprobe.reference.yaml under `root` (the
    source tree): what the docs and HELP checks hold names against."""
    import yaml  # only the tests that read the reference need PyYAML

    keys = set()

    def walk(node, prefix):
        for key, value in node.items():
            keys.add(prefix + key)
            if isinstance(value, dict):
                walk(value, prefix + key + ".")
    walk(yaml.safe_load((root / "docs" / "numaprobe.reference.yaml").read_text(encoding="utf-8")), "")
    return keys
