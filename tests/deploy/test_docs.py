# SPDX-License-Identifier: Apache-2.0
"""The documents against the code they describe (ctest `docs`): what an
operator reads in README.md, SECURITY.md, CHANGELOG.md, docs/ (the man page included),
deploy/README.md, grafana/README.md and config/numaprobe.yaml, and in the files an operator
installs (the Kubernetes manifests of every overlay, the systemd unit and its defaults file,
the Containerfile, the Prometheus scrape example, the Helm chart's text in
deploy/helm/make-chart.py) must name things that exist:

- files: every repository path or Markdown link names a tracked file or
  directory, and a link's #anchor a heading of the linked page; a bare
  *.md or source file name is one the repository has (no notes kept beside
  it); no section numbers (the pages have none);
- flags: every `numaprobe COMMAND --flag` is in that command's --help, and a
  dotted flag (--web.*, --log.*, --config.*, --state.*) anywhere is one of
  numaprobe's;
- command lines: wherever numaprobe is run (a code block or `span`, a
  comment's example, a unit's Exec*= line, a Containerfile's RUN or
  ENTRYPOINT + CMD, a manifest container's command/args or the image's
  ENTRYPOINT + args), backslash-continued lines joined, its subcommand exists
  (one that does not fails) and every flag of that command is in its --help;
- recording rules: every level:numaprobe_*:operation name is a `record:` of
  grafana/rules/*.yaml;
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

from deploy_env import numaprobe_bin, reference_keys

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
# What an operator installs or applies and reads in it: the Kubernetes
# manifests (every overlay), the systemd unit and its defaults file, the
# Containerfile, the Prometheus scrape example and the Helm chart's text (the
# values, NOTES and templates deploy/helm/make-chart.py writes). Read whole,
# not only their comments: their command lines run numaprobe.
OPERATOR_FILES = [*sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("deploy/kubernetes*/*.yaml")),
                  "deploy/systemd/numaprobe.service", "deploy/systemd/numaprobe.default",
                  "deploy/container/Containerfile", "deploy/prometheus/kubernetes-scrape.yml",
                  "deploy/helm/make-chart.py"]
DOCS = ["README.md", "SECURITY.md", "CHANGELOG.md", "deploy/README.md", "grafana/README.md", "config/numaprobe.yaml",
        *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")), "docs/numaprobe.8",
        *OPERATOR_FILES]
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
    if doc == "config/numaprobe.yaml":  # its keys are checked by test_config_files.py; its comments here
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

# --- command lines: where numaprobe is run, whatever the file ---------------------------
#
# A command line is code: a fenced or indented block or a `span` of a Markdown
# page, a `span` or an indented example in a comment, a systemd Exec*= line, a
# Containerfile's exec-form RUN / ENTRYPOINT + CMD, a container's command and
# args in a manifest (no command: the image's ENTRYPOINT). Lines continued with
# a trailing backslash are one line. numaprobe runs where it is a command's
# first word (after sudo, exec, env, `--` of kubectl exec, `podman exec NAME`,
# a shell separator); its first word must then be a subcommand (not one: a
# failure), and every flag up to the end of that command must be in the
# --help of the (sub)command.

BINARY = r"(?:/usr(?:/local)?/s?bin/|(?:\./)?build/[\w-]+/(?:daemon/)?)?numaprobe"
INVOCATION = re.compile(r"(?<![\w./:-])" + BINARY + r"(?=\s|$)")
# What may stand between a command's start and numaprobe.
WRAPPERS = re.compile(r"(?:\$ |# )?(?:sudo(?: -[\w-]+)* |exec |time |env (?:\w+=\S* )+|\w+=\S* |timeout \S+ |"
                      r"(?:podman|docker|nerdctl) exec(?: -[\w-]+(?:[ =][\w./:-]+)?)* \S+ |"
                      r"kubectl(?: \S+)* exec(?: \S+)* -- )*")
SEPARATOR = re.compile(r"\|\||&&|[|;&()`<>]|\s#|\$\(")


def logical_lines(doc):
    """(line number, text) of `doc` with backslash-continued lines joined; in
    a comment the continuation's own comment mark is dropped."""
    lines = lines_of(doc)
    out, i = [], 0
    while i < len(lines):
        number, text = i + 1, lines[i]
        comment = re.match(r"\s*#", text) is not None
        while text.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            more = re.sub(r"^\s*#", "", lines[i]) if comment else lines[i]
            text = text.rstrip()[:-1] + " " + more.strip()
        out.append((number, text))
        i += 1
    return out


