# SPDX-License-Identifier: Apache-2.0
"""The documents against the code they describe (ctest `docs`): what an
operator reads in README.md, SECURITY.md, CHANGELOG.md, docs/ (the man page included),
deploy/README.md, grafana/README.md and config/numaprobe.yaml must name things that exist:

- files: every repository path or Markdown link names a tracked file or
  directory, and a link's #anchor a heading of the linked page; a bare
  *.md or source file name is one the repository has (no notes kept beside
  it); no section numbers (the pages have none);
- flags: every `numaprobe COMMAND --flag` is in that command's --help, and a
  dotted flag (--web.*, --log.*, --config.*, --state.*) anywhere is one of
  numaprobe's;
- configuration keys: a dotted key of a top-level section (schedule.interval,
  probes.bandwidth.threads, ...) is a key of docs/numaprobe.reference.yaml;
- result values: every list of numaprobe_probe_runs_total's results is the
  whole set the kernels define (kernels/result.cc);
- metric and alert names: every numaprobe_* family is in docs/metrics.md
  (itself checked against the code by tests/daemon/metrics_reference_test.cc),
  every NumaProbe* alert in grafana/rules/alerts.yaml;
- the documents describe the project, not how they were written: no working
  sessions;
- CHANGELOG.md's section of the coming release names every metric family,
  alert and configuration key added or removed since the last release (whose
  names tests/fixtures/release_names/<version>.yaml records).

Each failure names the file, the line and what to change. ctest sets
NUMAPROBE_BIN (whose --help is read) and NUMAPROBE_SOURCE_DIR.
"""
import functools
import glob
import os
import pathlib
import re
import subprocess

import pytest
import yaml

from deploy_env import numaprobe_bin

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DOCS = ["README.md", "SECURITY.md", "CHANGELOG.md", "deploy/README.md", "grafana/README.md", "config/numaprobe.yaml",
        *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")), "docs/numaprobe.8"]
TOP_DIRS = ("daemon", "kernels", "tests", "docs", "deploy", "grafana", "config", "bench", ".ci", "cmake")
# File names in the documents that are made at run time or on the host, not
# kept in the repository.
RUNTIME_FILES = {"state.json", "serve.lock", "web.yml", "numaprobe.lock", "my-numaprobe.jsonnet",
                 "prometheusrule.yaml", "numaprobe-recording.yaml", "numaprobe-alerts.yaml", "curve.svg",
                 "tls.crt", "tls.key", "ca.crt", "rootfs.tar", "kustomization.yaml"}
# numaprobe_* words that are not metric families: a host change field, and
# build targets and functions.
NOT_FAMILIES = {"numaprobe_version", "numaprobe_fuzzers", "numaprobe_add_pytest", "numaprobe_add_gtest",
                "numaprobe_daemon_library", "numaprobe_warnings"}


@functools.cache
def tracked() -> list[str]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True)
    if out.returncode == 0 and out.stdout:
        return out.stdout.split()
    return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts]


@functools.cache
def tracked_names() -> set[str]:
    return {pathlib.PurePath(p).name for p in tracked()}


def exists(path: str) -> bool:
    """A tracked file, a directory holding one, a glob matching one, or a
    module named without its extension (kernels/latency: .h and .cc)."""
    path = path.rstrip("/").removeprefix("./")
    if any(c in path for c in "*?["):
        return any(glob.fnmatch.fnmatch(t, path) for t in tracked())
    return path in tracked() or any(t.startswith(path + "/") or t.startswith(path + ".") for t in tracked())


def exists_from(path: str) -> bool:
    """As exists(), also relative to daemon/: docs/architecture.md names the
    daemon's folders as the layers they are (config/config.h, probing/...)."""
    return exists(path) or exists("daemon/" + path)


def unroff(line: str) -> str:
    line = re.sub(r"\\f(\[[^\]]*\]|\(..|.)", "", line)
    for escape, text in (("\\-", "-"), ("\\&", ""), ("\\%", ""), ("\\(dq", '"'), ("\\(mu", "x"), ("\\e", "\\")):
        line = line.replace(escape, text)
    return line


