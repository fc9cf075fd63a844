"""One server per data folder, and commands that never make a new folder by mistake (issue 15, items 4 and 5).

A second ``wordjudge serve`` on a folder is refused by name, and a taken port is said plainly; a command
run from the wrong folder refuses instead of printing a code or token the server does not know.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx2 as httpx
import pytest
from click.testing import CliRunner, Result

from wordjudge.base.datadir import FolderInUse, lock_for_server
from wordjudge.cli.main import main
from wordjudge.log.audit import AUDIT_FILE

from .helpers import (
    PASSWORD,
    ServeProcess,
    device_headers,
    free_port,
    serve_process,
    wait_for_health,
    write_event,
    write_list,
)

WORDJUDGE = Path(sys.executable).with_name("wordjudge")


def run(*args: str | Path, stdin: str | None = None, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin, env=env, catch_exceptions=False)


def challenge(request_id: str) -> dict[str, object]:
    return {"division": "Open", "table": 1, "round": 1, "words": "cat dog", "request_id": f"server-folder-{request_id}"}


def _stop(server: subprocess.Popen[str]) -> str:
    if server.poll() is None:
        server.terminate()
    return server.communicate(timeout=30)[0]


# -- one server per data folder ------------------------------------------------------------------------


def test_the_lock_names_its_holder_and_is_free_again_once_released(tmp_path: Path) -> None:
    lock = lock_for_server(tmp_path / "data", host="127.0.0.1", port=8123)
    with pytest.raises(FolderInUse) as refused:  # flock: a second open of the file conflicts, even here
        lock_for_server(tmp_path / "data", host="127.0.0.1", port=9000)
    assert (refused.value.holder.pid, refused.value.holder.port) == (os.getpid(), 8123)
    assert f"(pid {os.getpid()}, port 8123) is using this data folder {(tmp_path / 'data').resolve()}" in str(
        refused.value
    )
    lock.release()
    lock_for_server(tmp_path / "data", host="127.0.0.1", port=9000).release()


@pytest.mark.live
def test_a_second_server_on_the_folder_is_refused_and_kill_9_of_the_first_frees_it(data_dir: Path) -> None:
    first_port, second_port = free_port(), free_port()
    first = serve_process(data_dir, "--port", str(first_port), "--log-level", "warning")
    second = third = None
    try:
        wait_for_health(f"http://127.0.0.1:{first_port}", first)
        kiosk = device_headers(data_dir, "kiosk-1")
        second = serve_process(data_dir, "--port", str(second_port))
        output = second.communicate(timeout=60)[0]  # before the fix: it started, healthy, and answered 503s
        assert second.returncode == 1, output
        assert (
            f"Error: another wordjudge server (pid {first.pid}, port {first_port}) is using this data folder "
            f"{data_dir.resolve()}: stop it, or give this one another --data-dir"
        ) in output
        assert "Traceback" not in output
        answer = httpx.post(f"http://127.0.0.1:{first_port}/api/challenges", json=challenge("one"), headers=kiosk)
        assert answer.status_code == 201, answer.text  # the first server never noticed

        first.send_signal(signal.SIGKILL)  # dies without a word: the OS lets the lock go
        first.communicate(timeout=30)
        third = serve_process(data_dir, "--port", str(second_port), "--log-level", "warning")
        wait_for_health(f"http://127.0.0.1:{second_port}", third)
        answer = httpx.post(f"http://127.0.0.1:{second_port}/api/challenges", json=challenge("two"), headers=kiosk)
        assert (answer.status_code, answer.json()["id"]) == (201, 2)
    finally:
        for server in (first, second, third):
            if server is not None:
                _stop(server)


@pytest.mark.live
def test_a_taken_port_is_refused_plainly_before_anything_is_written(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for extra, env in ((["--port", str(port)], {}), ([], {"WORDJUDGE_PORT": str(port)})):
            done = subprocess.run(
                [WORDJUDGE, "serve", *extra],
                env={**os.environ, "WORDJUDGE_DATA_DIR": str(tmp_path / "data"), **env},
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 1, done.stderr
            assert (
                f"Error: port {port} is in use (another wordjudge?): use --port (or WORDJUDGE_PORT) to pick another"
            ) in done.stderr
            assert "Traceback" not in done.stderr
            assert not (tmp_path / "data").exists()  # nor a demo compiled for nothing


@pytest.mark.live
@pytest.mark.sqlite_only("a demo whose state is in a database is never set aside (test_postgres_store)")
def test_the_cli_never_sets_the_demo_aside_from_under_a_running_demo_server(data_dir: Path) -> None:
    port = free_port()
    server = serve_process(data_dir, "--port", str(port), "--log-level", "warning")
    try:
        wait_for_health(f"http://127.0.0.1:{port}", server)
        kiosk = device_headers(data_dir, "kiosk-1")
        write_event(data_dir, [("Open", "demo", "single")], name="Spring Open")  # the TD starts the real event
        refused = run("device", "pair", "--role", "kiosk", "--data-dir", data_dir)
        assert refused.exit_code == 1
        assert (
            f"a wordjudge server (pid {server.pid}) is serving the demo from this folder: "
            "stop it before starting the real event"
        ) in refused.stderr
        assert not list(data_dir.glob("demo-*"))  # before the fix: the demo's log and devices were moved away
        answer = httpx.post(f"http://127.0.0.1:{port}/api/challenges", json=challenge("demo"), headers=kiosk)
        assert answer.status_code == 201, answer.text
    finally:
        _stop(server)
    server = serve_process(data_dir, "--port", str(port), "--log-level", "warning")  # restarted: it sets the demo aside
    try:
        assert wait_for_health(f"http://127.0.0.1:{port}", server).json()["event"] == "Spring Open"
        [aside] = data_dir.glob("demo-*")
        assert (aside / AUDIT_FILE).is_file()
        paired = run("device", "pair", "--role", "kiosk", "--data-dir", data_dir)
        assert paired.exit_code == 0, paired.output  # a server of the real event is no reason to refuse
    finally:
        _stop(server)


def test_a_host_that_cannot_be_listened_on_is_said_plainly(tmp_path: Path) -> None:
    done = subprocess.run(  # a subprocess: serve sets up the logging of the process it runs in
        [WORDJUDGE, "serve", "--host", "192.0.2.1", "--data-dir", tmp_path / "data"],  # TEST-NET-1: not here
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "Error: cannot listen on 192.0.2.1 port 8000 (Cannot assign requested address)" in done.stderr
    assert not (tmp_path / "data").exists()


# -- commands run from the wrong folder ----------------------------------------------------------------

_ACCESS_COMMANDS = [
    ["device", "add", "kiosk-1", "--role", "kiosk"],
    ["device", "pair", "--role", "kiosk"],
    ["device", "revoke", "kiosk-1"],
    ["device", "list"],
    ["td", "add", "alice", "--password-stdin"],
    ["td", "password", "alice", "--password-stdin"],
    ["td", "disable", "alice"],
    ["td", "list"],
]


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder that is not the server's, as the current folder, with no data folder named in the environment."""
    folder = (tmp_path / "elsewhere").resolve()
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.delenv("WORDJUDGE_DATA_DIR", raising=False)
    return folder


