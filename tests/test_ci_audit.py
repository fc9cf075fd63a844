"""The install and CI's dependency audit (issue 36, item 9): the README's Quick start upgrades pip before it installs
the lock, and .ci/audit (run by .ci/check) audits the locked dependencies with pip-audit where the vulnerability data
can be reached, says so plainly where it cannot (passing), and fails for a vulnerability found. A fake pip-audit and
a local vulnerability service stand in for the real ones: CI's network may be closed."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
AUDIT = ROOT / ".ci" / "audit"


def test_the_quick_start_upgrades_pip_before_installing_the_lock() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    command = readme.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("\n```", 1)[0]
    upgrade = command.find("-m pip install --upgrade pip")
    assert upgrade != -1, command
    assert upgrade < command.index("--require-hashes -r requirements.lock"), command


def test_ci_check_runs_the_dependency_audit() -> None:
    assert ".ci/audit" in (ROOT / ".ci" / "check").read_text()


@pytest.fixture
def service() -> Iterator[tuple[str, dict[str, int]]]:
    """A vulnerability service on loopback answering the probe (200, JSON naming a vulnerability), or not."""
    state = {"status": 200}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = [{"id": "PYSEC-2023-228"}] if state["status"] == 200 else []
            body = json.dumps({"info": {}, "vulnerabilities": found}).encode()
            self.send_response(state["status"])
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/pypi/pip/23.2.1/json", state
    finally:
        server.shutdown()
        server.server_close()


def _audit(tmp_path: Path, probe: str, exit_code: int) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "pip-audit"
    fake.write_text(f'#!/bin/sh\necho "fake pip-audit $*"\nexit {exit_code}\n')
    fake.chmod(0o755)
    env = {**os.environ, "WORDJUDGE_AUDIT_PROBE": probe, "WORDJUDGE_PIP_AUDIT": str(fake)}
    return subprocess.run([str(AUDIT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_the_audit_runs_where_the_data_can_be_reached_and_fails_for_a_vulnerability(
    tmp_path: Path, service: tuple[str, dict[str, int]]
) -> None:
    url, _ = service
    clean = _audit(tmp_path, url, 0)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "fake pip-audit" in clean.stdout
    assert "-r requirements-dev.lock" in clean.stdout
    found = _audit(tmp_path, url, 1)  # pip-audit's exit code for a vulnerability found
    assert found.returncode != 0, found.stdout + found.stderr


def test_the_audit_says_plainly_when_the_data_cannot_be_reached_and_passes(
    tmp_path: Path, service: tuple[str, dict[str, int]]
) -> None:
    url, state = service
    for status in (404, 299):  # a registry mirror without the versions' JSON (this network's), or without the data
        state["status"] = status
        skipped = _audit(tmp_path, url, 1)
        assert skipped.returncode == 0, skipped.stdout + skipped.stderr
        assert "fake pip-audit" not in skipped.stdout
        assert "dependency audit NOT run: the vulnerability data cannot be reached" in skipped.stdout
    for probe in ("http://127.0.0.1:9/pypi/pip/23.2.1/json",):  # nothing listening at all
        skipped = _audit(tmp_path, probe, 1)
        assert skipped.returncode == 0, skipped.stdout + skipped.stderr
        assert "fake pip-audit" not in skipped.stdout
        assert "dependency audit NOT run: the vulnerability data cannot be reached" in skipped.stdout
