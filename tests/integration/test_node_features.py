# SPDX-License-Identifier: Apache-2.0
"""The Node Feature Discovery feature file (node_feature_directory): the real
daemon writes <dir>/numaprobe after its first round, with the figures its
/metrics publishes (same snapshot: the schedule's interval is an hour, so no
second round changes them meanwhile), an expiry in the future and the distance
matrix as raw features; a missing directory is logged with the path and the
errno text, counted, retried and recovered from; a reload that clears the key
takes the file away; a read-only or full directory (a tmpfs of its own, as
root: CI) is the same counted, logged and retried outcome until it is
writable again. NFD's own worker reading such a file is
tests/deploy/test_nfd_worker.py. Structure and consistency only, no timings."""
import datetime
import os
import pathlib
import re
import signal

import subprocess

from daemon import Daemon, has_sample, parse_metrics, write_config
from test_state_faults import tmpfs  # noqa: F401 (a fixture: a tmpfs of its own, unmounted afterwards)

FILE = "numaprobe"


def configure(tmp_path, directory):
    config = write_config(str(tmp_path), interval="1h", baseline_rounds=1)
    with open(config, "a") as f:
        f.write(f"node_feature_directory: {directory}\n" if directory else "")
    return config


def read_features(path):
    """(expiry, labels, raw features) as NFD's local source reads the file."""
    expiry, labels, raw, no_label = None, {}, {}, False
    with open(path) as f:
        for line in f.read().splitlines():
            if line.startswith("# +expiry-time="):
                expiry = datetime.datetime.fromisoformat(line.split("=", 1)[1].replace("Z", "+00:00"))
            elif line == "# +no-label":
                no_label = True
            elif line and not line.startswith("#"):
                name, value = line.split("=", 1)
                (raw if no_label else labels)[name] = value
                no_label = False
    return expiry, labels, raw


def metric(d, name, **labels):
    for sample_labels, value in parse_metrics(d.metrics()).get(name, []):
        if all(sample_labels.get(k) == v for k, v in labels.items()):
            return value
    return None


def test_the_file_holds_the_published_figures_until_a_reload_clears_it(numaprobe_bin, tmp_path):
    features = tmp_path / "features.d"
    features.mkdir()
    config = configure(tmp_path, features)
    with Daemon(numaprobe_bin, config) as d:
        d.wait_for(lambda: (features / FILE).exists(), timeout=120, what="the feature file after the first round")
        expiry, labels, raw = read_features(features / FILE)
        local = metric(d, "numaprobe_memory_latency_seconds", cpu_node="0", mem_node="0")
        assert local is not None, d.metrics()
        assert labels["numaprobe.io/latency-local-ns"] == str(round(local * 1e9)), (labels, local)
        armed = metric(d, "numaprobe_baseline_complete")
        assert labels["numaprobe.io/drift-alerts-armed"] == ("true" if armed == 1 else "false")
        # Raw features only: a NodeFeatureRule can match them, the node carries no label.
        assert raw == {"numaprobe.io/distance-0-0": "10"}, raw
        assert all(name.startswith("numaprobe.io/") and re.fullmatch(r"[0-9]+|true|false", value)
                   for name, value in labels.items()), labels
        now = datetime.datetime.now(datetime.timezone.utc)
        # Three refresh intervals (the hour's schedule) ahead, give or take the wait.
        assert now + datetime.timedelta(hours=2) < expiry < now + datetime.timedelta(hours=4), (now, expiry)
        # Only the file: the temporary dot file was renamed.
        assert sorted(os.listdir(features)) == [FILE]
        assert has_sample(d.metrics(), "numaprobe_node_features_last_write_successful 1")
        assert f"node features written to {features}/{FILE}" in d.logs()

        assert configure(tmp_path, None) == config  # the same config, without the key
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: not (features / FILE).exists(), what="the file removed by the reload")
        assert "node feature file switched off" in d.logs()
        assert d.stop()[0] == 0


def test_a_missing_directory_is_named_counted_and_retried(numaprobe_bin, tmp_path):
    features = tmp_path / "features.d"  # not there: NFD is not installed yet
    with Daemon(numaprobe_bin, configure(tmp_path, features)) as d:
        d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_node_features_last_write_successful 0"), timeout=120,
                   what="the failed write in the metric")
        assert metric(d, "numaprobe_node_features_write_failures_total") >= 1
        errors = [l for l in d.logs().splitlines() if "level=error" in l and "node feature file" in l]
        assert errors and str(features) in errors[0] and "No such file or directory" in errors[0], errors
        assert not features.exists(), "NFD's directory is never created"
        # Probing and serving go on.
        assert metric(d, "numaprobe_memory_latency_seconds", cpu_node="0", mem_node="0") is not None
        features.mkdir()
        d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_node_features_last_write_successful 1"), timeout=90,
                   what="the retry (every 30 s) to write the file")
        assert (features / FILE).exists()
        assert d.stop()[0] == 0


def assert_fails_then_recovers(d, features, errno_text, make_writable):
    d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_node_features_last_write_successful 0"), timeout=120,
               what="the failed write in the metric")
    errors = [l for l in d.logs().splitlines() if "level=error" in l and "node feature file" in l]
    assert errors and errno_text in errors[0] and str(features) in errors[0], errors
    assert metric(d, "numaprobe_memory_latency_seconds", cpu_node="0", mem_node="0") is not None
    make_writable()
    d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_node_features_last_write_successful 1"), timeout=90,
               what="the retry (every 30 s) to write the file")
    assert (features / FILE).exists()
    assert d.stop()[0] == 0


def test_a_read_only_directory_is_counted_and_retried(numaprobe_bin, tmp_path, tmpfs):  # noqa: F811
    features = pathlib.Path(tmpfs("1m"))
    subprocess.run(["mount", "-o", "remount,ro", str(features)], check=True)
    with Daemon(numaprobe_bin, configure(tmp_path, features)) as d:
        assert_fails_then_recovers(d, features, "Read-only file system",
                                   lambda: subprocess.run(["mount", "-o", "remount,rw", str(features)], check=True))


def test_a_full_directory_is_counted_and_retried(numaprobe_bin, tmp_path, tmpfs):  # noqa: F811
    features = pathlib.Path(tmpfs("16k"))
    filler = features / ".filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 512)
    except OSError:
        pass
    finally:
        os.close(fd)
    with Daemon(numaprobe_bin, configure(tmp_path, features)) as d:
        assert_fails_then_recovers(d, features, "No space left on device", filler.unlink)
