"""deploy/rehearse-hall.sh, the check a TD runs on each hall machine before the event (deploy/hall.md, set-up step
6), run as it is against the test hall on loopback (tests/hall_lab.py: two PostgreSQL clusters, the second a
synchronous standby of the first, two ``wordjudge serve`` over HTTPS with the hall's certificate).

What is pointed elsewhere, by the script's own options: the settings file (``--env``: a file written here with
the hall's loopback addresses, as set-up step 4 writes /etc/wordjudge/wordjudge.env), the data folder
(``--data-dir``, for the hall's CA), wordjudge (``--wordjudge``: this checkout's venv, not /opt/wordjudge) and the
database (``--database``: the cluster's superuser URL instead of ``sudo -u postgres`` over Debian's socket). The
clock section is skipped here (``--skip clock``: no chrony runs for the test hall); tests/test_deploy.py runs
deploy/chrony's files in network namespaces, and test_the_rehearsal_checks_chrony_as_the_guide_sets_it below
runs the script's clock section against them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from wordjudge.hall.pg_setup import prepare
from wordjudge.hall.proof import KEY_FILE, make_key

from .hall_lab import Hall, kill_machine
from .helpers import eventually
from .netlab import lab
from .patroni import PatroniHall
from .test_hall_follow import _over_https
from .test_hall_patroni import patroni_hall  # noqa: F401 (the fixture)

pytestmark = pytest.mark.sqlite_only("starts PostgreSQL clusters of its own: runs in the suite's first pass")

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
SCRIPT = DEPLOY / "rehearse-hall.sh"
HALLCTL = DEPLOY / "patroni" / "hallctl"
PATRONICTL = "/opt/wordjudge-patroni/bin/patronictl"


def _wordjudge() -> str:
    import sys

    return str(Path(sys.executable).with_name("wordjudge"))


def rehearse(hall: Hall, machine: str, tmp_path: Path, *more: str) -> tuple[int, str]:
    """The script as the TD runs it on ``machine`` (a or b), pointed at the test hall; (exit status, output)."""
    server, peer = (hall.a, hall.b) if machine == "a" else (hall.b, hall.a)
    env_file = tmp_path / f"wordjudge-{machine}.env"
    env_file.write_text(
        f"WORDJUDGE_PUBLIC_URL=https://127.0.0.1:{server.port}\nWORDJUDGE_PEERS=https://127.0.0.1:{peer.port}\n"
        "WORDJUDGE_HTTPS=on\n"
    )
    admin = hall.admin_a if machine == "a" else hall.admin_b
    command = [str(SCRIPT), "--env", str(env_file), "--data-dir", str(server.data_dir), "--wordjudge", _wordjudge()]
    command += ["--database", admin, "--skip", "clock", *more]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    print(f"-- rehearse-hall.sh on {machine}: {time.monotonic() - started:.2f} s, exit {done.returncode}")
    print(done.stdout + done.stderr)  # shown with -s, and on a failure: what the TD would read
    return done.returncode, done.stdout + done.stderr


def lines(output: str, kind: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(kind)]


def failure(output: str, said: str) -> str:
    """The FAIL line containing ``said`` and its fix line."""
    found = output.splitlines()
    for number, line in enumerate(found):
        if line.startswith("FAIL") and said in line:
            return line + "\n" + found[number + 1]
    raise AssertionError(f"no FAIL line saying {said!r} in:\n{output}")


def reload_primary(hall: Hall, statement: str) -> None:
    """Run ``statement`` (an ``ALTER SYSTEM``) on the primary and reload its configuration, once a new connection
    sees it loaded (the postmaster reloads on a signal, after pg_reload_conf returns): 30 s at most."""
    with hall.primary.connect() as connection:
        loaded = connection.execute("SELECT pg_conf_load_time()").fetchall()[0][0]
        connection.execute(statement)
        connection.execute("SELECT pg_reload_conf()")

    def reloaded() -> bool:
        with hall.primary.connect() as connection:
            return bool(connection.execute("SELECT pg_conf_load_time() > %s", (loaded,)).fetchall()[0][0])

    eventually(reloaded, "the primary's configuration reloaded", seconds=30)


@pytest.mark.live
def test_the_rehearsal_passes_a_hall_set_up_as_the_guide_says_and_names_the_fix_of_each_mis_set_up(
    hall: Hall, tmp_path: Path
) -> None:
    """A well set-up hall: every check PASSes on both machines, and each prints the same hall key id. Then each
    mis-set-up, one at a time (mended after): the script FAILs (exit 1) naming the fix and the guide's step."""
    _over_https(hall)  # hall.a and hall.b are then servers the fixture does not know of: stopped here
    try:
        _rehearsed(hall, tmp_path)
    finally:
        for server in (hall.a, hall.b):
            server.stop()


