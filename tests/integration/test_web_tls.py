# SPDX-License-Identifier: Apache-2.0
"""tls_server_config against the real binary, with real curl and openssl
s_client: HTTPS scrapes, refused protocol versions, mutual TLS, basic auth
over TLS, certificates taken up on SIGHUP (each file read once per reload),
bad files refused naming the key, failed handshakes counted and logged.
Certificates are made in each test with `openssl req` / `openssl x509` (EC
P-256: milliseconds each)."""
import collections
import ctypes
import os
import re
import shutil
import signal
import struct
import subprocess

import pytest

from daemon import Daemon, write_config, need, parse_metrics

# bcrypt ($2y$, cost 10) of "secret", as in test_web_config.py.
SECRET_HASH = "$2y$10$hFK6PvyFYnsvHPQV7uD2XOkbRo8TTVBwwD3IaUYxwnu4XEcnZxv3O"
METRIC = "numaprobe_build_info"




def openssl(*args, stdin=None):
    return subprocess.run([need("openssl"), *args], input=stdin, capture_output=True, text=True, timeout=60)


def make_ca(directory, name):
    """(certificate, key) of a new self-signed CA."""
    crt, key = directory / f"{name}.crt", directory / f"{name}.key"
    r = openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                "-subj", f"/CN={name}", "-addext", "basicConstraints=critical,CA:TRUE",
                "-keyout", str(key), "-out", str(crt))
    assert r.returncode == 0, r.stderr
    return crt, key


def make_leaf(directory, name, ca, usage):
    """(certificate, key) for 127.0.0.1/localhost signed by `ca`; usage serverAuth or clientAuth."""
    crt, key, csr = directory / f"{name}.crt", directory / f"{name}.key", directory / f"{name}.csr"
    ext = directory / f"{name}.ext"
    ext.write_text(f"subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage={usage}\n")
    r = openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(csr))
    assert r.returncode == 0, r.stderr
    r = openssl("x509", "-req", "-in", str(csr), "-CA", str(ca[0]), "-CAkey", str(ca[1]), "-CAcreateserial",
                "-days", "2", "-extfile", str(ext), "-out", str(crt))
    assert r.returncode == 0, r.stderr
    return crt, key


def curl(port, path="/metrics", scheme="https", ca=None, cert=None, user=None):
    """(curl exit code, HTTP status or 0, headers + body)."""
    args = [need("curl"), "-sS", "--max-time", "20", "-D", "-", "-w", "\n%{http_code}"]
    if ca:
        args += ["--cacert", str(ca)]
    if cert:
        args += ["--cert", str(cert[0]), "--key", str(cert[1])]
    if user:
        args += ["-u", user]
    r = subprocess.run([*args, f"{scheme}://127.0.0.1:{port}{path}"], capture_output=True, text=True, timeout=30)
    lines = r.stdout.strip().splitlines()
    status = int(lines[-1]) if lines and lines[-1].isdigit() else 0
    return r.returncode, status, r.stdout + r.stderr


def handshake(port, *options):
    """(completed, output) of an `openssl s_client` handshake with `options`."""
    r = openssl("s_client", "-connect", f"127.0.0.1:{port}", *options, stdin="")
    out = r.stdout + r.stderr
    # "New, TLSv1.3, Cipher is ..." after a completed handshake, "New, (NONE),
    # Cipher is (NONE)" after a refused one.
    completed = re.search(r"(?m)^New, TLSv1[.0-9]*, Cipher is ", out) is not None
    return completed, out


@pytest.fixture
def pki(tmp_path):
    """A server CA and certificate, a client CA and certificate, and a client
    certificate from another CA."""
    ca = make_ca(tmp_path, "server-ca")
    client_ca = make_ca(tmp_path, "client-ca")
    other_ca = make_ca(tmp_path, "other-ca")
    return {
        "ca": ca,
        "server": make_leaf(tmp_path, "server", ca, "serverAuth"),
        "client_ca": client_ca,
        "client": make_leaf(tmp_path, "client", client_ca, "clientAuth"),
        "stranger": make_leaf(tmp_path, "stranger", other_ca, "clientAuth"),
    }


