# SPDX-License-Identifier: Apache-2.0
"""--web.config.file (exporter-toolkit format) against the real binary, with
curl: basic auth with bcrypt hashes, extra headers, SIGHUP reload, bad files
refused naming the key. TLS (tls_server_config) is test_web_tls.py."""
import ctypes
import ctypes.util
import os
import re
import base64
import http.client
import signal
import socket
import statistics
import subprocess
import threading
import time

import pytest

from daemon import Daemon, cpu_seconds_of, need, parse_metrics, write_config

# bcrypt ($2y$, cost 10) of "secret" and of "hunter2", made with libxcrypt's crypt_r.
SECRET_HASH = "$2y$10$hFK6PvyFYnsvHPQV7uD2XOkbRo8TTVBwwD3IaUYxwnu4XEcnZxv3O"
HUNTER2_HASH = "$2y$10$IC8zICqoK/6fyiWgrODVV.jNc6Z.UxsBqszxJbRriKzdO9..CMnUa"




# Requests per kind in the timing test: 7 bcrypt checks of ~0.1 s are
# 70 ticks of the process's CPU clock (10 ms), so a tick is ~1.5%.
REQUESTS = 7


def bcrypt_cpu_seconds(hashed, checks=3):
    """The median CPU seconds of one check of a password against `hashed` with
    libxcrypt's crypt(3), the implementation and cost the server's check has:
    the reference its CPU is held to."""
    lib = ctypes.CDLL(ctypes.util.find_library("crypt") or "libcrypt.so.1")
    lib.crypt.restype, lib.crypt.argtypes = ctypes.c_char_p, [ctypes.c_char_p, ctypes.c_char_p]
    times = []
    for _ in range(checks):
        t = time.thread_time()
        assert lib.crypt(b"wrong", hashed.encode()), "crypt(3) refused the hash"
        times.append(time.thread_time() - t)
    return statistics.median(times)


def curl_metrics(port):
    """The /metrics body, fetched with curl like every request here (basic auth
    guards every path but health: alice's password)."""
    r = subprocess.run([need("curl"), "-sS", "--max-time", "20", "-u", "alice:secret", f"http://127.0.0.1:{port}/metrics"],
                       capture_output=True, text=True, timeout=30)
    return r.stdout


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
    so response times do not tell which user names exist. Measured as the
    daemon's CPU time per request (/proc/PID/stat), which a busy machine does
    not inflate as it does a request's wall time (two medians of wall time
    beside busy loops differed by 2x); the reference is the same check's CPU
    time with libxcrypt in this process."""
    web = web_config(tmp_path, f"basic_auth_users:\n  alice: {SECRET_HASH}\n")
    # A budget that keeps the second probe visit minutes after the first: the
    # daemon's CPU below is the requests'.
    config = write_config(str(tmp_path), duty_cycle=0.0001, interval="5s")
    with Daemon(numaprobe_bin, config, ["--web.config.file", str(web)]) as d:
        d.wait_for(lambda: sum(v for _, v in parse_metrics(curl_metrics(d.port)).get(
            "numaprobe_probe_runs_total", [])) >= 1, what="the first probe run")

        def cpu_per_request(user):
            cpu0 = cpu_seconds_of(d.proc.pid)
            for _ in range(REQUESTS):
                assert curl(d.port, user=user)[1] == 401
            return (cpu_seconds_of(d.proc.pid) - cpu0) / REQUESTS
        no_header = cpu_per_request(None)
        unknown = cpu_per_request("mallory:secret")
        wrong = cpu_per_request("alice:wrong")
    reference = bcrypt_cpu_seconds(SECRET_HASH)
    print(f"daemon CPU a request: no header {no_header * 1e3:.1f} ms, unknown user {unknown * 1e3:.1f} ms, wrong "
          f"password {wrong * 1e3:.1f} ms; bcrypt here {reference * 1e3:.1f} ms")
    # A wrong password costs the server one bcrypt check; a missing header none.
    assert wrong - no_header > 0.5 * reference, (no_header, unknown, wrong, reference)
    # An unknown user must cost the same check, not nothing.
    assert unknown > no_header + 0.5 * (wrong - no_header), (no_header, unknown, wrong)


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


def test_a_flood_of_wrong_passwords_does_not_stall_a_verified_scraper(numaprobe_bin, tmp_path):
    """40 connections sending 10 pipelined requests each with a wrong
    password made a scrape with valid credentials wait 13.9 s (bcrypt ran on
    the two HTTP threads). Now the checks queue (8) behind one checking
    thread and the rest get 503, counted: the verified scraper's request is
    answered while wrong passwords are still being checked (its answer comes
    before the flood's last 401), whatever the machine's speed."""
    web = web_config(tmp_path, f"basic_auth_users:\n  alice: {SECRET_HASH}\n")
    wrong = base64.b64encode(b"alice:wrong").decode()
    request = (f"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {wrong}\r\n\r\n").encode()
    with start(numaprobe_bin, tmp_path, web) as d:
        assert curl(d.port, user="alice:secret")[1] == 200  # verified once: remembered
        last_401 = []
        statuses = []
        lock = threading.Lock()

        def flood(sock):
            seen, data = 0, b""
            try:
                while seen < 10:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    now = time.monotonic()
                    data += chunk
                    found = re.findall(rb"HTTP/1\.1 (\d{3})", data)
                    with lock:
                        for status in found[seen:]:
                            statuses.append(int(status))
                            if status == b"401":
                                last_401.append(now)
                    seen = len(found)
            except OSError:
                pass
            finally:
                sock.close()

        sockets = []
        for _ in range(40):
            sock = socket.create_connection(("127.0.0.1", d.port), timeout=60)
            sock.sendall(request * 10)
            sockets.append(sock)
        threads = [threading.Thread(target=flood, args=(sock,)) for sock in sockets]
        for t in threads:
            t.start()
        conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
        conn.request("GET", "/metrics", headers={"Authorization": "Basic " + base64.b64encode(b"alice:secret").decode()})
        response = conn.getresponse()
        body = response.read().decode()
        answered = time.monotonic()
        conn.close()
        for t in threads:
            t.join(timeout=120)
        assert response.status == 200, response.status
        assert 503 in statuses and 401 in statuses, sorted(set(statuses))
        assert answered < max(last_401), "the verified scrape waited for the flood's password checks"
        refused = parse_metrics(body)["numaprobe_http_password_checks_refused_total"][0][1]
        later = parse_metrics(curl_metrics(d.port))["numaprobe_http_password_checks_refused_total"][0][1]
        assert later == statuses.count(503) and later >= refused, (later, refused, statuses.count(503))