def _rehearsed(hall: Hall, tmp_path: Path) -> None:
    hall.a.start()
    hall.b.start()
    deadline = time.monotonic() + 30  # each server proves itself to the other within a few seconds
    while True:
        status_a, said_a = rehearse(hall, "a", tmp_path)
        status_b, said_b = rehearse(hall, "b", tmp_path)
        if (status_a, status_b) == (0, 0) or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert status_a == 0, said_a
    assert status_b == 0, said_b
    assert not lines(said_a, "FAIL")
    assert not lines(said_b, "FAIL")
    assert "the server is the hall's active one (epoch 1)" in said_a
    assert "the server is the standby" in said_b
    assert "a synchronous standby streams from this machine" in said_a
    assert "this standby streams" in said_b
    assert "the server serves HTTPS" in said_a
    keys = [re.search(r"hall key id: (\S+)", said).group(1) for said in (said_a, said_b)]  # type: ignore[union-attr]
    assert keys[0] == keys[1] != "None"
    assert f"holds the same hall key ({keys[0]})" in said_a

    # wal_sender_timeout at PostgreSQL's default (60 s): a silent standby death stops the hall a minute, unwarned.
    reload_primary(hall, "ALTER SYSTEM RESET wal_sender_timeout")
    status, said = rehearse(hall, "a", tmp_path)
    assert status == 1
    assert "wal_sender_timeout = 5s in /etc/postgresql/15/main/conf.d/wordjudge-hall.conf" in failure(
        said, "wal_sender_timeout = 60000 ms"
    )
    reload_primary(hall, "ALTER SYSTEM SET wal_sender_timeout = '5s'")

    # No synchronous standby asked for: the verdicts live on hall-a only.
    reload_primary(hall, "ALTER SYSTEM RESET synchronous_standby_names")
    status, said = rehearse(hall, "a", tmp_path)
    assert status == 1
    assert "set-up step 2" in failure(said, "synchronous_standby_names is empty")
    assert "ALTER SYSTEM SET synchronous_standby_names = '*'" in failure(said, "synchronous_standby_names is empty")
    assert "set-up step 2" in failure(said, "a standby streams, but not synchronously")
    reload_primary(hall, "ALTER SYSTEM SET synchronous_standby_names = '*'")

    # hall-b's server not running.
    hall.b.stop()
    status, said = rehearse(hall, "b", tmp_path)
    assert status == 1
    assert "sudo systemctl start wordjudge" in failure(said, "this machine's server does not answer")
    assert "set-up step 6" in failure(said, "this machine's server does not answer")

    # Another hall key on hall-b: its server proves nothing to hall-a, and the ids differ.
    (hall.b.data_dir / KEY_FILE).unlink()
    make_key(hall.b.data_dir)
    hall.b.start()
    deadline = time.monotonic() + 30
    while True:
        status, said = rehearse(hall, "a", tmp_path)
        if "holds another hall key" in said or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert status == 1
    fix = failure(said, "holds another hall key")
    assert "sudo wj standby key --enter there" in fix
    assert "set-up step 3" in fix