def tls_config(pki, extra=""):
    return (f"tls_server_config:\n  cert_file: {pki['server'][0]}\n  key_file: {pki['server'][1]}\n" + extra)


def start(numaprobe_bin, tmp_path, text):
    web = tmp_path / "web.yml"
    web.write_text(text)
    config = write_config(str(tmp_path), duty_cycle=0.02, interval="5s")
    return Daemon(numaprobe_bin, config, ["--web.config.file", str(web)])


def test_https_scrape_with_the_ca_and_no_plain_http(numaprobe_bin, tmp_path, pki):
    with start(numaprobe_bin, tmp_path, tls_config(pki)) as d:
        code, status, out = curl(d.port, ca=pki["ca"][0])
        assert code == 0 and status == 200 and METRIC in out, out
        # The certificate is checked against the CA: without it, curl refuses (60).
        code, status, out = curl(d.port)
        assert code == 60 and status == 0, out
        # Plain HTTP to the TLS port: no metrics, no HTTP response at all.
        code, status, out = curl(d.port, scheme="http")
        assert code != 0 and status == 0 and METRIC not in out, out
        # And the listener still serves TLS afterwards.
        assert curl(d.port, ca=pki["ca"][0])[1] == 200


def handshake_failures(d, pki, cert=None):
    """{reason: count} of numaprobe_http_tls_handshake_failures_total, scraped over TLS."""
    code, status, out = curl(d.port, ca=pki["ca"][0], cert=cert)
    assert status == 200, out
    samples = parse_metrics(out[out.index("# HELP"):out.rindex("\n")]).get("numaprobe_http_tls_handshake_failures_total", [])
    return {labels["reason"]: value for labels, value in samples}


def assert_failure_counted_and_logged(d, pki, reason, cert=None):
    """One failure of `reason` and none of any other, and the warning naming
    the peer and the reason."""
    d.wait_for(lambda: handshake_failures(d, pki, cert).get(reason) == 1, what=f"a failed handshake ({reason})")
    failures = handshake_failures(d, pki, cert)
    assert failures == {**dict.fromkeys(("timeout", "certificate", "protocol", "closed", "other"), 0), reason: 1}
    assert re.search(rf"TLS handshake error from 127\.0\.0\.1:\d+: .*\(reason {reason};", d.logs()), d.logs()


def test_plain_http_to_the_tls_port_is_counted_and_logged(numaprobe_bin, tmp_path, pki):
    with start(numaprobe_bin, tmp_path, tls_config(pki)) as d:
        assert handshake_failures(d, pki)["protocol"] == 0
        code, status, out = curl(d.port, scheme="http")
        assert code != 0 and status == 0, out
        assert_failure_counted_and_logged(d, pki, "protocol")


def test_client_without_a_certificate_is_counted_and_logged(numaprobe_bin, tmp_path, pki):
    extra = f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {pki['client_ca'][0]}\n"
    with start(numaprobe_bin, tmp_path, tls_config(pki, extra)) as d:
        code, status, out = curl(d.port, ca=pki["ca"][0])
        assert code != 0 and status == 0, out
        assert_failure_counted_and_logged(d, pki, "certificate", cert=pki["client"])


def test_tls10_and_tls11_refused(numaprobe_bin, tmp_path, pki):
    """The server must refuse TLS 1.0 and 1.1. Debian 12's OpenSSL client
    offers them only at security level 0, hence the cipher string."""
    with start(numaprobe_bin, tmp_path, tls_config(pki)) as d:
        completed, out = handshake(d.port, "-tls1_2")
        assert completed, out  # the positive control
        for option in ("-tls1", "-tls1_1"):
            completed, out = handshake(d.port, option, "-cipher", "DEFAULT@SECLEVEL=0")
            assert not completed, (option, out)
            if "no protocols available" in out:
                pytest.skip(f"the local openssl cannot offer {option} at all; "
                            "test_min_version_tls13_refuses_tls12 covers version refusal")
            # The server's alert, not a client-side refusal.
            assert re.search(r"alert protocol version|unsupported protocol|wrong version", out), (option, out)


