# SPDX-License-Identifier: Apache-2.0
"""Checks of docs/numaprobe.8, the manual page the systemd unit names
(Documentation=man:numaprobe(8)):

- groff formats it without a warning, and man-db can index its NAME line;
- it has the sections an operator looks for, and a SYNOPSIS line per command;
- it agrees with the binary: every long option each command's --help prints is
  documented under that command, and every option documented under a command
  exists in its --help (stale options fail); the commands are the binary's;
- it agrees with docs/numaprobe.reference.yaml: every key is documented, no
  documented top-level key is gone, the default paths are the ones in FILES;
- `cmake --install` puts it in share/man/man8.

Needs PyYAML (Debian: python3-yaml), groff (groff-base) and lexgrog (man-db),
which .ci/install-deps installs. ctest sets NUMAPROBE_BIN (the binary whose
--help is compared), NUMAPROBE_BUILD_DIR and NUMAPROBE_CMAKE (for the install
check). A missing groff or lexgrog skips its test, or fails it when CI=true.
"""
import os
import pathlib
import re
import shutil
import subprocess

import pytest
import yaml

from deploy_env import numaprobe_bin, require

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MANPAGE = ROOT / "docs" / "numaprobe.8"
DEFAULT_CONFIG = ROOT / "docs" / "numaprobe.reference.yaml"  # every key at its default
UNIT = ROOT / "deploy" / "systemd" / "numaprobe.service"

CONFIG_PATH = "/etc/numaprobe/numaprobe.yaml"
DEFAULTS_FILE = "/etc/default/numaprobe"
STATE_FILE = "state.json"  # daemon/state.cc: <state_directory>/state.json

# Each command, as the words typed after `numaprobe`.
COMMANDS = {
    "serve": ["serve"],
    "probe": ["probe"],
    "topology": ["topology"],
    "check-config": ["check-config"],
    "baseline reset": ["baseline", "reset"],
    "baseline accept": ["baseline", "accept"],
    "reload": ["reload"],
}
# Printed by every command's --help (and the top level's); documented once, in OPTIONS.
COMMON_OPTIONS = {"--help", "--version"}

OPTION = re.compile(r"(?<![\w-])--[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]")


# --- reading roff --------------------------------------------------------------

def unroff(line):
    """The text of a roff line as a reader sees it: \\- is a '-', font changes
    and zero-width escapes vanish."""
    line = re.sub(r"\\f(\[[^\]]*\]|\(..|.)", "", line)
    for escape, text in (("\\-", "-"), ("\\&", ""), ("\\%", ""), ("\\c", ""), ("\\(dq", '"'),
                         ("\\(mu", "x"), ("\\(em", "-"), ("\\e", "\\")):
        line = line.replace(escape, text)
    return line


def source_lines():
    """The page's lines without comments, unescaped."""
    return [unroff(line) for line in MANPAGE.read_text().splitlines() if not line.startswith('.\\"')]


def title(line):
    """The title of a .SH / .SS line: 'check-config file', 'baseline reset'."""
    return " ".join(line.split(None, 1)[1].replace('"', "").split()) if " " in line else ""


def split_by(lines, macro):
    """{title: [lines]} of each `macro` (".SH", ".SS") heading, up to the next one."""
    out, current = {}, None
    for line in lines:
        if line.startswith(macro):
            current = out.setdefault(title(line), [])
        elif current is not None:
            current.append(line)
    return out


def sections(lines):
    return split_by(lines, ".SH")


def subsections(lines):
    """Within one section."""
    return split_by(lines, ".SS")


def tags(lines, top_level_only=False):
    """The tag lines of .TP/.TQ items (what a list defines), optionally only
    those outside .RS/.RE nesting."""
    out, depth = [], 0
    for i, line in enumerate(lines):
        if line.startswith(".RS"):
            depth += 1
        elif line.startswith(".RE"):
            depth -= 1
        elif (line.startswith(".TP") or line.startswith(".TQ")) and i + 1 < len(lines):
            if not top_level_only or depth == 0:
                out.append(lines[i + 1])
    return out


def defined_options(lines):
    return {opt for tag in tags(lines) for opt in OPTION.findall(tag)}


@pytest.fixture(scope="module")
def page():
    return sections(source_lines())