def test_the_rehearsal_changes_nothing_unless_asked_and_refuses_a_drill_on_a_failed_hall(tmp_path: Path) -> None:
    """Nothing set up at all (no settings file, no server, no database): every section FAILs with its fix, the
    exit status says so, and --failover-drill does not start."""
    command = [str(SCRIPT), "--env", str(tmp_path / "none.env"), "--wordjudge", _wordjudge(), "--database"]
    command += ["postgresql://nobody@127.0.0.1:1/hall", "--chrony-conf", str(tmp_path / "none.conf")]
    done = subprocess.run([*command, "--failover-drill"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    output = done.stdout
    assert "set-up step 4" in failure(output, f"no settings file {tmp_path / 'none.env'}")
    assert "sudo systemctl start postgresql" in failure(output, "PostgreSQL does not answer")
    assert "set-up step 5" in failure(output, "no hall chrony file")
    assert "DRILL not started" in output


# -- the automatic way: the hall's patronictl -----------------------------------------------------------------


def test_hallctl_lists_and_switches_the_patroni_hall_over_with_env_confs_etcd_members(
    patroni_hall: PatroniHall,  # noqa: F811 (the fixture, imported)
    tmp_path: Path,
) -> None:
    """deploy/patroni/hallctl, as installed, with hall-a's /etc/patroni/env.conf and /etc/patroni/hall.yml (here
    the Patroni lab's: its loopback addresses, in patroni.env's very format) against the running Patroni hall:
    `hallctl list` shows a Leader and a Sync Standby, `hallctl switchover` moves the leader. Patroni's own
    `patronictl -c hall.yml list`, as deploy/hall.md said before, fails: hall.yml names no etcd member."""
    node = patroni_hall.nodes["a"]
    config = node.cluster.folder / "patroni.yml"  # deploy/patroni/patroni.yml with the lab's folders
    env_conf = tmp_path / "env.conf"
    env_conf.write_text("".join(f"{name}={value}\n" for name, value in patroni_hall.environment(node).items()))
    env_conf.chmod(0o600)
    assert "PATRONI_ETCD3_HOSTS='127.0.0.1:" in env_conf.read_text()  # quoted as patroni.env quotes them
    hallctl = tmp_path / "hallctl"
    hallctl.write_text(
        HALLCTL.read_text()
        .replace("CONFIG=/etc/patroni/hall.yml", f"CONFIG={config}")
        .replace("ENV_FILE=/etc/patroni/env.conf", f"ENV_FILE={env_conf}")
    )
    hallctl.chmod(0o755)
    bare = {name: value for name, value in os.environ.items() if not name.startswith("PATRONI")}

    before = subprocess.run(
        [PATRONICTL, "-c", str(config), "list"], capture_output=True, text=True, timeout=60, env=bare, check=False
    )
    assert before.returncode != 0 or "Leader" not in before.stdout, before.stdout

    listed = subprocess.run([hallctl, "list"], capture_output=True, text=True, timeout=60, env=bare, check=False)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"\| a +\|.*\| Leader ", listed.stdout), listed.stdout
    assert re.search(r"\| b +\|.*\| Sync Standby ", listed.stdout), listed.stdout

    # rehearse-hall.sh --patroni on hall-a: PostgreSQL's settings as Patroni's file sets them, and the synchronous
    # standby Patroni asked for, pass (the packages are this machine's, the servers not started: skipped).
    hall_database = node.cluster.create_database("hall")
    prepare(node.cluster.url(hall_database), None)
    env_file = tmp_path / "wordjudge.env"
    env_file.write_text("")
    command = [str(SCRIPT), "--patroni", "--env", str(env_file), "--wordjudge", _wordjudge()]
    command += ["--database", node.cluster.url(hall_database), "--skip", "packages", "--skip", "server"]
    checked = subprocess.run(
        [*command, "--skip", "clock"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    print(checked.stdout)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "PASS  wal_sender_timeout = 5000 ms" in checked.stdout
    assert "PASS  a synchronous standby streams from this machine" in checked.stdout

    moved = subprocess.run(
        [hallctl, "switchover", "--candidate", "b", "--force"],
        capture_output=True,
        text=True,
        timeout=120,
        env=bare,
        check=False,
    )
    assert moved.returncode == 0, moved.stdout + moved.stderr
    patroni_hall.wait("b", "primary", timeout=60)
    listed = subprocess.run([hallctl, "list"], capture_output=True, text=True, timeout=60, env=bare, check=False)
    assert re.search(r"\| b +\|.*\| Leader ", listed.stdout), listed.stdout


# -- the lexicons' copy that the standby-unready warning gives ---------------------------------------------------


@pytest.mark.parametrize("profiles", [False, True], ids=["no-profiles", "profiles"])
def test_the_lexicons_copy_the_warning_gives_is_the_guides_and_runs_with_or_without_profiles(
    tmp_path: Path, profiles: bool
) -> None:
    """The two commands that error.hall.standby_unready gives (en and fr) are deploy/hall.md's, and they run: the
    lexicons folder is copied, the profiles folder too where there is one, and its absence is no error (the
    warning used to ask for a profiles folder that may not exist, with no command). Mapped: /var/lib/wordjudge to
    two test folders (the active machine's, the standby's), /media/usb to a third, ``sudo`` dropped, the
    ``wordjudge`` user of ``chown`` to root (the test's own)."""
    from .test_deploy import _commands

    guide = _commands((DEPLOY / "hall.md").read_text("utf-8"))
    copy = [command for command in guide if "wordjudge-lexicons.tar.gz" in command]
    assert len(copy) == 2, copy
    for locale in ("en", "fr"):
        said = json.loads((ROOT / "kiosk" / "locales" / f"{locale}.json").read_text("utf-8"))
        for command in copy:
            assert command in said["error.hall.standby_unready"], locale
    active, standby, usb = tmp_path / "active", tmp_path / "standby", tmp_path / "usb"
    for folder in (active, standby, usb):
        folder.mkdir()
    (active / "lexicons" / "SIDE").mkdir(parents=True)
    (active / "lexicons" / "SIDE" / "SIDE.wjlex").write_text("compiled")
    if profiles:
        (active / "profiles").mkdir()
        (active / "profiles" / "SIDE-PLUS.json").write_text("{}")
    for command, data in zip(copy, (active, standby), strict=True):
        mapped = command.replace("/var/lib/wordjudge", str(data)).replace("/media/usb", str(usb))
        mapped = mapped.replace("sudo ", "").replace("wordjudge:wordjudge", "root:root")
        done = subprocess.run(["sh", "-c", mapped], capture_output=True, text=True, timeout=30, check=False)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
    assert (standby / "lexicons" / "SIDE" / "SIDE.wjlex").read_text() == "compiled"
    assert (standby / "profiles" / "SIDE-PLUS.json").is_file() is profiles


# -- the clock: the script's chrony checks against deploy/chrony's files in network namespaces ------------------


def _clock_checks(hall: Any, socket: Path, conf: Path, tmp_path: Path) -> tuple[int, str]:
    """The script's clock section alone, run on hall-b with its chronyd's socket and configuration."""
    env_file = tmp_path / "empty.env"
    env_file.write_text("")
    command = [str(SCRIPT), "--env", str(env_file), "--chrony-conf", str(conf), "--chronyc", f"chronyc -h {socket}"]
    command += ["--skip", "packages", "--skip", "postgresql", "--skip", "server"]
    done = subprocess.run(hall.run("b", *command), capture_output=True, text=True, timeout=60, check=False)
    print(done.stdout + done.stderr)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("same_key", [True, False], ids=["the-halls-key", "another-key"])
def test_the_rehearsal_checks_chrony_as_the_guide_sets_it(tmp_path: Path, same_key: bool) -> None:
    """deploy/chrony's two files in two namespaces (as tests/test_deploy.py runs them), the script's clock section
    on hall-b: with the hall's chrony key on both (made by the guide's command from the same hall key), it PASSes
    (hall-b follows hall-a, chronyc authdata says SK); with another on hall-a (a machine given its address, or
    made from another hall key), it FAILs: hall-b hears
    nothing its key authenticates (before, chronyc authdata's SK alone passed it: SK is the configured mode)."""
    from .test_deploy import _chrony_key, _chrony_lab, _followed, _hall_folder, _start_chronyd, _stop_chronyd

    _chrony_lab()
    data_b = _hall_folder(tmp_path / "data-b")
    data_a = _hall_folder(tmp_path / "data-a", typed_from=data_b if same_key else None)
    with lab(["a", "b"]) as hall:
        addresses = {"192.168.1.10": hall.addresses["a"], "192.168.1.11": hall.addresses["b"]}
        try:
            _start_chronyd(hall, "a", tmp_path / "a", addresses, _chrony_key(data_a))
            socket = _start_chronyd(hall, "b", tmp_path / "b", addresses, _chrony_key(data_b))
            _followed(hall, socket, hall.addresses["a"], 30 if same_key else 10)
            status, said = _clock_checks(hall, socket, tmp_path / "b" / "chrony.conf", tmp_path)
        finally:
            for name in ("a", "b"):
                _stop_chronyd(tmp_path / name)
    assert f"PASS  chrony's hall source {hall.addresses['a']} is authenticated" in said
    if same_key:
        assert status == 0, said
        assert f"PASS  chrony follows {hall.addresses['a']}" in said
        assert f"PASS  chronyc authdata: {hall.addresses['a']} with the hall's key (SK)" in said
    else:
        assert status == 1, said
        assert "the same /etc/chrony/chrony.keys on both machines" in failure(said, "that its key authenticates")
        assert "set-up step 5" in failure(said, "that its key authenticates")
        assert "sudo wj standby key --chrony | sudo tee /etc/chrony/chrony.keys" in failure(
            said, "its key authenticates"
        )


# -- the failover drill ------------------------------------------------------------------------------------------


@pytest.mark.live
def test_the_failover_drill_promotes_the_standby_once_the_td_says_the_cable_is_pulled(
    hall: Hall, tmp_path: Path
) -> None:
    """``--failover-drill`` on hall-b: the checks first (all PASS), then it asks the TD to pull hall-a's cable and
    does nothing until told ``yes``; the machine then dies (kill -9 of hall-a's PostgreSQL and server: the
    cable, as far as hall-b knows), the drill runs ``wordjudge standby promote --yes`` and waits until hall-b's
    server is active, saying how long it took and what the TD does next."""
    _over_https(hall)
    try:
        hall.a.start()
        hall.b.start()
        deadline = time.monotonic() + 30
        while rehearse(hall, "b", tmp_path)[0] != 0:
            assert time.monotonic() < deadline, "hall-b's checks do not pass"
            time.sleep(1)
        env_file = tmp_path / "wordjudge-b.env"  # written by rehearse() above
        command = [str(SCRIPT), "--env", str(env_file), "--data-dir", str(hall.b.data_dir), "--wordjudge"]
        command += [_wordjudge(), "--database", hall.admin_b, "--skip", "clock", "--failover-drill"]
        drill = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert drill.stdin is not None
        assert drill.stdout is not None
        shown = ""
        while "Type yes once it is pulled" not in shown:
            line = drill.stdout.readline()
            assert line, shown
            shown += line
        assert "0 failed" not in shown  # the summary comes at the end, after the drill
        with hall.standby.connect("hall") as connection:
            assert connection.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)  # nothing done yet
        kill_machine(hall.primary, hall.a)
        started = time.monotonic()
        rest, _ = drill.communicate("yes\n", timeout=120)
        print(shown + rest)
        assert drill.returncode == 0, shown + rest
        assert re.search(r"DRILL: this server is active, \d+ s after the cable was pulled", rest), rest
        assert "step 6" in rest
        print(f"drill: promoted and active {time.monotonic() - started:.1f} s after the kill")
    finally:
        for server in (hall.a, hall.b):
            if server.process is not None:
                server.stop()