def test_min_version_tls13_refuses_tls12(numaprobe_bin, tmp_path, pki):
    with start(numaprobe_bin, tmp_path, tls_config(pki, "  min_version: TLS13\n")) as d:
        completed, out = handshake(d.port, "-tls1_2")
        assert not completed and re.search(r"alert protocol version|unsupported protocol", out), out
        completed, out = handshake(d.port, "-tls1_3")
        assert completed, out


def test_max_version_tls12_refuses_tls13(numaprobe_bin, tmp_path, pki):
    with start(numaprobe_bin, tmp_path, tls_config(pki, "  max_version: TLS12\n")) as d:
        completed, out = handshake(d.port, "-tls1_3")
        assert not completed, out
        completed, out = handshake(d.port, "-tls1_2")
        assert completed, out


def test_mutual_tls_require_and_verify(numaprobe_bin, tmp_path, pki):
    extra = f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {pki['client_ca'][0]}\n"
    with start(numaprobe_bin, tmp_path, tls_config(pki, extra)) as d:
        ca = pki["ca"][0]
        code, status, out = curl(d.port, ca=ca)
        assert code != 0 and status == 0 and METRIC not in out, out
        code, status, out = curl(d.port, ca=ca, cert=pki["stranger"])
        assert code != 0 and status == 0 and METRIC not in out, out
        code, status, out = curl(d.port, ca=ca, cert=pki["client"])
        assert code == 0 and status == 200 and METRIC in out, out


def test_verify_client_cert_if_given(numaprobe_bin, tmp_path, pki):
    extra = f"  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: {pki['client_ca'][0]}\n"
    with start(numaprobe_bin, tmp_path, tls_config(pki, extra)) as d:
        ca = pki["ca"][0]
        assert curl(d.port, ca=ca)[1] == 200
        assert curl(d.port, ca=ca, cert=pki["client"])[1] == 200
        code, status, out = curl(d.port, ca=ca, cert=pki["stranger"])
        assert status == 0 and METRIC not in out, out


def test_require_any_client_cert(numaprobe_bin, tmp_path, pki):
    with start(numaprobe_bin, tmp_path, tls_config(pki, "  client_auth_type: RequireAnyClientCert\n")) as d:
        ca = pki["ca"][0]
        code, status, out = curl(d.port, ca=ca)
        assert status == 0 and METRIC not in out, out
        # Any certificate, verified or not.
        assert curl(d.port, ca=ca, cert=pki["stranger"])[1] == 200


def test_basic_auth_over_tls(numaprobe_bin, tmp_path, pki):
    text = tls_config(pki) + ("http_server_config:\n  headers:\n    Strict-Transport-Security: max-age=31536000\n"
                              f"basic_auth_users:\n  alice: {SECRET_HASH}\n")
    with start(numaprobe_bin, tmp_path, text) as d:
        ca = pki["ca"][0]
        for user in (None, "alice:wrong"):
            code, status, out = curl(d.port, ca=ca, user=user)
            assert status == 401 and re.search(r'(?im)^WWW-Authenticate: Basic realm="numaprobe"', out), out
        code, status, out = curl(d.port, ca=ca, user="alice:secret")
        assert status == 200 and METRIC in out, out
        assert re.search(r"(?im)^Strict-Transport-Security: max-age=31536000", out), out


def test_sighup_takes_up_a_replaced_certificate(numaprobe_bin, tmp_path, pki):
    """Certificate rotation: the files change in place, the web config does not."""
    with start(numaprobe_bin, tmp_path, tls_config(pki)) as d:
        assert curl(d.port, ca=pki["ca"][0])[1] == 200
        new_ca = make_ca(tmp_path, "new-server-ca")
        new_server = make_leaf(tmp_path, "new-server", new_ca, "serverAuth")
        shutil.copy(new_server[0], pki["server"][0])
        shutil.copy(new_server[1], pki["server"][1])
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: "web configuration reloaded" in d.logs(), what="the web reload")
        code, status, out = curl(d.port, ca=new_ca[0])
        assert code == 0 and status == 200, out
        assert curl(d.port, ca=pki["ca"][0])[0] == 60  # the old CA no longer verifies it