def code_spans(doc):
    """(line number, code text) of every command-line place of `doc`."""
    if doc.endswith(".8"):
        return  # tests/deploy/test_manpage.py checks the page's commands and options
    fenced = False
    previous_blank = True
    indented = False
    for number, line in logical_lines(doc):
        stripped = line.strip()
        if doc.endswith(".md"):
            if stripped.startswith("```"):
                fenced = not fenced
                continue
            indented = (line.startswith("    ") and (previous_blank or indented) and not fenced
                        and not re.match(r"\s*([-*]|\d+\.) ", line))
            previous_blank = not stripped
            line = line.replace("\\|", "|")  # a | inside a table cell
            if fenced or indented:
                yield number, line
                continue
        elif re.match(r"(?:Exec\w*)=[-@+!:]*", line):  # a systemd unit's command lines
            yield number, line.split("=", 1)[1].lstrip("-@+!:")
            continue
        elif re.match(r"\s*#\s{3,}(?:\$ )?(?:sudo|podman|docker|kubectl|helm|systemctl|/usr/s?bin/|deploy/)",
                      line) and not doc.endswith(".py"):
            yield number, re.sub(r"^\s*#\s*", "", line)  # an example command in a comment
            continue
        for span in re.findall(r"`([^`]+)`", line):
            yield number, span


def invocations_in(text):
    """The words after each numaprobe run in a command-line text."""
    for m in INVOCATION.finditer(text):
        before = " ".join(SEPARATOR.split(text[:m.start()])[-1].split())
        if not WRAPPERS.fullmatch(before + " " if before else ""):
            continue  # an argument (systemctl restart numaprobe, --numaprobe PATH, a container name)
        rest = SEPARATOR.split(text[m.end():], 1)[0]
        yield rest.split()


def json_words(line):
    m = re.search(r"\[(.*)\]", line)
    return [w.strip().strip('"') for w in m.group(1).split(",")] if m else []


def structured_invocations(doc):
    """(line number, words after numaprobe) of a Containerfile's exec forms and
    a manifest's containers."""
    lines = lines_of(doc)
    if doc.endswith("Containerfile"):
        found = {}
        for number, line in enumerate(lines, 1):
            m = re.match(r"(RUN|ENTRYPOINT|CMD) +\[", line)
            if m:
                found.setdefault(m.group(1), []).append((number, json_words(line)))
        for number, words in found.get("RUN", []):
            if words and words[0].endswith("/numaprobe"):
                yield number, words[1:]
        for number, words in found.get("ENTRYPOINT", []):
            cmd = found.get("CMD", [(0, [])])[-1][1]
            if words and words[0].endswith("/numaprobe"):
                yield number, words[1:] + cmd
    elif doc.endswith((".yaml", ".yml")) and doc.startswith("deploy/"):
        entrypoint = container_entrypoint()
        for manifest in yaml.safe_load_all("\n".join(lines)):
            for container in containers_of(manifest):
                image = str(container.get("image", ""))
                command = [str(w) for w in container.get("command") or []]
                args = [str(w) for w in container.get("args") or []]
                if command:
                    if not command[0].endswith("numaprobe"):
                        continue
                    words = command[1:] + args
                elif re.search(r"(^|/)numaprobe(:|$)", image):
                    words = entrypoint + args
                else:
                    continue
                first = (command or args or [image])[0]
                number = next((n for n, l in enumerate(lines, 1) if first in l), 0)
                yield number, words


@functools.cache
def container_entrypoint():
    """The words after numaprobe of the image's ENTRYPOINT (deploy/container/Containerfile)."""
    for line in (ROOT / "deploy" / "container" / "Containerfile").read_text().splitlines():
        if line.startswith("ENTRYPOINT"):
            return json_words(line)[1:]
    return []


def containers_of(node):
    if isinstance(node, dict):
        if "image" in node and "name" in node:
            yield node
        for value in node.values():
            yield from containers_of(value)
    elif isinstance(node, list):
        for value in node:
            yield from containers_of(value)


