# SPDX-License-Identifier: Apache-2.0
"""What a SIGHUP and `check-config` do beyond parsing: an unchanged file keeps
the round and the prepared buffers, and a file that cannot work on this host
(CPUs it does not have, an unusable lock file) is refused by check-config just
as serve and a reload refuse it, and it names the baselines a valid change
would re-record; a reload while series record keeps the learning budget
published."""
import os
import re
import signal
import time

from daemon import Daemon, parse_metrics, write_config


def test_unchanged_config_reload_keeps_the_plan_and_buffers(numaprobe_bin, tmp_path):
    config = write_config(str(tmp_path))
    with Daemon(numaprobe_bin, config) as d:
        d.wait_ready()
        for _ in range(5):
            d.signal(signal.SIGHUP)
            time.sleep(0.3)
        d.wait_for(lambda: d.logs().count("configuration unchanged") == 5, what="five unchanged reloads")
        # That a state reload leaves the round running is unit-tested
        # (tests/daemon/scheduler_loop_test.cc); here: no replan.
        logs = d.logs()
        assert logs.count("probe plan:") == 1, "an unchanged reload rebuilt the plan"
        assert "numaprobe_config_last_reload_successful 1" in d.metrics()

        # A real change is applied (and replans once).
        with open(config) as f:
            text = f.read()
        with open(config, "w") as f:
            f.write(text.replace("jitter: 0.1", "jitter: 0.2"))
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: "configuration reloaded" in d.logs(), what="the changed reload")
        d.wait_for(lambda: d.logs().count("probe plan:") == 2, what="one replan")


def test_check_config_refuses_what_serve_would_refuse(run, tmp_path):
    cpu = max(os.sched_getaffinity(0))
    # A measuring CPU, and a CPU of the core-to-core pairs (planned by their kind).
    for targets in ('cpus: "4095"', 'c2c_cpus: "0,4095"'):
        absent = tmp_path / "absent_cpu.yaml"
        absent.write_text(f'targets: {{{targets}}}\nprobe_lock_file: {tmp_path}/probe.lock\n')
        r = run("check-config", str(absent))
        assert r.returncode == 1 and "cpu 4095" in r.stderr, (targets, r.stderr)
        r = run("serve", "--config.file", str(absent), "--web.listen-address", "127.0.0.1:0", timeout=10)
        assert r.returncode == 1 and "cpu 4095" in r.stderr, (targets, r.stderr)
        # For configs meant for other hosts: the file alone.
        r = run("check-config", "--syntax-only", str(absent))
        assert r.returncode == 0, (targets, r.stderr)

    lock = tmp_path / "bad_lock.yaml"
    missing = tmp_path / "no" / "dir" / "numaprobe.lock"
    lock.write_text(f"probe_lock_file: {missing}\n")
    r = run("check-config", str(lock))
    assert r.returncode == 1 and str(missing) in r.stderr, r.stderr

    good = tmp_path / "good.yaml"
    good.write_text(f'targets: {{cpus: "{cpu}"}}\nprobe_lock_file: {tmp_path}/probe.lock\n')
    r = run("check-config", str(good))
    assert r.returncode == 0, r.stderr


def origin(d):
    return parse_metrics(d.metrics())["numaprobe_baseline_info"][0][0]["origin"]


