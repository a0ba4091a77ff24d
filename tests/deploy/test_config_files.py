# SPDX-License-Identifier: Apache-2.0
"""The shipped configuration files against the binary (ctest entry
`config_files`, label `deploy`):

* config/numaprobe.yaml, installed as /etc/numaprobe/numaprobe.yaml, sets no
  key: a site's file holds only the site's changes, so later defaults reach
  it. Its commented examples, uncommented, are valid and are the defaults.
* docs/numaprobe.reference.yaml names every key with exactly the default the
  binary has: it equals what `numaprobe check-config --print` prints for an
  empty file, key by key and value by value.
* `check-config --print` shows a file's changes over the defaults.
"""
import os
import pathlib
import subprocess

import yaml

from deploy_env import numaprobe_bin

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
SHIPPED = ROOT / "config" / "numaprobe.yaml"
REFERENCE = ROOT / "docs" / "numaprobe.reference.yaml"
EXAMPLES_MARK = "# What sites change most"


def printed(path):
    p = subprocess.run([numaprobe_bin(), "check-config", "--syntax-only", "--print", str(path)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return yaml.safe_load(p.stdout)


def test_the_shipped_file_sets_nothing():
    assert yaml.safe_load(SHIPPED.read_text()) is None, "config/numaprobe.yaml pins a key; keep it to comments"


def test_the_shipped_examples_are_the_defaults(tmp_path):
    text = SHIPPED.read_text()
    assert EXAMPLES_MARK in text
    examples = text.split(EXAMPLES_MARK, 1)[1].split("\n", 1)[1]
    uncommented = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in examples.splitlines())
    assert yaml.safe_load(uncommented), "no examples after the mark"
    path = tmp_path / "examples.yaml"
    path.write_text(uncommented + "\n")
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert printed(path) == printed(empty), uncommented


def test_the_reference_is_every_key_at_its_default(tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    defaults = printed(empty)
    reference = yaml.safe_load(REFERENCE.read_text())

    def diff(a, b, path=""):
        if isinstance(a, dict) and isinstance(b, dict):
            out = []
            for key in sorted(set(a) | set(b)):
                out += diff(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{path}.{key}" if path else key)
            return out
        return [] if a == b else [f"{path}: reference says {a!r}, the binary {b!r}"]

    assert not diff(reference, defaults), "\n".join(diff(reference, defaults))
    assert printed(REFERENCE) == defaults


def test_print_shows_a_change_over_the_defaults(tmp_path):
    path = tmp_path / "site.yaml"
    path.write_text("schedule:\n  interval: 7m\nprobes:\n  bandwidth:\n    ops: [read]\n")
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    site, defaults = printed(path), printed(empty)
    assert site["schedule"]["interval"] == "7m" and site["probes"]["bandwidth"]["ops"] == ["read"]
    site["schedule"]["interval"] = defaults["schedule"]["interval"]
    site["probes"]["bandwidth"]["ops"] = defaults["probes"]["bandwidth"]["ops"]
    assert site == defaults