@pytest.mark.parametrize("command", _ACCESS_COMMANDS, ids=" ".join)
def test_access_commands_refuse_a_folder_with_no_event_and_no_log(elsewhere: Path, command: list[str]) -> None:
    result = run(*command, stdin=f"{PASSWORD}\n")
    assert result.exit_code == 1, result.output
    assert (
        f"Error: the data folder {elsewhere / 'wordjudge-data'} does not exist, so no server uses it: run this "
        "command from the folder where `wordjudge serve` runs, or name the server's data folder with --data-dir "
        "(or WORDJUDGE_DATA_DIR); to start a new event here, run `wordjudge event init` (or `wordjudge serve`) first"
    ) in result.stderr
    assert list(elsewhere.iterdir()) == []  # before the fix: a new wordjudge-data, and a code no server knew

    (elsewhere / "wordjudge-data" / "lexicons").mkdir(parents=True)  # a lexicon compiled here is no event yet
    again = run(*command, stdin=f"{PASSWORD}\n")
    assert again.exit_code == 1
    assert "holds no event and no log (no event.toml, no audit.sqlite3)" in again.stderr
    assert [p.name for p in (elsewhere / "wordjudge-data").iterdir()] == ["lexicons"]


def test_a_folder_named_explicitly_is_used_even_when_new(elsewhere: Path) -> None:
    added = run("td", "add", "alice", "--password-stdin", stdin=f"{PASSWORD}\n", env={"WORDJUDGE_DATA_DIR": "here"})
    assert added.exit_code == 0, added.output
    assert f"Data folder: {elsewhere / 'here'} (new: no event and no audit log there yet)" in added.stderr
    enrolled = run("device", "add", "kiosk-1", "--role", "kiosk", "--data-dir", "here")
    assert enrolled.exit_code == 0, enrolled.output
    [token] = enrolled.stdout.splitlines()  # stdout: the token alone, as scripts read it
    assert token.startswith("wj_")
    assert f"Data folder: {elsewhere / 'here'}" in enrolled.stderr