class FileOpens:
    """Counts how often files are opened (inotify IN_OPEN), by any process."""
    IN_OPEN = 0x20

    def __init__(self, *paths):
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0, os.strerror(ctypes.get_errno())
        self.paths = {}
        for path in paths:
            wd = libc.inotify_add_watch(self.fd, str(path).encode(), self.IN_OPEN)
            assert wd >= 0, os.strerror(ctypes.get_errno())
            self.paths[wd] = path

    def take(self):
        """{path: opens} since the last call."""
        counts = collections.Counter()
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return counts
            offset = 0
            while offset < len(data):
                wd, _mask, _cookie, length = struct.unpack_from("iIII", data, offset)
                counts[self.paths[wd]] += 1
                offset += 16 + length


def test_sighup_reads_each_certificate_file_once(numaprobe_bin, tmp_path, pki):
    """A reload builds one TLS context: the check of the files is that build,
    not a scratch one before it. inotify merges an event into an identical
    one just before it, so this counts runs of opens: building the context
    twice (certificate, key, certificate, key) counts 2 each."""
    with start(numaprobe_bin, tmp_path, tls_config(pki)) as d:
        opens = FileOpens(*pki["server"])
        try:
            for reload in (1, 2):
                opens.take()
                d.signal(signal.SIGHUP)
                d.wait_for(lambda: d.logs().count("web configuration reloaded") == reload, what="the web reload")
                assert opens.take() == {pki["server"][0]: 1, pki["server"][1]: 1}
        finally:
            os.close(opens.fd)
        assert curl(d.port, ca=pki["ca"][0])[1] == 200


def test_bad_key_on_reload_keeps_the_running_server(numaprobe_bin, tmp_path, pki):
    with start(numaprobe_bin, tmp_path, tls_config(pki)) as d:
        web = tmp_path / "web.yml"
        missing = tmp_path / "missing.key"
        web.write_text(f"tls_server_config:\n  cert_file: {pki['server'][0]}\n  key_file: {missing}\n")
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: "keeping the running web configuration" in d.logs(), what="the refused reload")
        assert f"tls_server_config.key_file: cannot read {missing}: No such file or directory" in d.logs()
        code, status, out = curl(d.port, ca=pki["ca"][0])
        assert status == 200 and "numaprobe_config_last_reload_successful 0" in out.splitlines(), out


@pytest.mark.parametrize("key,bad", [
    ("key_file", "missing"),      # no such file
    ("cert_file", "missing"),
    ("key_file", "not-pem"),      # a file that is not a key
    ("key_file", "other-key"),    # a key that does not match the certificate
    ("client_ca_file", "missing"),
])
def test_bad_files_fail_start_naming_key_and_path(run, tmp_path, pki, key, bad):
    files = {"cert_file": pki["server"][0], "key_file": pki["server"][1]}
    if key == "client_ca_file":
        files["client_auth_type"] = "RequireAndVerifyClientCert"
    if bad == "missing":
        path = tmp_path / "missing.pem"
    elif bad == "not-pem":
        path = tmp_path / "not-pem.key"
        path.write_text("not a key\n")
    else:
        path = pki["client"][1]
    files[key] = path
    web = tmp_path / "web.yml"
    web.write_text("tls_server_config:\n" + "".join(f"  {k}: {v}\n" for k, v in files.items()))
    r = run("serve", "--config.file", write_config(str(tmp_path)), "--web.config.file", str(web),
            "--web.listen-address", "127.0.0.1:0", timeout=30)
    assert r.returncode == 1, r.stderr
    assert f"tls_server_config.{key}" in r.stderr and str(path) in r.stderr, r.stderr


def test_encrypted_key_fails_start_without_asking_for_a_pass_phrase(numaprobe_bin, tmp_path, pki):
    # OpenSSL's default is to prompt on the terminal or read stdin: with a pipe
    # that stays open (a supervisor's, `docker run -i`), start would block.
    encrypted = tmp_path / "encrypted.key"
    r = openssl("pkey", "-in", str(pki["server"][1]), "-aes256", "-passout", "pass:secret", "-out", str(encrypted))
    assert r.returncode == 0, r.stderr
    web = tmp_path / "web.yml"
    web.write_text(f"tls_server_config:\n  cert_file: {pki['server'][0]}\n  key_file: {encrypted}\n")
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([numaprobe_bin, "serve", "--config.file", write_config(str(tmp_path)),
                                 "--web.config.file", str(web), "--web.listen-address", "127.0.0.1:0"],
                                stdin=subprocess.PIPE, stdout=out, stderr=out, text=True)
        try:
            proc.wait(timeout=30)  # stdin stays open and unwritten meanwhile
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail("serve blocked on an encrypted key_file (waiting for a pass phrase?)")
        finally:
            proc.stdin.close()
    err = log.read_text()
    assert proc.returncode == 1, err
    assert "tls_server_config.key_file" in err and "encrypted keys are not supported" in err, err


