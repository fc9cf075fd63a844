"""``wordjudge device`` and ``wordjudge td``: what a TD types at the server, against a live server too."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2 as httpx
import pytest
from click.testing import CliRunner, Result

from wordjudge.cli.main import main

from .helpers import PASSWORD, StartServer, access_store, write_event


def run(*args: str | Path, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)


def test_device_add_prints_the_token_once_and_list_and_revoke(data_dir: Path) -> None:
    write_event(data_dir, [("A", "demo", "single"), ("B", "demo", "double")])
    added = run("device", "add", "Kiosk 1", "--role", "kiosk", "--division", "b", "--data-dir", data_dir)
    assert added.exit_code == 0, added.output
    token = added.stdout.strip()
    assert token.startswith("wj_")
    assert "shown this once" in added.stderr
    listed = run("device", "list", "--data-dir", data_dir).output
    assert "Kiosk 1  kiosk  division B  last seen never  offline" in listed
    assert token not in listed
    revoked = run("device", "revoke", "Kiosk 1", "--data-dir", data_dir)
    assert "Kiosk 1 revoked at" in revoked.output
    assert "revoked" in run("device", "list", "--data-dir", data_dir).output


def test_device_errors_are_one_line_messages(data_dir: Path) -> None:
    run("device", "add", "k1", "--role", "kiosk", "--data-dir", data_dir)
    taken = run("device", "add", "K1", "--role", "runner", "--data-dir", data_dir)
    assert taken.exit_code == 1
    assert "Error: the name 'K1' is taken by a device" in taken.output
    division = run("device", "add", "k2", "--role", "kiosk", "--division", "Z", "--data-dir", data_dir)
    assert "unknown division 'Z'" in division.output
    assert "Traceback" not in taken.output + division.output
    assert "no device named 'ghost'" in run("device", "revoke", "ghost", "--data-dir", data_dir).output


def test_device_pair_prints_a_code_and_its_link(data_dir: Path) -> None:
    result = run("device", "pair", "--role", "runner", "--data-dir", data_dir)
    assert result.exit_code == 0, result.output
    code = result.output.split("Pairing code: ")[1].split()[0]
    assert f"Link: http://127.0.0.1:8000/runner#pair={code}" in result.output
    with_url = run(
        "device", "pair", "--role", "kiosk", "--public-url", "http://wordjudge.local:8080", "--data-dir", data_dir
    )
    assert "Link: http://wordjudge.local:8080/kiosk#pair=" in with_url.output
    with_port = run("device", "pair", "--role", "kiosk", "--port", "8765", "--data-dir", data_dir)
    assert "Link: http://127.0.0.1:8765/kiosk#pair=" in with_port.output


def test_td_accounts(data_dir: Path) -> None:
    added = run("td", "add", "alice", "--password-stdin", "--data-dir", data_dir, stdin=f"{PASSWORD}\n")
    assert added.exit_code == 0, added.output
    prompted = run("td", "add", "bob", "--data-dir", data_dir, stdin=f"{PASSWORD}\n{PASSWORD}\n")
    assert "TD bob added." in prompted.output
    short = run("td", "add", "carol", "--password-stdin", "--data-dir", data_dir, stdin="short\n")
    assert short.exit_code == 1
    assert "at least 10 characters" in short.output
    assert run("td", "disable", "bob", "--data-dir", data_dir).exit_code == 0
    listed = run("td", "list", "--data-dir", data_dir).output.splitlines()
    assert listed[0].startswith("alice  added ")
    assert listed[0].endswith("active")
    assert "disabled" in listed[1]
    changed = run("td", "password", "bob", "--password-stdin", "--data-dir", data_dir, stdin="a new long password\n")
    assert "sessions are ended" in changed.output
    assert run("td", "list", "--data-dir", data_dir).output.splitlines()[1].endswith("active")


@pytest.mark.live
def test_a_token_from_the_cli_works_on_a_running_server_until_revoked(data_dir: Path, live_server: StartServer) -> None:
    base = live_server(data_dir).base
    assert httpx.get(f"{base}/api/event").status_code == 401
    token = run("device", "add", "bench", "--role", "kiosk", "--data-dir", data_dir).stdout.strip()
    headers = {"Authorization": f"Bearer {token}"}
    body = {"division": "Open", "table": 3, "round": 1, "words": "cat dog", "request_id": "cli-token-test"}
    response = httpx.post(f"{base}/api/challenges", json=body, headers=headers)
    assert (response.status_code, response.json()["verdict"]) == (201, "acceptable")
    revoked = run("device", "revoke", "bench", "--data-dir", data_dir)
    assert revoked.exit_code == 0, revoked.output
    refused = httpx.post(f"{base}/api/challenges", json={**body, "request_id": "cli-token-test2"}, headers=headers)
    assert refused.status_code == 401
    assert "revoked" in refused.json()["error"]


ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")


@pytest.mark.parametrize(
    ("language", "shown"),
    [("fr", r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d"), ("en-US", r"\d\d/\d\d/\d{4}, \d\d:\d\d:\d\d")],
)
def test_the_cli_says_handheld_and_dates_as_the_event_does(data_dir: Path, language: str, shown: str) -> None:
    """Issue 46 item 5: the console's word for a runner's device (handheld), and every time a TD reads (a pairing
    code's expiry, a device last seen or revoked, a TD account added or disabled) in the event's date format, in
    this machine's time zone: no raw ISO time, no "UTC"."""
    write_event(data_dir, [("A", "demo", "single")], language=language)
    date = re.compile(shown)
    paired = run("device", "pair", "--role", "handheld", "--data-dir", data_dir)
    assert paired.exit_code == 0, paired.output
    line = paired.stdout.splitlines()[0]
    assert re.fullmatch(rf"Pairing code: \S+  \(handheld-01: one handheld, until {shown}\)", line), line
    token = run("device", "add", "tab-1", "--role", "runner", "--data-dir", data_dir).stdout.strip()
    run("device", "add", "kiosk-1", "--role", "kiosk", "--data-dir", data_dir)
    store = access_store(data_dir)  # where the commands keep it (SQLite, or the hall's PostgreSQL)
    try:
        store.devices.authenticate(token, client="127.0.0.1")  # seen once
    finally:
        store.close()
    revoked = run("device", "revoke", "kiosk-1", "--data-dir", data_dir).output
    assert date.search(revoked), revoked
    listed = run("device", "list", "--data-dir", data_dir).output
    assert re.search(rf"tab-1  handheld  division any  last seen {shown}  ", listed), listed
    assert re.search(rf"kiosk-1  kiosk  division any  last seen never  revoked {shown} by ", listed), listed
    run("td", "add", "alice", "--password-stdin", "--data-dir", data_dir, stdin=f"{PASSWORD}\n")
    run("td", "add", "bob", "--password-stdin", "--data-dir", data_dir, stdin=f"{PASSWORD}\n")
    run("td", "disable", "bob", "--data-dir", data_dir)
    accounts = run("td", "list", "--data-dir", data_dir).output
    assert re.search(rf"alice  added {shown} by \S+  active", accounts), accounts
    assert re.search(rf"bob  added {shown} by \S+  disabled {shown}", accounts), accounts
    for said in (paired.output, revoked, listed, accounts):
        assert not ISO_TIME.search(said), said
        assert "UTC" not in said, said
        assert "runner" not in said.replace("/runner#pair=", "/handheld-link#"), said