def test_preparing_an_event_works_in_a_new_folder_and_says_where(elsewhere: Path, tmp_path: Path) -> None:
    source = write_list(tmp_path / "tiny.txt", ["cat", "dog", "emu"])
    folder = elsewhere / "wordjudge-data"
    added = run("lexicon", "add", source, "--name", "TINY")
    assert added.exit_code == 0, added.output
    assert f"Data folder: {folder} (new: no event and no audit log there yet)" in added.stderr
    errata = write_list(tmp_path / "errata.txt", ["gnu"])
    profile = run("profile", "add", "TINY-E", "--base", "TINY", "--additions", errata)
    assert profile.exit_code == 0, profile.output
    assert f"Data folder: {folder} (new" in profile.stderr
    refused = run("device", "pair", "--role", "kiosk")
    assert refused.exit_code == 1  # lexicons are no event: a code here would still be a code no server knows
    initialised = run("event", "init")
    assert initialised.exit_code == 0, initialised.output
    assert f"Data folder: {folder} (new" in initialised.stderr
    for command in (["td", "add", "alice", "--password-stdin"], ["device", "pair", "--role", "runner"]):
        done = run(*command, stdin=f"{PASSWORD}\n")  # README, "Using it": after event init, as written
        assert done.exit_code == 0, done.output
        assert f"Data folder: {folder}\n" in done.stderr
    for command in (
        ["device", "add", "kiosk-1", "--role", "kiosk"],
        ["device", "revoke", "kiosk-1"],
        ["td", "password", "alice", "--password-stdin"],
        ["td", "disable", "alice"],
    ):
        done = run(*command, stdin=f"{PASSWORD} 2\n")
        assert done.exit_code == 0, done.output
        assert f"Data folder: {folder}\n" in done.stderr


@pytest.mark.live
def test_the_quick_start_pairs_a_kiosk_from_the_folder_serve_runs_in(data_dir: Path) -> None:
    clone = data_dir.parent / "clone"
    clone.mkdir()
    data_dir.rename(clone / "wordjudge-data")  # the demo lexicon, compiled already
    env = {key: value for key, value in os.environ.items() if key != "WORDJUDGE_DATA_DIR"}
    port = free_port()
    env["WORDJUDGE_PORT"] = str(port)
    server = ServeProcess([str(WORDJUDGE), "serve"], env, cwd=clone)
    try:
        wait_for_health(f"http://127.0.0.1:{port}", server)
        paired = subprocess.run(
            [WORDJUDGE, "device", "pair", "--role", "kiosk"], cwd=clone, env=env, capture_output=True, text=True
        )
        assert paired.returncode == 0, paired.stderr
        assert f"Data folder: {clone / 'wordjudge-data'}\n" in paired.stderr
        code = paired.stdout.split("Pairing code: ")[1].split()[0]
        enrolled = httpx.post(f"http://127.0.0.1:{port}/api/enrol", json={"code": code})
        assert enrolled.status_code == 201, enrolled.text  # the code is one the server knows
    finally:
        output = _stop(server)
    assert f"data folder {clone / 'wordjudge-data'}" in output
