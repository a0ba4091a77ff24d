# SPDX-License-Identifier: Apache-2.0
"""The commands docs/runbook.md gives for reloading, accepting and resetting in
each deployment ("Reloading, accepting and resetting": its systemd, Container
and Kubernetes subsections), as the tests that run or check them read them:
every command line of the subsection's code blocks, continuation lines joined,
comments dropped."""
import os
import pathlib
import re

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
RUNBOOK = ROOT / "docs" / "runbook.md"
SECTION = "## Reloading, accepting and resetting"


def procedures() -> dict[str, list[str]]:
    """{"systemd": [...], "container": [...], "kubernetes": [...]}: the lines of
    the code blocks under each ### heading of the section."""
    text = RUNBOOK.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/runbook.md has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    out: dict[str, list[str]] = {}
    for part in section.split("\n### ")[1:]:
        heading, _, body = part.partition("\n")
        key = heading.split()[0].lower()
        lines = []
        for block in re.findall(r"```sh\n(.*?)```", body, re.S):
            for line in block.replace("\\\n", " ").splitlines():
                line = re.sub(r"\s+#.*$", "", line).strip()
                if line and not line.startswith("#"):
                    lines.append(re.sub(r"\s+", " ", line))
        out[key] = lines
    assert {"systemd", "container", "kubernetes"} <= set(out), sorted(out)
    return out


def numaprobe_argv(line: str) -> list[str] | None:
    """The numaprobe command a procedure line runs inside its target (after
    `podman exec NAME` or `kubectl ... --`), or None if it runs none."""
    words = line.split()
    if words[:2] == ["podman", "exec"]:
        words = words[3:]
    elif words[:1] == ["kubectl"] and "exec" in words and "--" in words:
        words = words[words.index("--") + 1:]
    return words if words[:1] == ["numaprobe"] else None
