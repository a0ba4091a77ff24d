# SPDX-License-Identifier: Apache-2.0
"""Oversized requests against the real binary (docs/security.md, "How each
promise is tested"): a 1 MiB URI, 10,000 headers, a 1 MiB header value, a
POST streaming 1 MiB of a huge announced body and an overflowing
Content-Length each get their 4xx answer (431, 413 or 400), read by a client
that writes its whole request before reading, as HTTP clients do: the server
drains what is still arriving instead of closing into a reset
(daemon/web/http_session.h). The drain is bounded: a client that keeps
sending is cut off. 200 oversized requests do not grow the daemon's resident
memory by more than RSS_GROWTH_BOUND (a connection's buffer is at most 32 KiB
and freed with it: daemon/web/connection_limits.h; nothing should be kept)."""
import os
import re
import socket
import time

import pytest

from daemon import Daemon, write_config, SANITIZED_SLOWDOWN

MIB = 1 << 20
# 16 MiB is the margin for malloc arenas settling: a leak of the oversized
# input itself (1 MiB a request) would be 100+ MiB.
RSS_GROWTH_BOUND = 16 * MIB
# The client's send buffer. Over a network, what a client has sent but the
# server not yet read is bounded by the path's window; on loopback the kernel
# would buffer megabytes and hide a reset. 64 KiB keeps the requests below
# in flight when the server answers.
CLIENT_SEND_BUFFER = 64 * 1024

# (request, the status it must get)
HOSTILE = {
    "1 MiB URI": (b"GET /" + b"a" * MIB + b" HTTP/1.1\r\nHost: x\r\n\r\n", 431),
    "10,000 headers": (b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"".join(
        b"X-Header-%d: v\r\n" % i for i in range(10_000)) + b"\r\n", 431),
    "1 MiB header value": (b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"v" * MIB + b"\r\n\r\n", 431),
    "huge Content-Length POST": (b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1099511627776\r\n\r\n"
                                 + b"b" * MIB, 413),
    "overflowing Content-Length": (b"POST /metrics HTTP/1.1\r\nHost: x\r\n"
                                   b"Content-Length: 99999999999999999999999999\r\n\r\n", 400),
}


def connect(port, timeout=10):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, CLIENT_SEND_BUFFER)
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def send_as_client(port, payload, timeout=10):
    """(HTTP status or None, how the exchange ended) for a client that writes
    the whole request, then reads the answer until the server closes. A
    failed write ends it ("send failed: ..."): a client library gives up
    there without reading the answer."""
    s = connect(port, timeout)
    try:
        try:
            s.sendall(payload)
        except OSError as e:
            return None, f"send failed: {e}"
        received = b""
        try:
            while chunk := s.recv(65536):
                received += chunk
            ended = "closed"
        except socket.timeout:
            ended = "timeout"
        except ConnectionResetError:
            ended = "reset"
    finally:
        s.close()
    m = re.match(rb"HTTP/1\.[01] (\d{3})", received)
    return (int(m.group(1)) if m else None), ended


def vm_rss(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1)) * 1024


@pytest.fixture(scope="module")
def daemon(numaprobe_bin, tmp_path_factory):
    # One probe round, then none for an hour: probe buffers allocated later
    # would swamp the memory figure.
    config = write_config(str(tmp_path_factory.mktemp("oversized")), duty_cycle=0.05, interval="1h")
    # ASan holds freed memory in a quarantine (256 MiB by default) to catch a
    # use after free, so under ASan resident memory grows with every request
    # whether or not anything is kept (24 MiB over the 200). Without the
    # quarantine the figure measures what is kept again (1.3 MiB); LeakSanitizer
    # still checks for leaks when the daemon exits.
    asan_options = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "quarantine_size_mb=0"]))
    with Daemon(numaprobe_bin, config, env={"ASAN_OPTIONS": asan_options}) as d:
        d.wait_ready()
        yield d


@pytest.mark.parametrize("name", list(HOSTILE))
def test_each_gets_its_4xx(daemon, name):
    payload, expected = HOSTILE[name]
    status, ended = send_as_client(daemon.port, payload)
    print(f"{name}: status {status}, {ended}")
    assert (status, ended) == (expected, "closed"), f"{name}: status {status}, {ended}"
    # And the daemon still serves.
    assert daemon.proc.poll() is None, daemon.logs()
    assert daemon.get("/-/healthy")[0] == 200


def test_a_client_that_keeps_sending_is_cut_off(daemon):
    """After the 431, the server reads what a client still sends for at most
    500 ms (kDrainTimeout, on its own clock), then closes: a client trickling
    bytes forever does not hold the connection. The write that fails shows
    the close; how soon it comes after the 431 is printed. The wait is a hang
    limit, far beyond the drain's 500 ms: a drain that never ends (a deadline
    renewed by every byte, a byte limit the trickle takes an hour to reach)
    hits it, however slow the machine."""
    s = connect(daemon.port)
    try:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"v" * (32 * 1024))
        assert s.recv(64).startswith(b"HTTP/1.1 431 "), "no 431"
        answered = time.monotonic()
        bound = 60 * SANITIZED_SLOWDOWN
        while time.monotonic() - answered < bound:
            try:
                s.send(b"v")
            except OSError:
                break
            time.sleep(0.05)
        held = time.monotonic() - answered
    finally:
        s.close()
    print(f"connection closed {held:.2f} s after the 431")
    assert held < bound, f"the server still read the connection {held:.1f} s after refusing it"


def test_200_oversized_requests_do_not_grow_memory(daemon):
    names = list(HOSTILE)
    for name in names * 4:  # warm-up: first use of buffers and arenas
        send_as_client(daemon.port, HOSTILE[name][0])
    before = vm_rss(daemon.proc.pid)
    for i in range(200):
        send_as_client(daemon.port, HOSTILE[names[i % len(names)]][0])
    after = vm_rss(daemon.proc.pid)
    print(f"VmRSS before {before / MIB:.1f} MiB, after 200 oversized requests {after / MIB:.1f} MiB")
    assert after - before < RSS_GROWTH_BOUND, f"VmRSS grew {(after - before) / MIB:.1f} MiB"
    assert daemon.get("/-/healthy")[0] == 200