def test_check_config_names_the_baselines_a_change_re_records(numaprobe_bin, run, tmp_path):
    """A valid file that changes a kind's measurement settings would make its
    series record new baselines: check-config says which kind, which key, how
    many series and for how long (or how to preview it), from the state file
    of the daemon the file is for. An unchanged file, --syntax-only and
    --print say nothing of it."""
    state = tmp_path / "state"
    config = write_config(str(tmp_path), state_directory=str(state))
    with Daemon(numaprobe_bin, config) as d:
        d.wait_ready()
    assert (state / "state.json").is_file()

    r = run("check-config", config)
    assert r.returncode == 0, r.stderr
    assert "is valid" in r.stdout and "re-records" not in r.stdout, r.stdout

    changed_dir = tmp_path / "changed"
    changed_dir.mkdir()
    changed = write_config(str(changed_dir), state_directory=str(state), loads=8000)
    r = run("check-config", changed)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].endswith("is valid"), r.stdout
    assert re.fullmatch(r"numaprobe: latency re-records its baselines \(latency\.loads 5000 -> 8000\): its \d+ "
                        r"series raise no drift alert until each has 1 new figures", lines[1]), r.stdout
    # Only latency's settings changed: no other kind re-records.
    assert sum("re-records" in line for line in lines) == 1, r.stdout
    assert re.fullmatch(r"numaprobe: (armed again: the representatives after .+, every pair after .+ \(the sizing "
                        r"preview at the task costs the daemon learnt\)|the daemon has not learnt its task costs "
                        r"yet: .*)", lines[2]), r.stdout
    for flag in ("--syntax-only", "--print"):
        r = run("check-config", flag, changed)
        assert r.returncode == 0 and "re-records" not in r.stdout, (flag, r.stdout)


def test_baseline_reset_takes_effect_on_sighup_and_at_restart(numaprobe_bin, run, tmp_path):
    """The marker `baseline reset` writes reaches the daemon by SIGHUP and at
    start. A budget this small keeps the first round (and so a baseline that
    would overwrite the marker) minutes away; that a reset complete baseline
    is recorded anew is unit-tested (tests/daemon/scheduler_loop_test.cc)."""
    config = write_config(str(tmp_path), duty_cycle=0.0001)
    state = str(tmp_path / "state")
    os.makedirs(state)  # `baseline reset` leaves a missing directory alone
    with Daemon(numaprobe_bin, config) as d:
        assert origin(d) == "first_start"
        r = run("baseline", "reset", "--state.directory", state)
        assert r.returncode == 0, r.stderr
        d.signal(signal.SIGHUP)  # an unchanged config: only the state is re-read
        d.wait_for(lambda: origin(d) == "reset", what="the reset to be taken")
        assert "the baseline was reset" in d.logs()
        assert d.stop()[0] == 0
    # Reset while the daemon is down: the next start says so.
    assert run("baseline", "reset", "--state.directory", state).returncode == 0
    with Daemon(numaprobe_bin, config) as d:
        assert origin(d) == "reset"


def budget(d):
    return parse_metrics(d.metrics())["numaprobe_duty_cycle_budget_ratio"][0][1]


def test_a_reload_while_series_record_keeps_publishing_the_learning_budget(numaprobe_bin, tmp_path):
    """With every series still recording (a baseline of 100 figures) the
    daemon spends, and publishes, the learning budget. A reload that changes
    only the interval replans (its published facts are rebuilt) while they
    still record: the metric stays the learning budget. It read
    schedule.duty_cycle from the replan on, while the probes went on at the
    learning budget. nice 19, not SCHED_IDLE: a busy test machine must not
    starve the probe the reload waits behind."""
    config = write_config(str(tmp_path), duty_cycle=0.01, interval="30s", baseline_rounds=100, priority="nice19")
    with open(config) as f:
        text = f.read().replace("duty_cycle: 0.01,", "duty_cycle: 0.01, learning_duty_cycle: 0.05,")
    assert "learning_duty_cycle: 0.05" in text
    with open(config, "w") as f:
        f.write(text)
    with Daemon(numaprobe_bin, config) as d:
        d.wait_for(lambda: budget(d) == 0.05, what="the learning budget")
        with open(config, "w") as f:
            f.write(text.replace("interval: 30s", "interval: 31s"))
        d.signal(signal.SIGHUP)

        def probing_on_the_new_plan():
            logs = d.logs()
            replan = logs.find("probe plan:", logs.find("probe plan:") + 1)
            return replan >= 0 and re.search(r"starting [\w-]+ cpu", logs[replan:]) is not None

        # The replan is published before the loop starts the new plan's first probe.
        d.wait_for(probing_on_the_new_plan, timeout=120, what="a probe of the new plan")
        assert "configuration reloaded" in d.logs()
        m = parse_metrics(d.metrics())
        assert m["numaprobe_baseline_complete"][0][1] == 0, "the series still record"
        assert m["numaprobe_duty_cycle_budget_ratio"][0][1] == 0.05
