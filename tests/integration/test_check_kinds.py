# SPDX-License-Identifier: Apache-2.0
""".ci/check-kinds: shared daemon code must not name a probe kind.

The check passes on this tree, and fails, naming file and line, on a copy
with a kind named in shared code, a stale entry in its list of remaining
files (planted in a copy of the check, since this tree lists none), or a kind
it does not know.
"""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

SOURCE = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CHECK = SOURCE / ".ci" / "check-kinds"

PLANTED = """\
// A comment may say latency, bandwidth and core_to_core: not code.
#include "kernels/c2c.h"
#include "kernels/topology.h"
void Planted(const BaselineValue& v, const HmatTarget& t, const Config& config) {
  if (v.probe == "latency") Count();
  const ProbeKind& kind = LatencyProbe();
  BufferPool::Kind which = BufferPool::Kind::kBandwidth;
  int threads = config.bandwidth.threads;
  std::vector<C2cPair> pairs;
  Log("measured latency and bandwidth over the HMAT's {}", t.read_latency_seconds);
  const char* quoted = "a \\"latency\\" in prose";
  LoadedState state;
}
"""
# Lines of PLANTED that name a kind, and what the check reports on each.
EXPECTED = {
    2: '#include "kernels/c2c.h"',
    5: '"latency"',
    6: "LatencyProbe",
    7: "kBandwidth",
    8: "bandwidth",
    9: "C2cPair",
}


def run(root):
    return subprocess.run([sys.executable, str(CHECK), "--root", str(root)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """One copy of daemon/ for the module; each test's changes are undone after it."""
    root = tmp_path_factory.mktemp("repo")
    shutil.copytree(SOURCE / "daemon", root / "daemon", ignore=shutil.ignore_patterns("*.o", "generated"))
    return root


@pytest.fixture
def tree(pristine):
    """The copy, with write(path, text) that plants or replaces a file until the test ends."""
    saved = {}

    def write(rel, text):
        path = pristine / rel
        saved.setdefault(path, path.read_text() if path.exists() else None)
        path.write_text(text)

    yield pristine, write
    for path, text in saved.items():
        if text is None:
            path.unlink()
        else:
            path.write_text(text)


def test_this_tree_passes():
    result = run(SOURCE)
    assert result.returncode == 0, result.stderr
    assert "check-kinds: ok" in result.stdout


def test_a_kind_named_in_shared_code_fails_naming_each_line(tree):
    root, write = tree
    write("daemon/web/planted.cc", PLANTED)
    result = run(root)
    assert result.returncode == 1
    reported = {int(line.split(":")[1]): line for line in result.stderr.splitlines()
                if line.startswith("daemon/web/planted.cc:")}
    assert set(reported) == set(EXPECTED), result.stderr
    for number, what in EXPECTED.items():
        assert what in reported[number], reported[number]


def test_a_module_may_name_its_kind(tree):
    root, write = tree
    write("daemon/probing/kinds/planted.cc", PLANTED)
    assert run(root).returncode == 0


def check_listing(root, remaining):
    """A copy of the check whose REMAINING lists `remaining` (file -> why)."""
    text = CHECK.read_text()
    assert "REMAINING = {}\n" in text, "the check's REMAINING is no longer empty; list the planted entry next to it"
    copy = root / "check-kinds"
    copy.write_text(text.replace("REMAINING = {}\n", f"REMAINING = {remaining!r}\n", 1))
    return copy


def run_copy(check, root):
    return subprocess.run([sys.executable, str(check), "--root", str(root)], capture_output=True, text=True)


def test_a_remaining_entry_is_tolerated_until_it_no_longer_names_a_kind(tree, tmp_path):
    root, write = tree
    check = check_listing(tmp_path, {"daemon/web/planted.cc": "a kind's specifics on their way to its module"})
    write("daemon/web/planted.cc", PLANTED)
    result = run_copy(check, root)
    assert result.returncode == 0, result.stderr
    assert "check-kinds: ok (1 files" in result.stdout

    write("daemon/web/planted.cc", "// no kind here any more\n")
    result = run_copy(check, root)
    assert result.returncode == 1
    assert "remove from REMAINING: daemon/web/planted.cc" in result.stderr


def test_a_remaining_entry_whose_file_is_gone_fails(tree, tmp_path):
    root, _ = tree
    check = check_listing(tmp_path, {"daemon/web/gone.cc": "moved"})
    result = run_copy(check, root)
    assert result.returncode == 1
    assert "remove from REMAINING: daemon/web/gone.cc" in result.stderr


def test_a_kind_the_check_does_not_know_fails(tree):
    root, write = tree
    write("daemon/probing/kinds/stream_triad.cc", 'std::string_view name() const override { return "stream_triad"; }\n')
    result = run(root)
    assert result.returncode == 1
    assert "kind 'stream_triad' is not in KIND_WORDS" in result.stderr