def command_problems(where, words):
    """What is wrong with `numaprobe WORDS...`: a subcommand that does not
    exist, a flag the (sub)command's --help does not list."""
    names = commands()
    command = ()
    problems = []
    rest = list(words)
    if rest and re.fullmatch(r"[A-Z][A-Z_]*|<[^>]*>|\S*\.\.\.", rest[0]):
        return problems  # numaprobe COMMAND --flag: a pattern, not a command line
    while rest and re.fullmatch(r"[a-z][a-z0-9-]*", rest[0]):
        candidate = " ".join((*command, rest[0]))
        if candidate in names or any(n.startswith(candidate + " ") for n in names):
            command = tuple(candidate.split())
            rest.pop(0)
            continue
        if not command or any(n.startswith(" ".join(command) + " ") for n in names):
            problems.append(f"{where}: numaprobe {' '.join((*command, rest[0]))}: "
                            f"numaprobe {' '.join(command) + ' ' if command else ''}has no subcommand {rest[0]} "
                            f"(numaprobe {' '.join(command) + ' ' if command else ''}--help lists them)")
            return problems
        break
    allowed = help_flags(*command) | {"--version"}
    for word in rest:
        flag = re.match(r"(--?[A-Za-z][\w.-]*[\w])(?:=|$)", word)
        if flag and flag.group(1) not in allowed and not (flag.group(1) == "-h"):
            problems.append(f"{where}: numaprobe {' '.join(command)} has no {flag.group(1)} "
                            f"(numaprobe {' '.join(command)} --help lists its flags)")
    return problems


def test_numaprobe_flags_exist():
    problems = []
    names = commands()
    everything = all_flags()
    for doc, number, line in every_line():
        # Prose ("numaprobe serve --x ..." in a sentence): the flags of a command it names.
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


def every_invocation():
    for doc in DOCS:
        for number, text in code_spans(doc) or ():
            for words in invocations_in(text):
                yield f"{doc}:{number}", words
        for number, words in structured_invocations(doc):
            yield f"{doc}:{number}", words


def test_numaprobe_command_lines_exist():
    """Every command line that runs numaprobe, in every file: its subcommand
    exists and each of its flags, on continued lines and in a manifest's args
    too, is in that subcommand's --help."""
    problems = []
    for where, words in every_invocation():
        problems += command_problems(where, words)
    report(problems)


def test_command_lines_are_found_in_every_kind_of_file():
    """The extraction reaches each kind of file: the unit's Exec lines, the
    Containerfile's RUN and ENTRYPOINT + CMD, a manifest's args, the chart's
    values text, continued lines and code blocks of the pages."""
    found = {}
    for where, words in every_invocation():
        found.setdefault(where.rsplit(":", 1)[0], []).append(" ".join(words))
    at_least = {"deploy/systemd/numaprobe.service": 3, "deploy/container/Containerfile": 2,
                "deploy/kubernetes/daemonset.yaml": 1, "deploy/helm/make-chart.py": 1, "README.md": 10,
                "docs/runbook.md": 20, "CHANGELOG.md": 10}
    for doc, n in at_least.items():
        assert len(found.get(doc, [])) >= n, f"{doc}: {found.get(doc)}"
    assert any(w.startswith("serve --config.file=") and "--log.format=json" in w
               for w in found["deploy/kubernetes/daemonset.yaml"]), found["deploy/kubernetes/daemonset.yaml"]
    assert any("--task-costs" in w for w in found["docs/performance.md"]), "a continued line was not joined"


# --- configuration keys ----------------------------------------------------------------

@functools.cache
def config_keys() -> set[str]:
    return reference_keys(ROOT)


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


@functools.cache
def recording_rules() -> set[str]:
    names = set()
    for path in sorted((ROOT / "grafana" / "rules").glob("*.yaml")):
        for group in yaml.safe_load(path.read_text())["groups"]:
            names |= {r["record"] for r in group["rules"] if "record" in r}
    return names


RECORDING_RULE = re.compile(r"(?<![\w:{])([a-z][a-z_]*:numaprobe_[\w{},]*:[\w{},]*[\w}])")


def test_recording_rule_names_exist():
    """level:numaprobe_family:operation names (brace lists expanded) are
    recording rules of grafana/rules/*.yaml."""
    problems = []
    for doc, number, line in every_line():
        for name in RECORDING_RULE.findall(line):
            for candidate in expand_braces(name):
                if candidate not in recording_rules():
                    problems.append(f"{doc}:{number}: {candidate} is no recording rule of grafana/rules/")
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