def test_cipher_suites_and_curves_enforced(numaprobe_bin, tmp_path, pki):
    """cipher_suites and curve_preferences by their Go names limit what a TLS
    1.2 handshake may pick; prefer_server_cipher_suites decides between two
    suites both sides allow."""
    suites = "  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n"
    extra = "  max_version: TLS12\n" + suites + "  curve_preferences: [CurveP384]\n"
    with start(numaprobe_bin, tmp_path, tls_config(pki, extra)) as d:
        refused, out = handshake(d.port, "-cipher", "ECDHE-ECDSA-CHACHA20-POLY1305")
        assert not refused, out
        refused, out = handshake(d.port, "-groups", "P-256")
        assert not refused, out
        # P-256 offered too: the server's ECDSA P-256 certificate needs it; the key exchange is P-384.
        completed, out = handshake(d.port, "-groups", "P-256:P-384")
        assert completed and re.search(r"Server Temp Key: ECDH, (secp384r1|P-384)", out), out
        # Both offered, the client preferring AES-256: the server's order wins.
        completed, out = handshake(d.port, "-cipher", "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256")
        assert completed and "Cipher is ECDHE-ECDSA-AES128-GCM-SHA256" in out, out
    extra += "  prefer_server_cipher_suites: false\n"
    with start(numaprobe_bin, tmp_path, tls_config(pki, extra)) as d:
        completed, out = handshake(d.port, "-cipher", "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256")
        assert completed and "Cipher is ECDHE-ECDSA-AES256-GCM-SHA384" in out, out


def test_unknown_cipher_suite_fails_start_naming_it(run, tmp_path, pki):
    web = tmp_path / "web.yml"
    web.write_text(tls_config(pki, "  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n"))
    r = run("serve", "--config.file", write_config(str(tmp_path)), "--web.listen-address", "127.0.0.1:0",
            "--web.config.file", str(web))
    assert r.returncode == 1
    assert "tls_server_config.cipher_suites: unknown or insecure suite" in r.stderr, r.stderr
    assert "TLS_RSA_WITH_RC4_128_SHA" in r.stderr, r.stderr


def test_client_ca_names_sent(numaprobe_bin, tmp_path, pki):
    """The CertificateRequest lists client_ca_file's CA, as Go's server does."""
    extra = f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {pki['client_ca'][0]}\n"
    with start(numaprobe_bin, tmp_path, tls_config(pki, extra)) as d:
        _, out = handshake(d.port, "-cert", str(pki["client"][0]), "-key", str(pki["client"][1]))
        names = out.split("Acceptable client certificate CA names", 1)
        assert len(names) == 2, out
        assert "CN = client-ca" in names[1].split("---", 1)[0], out


def test_client_allowed_sans(numaprobe_bin, tmp_path, pki):
    """A verified client certificate must carry one of client_allowed_sans
    (the client's SANs are DNS:localhost and IP:127.0.0.1)."""
    verify = f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {pki['client_ca'][0]}\n"
    with start(numaprobe_bin, tmp_path, tls_config(pki, verify + "  client_allowed_sans: [other.example]\n")) as d:
        code, status, out = curl(d.port, ca=pki["ca"][0], cert=pki["client"])
        assert code != 0 and status == 0, out
    with start(numaprobe_bin, tmp_path, tls_config(pki, verify + "  client_allowed_sans: [other.example, 127.0.0.1]\n")) as d:
        code, status, out = curl(d.port, ca=pki["ca"][0], cert=pki["client"])
        assert code == 0 and status == 200 and METRIC in out, out