def command_section(page, command):
    """The COMMANDS subsection documenting `command` (its title may go on
    with the arguments: 'check-config file')."""
    words = COMMANDS[command]
    found = [lines for name, lines in subsections(page["COMMANDS"]).items() if name.split()[:len(words)] == words]
    assert len(found) == 1, f"COMMANDS has {len(found)} subsections for '{command}' (want one: .SS {command})"
    return found[0]


# --- reading --help ----------------------------------------------------------------

def run_help(*words):
    r = subprocess.run([numaprobe_bin(), *words, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, f"numaprobe {' '.join(words)} --help exited {r.returncode}: {r.stderr}"
    return r.stdout


def help_options(text):
    """Long options in CLI11's option list ('  -h,--help', '  --cpus TEXT'),
    not options mentioned in descriptions (indented further)."""
    return {m.group(1) for m in re.finditer(r"^ {2}(?:-\w,)?(--[A-Za-z0-9][A-Za-z0-9._-]*)", text, re.M)}


def help_subcommands(text):
    """Names listed under 'Subcommands:'."""
    _, _, rest = text.partition("\nSubcommands:\n")
    return {m.group(1) for m in re.finditer(r"^ {2}(\S+)", rest, re.M)}


# --- formatting ----------------------------------------------------------------------

def test_groff_formats_without_warnings():
    groff = require("groff")
    r = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", str(MANPAGE)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr.strip() and not r.stdout.strip(), \
        f"groff -man -ww exited {r.returncode}:\n{r.stdout}{r.stderr}"


def test_name_line_indexable():
    """man-db's whatis/apropos read the NAME line; a malformed one drops the page."""
    lexgrog = require("lexgrog")
    r = subprocess.run([lexgrog, str(MANPAGE)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert '"numaprobe - ' in r.stdout, r.stdout


def test_options_are_escaped():
    """In roff a bare '-' may be set as a hyphen (U+2010): options copied from
    the rendered page would not work. Options are written \\-\\-name."""
    bad = [f"line {n}: {line}" for n, line in enumerate(MANPAGE.read_text().splitlines(), 1)
           if not line.startswith('.\\"') and re.search(r"(?<![\\\w])-{1,2}[A-Za-z]", line)]
    assert not bad, "unescaped option dashes:\n" + "\n".join(bad)


def test_title_matches_unit_and_version():
    th = next(line for line in MANPAGE.read_text().splitlines() if line.startswith(".TH"))
    fields = re.findall(r'"[^"]*"|\S+', th)[1:]
    assert fields[0] == "NUMAPROBE" and fields[1] == "8", th
    assert re.search(r"^Documentation=.*\bman:numaprobe\(8\)", UNIT.read_text(), re.M), \
        "the unit's Documentation= no longer names man:numaprobe(8)"
    version = re.search(r"project\(numaprobe VERSION (\S+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert fields[3].strip('"') == f"numaprobe {version}", \
        f".TH says {fields[3]}, CMakeLists.txt project() says {version}: update the page's .TH line"


def test_sections(page):
    wanted = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "CONFIGURATION", "SIGNALS",
              "EXIT STATUS", "ENDPOINTS", "FILES", "ENVIRONMENT", "EXAMPLES", "SEE ALSO"]
    missing = [name for name in wanted if name not in page]
    assert not missing, f"sections missing: {missing}"
    synopsis = " ".join(page["SYNOPSIS"])
    for command, words in COMMANDS.items():
        assert re.search(rf"\.B numaprobe {' '.join(words)}(\s|$)", synopsis), f"no SYNOPSIS line for {command}"
    exit_codes = {tag.split()[-1] for tag in tags(page["EXIT STATUS"])}
    assert exit_codes == {"0", "1", "2"}, exit_codes  # daemon/commands.h: kExitOk, kExitFailure, kExitUsage


# --- agreement with the binary ---------------------------------------------------------

def test_commands_match_binary(page):
    """Every command the binary has is documented, and no documented one is gone."""
    documented = {name.split()[0] for name in subsections(page["COMMANDS"])}
    assert help_subcommands(run_help()) == documented
    baseline = {name.split()[1] for name in subsections(page["COMMANDS"]) if name.startswith("baseline ")}
    assert help_subcommands(run_help("baseline")) == baseline


def test_common_options_documented(page):
    """`numaprobe --help`'s options, and --help itself, are documented under
    OPTIONS, and OPTIONS documents nothing else."""
    printed = help_options(run_help())
    for words in COMMANDS.values():
        printed |= help_options(run_help(*words)) & COMMON_OPTIONS
    documented = defined_options(page["OPTIONS"])
    assert printed == documented, (f"--help prints {sorted(printed)}, "
                                   f"OPTIONS documents {sorted(documented)}")


@pytest.mark.parametrize("command", COMMANDS)
def test_help_options_documented(page, command):
    """Every long option `numaprobe COMMAND --help` prints has an entry under
    that command (common options: under OPTIONS)."""
    printed = help_options(run_help(*COMMANDS[command])) - COMMON_OPTIONS
    missing = printed - defined_options(command_section(page, command))
    assert not missing, f"'{command} --help' prints {sorted(missing)}, which the man page does not document there"


@pytest.mark.parametrize("command", COMMANDS)
def test_documented_options_exist(page, command):
    """Every option the page documents under a command is one its --help prints."""
    documented = defined_options(command_section(page, command))
    stale = documented - help_options(run_help(*COMMANDS[command]))
    assert not stale, f"the man page documents {sorted(stale)} under '{command}', which its --help does not print"


# --- agreement with the configuration ----------------------------------------------------

def config_keys(node, depth):
    """Keys of the mapping down to `depth` levels ('probes', 'latency', 'stride_bytes', ...)."""
    if not isinstance(node, dict) or depth == 0:
        return set()
    keys = set(node)
    for value in node.values():
        keys |= config_keys(value, depth - 1)
    return keys


def test_config_keys_documented(page):
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    section = page["CONFIGURATION"]
    top = {tag.split()[1] for tag in tags(section, top_level_only=True) if tag.startswith(".B ")}
    assert top == set(config), (f"CONFIGURATION entries {sorted(top)} != top-level keys of "
                                f"docs/numaprobe.reference.yaml {sorted(config)}")
    words = set(re.findall(r"[A-Za-z0-9_]+", " ".join(section)))
    missing = sorted(config_keys(config, 3) - words)
    assert not missing, f"CONFIGURATION does not mention config keys {missing}"


def test_files_match_defaults(page):
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    files = {tag.split()[1] for tag in tags(page["FILES"]) if tag.startswith(".I ")}
    state_file = f"{config['state_directory'].rstrip('/')}/{STATE_FILE}"
    wanted = {CONFIG_PATH, DEFAULTS_FILE, state_file}
    if config.get("probe_lock_file"):
        wanted.add(config["probe_lock_file"])
    missing = wanted - files
    assert not missing, f"FILES does not list {sorted(missing)}"
    unit = UNIT.read_text()
    assert f"--config.file={CONFIG_PATH}" in unit and f"EnvironmentFile=-{DEFAULTS_FILE}" in unit, \
        "the unit's config or defaults file moved: update FILES and this test"


# --- installation ----------------------------------------------------------------------------

def build_dir():
    if os.environ.get("NUMAPROBE_BUILD_DIR"):
        return pathlib.Path(os.environ["NUMAPROBE_BUILD_DIR"])
    for parent in pathlib.Path(numaprobe_bin()).resolve().parents:
        if (parent / "CMakeCache.txt").exists():
            return parent
    pytest.skip("no configured build directory above NUMAPROBE_BIN")


def cache_value(build, name, default):
    m = re.search(rf"^{name}:\w+=(.*)$", (build / "CMakeCache.txt").read_text(), re.M)
    return m.group(1) if m else default


def test_cmake_install_puts_page_in_man8(tmp_path):
    build = build_dir()
    cmake = os.environ.get("NUMAPROBE_CMAKE") or shutil.which("cmake")
    if not cmake:
        pytest.skip("cmake is not installed")
    destdir = tmp_path / "root"
    r = subprocess.run([cmake, "--install", str(build), "--prefix", "/usr"],
                       env={**os.environ, "DESTDIR": str(destdir)}, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    # GNUInstallDirs caches an empty MANDIR for "<DATAROOTDIR>/man".
    mandir = cache_value(build, "CMAKE_INSTALL_MANDIR", "") or \
        (cache_value(build, "CMAKE_INSTALL_DATAROOTDIR", "") or "share") + "/man"
    installed = destdir / "usr" / mandir / "man8" / "numaprobe.8"
    assert installed.is_file(), f"{installed} not installed:\n{r.stdout}"
    assert installed.read_bytes() == MANPAGE.read_bytes()
