"""deploy/kiosk-setup.sh on an HTTPS hall: the kiosk's Chromium trusts the hall's CA once the TD has checked its
fingerprint, in the kiosk user's NSS databases (certutil), and then loads the kiosk from the hall's server; a CA
whose fingerprint is not the hall's (a phone holding the server's address while the kiosk is set up) is refused,
and nothing is written. As root, in a private mount namespace (see tests/test_kiosk_lockdown.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from .browser import CHROMIUM, CHROMIUM_ARGS
from .helpers import free_port, serve_process, wait_for_health
from .test_kiosk_lockdown import ETC_CHROMIUM, POLICY, SECURE_ORIGIN, SETUP, _in_namespace, _need_a_mount_namespace
from .tls_hall import hall_certs, nss_list, other_ca_certs, trusting

NSS_DBS = (Path(".pki/nssdb"), Path(".local/share/pki/nssdb"))


def _setup(etc: Path, url: str, home: Path, *extra: str, answer: str = "") -> subprocess.CompletedProcess[str]:
    command = _in_namespace(etc, SETUP, url, "--user", "root", "--home", home, *extra)
    env = {**os.environ, "WORDJUDGE_CHROMIUM": str(CHROMIUM)}
    return subprocess.run(command, env=env, input=answer, capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.live
@pytest.mark.browser
def test_the_setup_trusts_the_halls_ca_once_its_fingerprint_is_checked_and_the_kiosk_then_opens_over_https(
    tmp_path: Path, browser: Browser
) -> None:
    # Chromium launched from the session's Playwright with the kiosk's HOME: a second sync_playwright() in a worker
    # that already runs the session's fails ("Sync API inside the asyncio loop").
    _need_a_mount_namespace()
    hall = hall_certs(tmp_path / "hall")
    port = free_port()
    server = serve_process(tmp_path / "hall", "--port", str(port))
    url, home = f"https://127.0.0.1:{port}", tmp_path / "kiosk-home"
    etc = tmp_path / "etc-chromium"
    shutil.copytree(ETC_CHROMIUM, etc, symlinks=True)
    try:
        wait_for_health(url, server, verify=trusting(hall.ca_pem))
        # The TD does not answer yes: nothing is trusted, no policy written.
        refused = _setup(etc, url, home, answer="no\n")
        assert refused.returncode == 1, refused.stderr
        assert hall.fingerprint in refused.stdout  # shown for the TD to compare
        assert "not trusted; nothing was changed" in refused.stderr
        assert not home.exists()
        assert not (etc / POLICY).exists()
        # The TD compares and types yes.
        trusted = _setup(etc, url, home, answer="yes\n")
        assert trusted.returncode == 0, trusted.stderr
        for nssdb in NSS_DBS:
            listed = nss_list(home / nssdb)
            assert "wordjudge hall" in listed
            assert "C,," in listed
        policy = json.loads((etc / POLICY).read_text())
        assert policy["URLAllowlist"] == [url]
        assert SECURE_ORIGIN not in policy  # https is a secure origin by itself
        # Given the fingerprint instead (what a script does): the same, the CA replaced, not added twice.
        again = _setup(etc, url, home, "--fingerprint", hall.fingerprint.lower().replace(":", " "))
        assert again.returncode == 0, again.stderr
        assert nss_list(home / NSS_DBS[0]).count("wordjudge hall") == 1
        # The kiosk's Chromium, with that home, opens the kiosk from the hall's server.
        env: dict[str, str | float | bool] = {**os.environ, "HOME": str(home)}
        launched = browser.browser_type.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, env=env)
        try:
            page = launched.new_page()
            response = page.goto(f"{url}/kiosk")
            assert response is not None
            assert response.ok
            page.wait_for_selector("#app[data-screen]")
        finally:
            launched.close()
    finally:
        server.terminate()
        server.communicate(timeout=30)


@pytest.mark.live
def test_the_setup_refuses_a_ca_that_is_not_the_halls_and_writes_nothing(tmp_path: Path) -> None:
    """A phone holds the server's address while the TD sets a kiosk up: its CA's fingerprint is not the one
    wordjudge hall cert printed, so the kiosk trusts nothing of it."""
    _need_a_mount_namespace()
    hall = hall_certs(tmp_path / "hall")
    other_ca_certs(tmp_path / "phone")
    port = free_port()
    phone = serve_process(tmp_path / "phone", "--port", str(port))
    url, home = f"https://127.0.0.1:{port}", tmp_path / "kiosk-home"
    etc = tmp_path / "etc-chromium"
    shutil.copytree(ETC_CHROMIUM, etc, symlinks=True)
    try:
        wait_for_health(url, phone, verify=False)
        refused = _setup(etc, url, home, "--fingerprint", hall.fingerprint)
    finally:
        phone.terminate()
        phone.communicate(timeout=30)
    assert refused.returncode == 1
    assert "that is NOT the fingerprint given" in refused.stderr
    assert not home.exists()
    assert not (etc / POLICY).exists()
    # A file that is no certificate, given as the CA: said, nothing written.
    (tmp_path / "junk.pem").write_text("junk")
    junk = _setup(etc, url, home, "--ca", str(tmp_path / "junk.pem"), "--fingerprint", hall.fingerprint)
    assert junk.returncode == 1
    assert "is not a PEM certificate" in junk.stderr
    # The server's own certificate (not a CA) given as the CA: refused too.
    leaf = _setup(etc, url, home, "--ca", str(hall.cert), "--fingerprint", hall.fingerprint)
    assert leaf.returncode == 1
    assert "is not a certificate authority" in leaf.stderr
    assert not home.exists()
