"""HTTPS in the hall (issue 44): ``wordjudge hall cert`` makes the hall's certificates, ``wordjudge serve`` serves them
with no proxy (real uvicorn, real TLS), a client that trusts the hall's CA alone reaches the hall's servers and never
a server of another CA at the same address (a phone), health says how the server is reached, the hall's servers ask
each other over HTTPS trusting the hall's CA alone, and a certificate or key that must not be served stops the
start, naming the file."""

from __future__ import annotations

import os
import socket
import ssl
import threading
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from cryptography import x509
from fastapi.testclient import TestClient
from playwright.sync_api import Browser

from tests.helpers import free_port, serve_process, wait_for_health
from tests.tls_hall import hall_certs, other_ca_certs, trusting
from wordjudge.base.errors import InvalidInput
from wordjudge.cli.main import main
from wordjudge.hall import peers
from wordjudge.hall.certs import HallFiles, fingerprint, fingerprint_lines, read_cert, trust
from wordjudge.service.https import transport_of
from wordjudge.service.settings import load_settings


def _hall_cert(data_dir: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["hall", "cert", "--data-dir", str(data_dir), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_td_makes_the_halls_certificates_with_one_command_on_each_machine(tmp_path: Path) -> None:
    first = _hall_cert(tmp_path / "a", "--hall-name", "Open 2026", "--name", "10.9.8.7", "--name", "hall-a.lan")
    files = HallFiles.of(tmp_path / "a")
    ca = read_cert(files.ca_cert)
    assert "Made the hall's certificate authority 'wordjudge hall Open 2026'" in first
    for line in fingerprint_lines(ca):  # what the TD compares on each kiosk and phone
        assert f"    {line}\n" in first
    cert = read_cert(files.cert)
    assert "10.9.8.7" in first
    assert "hall-a.lan" in first
    assert "wordjudge.local" in first
    # Again on the same machine: the CA found, a new certificate.
    assert "Found the hall's certificate authority" in _hall_cert(tmp_path / "a")
    assert read_cert(files.cert) != cert
    # The second machine, with the CA's certificate alone (set-up step 3 of deploy/hall.md): the command says how
    # it gets its certificate instead (test_the_guides_certificate_steps_...).
    (tmp_path / "b" / "tls").mkdir(parents=True, mode=0o700)
    (tmp_path / "b" / "tls" / "hall-ca.pem").write_bytes(files.ca_cert.read_bytes())
    refused = CliRunner().invoke(main, ["hall", "cert", "--data-dir", str(tmp_path / "b")])
    assert refused.exit_code == 1
    assert "hall-ca.key is missing: the hall's CA key stays on the machine that made it" in refused.output
    assert "wordjudge hall cert --request --out FILE.csr" in refused.output
    assert not HallFiles.of(tmp_path / "b").cert.exists()
    # A name that is neither a host name nor an address: said, nothing made.
    refused = CliRunner().invoke(main, ["hall", "cert", "--data-dir", str(tmp_path / "c"), "--name", "a_b!"])
    assert refused.exit_code == 1
    assert "a_b! is neither a host name" in refused.output
    assert not (tmp_path / "c" / "tls").exists()
    # The request, the signature and the installation: one at a time, and the request's file named.
    for args, said in (
        (["--request"], "--request needs --out FILE"),
        (["--request", "--out", "x.csr", "--sign", "x.csr"], "give one of --request, --sign and --install"),
        (["--out", "x.pem"], "--out goes with --request or --sign"),
    ):
        refused = CliRunner().invoke(main, ["hall", "cert", "--data-dir", str(tmp_path / "c"), *args])
        assert (refused.exit_code, said in refused.output) == (2, True), refused.output
    assert not (tmp_path / "c" / "tls").exists()


def test_a_folder_with_the_halls_certificate_is_served_over_https_and_health_says_so(tmp_path: Path) -> None:
    assert load_settings(data_dir=tmp_path).tls is False
    assert transport_of(load_settings(data_dir=tmp_path)).view() == {
        "scheme": "http",
        "certificate": None,
        "demo": True,
    }
    hall = hall_certs(tmp_path)
    settings = load_settings(data_dir=tmp_path)
    assert (settings.certfile, settings.keyfile) == (hall.cert, hall.key)
    view = transport_of(settings).view()
    assert (view["scheme"], view["certificate"], view["ca_fingerprint"]) == ("https", "hall", hall.fingerprint)
    assert load_settings(data_dir=tmp_path, https="off").tls is False
    with pytest.raises(InvalidInput, match=r"https: on, but .* holds no server certificate"):
        load_settings(data_dir=tmp_path / "empty", https="on")


def test_a_server_without_the_halls_ca_says_so_where_a_device_would_download_it(client: TestClient) -> None:
    for path in ("/hall-ca.pem", "/hall-ca.crt"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.json()["message"]["key"] == "error.tls.no_ca"


def test_the_pairing_links_a_server_with_the_halls_certificate_prints_are_https(tmp_path: Path) -> None:
    from wordjudge.model.auth import Role
    from wordjudge.service.links import printed_pairing_links

    hall_certs(tmp_path)
    links = printed_pairing_links(load_settings(data_dir=tmp_path, host="0.0.0.0", port=8443), Role.KIOSK, "CODE")
    assert links.link == "https://wordjudge.local:8443/kiosk#pair=CODE"
    assert links.by_ip is not None
    assert links.by_ip.startswith("https://")
    plain = printed_pairing_links(load_settings(data_dir=tmp_path, https="off", port=8443), Role.KIOSK, "CODE")
    assert plain.link.startswith("http://127.0.0.1:8443/")


def test_several_processes_refuse_the_folders_certificate_until_told_to_serve_plain_http(tmp_path: Path) -> None:
    hall_certs(tmp_path)
    front = {"processes": 2, "public_url": "http://192.0.2.1:8000"}
    with pytest.raises(InvalidInput, match=r"give --https off"):
        load_settings(data_dir=tmp_path, **front)
    assert load_settings(data_dir=tmp_path, https="off", **front).tls is False
    with pytest.raises(InvalidInput, match=r"devices reach it at https://, not http://192\.0\.2\.1:8000"):
        load_settings(data_dir=tmp_path, public_url="http://192.0.2.1:8000")


def test_a_certificate_that_expires_within_a_month_is_warned_of(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    hall_certs(tmp_path)
    transport = transport_of(load_settings(data_dir=tmp_path))
    assert transport.warnings() == []
    later = datetime.now(UTC) + timedelta(days=380)  # the certificate is made for 397 days
    [warning] = transport.warnings(now=later)
    assert warning.key == "error.tls.expires_soon"
    assert "kiosks and phones refuse it from then on" in warning.text()


def test_plain_http_is_a_single_machine_demo_and_a_warning_in_a_hall(tmp_path: Path) -> None:
    alone = transport_of(load_settings(data_dir=tmp_path))
    assert alone.view()["demo"] is True
    assert alone.warnings() == []
    settings = load_settings(
        data_dir=tmp_path,
        database="postgresql://wordjudge@127.0.0.1:5432/hall",
        public_url="http://192.0.2.10:8000",
        peers="http://192.0.2.11:8000",
    )
    in_hall = transport_of(settings)
    assert in_hall.view()["demo"] is False
    assert [w.key for w in in_hall.warnings()] == ["error.tls.plain_in_hall"]


@pytest.mark.live
def test_the_guides_certificate_steps_give_hall_b_a_certificate_the_hall_trusts_and_no_key_on_the_stick(
    tmp_path: Path,
) -> None:
    """deploy/hall.md, set-up step 3, run as written (paths under a temp folder): hall-a makes the CA, the folder
    goes to hall-b by the guide's tar, then the guide's --request (hall-b), --sign (hall-a), --install (hall-b).
    hall-b's server then serves a certificate a client trusting the hall's CA alone accepts; neither hall-b's folder
    nor the stick ever holds the CA's key (before: the stick carried it to hall-b)."""
    import shlex
    import subprocess

    guide = (Path(__file__).parent.parent / "deploy" / "hall.md").read_text("utf-8")
    [packed] = [line.strip() for line in guide.splitlines() if "tar -C /var/lib " in line and "-czf" in line]
    steps = [line.strip() for line in guide.splitlines() if line.strip().startswith("sudo wj hall cert --")]
    assert [step.split()[4] for step in steps] == ["--request", "--sign", "--install"]
    lib_a, lib_b, stick = tmp_path / "a" / "lib", tmp_path / "b" / "lib", tmp_path / "usb"
    for folder in (lib_a, lib_b, stick):
        folder.mkdir(parents=True)
    _hall_cert(lib_a / "wordjudge")  # sudo wj hall cert, on hall-a
    command = packed.replace("sudo ", "").replace("/var/lib", str(lib_a)).replace("/media/usb", str(stick))
    subprocess.run(shlex.split(command), check=True)
    subprocess.run(["tar", "-C", str(lib_b), "-xzf", str(stick / "wordjudge-folder.tar.gz")], check=True)
    said = []
    for step in steps:
        command, comment = step.split("#", 1)
        folder = lib_a if "on hall-a" in comment else lib_b
        sudo, wj, hall, cert, *args = shlex.split(command.replace("/media/usb", str(stick)))
        assert (sudo, wj, hall, cert) == ("sudo", "wj", "hall", "cert")
        said.append(_hall_cert(folder / "wordjudge", *args))
        assert not (lib_b / "wordjudge" / "tls" / "hall-ca.key").exists()
    asked, signed, installed = said
    [key_id] = [line.split(": ")[1].split()[:4] for line in asked.splitlines() if "its key id:" in line]
    assert f"for the key id: {' '.join(key_id)}" in signed
    ca = HallFiles.of(lib_a / "wordjudge").ca_cert
    for line in fingerprint_lines(read_cert(ca)):
        assert f"    {line}\n" in installed
    private = [p.name for p in stick.rglob("*") if p.is_file() and b"PRIVATE KEY" in p.read_bytes()]
    assert private == []
    assert sorted(p.name for p in stick.iterdir()) == ["hall-b.csr", "hall-b.pem", "wordjudge-folder.tar.gz"]
    port = free_port()
    server = serve_process(lib_b / "wordjudge", "--port", str(port))
    try:
        health = wait_for_health(f"https://127.0.0.1:{port}", server, verify=trusting(ca)).json()
        assert (health["transport"]["certificate"], health["transport"]["ca_fingerprint"]) == (
            "hall",
            fingerprint(read_cert(ca)),
        )
        phone = other_ca_certs(tmp_path / "phone")
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(f"https://127.0.0.1:{port}/api/health", verify=trusting(phone.ca_pem), timeout=5)
    finally:
        server.terminate()
        server.communicate(timeout=30)


@pytest.mark.live
def test_a_client_trusting_the_hall_reaches_the_halls_server_and_never_a_phone_at_the_same_address(
    tmp_path: Path,
) -> None:
    hall_dir, phone_dir = tmp_path / "hall", tmp_path / "phone"
    _hall_cert(hall_dir)
    other_ca_certs(phone_dir)  # a server made by someone else, for the same names and addresses
    ca = HallFiles.of(hall_dir).ca_cert
    hall_port, phone_port = free_port(), free_port()
    hall = serve_process(hall_dir, "--port", str(hall_port))
    phone = serve_process(phone_dir, "--port", str(phone_port))
    try:
        health = wait_for_health(f"https://127.0.0.1:{hall_port}", hall, verify=trusting(ca)).json()
        assert health["transport"]["scheme"] == "https"
        assert health["transport"]["certificate"] == "hall"
        assert health["transport"]["ca_fingerprint"] == fingerprint(read_cert(ca))
        wait_for_health(f"https://127.0.0.1:{phone_port}", phone, verify=False)  # it serves, to whoever trusts it
        # The CA itself, for kiosk-setup.sh (PEM) and a runner's phone (DER): the fingerprint is what is checked.
        with httpx.Client(base_url=f"https://127.0.0.1:{hall_port}", verify=trusting(ca)) as client:
            assert client.get("/hall-ca.pem").content == ca.read_bytes()
            der = client.get("/hall-ca.crt")
            assert der.headers["content-type"] == "application/x-x509-ca-cert"
            assert fingerprint(x509.load_der_x509_certificate(der.content)) == fingerprint(read_cert(ca))
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(f"https://127.0.0.1:{phone_port}/kiosk", verify=trusting(ca), timeout=5)
        # The hall's servers ask each other trusting the hall's CA alone: the phone gets not even the ask.
        hall_trust = trust(hall_dir)
        body = peers._fetch(f"https://127.0.0.1:{hall_port}/api/health", 1.0, 64 * 1024, hall_trust)
        assert b'"transport"' in body
        said = peers.ask_peers([f"https://127.0.0.1:{phone_port}"], None, trust=hall_trust)
        assert [p.unproven for p in said] == ["untrusted"]
        assert "not one the hall's CA signed" in said[0].warning().text()
    finally:
        for server in (hall, phone):
            server.terminate()
            server.communicate(timeout=30)
    said_by_hall = hall.communicate()[0]
    assert "HTTPS: certificate of wordjudge hall" in said_by_hall
    assert "Kiosks: https://" in said_by_hall


def test_a_peer_that_never_finishes_the_tls_handshake_holds_the_ask_a_second_at_most(tmp_path: Path) -> None:
    hall_certs(tmp_path)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    taken: list[socket.socket] = []
    threading.Thread(target=lambda: taken.append(listener.accept()[0]), daemon=True).start()
    try:
        began = time.monotonic()
        said = peers.ask_peers([f"https://127.0.0.1:{port}"], None, trust=trust(tmp_path))
        took = time.monotonic() - began
    finally:
        listener.close()
        for sock in taken:
            sock.close()
    assert [p.unproven for p in said] == ["slow"]
    assert took < 1.4


@pytest.mark.live
@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        ("key_open", "may be read by other users (mode 0644): make it private with: chmod 600"),
        ("other_ca", "was not signed by the hall's CA"),
        ("swapped_key", "is not the key of the certificate"),
    ],
)
def test_serve_refuses_a_certificate_or_key_it_must_not_serve_and_listens_to_nothing(
    tmp_path: Path, spoil: str, said: str
) -> None:
    hall = hall_certs(tmp_path / "hall")
    if spoil == "key_open":
        hall.key.chmod(0o644)
    elif spoil == "other_ca":
        phone = other_ca_certs(tmp_path / "phone")
        hall.cert.write_bytes(phone.cert.read_bytes())
        hall.key.write_bytes(phone.key.read_bytes())
    else:
        phone = other_ca_certs(tmp_path / "phone")
        hall.key.write_bytes(phone.key.read_bytes())
    port = free_port()
    server = serve_process(tmp_path / "hall", "--port", str(port))
    output = server.communicate(timeout=60)[0]
    assert server.returncode == 1
    assert said in output
    assert "Traceback" not in output
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"https://127.0.0.1:{port}/api/health", verify=ssl.create_default_context(), timeout=2)


@pytest.mark.live
@pytest.mark.browser
def test_chromium_trusting_the_hall_loads_the_kiosk_and_refuses_a_phone_serving_the_same_address(
    tmp_path: Path, browser: Browser
) -> None:
    # Chromium launched from the session's Playwright (browser.browser_type), with a HOME of the test's own: a second
    # sync_playwright() in a worker that already runs the session's fails ("Sync API inside the asyncio loop").
    from playwright.sync_api import Error

    from tests.browser import CHROMIUM, CHROMIUM_ARGS
    from tests.tls_hall import chromium_home

    hall = hall_certs(tmp_path / "hall")
    other_ca_certs(tmp_path / "phone")  # another CA's certificate for 127.0.0.1: a phone that took the address
    hall_port, phone_port = free_port(), free_port()
    servers = [serve_process(tmp_path / "hall", "--port", str(hall_port))]
    servers.append(serve_process(tmp_path / "phone", "--port", str(phone_port)))
    home = chromium_home(tmp_path / "home", hall.ca_pem)  # what deploy/kiosk-setup.sh does on a kiosk
    try:
        wait_for_health(f"https://127.0.0.1:{hall_port}", servers[0], verify=trusting(hall.ca_pem))
        wait_for_health(f"https://127.0.0.1:{phone_port}", servers[1], verify=False)
        for trusted in (True, False):
            env: dict[str, str | float | bool] = {
                **os.environ,
                "HOME": str(home if trusted else tmp_path / "untrusting"),
            }
            launched = browser.browser_type.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, env=env)
            try:
                page = launched.new_page()
                if trusted:
                    assert page.goto(f"https://127.0.0.1:{hall_port}/kiosk").ok  # type: ignore[union-attr]
                    page.wait_for_selector("#app[data-screen]")
                    page.goto(f"https://127.0.0.1:{hall_port}/")
                    page.locator("#transport", has_text="SHA-256").wait_for()  # (a locator: the CSP forbids eval)
                    assert hall.fingerprint in page.locator("#transport").inner_text()
                    # The handheld on a device that trusts the hall: no banner (its worker registers).
                    page.goto(f"https://127.0.0.1:{hall_port}/runner")
                    assert page.evaluate("async () => Boolean(await navigator.serviceWorker.ready)")
                    assert page.locator("#connection-banner").count() == 0
                else:  # the control: without the hall's CA in its NSS database, Chromium trusts neither
                    with pytest.raises(Error, match="ERR_CERT_AUTHORITY_INVALID"):
                        page.goto(f"https://127.0.0.1:{hall_port}/kiosk")
                    # A runner's phone that skipped the one-time step, through the browser's warning (what
                    # "Advanced, Proceed" does): the handheld says plainly its connection is unproven.
                    warned = launched.new_context(ignore_https_errors=True).new_page()
                    warned.goto(f"https://127.0.0.1:{hall_port}/runner")
                    banner = warned.locator("#connection-banner")
                    banner.wait_for()
                    assert "does not trust the server's certificate" in banner.inner_text()
                with pytest.raises(Error, match="ERR_CERT_AUTHORITY_INVALID"):
                    page.goto(f"https://127.0.0.1:{phone_port}/kiosk")
            finally:
                launched.close()
    finally:
        for server in servers:
            server.terminate()
            server.communicate(timeout=30)
    phone_heard = servers[1].communicate()[0]
    assert '"GET /kiosk' not in phone_heard  # not even the request: the TLS handshake failed before it
    assert '"GET /api/health' in phone_heard  # (what it was asked over TLS by a client that trusted it)


@pytest.mark.live
def test_a_witness_reads_the_head_over_https_trusting_the_halls_ca(tmp_path: Path) -> None:
    from tests.helpers import device_headers
    from wordjudge.model.auth import Role

    hall = hall_certs(tmp_path / "hall")
    port = free_port()
    server = serve_process(tmp_path / "hall", "--port", str(port))
    url = f"https://127.0.0.1:{port}"
    try:
        wait_for_health(url, server, verify=trusting(hall.ca_pem))
        token = device_headers(tmp_path / "hall", "witness", Role.MONITOR)["Authorization"].removeprefix("Bearer ")
        out = tmp_path / "heads.txt"
        args = ["witness", url, "--out", str(out), "--token", token, "--once"]
        done = CliRunner().invoke(main, [*args, "--ca", str(hall.ca_pem)])
        assert done.exit_code == 0, done.output
        unverified = CliRunner().invoke(main, args)  # the system's CAs know nothing of the hall's
        assert unverified.exit_code == 1
        assert "CERTIFICATE_VERIFY_FAILED" in unverified.output
    finally:
        server.terminate()
        server.communicate(timeout=30)