@functools.cache
def lines_of(doc: str) -> list[str]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    if doc.endswith(".8"):
        # Joined by the macros' words: ".B numaprobe_x" reads as "numaprobe_x".
        return [unroff(re.sub(r"^\.(B|I|BR|BI|IR|RB|IB|RI|TP|PP|EX|EE|RS|RE|SS|SH|TQ)\b ?", "", l))
                for l in text.splitlines() if not l.startswith('.\\"')]
    if doc.endswith(".yaml"):
        return [l.split("#", 1)[1] if "#" in l else "" for l in text.splitlines()]
    return text.splitlines()


def every_line():
    for doc in DOCS:
        for number, line in enumerate(lines_of(doc), 1):
            yield doc, number, line


def report(problems):
    assert not problems, "\n".join(problems)


# --- files ---------------------------------------------------------------------------

def heading_anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[`*_]", lambda m: "_" if m.group(0) == "_" else "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@functools.cache
def anchors(doc: str) -> set[str]:
    return {heading_anchor(l.lstrip("#")) for l in (ROOT / doc).read_text(encoding="utf-8").splitlines()
            if l.startswith("#")}


PATH = re.compile(r"(?<![\w/.~$@-])((?:\.\./)*(?:%s)/[\w.*{},/<>-]*[\w*/}>])" % "|".join(re.escape(d) for d in TOP_DIRS))
LINK = re.compile(r"\]\(([^)\s]+)\)")
BARE = re.compile(r"(?<![\w/.*>-])([\w-]+\.(?:md|cc|h|py|sh|libsonnet))\b(?!/)")


def expand_braces(path: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [p for alt in m.group(1).split(",") for p in expand_braces(path[:m.start()] + alt + path[m.end():])]


def test_named_files_and_links_exist():
    problems = []
    for doc, number, line in every_line():
        where = f"{doc}:{number}"
        base = pathlib.PurePosixPath(doc).parent
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = os.path.normpath(str(base / path)) if path else doc
            if not exists(resolved):
                problems.append(f"{where}: the link {target} names no file of the repository")
            elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                problems.append(f"{where}: {resolved} has no heading for #{anchor}")
        for path in PATH.findall(LINK.sub("]()", line)):
            if "<" in path or path.endswith("/."):
                continue
            path = path.rstrip(">")
            for candidate in expand_braces(path.rstrip(".,;:")):
                relative = os.path.normpath(str(base / candidate)) if candidate.startswith("..") else candidate
                if not exists_from(relative):
                    problems.append(f"{where}: {candidate} names no file of the repository")
        for name in BARE.findall(line):
            if name not in tracked_names() and name not in RUNTIME_FILES:
                problems.append(f"{where}: {name} is no file of the repository (the documents cite only "
                                "the repository)")
        if "§" in line or re.search(r"\bsection [0-9]", line, re.I):
            problems.append(f"{where}: section numbers: the pages have none; name the section by its title")
    report(problems)


# --- flags -----------------------------------------------------------------------------

@functools.cache
def help_flags(*command: str) -> set[str]:
    r = subprocess.run([numaprobe_bin(), *command, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, f"numaprobe {' '.join(command)} --help: {r.stderr}"
    return set(re.findall(r"^ {2}(?:-\w,)?(--[A-Za-z0-9][\w.-]*)", r.stdout, re.M)) | {"--help"}


@functools.cache
def commands() -> dict[str, tuple[str, ...]]:
    """'baseline accept' -> ('baseline', 'accept'), ..., from the binary."""
    def subs(*words):
        r = subprocess.run([numaprobe_bin(), *words, "--help"], capture_output=True, text=True, timeout=30)
        block = r.stdout.split("Subcommands:", 1)
        return re.findall(r"^ {2}(\S+)", block[1], re.M) if len(block) == 2 else []
    out = {}
    for sub in subs():
        nested = subs(sub)
        for n in nested or [None]:
            words = (sub, n) if n else (sub,)
            out[" ".join(words)] = words
    return out


def all_flags() -> set[str]:
    return set().union(*(help_flags(*w) for w in commands().values())) | {"--version"}


COMMAND_LINE = re.compile(r"(?<![\w/-])numaprobe ((?:[a-z][\w-]*)(?: [a-z][\w-]*)?)((?: +(?:--?[\w.=/:\"'-]*|[^\s&|;#)`]+))*)")


