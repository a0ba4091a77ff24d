"""--web.config.file (exporter-toolkit format) against the real binary, with
curl: basic auth with bcrypt hashes, extra headers, SIGHUP reload, bad files
refused naming the key. TLS (tls_server_config) is test_web_tls.py."""
import os
import re
import signal
import statistics
import subprocess
import time

import pytest

from daemon import Daemon, write_config, need

# bcrypt ($2y$, cost 10) of "secret" and of "hunter2", made with libxcrypt's crypt_r.
SECRET_HASH = "$2y$10$hFK6PvyFYnsvHPQV7uD2XOkbRo8TTVBwwD3IaUYxwnu4XEcnZxv3O"
HUNTER2_HASH = "$2y$10$IC8zICqoK/6fyiWgrODVV.jNc6Z.UxsBqszxJbRriKzdO9..CMnUa"




def curl(port, path="/metrics", user=None):
    """(curl exit code, HTTP status or 0, response headers)."""
    args = [need("curl"), "-sS", "--max-time", "20", "-o", "/dev/null", "-D", "-", "-w", "\n%{http_code}"]
    if user:
        args += ["-u", user]
    r = subprocess.run([*args, f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, timeout=30)
    lines = r.stdout.strip().splitlines()
    status = int(lines[-1]) if lines and lines[-1].isdigit() else 0
    return r.returncode, status, r.stdout


def web_config(tmp_path, text):
    path = tmp_path / "web.yml"
    path.write_text(text)
    return path


def start(numaprobe_bin, tmp_path, web):
    config = write_config(str(tmp_path), duty_cycle=0.02, interval="5s")
    return Daemon(numaprobe_bin, config, ["--web.config.file", str(web)])


def test_bcrypt_cost_paid_for_unknown_users_too(numaprobe_bin, tmp_path):
    """An unknown user costs a bcrypt computation like a wrong password does,
    so response times do not tell which user names exist."""
    web = web_config(tmp_path, f"basic_auth_users:\n  alice: {SECRET_HASH}\n")
    with start(numaprobe_bin, tmp_path, web) as d:
        def seconds(user):
            times = []
            for _ in range(7):
                t = time.monotonic()
                assert curl(d.port, user=user)[1] == 401
                times.append(time.monotonic() - t)
            return statistics.median(times)
        no_header = seconds(None)
        unknown = seconds("mallory:secret")
        wrong = seconds("alice:wrong")
        # bcrypt at cost 10 takes tens of ms; a missing header none.
        assert unknown > no_header + 0.5 * (wrong - no_header), (no_header, unknown, wrong)
        assert wrong - no_header > 0.01, (no_header, unknown, wrong)


def test_reload_on_sighup(numaprobe_bin, tmp_path):
    web = web_config(tmp_path, f"basic_auth_users:\n  alice: {SECRET_HASH}\n")
    with start(numaprobe_bin, tmp_path, web) as d:
        assert curl(d.port, user="alice:secret")[1] == 200
        web.write_text(f"basic_auth_users:\n  bob: {HUNTER2_HASH}\n")
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: "web configuration reloaded" in d.logs(), what="the web reload")
        assert curl(d.port, user="alice:secret")[1] == 401
        assert curl(d.port, user="bob:hunter2")[1] == 200

        # A bad file on reload: logged naming the key, the running one kept.
        web.write_text(f"basic_auth_users:\n  bob: {HUNTER2_HASH}\nhttp_server_config:\n  http3: true\n")
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: "keeping the running web configuration" in d.logs(), what="the refused reload")
        assert "http_server_config.http3" in d.logs()
        assert curl(d.port, user="bob:hunter2")[1] == 200



@pytest.mark.parametrize("text,key", [
    ("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
     "tls_server_config.cipher_suites"),
    ("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS11\n", "tls_server_config.min_version"),
    ("tls_server_config:\n  key_file: b\n", "tls_server_config.cert_file"),
    ("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n",
     "tls_server_config.client_auth_type"),
    ("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Sometimes\n",
     "tls_server_config.client_auth_type"),
    ("basic_auth_users:\n  alice: plaintext\n", "basic_auth_users.alice"),
    ("http_server_config:\n  headers:\n    Server: x\n", "http_server_config.headers.Server"),
    ("tls_config:\n  cert_file: a\n", "tls_config"),
    ("basic_auth_users: [alice]\n", "basic_auth_users"),
])
def test_bad_web_config_at_start_exits_naming_the_key(run, tmp_path, text, key):
    web = web_config(tmp_path, text)
    config = write_config(str(tmp_path))
    r = run("serve", "--config.file", config, "--web.config.file", str(web), "--web.listen-address", "127.0.0.1:0",
            timeout=30)
    assert r.returncode == 1 and key in r.stderr, r.stderr


def test_basic_auth_and_headers(numaprobe_bin, tmp_path):
    web = web_config(tmp_path, "http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n"
                               f"basic_auth_users:\n  alice: {SECRET_HASH}\n  bob: {HUNTER2_HASH}\n")
    with start(numaprobe_bin, tmp_path, web) as d:
        # No credentials, a wrong password, an unknown user, another user's password: 401 with a challenge.
        for user in (None, "alice:wrong", "alice:", "alice:secret ", "mallory:secret", "bob:secret"):
            code, status, out = curl(d.port, user=user)
            assert status == 401, (user, out)
            assert re.search(r'(?im)^WWW-Authenticate: Basic realm="numaprobe"', out), out
        # Every path is protected, not only /metrics.
        for path in ("/", "/-/healthy", "/-/ready", "/nothing"):
            assert curl(d.port, path=path)[1] == 401, path
        code, status, out = curl(d.port, user="alice:secret")
        assert status == 200, out
        assert re.search(r"(?im)^X-Content-Type-Options: nosniff", out), out
        assert curl(d.port, user="bob:hunter2")[1] == 200
        assert curl(d.port, path="/-/healthy", user="bob:hunter2")[1] == 200