PLANTED = {
    # case: (file, what replaces or follows its lines, the check, what the failure must say)
    "missing_file": ("README.md", "See docs/no-such-page.md and numa-vm.md.", "test_named_files_and_links_exist",
                     "no-such-page.md names no file"),
    "stale_flag": ("README.md", "    numaprobe probe --no-such-flag", "test_numaprobe_flags_exist", "--no-such-flag"),
    "stale_key": ("README.md", "Set `schedule.no_such_key`.", "test_configuration_keys_exist", "no_such_key"),
    "short_results": ("README.md", "results: invalid_spec, not_allowed, alloc_failed, bind_failed, "
                      "placement_mismatch, placement_unverified, pin_failed", "test_result_lists_are_complete",
                      "a list of run results"),
    "unknown_metric": ("README.md", "Watch `numaprobe_no_such_family`.", "test_metric_and_alert_names_exist",
                       "numaprobe_no_such_family"),
    "unknown_subcommand": ("README.md", "After a rollout run `numaprobe baselines accept`.",
                           "test_numaprobe_command_lines_exist", "has no subcommand baselines"),
    "unknown_nested_subcommand": ("README.md", "Run `sudo numaprobe baseline approve` on the host.",
                                  "test_numaprobe_command_lines_exist", "numaprobe baseline has no subcommand approve"),
    "flag_on_a_continued_line": ("docs/runbook.md", ["```", "sudo numaprobe serve --config.file=x.yaml \\",
                                                     "    --no-such-flag", "```"],
                                 "test_numaprobe_command_lines_exist", "numaprobe serve has no --no-such-flag"),
    "flag_after_kubectl_exec": ("docs/runbook.md", ["```", 'kubectl -n monitoring exec "$POD" -c numaprobe -- '
                                                    "numaprobe reload --no-such-flag", "```"],
                                "test_numaprobe_command_lines_exist", "numaprobe reload has no --no-such-flag"),
    "manifest_args": ("deploy/kubernetes/daemonset.yaml", ("- --log.format=json", "- --no-such-flag"),
                      "test_numaprobe_command_lines_exist", "daemonset.yaml:\\d+: numaprobe serve has no --no-such-flag"),
    "containerfile_cmd": ("deploy/container/Containerfile", ('"--web.listen-address=:10062"]', '"--no-such-flag"]'),
                          "test_numaprobe_command_lines_exist", "Containerfile:\\d+: numaprobe serve has no --no-such-flag"),
    "containerfile_run": ("deploy/container/Containerfile", ('"check-config",', '"check-configs",'),
                          "test_numaprobe_command_lines_exist", "has no subcommand check-configs"),
    "unit_continued_exec": ("deploy/systemd/numaprobe.service",
                            ("--config.file=/etc/numaprobe/numaprobe.yaml $ARGS",
                             "--config.file=/etc/numaprobe/numaprobe.yaml \\\n    --no-such-flag $ARGS"),
                            "test_numaprobe_command_lines_exist", "numaprobe.service:29: numaprobe serve has no"),
    "chart_text": ("deploy/helm/make-chart.py", ("`numaprobe check-config FILE`", "`numaprobe check FILE`"),
                   "test_numaprobe_command_lines_exist", "has no subcommand check "),
    "recording_rule": ("grafana/README.md", "Graph `instance:numaprobe_host_info:rollouts`.",
                       "test_recording_rule_names_exist", "instance:numaprobe_host_info:rollouts is no recording rule"),
}


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_each_check_fails_on_a_planted_mistake(case, monkeypatch):
    """Each check above, run on a copy of one file with one mistake, fails
    and names it."""
    doc, plant, check, says = PLANTED[case]
    lines = lines_of(doc)
    if isinstance(plant, tuple):  # (old, new) within the file
        text = "\n".join(lines)
        assert plant[0] in text, (doc, plant[0])
        lines = text.replace(plant[0], plant[1], 1).split("\n")
    else:
        lines = lines + ([plant] if isinstance(plant, str) else plant)
    module = __import__(__name__)
    original = lines_of(doc)
    monkeypatch.setattr(module, "DOCS", [doc])
    monkeypatch.setattr(module, "lines_of", lambda d: original)
    getattr(module, check)()  # the file as it is passes the check...
    monkeypatch.setattr(module, "lines_of", lambda d: lines)
    with pytest.raises(AssertionError, match=says):  # ...and fails it with the mistake
        getattr(module, check)()