def test_numaprobe_flags_exist():
    problems = []
    names = commands()
    everything = all_flags()
    for doc, number, line in every_line():
        for m in COMMAND_LINE.finditer(line):
            words = m.group(1).split()
            command = next((names[c] for c in (" ".join(words), words[0]) if c in names), None)
            if command is None:
                continue
            for flag in re.findall(r"(?<![\w-])(--[A-Za-z][\w.-]*[\w])", m.group(2)):
                if flag not in help_flags(*command) | {"--version"}:
                    problems.append(f"{doc}:{number}: numaprobe {' '.join(command)} has no {flag} "
                                    f"(numaprobe {' '.join(command)} --help lists its flags)")
        for flag in re.findall(r"(?<![\w-])(--(?:web|log|config|state)\.[\w.-]*[\w])", line):
            if flag not in everything:
                problems.append(f"{doc}:{number}: {flag} is no flag of numaprobe")
    report(problems)


# --- configuration keys ----------------------------------------------------------------

@functools.cache
def config_keys() -> set[str]:
    doc = yaml.safe_load((ROOT / "docs" / "numaprobe.reference.yaml").read_text(encoding="utf-8"))
    keys = set()

    def walk(node, prefix):
        for key, value in node.items():
            keys.add(prefix + key)
            if isinstance(value, dict):
                walk(value, prefix + key + ".")
    walk(doc, "")
    return keys


def test_configuration_keys_exist():
    sections = {k for k in config_keys() if "." not in k and k not in ("state_directory", "probe_lock_file")}
    key = re.compile(r"(?<![\w./-])((?:%s)\.[a-z_][\w.]*[a-z_])(?![\w(/\[-])" % "|".join(sorted(sections)))
    problems = []
    for doc, number, line in every_line():
        for found in key.findall(line):
            if found not in config_keys():
                problems.append(f"{doc}:{number}: {found} is no key of docs/numaprobe.reference.yaml")
    report(problems)


# --- result values -----------------------------------------------------------------------

@functools.cache
def outcomes() -> set[str]:
    source = (ROOT / "kernels" / "result.cc").read_text()
    body = source.split("OutcomeName(Outcome outcome)", 1)[1].split("\n}\n", 1)[0]
    return set(re.findall(r'return "([a-z_]+)";', body)) - {"unknown"}


def test_result_lists_are_complete():
    """A list naming several results names them all (the ok run aside)."""
    failures = outcomes() - {"ok"}
    problems = []
    for doc, number, line in every_line():
        named = {w for w in re.findall(r"[a-z]+(?:_[a-z]+)+|[a-z]+", line) if w in failures}
        if len(named) >= 6 and named != failures:
            problems.append(f"{doc}:{number}: a list of run results without {sorted(failures - named)}")
    report(problems)


# --- metric and alert names ------------------------------------------------------------

@functools.cache
def families() -> set[str]:
    return set(re.findall(r"^\| `((?:numaprobe|process)_\w+)` \|", (ROOT / "docs" / "metrics.md").read_text(), re.M))


@functools.cache
def alert_names() -> set[str]:
    doc = yaml.safe_load((ROOT / "grafana" / "rules" / "alerts.yaml").read_text())
    return {r["alert"] for g in doc["groups"] for r in g["rules"] if "alert" in r}


def test_metric_and_alert_names_exist():
    problems = []
    for doc, number, line in every_line():
        for m in re.finditer(r"(?<![\w:])(numaprobe_\w*)(\*?)", line):
            name, wildcard = m.groups()
            if line[m.end():m.end() + 1] == ":" or name in NOT_FAMILIES or re.match(r"numaprobe_\d|numaprobe_$", name):
                continue  # inside a recording rule's name, a package file name, or not a metric
            if wildcard or name.endswith("_"):
                if not any(f.startswith(name) for f in families()):
                    problems.append(f"{doc}:{number}: no family in docs/metrics.md starts with {name}")
            elif "{" not in name and name not in families() and not re.match(r"numaprobe_\w+(_bucket|_sum|_count)$", name):
                problems.append(f"{doc}:{number}: {name} is no family of docs/metrics.md")
        for name in re.findall(r"(?<![\w#])(NumaProbe[A-Z]\w*)", line):
            if name not in alert_names():
                problems.append(f"{doc}:{number}: {name} is no alert of grafana/rules/alerts.yaml")
    report(problems)


