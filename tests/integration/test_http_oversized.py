"""Oversized requests against the real binary (docs/security.md, "How each
promise is tested"): a 1 MiB URI, 10,000 headers, a 1 MiB header value and a
POST announcing a huge body each get a 4xx answer or a closed connection,
never a crash or a hang, and 200 of them do not grow the daemon's resident
memory by more than RSS_GROWTH_BOUND (a connection's buffer is at most 32 KiB
and freed with it: daemon/web/connection_limits.h; nothing should be kept)."""
import re
import socket
import threading
import time

import pytest

from daemon import Daemon, write_config

MIB = 1 << 20
# 16 MiB is the margin for malloc arenas settling: a leak of the oversized
# input itself (1 MiB a request) would be 100+ MiB.
RSS_GROWTH_BOUND = 16 * MIB

HOSTILE = {
    "1 MiB URI": b"GET /" + b"a" * MIB + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    "10,000 headers": b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"".join(
        b"X-Header-%d: v\r\n" % i for i in range(10_000)) + b"\r\n",
    "1 MiB header value": b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"v" * MIB + b"\r\n\r\n",
    "huge Content-Length POST": b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1099511627776\r\n\r\n"
                                + b"b" * 65536,
    "overflowing Content-Length": b"POST /metrics HTTP/1.1\r\nHost: x\r\n"
                                  b"Content-Length: 99999999999999999999999999\r\n\r\n",
}


def send_hostile(port, payload, timeout=10):
    """(HTTP status or None, how the exchange ended). Sends from a thread so a
    server that answers and closes before reading everything cannot deadlock
    the test; reads until the server closes or the timeout."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)

    def send():
        try:
            s.sendall(payload)
        except OSError:
            pass  # the server answered and closed early: allowed

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    received = b""
    deadline = time.monotonic() + timeout
    ended = "timeout"
    try:
        while time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                ended = "closed"
                break
            received += chunk
            # A complete answer with a body length we can check: done even if
            # the connection stays open.
            m = re.match(rb"HTTP/1\.[01] \d{3} .*?\r\n\r\n", received, re.S)
            if m:
                length = re.search(rb"\r\nContent-Length: (\d+)", received[:m.end()], re.I)
                if length and len(received) >= m.end() + int(length.group(1)):
                    ended = "answered"
                    break
    except ConnectionResetError:
        ended = "reset"
    except socket.timeout:
        pass
    finally:
        s.close()
        sender.join(timeout=timeout)
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
    with Daemon(numaprobe_bin, config) as d:
        d.wait_ready()
        yield d


@pytest.mark.parametrize("name", list(HOSTILE))
def test_each_gets_4xx_or_closed(daemon, name):
    status, ended = send_hostile(daemon.port, HOSTILE[name])
    print(f"{name}: status {status}, {ended}")
    # A 4xx answer, or no answer and the connection closed (or reset): never a
    # 2xx/5xx, never a connection left hanging for the whole timeout.
    assert ended != "timeout", f"{name}: no answer and not closed within 10 s"
    assert status is None or 400 <= status < 500, f"{name}: status {status}"
    # And the daemon still serves.
    assert daemon.proc.poll() is None, daemon.logs()
    assert daemon.get("/-/healthy")[0] == 200


def test_200_oversized_requests_do_not_grow_memory(daemon):
    names = list(HOSTILE)
    for name in names * 4:  # warm-up: first use of buffers and arenas
        send_hostile(daemon.port, HOSTILE[name])
    before = vm_rss(daemon.proc.pid)
    for i in range(200):
        send_hostile(daemon.port, HOSTILE[names[i % len(names)]])
    after = vm_rss(daemon.proc.pid)
    print(f"VmRSS before {before / MIB:.1f} MiB, after 200 oversized requests {after / MIB:.1f} MiB")
    assert after - before < RSS_GROWTH_BOUND, f"VmRSS grew {(after - before) / MIB:.1f} MiB"
    assert daemon.get("/-/healthy")[0] == 200
