# SPDX-License-Identifier: Apache-2.0
"""The operator's actions without a shell or kill: `numaprobe reload` and
`numaprobe baseline accept|reset` find the `numaprobe serve` of the
configuration's state directory (its serve.lock) and send it SIGHUP; a
configuration the daemon would refuse is not sent; with no daemon running
they say so. The container and systemd tests run the same commands the way
docs/runbook.md gives them (podman exec, inside a systemd guest)."""
import os
import re

from daemon import Daemon, parse_metrics, write_config


def origin(d):
    return parse_metrics(d.metrics())["numaprobe_baseline_info"][0][0]["origin"]


def sent_to(result, d):
    """The pid the command says it signalled is the daemon's."""
    m = re.search(r"sent SIGHUP to numaprobe serve \(pid (\d+)\)", result.stdout)
    assert m, result.stdout + result.stderr
    return int(m.group(1)) == d.proc.pid


def test_reload_checks_the_config_and_signals_the_daemon_of_its_state_directory(numaprobe_bin, run, tmp_path):
    config = write_config(str(tmp_path))
    with Daemon(numaprobe_bin, config) as d:
        r = run("reload", "--config.file", config)
        assert r.returncode == 0, r.stderr
        assert sent_to(r, d)
        d.wait_for(lambda: "Received SIGHUP" in d.logs(), what="the reload")
        d.wait_for(lambda: "configuration unchanged" in d.logs(), what="the reload to finish")

        # A file the daemon would refuse is not sent: the daemon is not reloaded.
        with open(config) as f:
            good = f.read()
        with open(config, "w") as f:
            f.write(good + "schedule_typo: 1\n")
        r = run("reload", "--config.file", config)
        assert r.returncode == 1
        assert "schedule_typo" in r.stderr and "not reloaded" in r.stderr, r.stderr
        assert d.logs().count("Received SIGHUP") == 1
        assert d.stop()[0] == 0

    # No daemon: an error, naming the lock it looked for.
    with open(config, "w") as f:
        f.write(good)
    r = run("reload", "--config.file", config)
    assert r.returncode == 1
    assert f"no numaprobe serve runs on {tmp_path}/state" in r.stderr, r.stderr


def test_baseline_accept_reloads_the_running_daemon(numaprobe_bin, run, tmp_path):
    """As test_reload.py's reset, with a budget that keeps the first round
    minutes away, but the command itself reaches the daemon."""
    config = write_config(str(tmp_path), duty_cycle=0.0001)
    with Daemon(numaprobe_bin, config) as d:
        assert origin(d) == "first_start"
        r = run("baseline", "accept", "--config.file", config)
        assert r.returncode == 0, r.stderr
        assert sent_to(r, d)
        d.wait_for(lambda: origin(d) == "accepted", what="the accepted baseline")
        assert d.stop()[0] == 0
    # Not running: the marker waits for the next start, and that is no error.
    r = run("baseline", "reset", "--config.file", config)
    assert r.returncode == 0, r.stderr
    assert "no numaprobe serve runs on" in r.stdout and "the next one to start takes it up" in r.stdout
    with Daemon(numaprobe_bin, config) as d:
        assert origin(d) == "reset"


def test_a_second_daemon_on_the_same_state_directory_is_named(numaprobe_bin, tmp_path):
    config = write_config(str(tmp_path), duty_cycle=0.0001)
    with Daemon(numaprobe_bin, config) as first, Daemon(numaprobe_bin, config) as second:
        assert f"another numaprobe serve (pid {first.proc.pid}) uses the state directory" in second.logs()
        assert "level=warn" in second.logs()
        assert os.path.isfile(os.path.join(tmp_path, "state", "serve.lock"))