# --- CHANGELOG.md against the last release ---------------------------------------------

RELEASE_NAMES = ROOT / "tests" / "fixtures" / "release_names"


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def project_version() -> str:
    return re.search(r"project\(numaprobe VERSION (\d+\.\d+\.\d+)", (ROOT / "CMakeLists.txt").read_text()).group(1)


def last_release() -> tuple[str, dict]:
    """The newest recorded release before the one CMakeLists.txt declares."""
    coming = version_key(project_version())
    versions = [p.stem for p in RELEASE_NAMES.glob("*.yaml") if version_key(p.stem) < coming]
    assert versions, f"{RELEASE_NAMES} records no release before {project_version()}"
    newest = max(versions, key=version_key)
    return newest, yaml.safe_load((RELEASE_NAMES / f"{newest}.yaml").read_text())


def changelog_section() -> str:
    """CHANGELOG.md's section of the release CMakeLists.txt declares."""
    text = (ROOT / "CHANGELOG.md").read_text()
    m = re.search(r"^## %s\b.*?(?=^## |\Z)" % re.escape(project_version()), text, re.M | re.S)
    assert m, f"CHANGELOG.md has no section `## {project_version()}`"
    return m.group(0)


def test_changelog_names_what_changed_since_the_last_release():
    released, before = last_release()
    section = changelog_section()
    now = {"families": families(), "alerts": alert_names(), "keys": config_keys()}
    problems = []
    for kind, names in now.items():
        was = set(before[kind])
        for change, changed in (("added", names - was), ("removed", was - names)):
            for name in sorted(changed):
                if not re.search(r"(?<![\w.])%s(?!\w)" % re.escape(name), section):
                    problems.append(f"CHANGELOG.md: the {project_version()} section does not name {name}, "
                                    f"{change} since {released} ({kind})")
    report(problems)


# --- the documents speak of the project ----------------------------------------------

def test_documents_do_not_narrate_their_writing():
    problems = []
    for doc, number, line in every_line():
        if re.search(r"(?<!TLS )\bsessions?\b(?! id)", line, re.I) or re.search(r"\bstop [0-9]+\b", line):
            problems.append(f"{doc}:{number}: say what the project does and measures, not when or in which "
                            f"working session it was written: {line.strip()[:120]}")
    report(problems)


def test_the_changelog_check_fails_on_a_name_left_out(monkeypatch):
    section = changelog_section()
    assert "NumaProbeStateNotWritten" in section
    monkeypatch.setattr(__import__(__name__), "changelog_section",
                        lambda: section.replace("NumaProbeStateNotWritten", "the state alert"))
    with pytest.raises(AssertionError, match="does not name NumaProbeStateNotWritten, added since"):
        test_changelog_names_what_changed_since_the_last_release()


@pytest.mark.parametrize("case", ["missing_file", "stale_flag", "stale_key", "short_results", "unknown_metric"])
def test_each_check_fails_on_a_planted_mistake(case, monkeypatch, tmp_path):
    """Each check above, run on a copy of README.md with one mistake, fails."""
    planted = {"missing_file": "See docs/no-such-page.md and numa-vm.md.",
               "stale_flag": "    numaprobe probe --no-such-flag",
               "stale_key": "Set `schedule.no_such_key`.",
               "short_results": "results: invalid_spec, not_allowed, alloc_failed, bind_failed, "
                                "placement_mismatch, placement_unverified, pin_failed",
               "unknown_metric": "Watch `numaprobe_no_such_family`."}[case]
    check = {"missing_file": test_named_files_and_links_exist, "stale_flag": test_numaprobe_flags_exist,
             "stale_key": test_configuration_keys_exist, "short_results": test_result_lists_are_complete,
             "unknown_metric": test_metric_and_alert_names_exist}[case]
    lines = lines_of("README.md") + [planted]
    monkeypatch.setattr(__import__(__name__), "DOCS", ["README.md"])
    monkeypatch.setattr(__import__(__name__), "lines_of", lambda doc: lines)
    with pytest.raises(AssertionError):
        check()
