"""The deployment files agree with the code: the systemd unit, its settings file, the admin wrapper.

The unit's command must be one ``wordjudge serve`` accepts, its settings file may set only real
settings, its stop timeout must leave room for the server's own graceful shutdown, and, where
systemd's own tools are installed (``.ci/check`` installs them), systemd must accept the unit.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from wordjudge.access.pairing import PAIRING_TTL
from wordjudge.cli.main import main
from wordjudge.service.settings import Settings, env_name, load_settings
from wordjudge.tournament.time_source import TimeSource, keyed_sources, read_source, tracking

from .netlab import lab

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
UNIT = DEPLOY / "wordjudge.service"
ENV_EXAMPLE = DEPLOY / "wordjudge.env"
WRAPPER = DEPLOY / "wj"

INSTALLED = "/opt/wordjudge/venv/bin/wordjudge"
DATA_DIR = "/var/lib/wordjudge"
ENV_FILE = "/etc/wordjudge/wordjudge.env"


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """A unit file's sections and their settings (a key may repeat); comments and blank lines dropped."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, equals, value = line.partition("=")
        assert equals, f"{UNIT.name}:{number}: not a setting: {line!r}"
        assert current is not None, f"{UNIT.name}:{number}: a setting before any [section]"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


@pytest.fixture(scope="module")
def unit() -> dict[str, dict[str, list[str]]]:
    return parse_unit(UNIT.read_text())


def one(unit: dict[str, dict[str, list[str]]], section: str, key: str) -> str:
    values = unit[section].get(key, [])
    assert len(values) == 1, f"[{section}] {key}= should be set once, not {values}"
    return values[0]


def serve_help() -> str:
    result = CliRunner().invoke(main, ["serve", "--help"], catch_exceptions=False)
    assert result.exit_code == 0
    return result.output


def test_the_unit_runs_wordjudge_serve_with_flags_it_has(unit: dict[str, dict[str, list[str]]]) -> None:
    command = shlex.split(one(unit, "Service", "ExecStart"))
    assert command[:2] == [INSTALLED, "serve"]
    options = re.findall(r"^\s+(--[a-z-]+)", serve_help(), re.MULTILINE)
    flags = [arg.split("=")[0] for arg in command[2:] if arg.startswith("--")]
    assert flags, "ExecStart should at least fix the data dir"
    for flag in flags:
        assert flag in options, f"ExecStart uses {flag}, which `wordjudge serve` does not have"
    assert command[command.index("--data-dir") + 1] == DATA_DIR


def test_the_unit_runs_as_its_own_user_on_its_own_data(unit: dict[str, dict[str, list[str]]]) -> None:
    assert one(unit, "Service", "User") == one(unit, "Service", "Group") == "wordjudge"
    assert one(unit, "Service", "Restart") == "on-failure"
    assert "/var/lib/" + one(unit, "Service", "StateDirectory") == DATA_DIR
    assert one(unit, "Service", "ReadWritePaths") == DATA_DIR  # the one writable folder
    assert one(unit, "Service", "WorkingDirectory") == DATA_DIR
    assert one(unit, "Service", "EnvironmentFile") in {ENV_FILE, "-" + ENV_FILE}
    assert one(unit, "Install", "WantedBy") == "multi-user.target"


def test_the_unit_is_hardened(unit: dict[str, dict[str, list[str]]]) -> None:
    expected = {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "PrivateDevices": "yes",
        "ProtectKernelTunables": "yes",
        "ProtectKernelModules": "yes",
        "ProtectControlGroups": "yes",
        "RestrictSUIDSGID": "yes",
        "RestrictNamespaces": "yes",
        "LockPersonality": "yes",
        "MemoryDenyWriteExecute": "yes",
        "CapabilityBoundingSet": "",
    }
    for key, value in expected.items():
        assert one(unit, "Service", key) == value, key
    families = one(unit, "Service", "RestrictAddressFamilies").split()
    # HTTP over IPv4/IPv6, mDNS's address listing (netlink), the event loop's socketpair (unix).
    assert sorted(families) == ["AF_INET", "AF_INET6", "AF_NETLINK", "AF_UNIX"]


def test_the_stop_timeout_leaves_room_for_the_graceful_shutdown(unit: dict[str, dict[str, list[str]]]) -> None:
    source = (ROOT / "server" / "wordjudge" / "cli" / "main.py").read_text()
    graceful = re.findall(r"timeout_graceful_shutdown=(\d+)", source)
    assert len(graceful) == 1, "cli/main.py should give uvicorn one timeout_graceful_shutdown"
    stop = one(unit, "Service", "TimeoutStopSec")
    assert stop.isdigit(), f"TimeoutStopSec={stop}: give plain seconds"
    # After the open requests' grace period: mDNS goodbyes (under a second) and closing the audit log.
    assert int(stop) >= int(graceful[0]) + 5
    assert one(unit, "Service", "KillSignal") == "SIGTERM"  # what uvicorn shuts down gracefully on


def test_the_unit_lets_the_server_hold_its_connections(unit: dict[str, dict[str, list[str]]]) -> None:
    # systemd's default soft limit, 1,024 open files, is what a slow-client flood used to exhaust.
    nofile = one(unit, "Service", "LimitNOFILE")
    assert nofile.isdigit(), f"LimitNOFILE={nofile}: give one number (soft and hard limit alike)"
    assert int(nofile) >= 16384


def _assignments(text: str) -> list[tuple[str, str, bool]]:
    """(name, value, active) of each VAR=value line, commented out or not."""
    found = []
    for line in text.splitlines():
        match = re.match(r"^(#?)\s*([A-Z][A-Z0-9_]*)=(.*)$", line.strip())
        if match:
            found.append((match.group(2), match.group(3), not match.group(1)))
    return found


def test_the_settings_file_sets_only_real_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assignments = _assignments(ENV_EXAMPLE.read_text())
    real = {env_name(field) for field in Settings.model_fields}
    assert assignments
    for name, _, _ in assignments:
        assert name in real, f"{ENV_EXAMPLE.name} sets {name}, which is not a setting (settings.py)"
    # The unit fixes the data dir with a flag, which wins: setting it in the file would do nothing.
    assert env_name("data_dir") not in {name for name, _, _ in assignments}
    for field in Settings.model_fields:
        monkeypatch.delenv(env_name(field), raising=False)
    for name, value, active in assignments:
        # The examples commented out are valid too (the TLS files aside: they must exist).
        if active or name not in {env_name("certfile"), env_name("keyfile")}:
            monkeypatch.setenv(name, value)
    settings = load_settings(data_dir=tmp_path)  # every value in the file is valid
    assert settings.host == "0.0.0.0"
    assert settings.mdns_name == "wordjudge"
    assert settings.max_connections_per_client == Settings.model_fields["max_connections_per_client"].default
    assert [str(network) for network in settings.proxy_networks] == ["127.0.0.1/32"]


def test_the_wrapper_runs_wordjudge_as_the_service_does(unit: dict[str, dict[str, list[str]]]) -> None:
    text = WRAPPER.read_text()
    values = {name: value for name, value, active in _assignments(text) if active}
    assert values["WORDJUDGE"] == shlex.split(one(unit, "Service", "ExecStart"))[0]
    assert values["DATA_DIR"] == DATA_DIR
    assert values["ENV_FILE"] == ENV_FILE
    assert values["SERVICE_USER"] == one(unit, "Service", "User")
    assert os.access(WRAPPER, os.X_OK)
    subprocess.run(["sh", "-n", str(WRAPPER)], check=True)


def test_the_kiosk_launcher_is_still_there() -> None:
    launcher = DEPLOY / "kiosk-chromium.sh"
    assert os.access(launcher, os.X_OK)
    subprocess.run(["sh", "-n", str(launcher)], check=True)


def _unit_for_this_checkout(tmp_path: Path) -> Path:
    """The unit with ExecStart pointing at this checkout's wordjudge (systemd checks that it exists)."""
    here = Path(sys.executable).with_name("wordjudge")
    copy = tmp_path / UNIT.name
    copy.write_text(UNIT.read_text().replace(INSTALLED, str(here)))
    return copy


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None,
    reason="systemd-analyze is not installed (apt-get install systemd; .ci/check installs it): "
    "only systemd's own check of the unit is skipped",
)
def test_systemd_accepts_the_unit_and_rates_it_safe(tmp_path: Path) -> None:
    copy = _unit_for_this_checkout(tmp_path)
    verified = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True, timeout=60)
    assert verified.returncode == 0, verified.stderr
    assert verified.stderr.strip() == "", verified.stderr  # no warnings either
    rated = subprocess.run(
        ["systemd-analyze", "security", "--offline=yes", "--no-pager", str(copy)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    level = re.search(r"Overall exposure level for \S+: ([\d.]+) (\w+)", rated.stdout)
    assert level, rated.stdout + rated.stderr
    assert float(level.group(1)) <= 2.0, rated.stdout  # systemd's "OK" band


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None or not Path("/opt/wordjudge-patroni/bin/patroni").exists(),
    reason="systemd-analyze or the hall's Patroni is not installed (.ci/check installs both, as root)",
)
def test_systemd_accepts_the_halls_patroni_unit() -> None:
    unit = DEPLOY / "patroni" / "wordjudge-patroni.service"
    verified = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert verified.returncode == 0, verified.stderr
    assert verified.stderr.strip() == "", verified.stderr  # no warnings either


# -- the hall's time: one machine serves it, the other follows ------------------------------------------


def _hall_folder(folder: Path, typed_from: Path | None = None) -> Path:
    """A machine's data folder with its hall key, as deploy/hall.md step 3 puts it there: made (hall-a), or typed
    from ``typed_from``'s (hall-b, ``standby key --show`` there, ``--enter`` here)."""
    from wordjudge.hall.proof import enter_key, make_key, read_key

    if typed_from is None:
        make_key(folder)
    else:
        key = read_key(typed_from)
        assert key is not None
        enter_key(folder, key)
    return folder


def _chrony_key(data_dir: Path) -> str:
    """The content of /etc/chrony/chrony.keys as deploy/hall.md step 5 makes it on a machine whose data folder is
    ``data_dir``: the guide's own command, its ``wj`` (``wordjudge`` on the data folder) run on that folder."""
    guide = (DEPLOY / "hall.md").read_text("utf-8")
    [made] = [line.strip() for line in guide.splitlines() if "| sudo tee /etc/chrony/chrony.keys" in line]
    command = made.split("|")[0].split()
    assert command[:2] == ["sudo", "wj"], made
    done = CliRunner().invoke(main, [*command[2:], "--data-dir", str(data_dir)])
    assert done.exit_code == 0, done.output
    return done.stdout


def _start_chronyd(hall: Any, name: str, folder: Path, addresses: dict[str, str], key: str) -> Path:
    """deploy/chrony's file for machine ``name``, with the lab's addresses for the hall's and ``key`` as its key file
    (Debian's chrony.conf names /etc/chrony/chrony.keys), started in its namespace; returns its command socket."""
    shipped = (DEPLOY / "chrony" / f"hall-{name}.conf").read_text("utf-8")
    for documented, used in addresses.items():
        shipped = shipped.replace(documented, used)
    folder.mkdir(mode=0o700)
    (folder / "chrony.keys").write_text(key)
    (folder / "chrony.keys").chmod(0o600)
    conf = folder / "chrony.conf"
    # Where this instance keeps its files, so that two run beside the machine's own chrony (if any).
    conf.write_text(
        shipped + f"\nkeyfile {folder}/chrony.keys\npidfile {folder}/chronyd.pid\n"
        f"bindcmdaddress {folder}/chronyd.sock\ndriftfile {folder}/drift\n"
    )
    checked = subprocess.run(["chronyd", "-p", "-f", str(conf)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    started = subprocess.run(
        hall.run(name, "chronyd", "-x", "-u", "root", "-f", str(conf), "-l", str(folder / "chronyd.log")),
        capture_output=True,
        text=True,
        check=False,
        timeout=10,
    )
    assert started.returncode == 0, started.stderr
    return folder / "chronyd.sock"


def _stop_chronyd(folder: Path) -> None:
    pid = folder / "chronyd.pid"
    if pid.is_file():
        os.kill(int(pid.read_text().split()[0]), signal.SIGTERM)
        deadline = time.monotonic() + 30
        while pid.is_file() and time.monotonic() < deadline:
            time.sleep(0.1)


def _followed(hall: Any, socket: Path, address: str, seconds: float) -> bool:
    """Whether hall-b's chronyd selects ``address`` as its source within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sources = subprocess.run(
            hall.run("b", "chronyc", "-h", str(socket), "-n", "sources"),
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        ).stdout
        if f"^* {address}" in sources:
            return True
        time.sleep(0.5)
    return False


def _chrony_lab() -> None:
    if shutil.which("chronyd") is None:
        if os.environ.get("CI"):
            pytest.fail("chronyd is missing: .ci/check installs Debian's chrony")
        pytest.skip("chronyd is not installed (Debian's chrony)")


def test_the_halls_chrony_files_keep_the_standby_on_the_active_machines_time(tmp_path: Path) -> None:
    """deploy/chrony's two files, as deploy/hall.md installs them (with the hall's chrony key on both), in two
    network namespaces with the lab's addresses for the hall's: hall-b's chronyd selects hall-a as its source
    within seconds, authenticated, and the server's reading of it (what health's ``clock.time_source`` says) tells so.
    Neither touches the machine's clock (-x: the namespaces share it)."""
    _chrony_lab()
    data_a = _hall_folder(tmp_path / "data-a")
    key_a, key_b = _chrony_key(data_a), _chrony_key(_hall_folder(tmp_path / "data-b", typed_from=data_a))
    assert key_a == key_b  # the same from the same hall key: nothing travelled but the typed hall key
    with lab(["a", "b"]) as hall:
        addresses = {"192.168.1.10": hall.addresses["a"], "192.168.1.11": hall.addresses["b"]}
        try:
            _start_chronyd(hall, "a", tmp_path / "a", addresses, key_a)
            socket = _start_chronyd(hall, "b", tmp_path / "b", addresses, key_b)
            assert _followed(hall, socket, hall.addresses["a"], 30)
            source = read_source(
                chronyc=hall.run("b", "chronyc", "-h", str(socket)), configs=[str(tmp_path / "b" / "chrony.conf")]
            )
            assert source == TimeSource("chrony", hall.addresses["a"], synchronised=True, authenticated=True)
            assert source.warning() is None
        finally:
            for name in ("a", "b"):
                _stop_chronyd(tmp_path / name)


def test_after_a_failover_a_machine_given_the_dead_ones_address_does_not_set_the_standbys_clock(
    tmp_path: Path,
) -> None:
    """Issue 44: after a failover hall-b's only source is the dead hall-a's address. A machine given it (an
    impostor's chronyd, hall-a's file, without the hall's key) is never selected: hall-b keeps its own clock.
    Before (hall-b.conf with no key) it was selected within seconds."""
    _chrony_lab()
    with lab(["a", "b"]) as hall:
        addresses = {"192.168.1.10": hall.addresses["a"], "192.168.1.11": hall.addresses["b"]}
        try:
            # The impostor's chrony key made as the guide makes it, from another hall key than hall-b's.
            impostor = _chrony_key(_hall_folder(tmp_path / "data-impostor"))
            _start_chronyd(hall, "a", tmp_path / "impostor", addresses, impostor)
            socket = _start_chronyd(
                hall, "b", tmp_path / "b", addresses, _chrony_key(_hall_folder(tmp_path / "data-b"))
            )
            assert not _followed(hall, socket, hall.addresses["a"], 15)
            source = read_source(
                chronyc=hall.run("b", "chronyc", "-h", str(socket)), configs=[str(tmp_path / "b" / "chrony.conf")]
            )
            assert (source.via, source.synchronised) == ("chrony", False)
        finally:
            for name in ("impostor", "b"):
                _stop_chronyd(tmp_path / name)


def test_health_warns_of_a_hall_source_chrony_does_not_authenticate() -> None:
    """What the server reads of chrony without privileges: its tracking line and its configuration files."""
    line = "0A99BB01,10.153.187.1,11,1795932443.38,-0.0000076,0.0000076,0.0000076,0.000,2.428,1000000.000,0.00004,1.33,0.0,Normal"
    assert tracking(line) == ("10.153.187.1", True)
    unsynchronised = "00000000,,0,0.0,0.0,0.0,0.0,0.000,0.000,0.000,1.0,1.0,0.0,Not synchronised"
    assert tracking(unsynchronised) == ("", False)
    old = "# hall-b\nserver 192.168.1.10 iburst prefer\npool 2.debian.pool.ntp.org iburst\n"
    assert keyed_sources([old]) == {"192.168.1.10": False, "2.debian.pool.ntp.org": False}
    shipped = (DEPLOY / "chrony" / "hall-b.conf").read_text("utf-8")
    assert keyed_sources([shipped]) == {"192.168.1.10": True}
    said = TimeSource("chrony", "192.168.1.10", synchronised=True, authenticated=False).warning()
    assert said is not None
    assert "follows 192.168.1.10 (chrony) without authenticating it" in said.text()
    assert TimeSource("chrony", "192.168.1.10", synchronised=True, authenticated=True).warning() is None
    assert TimeSource("chrony", "9.9.9.9", synchronised=True, authenticated=False).warning() is None  # the internet


# -- the guides' commands, as the TD types them --------------------------------------------------------------

_GUIDES = ("README.md", "hall.md")
_INSTALLED = {"wj", "/opt/wordjudge/venv/bin/wordjudge"}  # what deploy/README.md's install puts on a machine


def _commands(text: str) -> list[str]:
    """Every command a guide has the TD type: each line of its code blocks, and each inline code span that starts
    with ``sudo`` (the rest name commands in prose), joined where the guide wraps it."""
    found = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
        found += [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]
    for span in re.findall(r"(?<!`)`([^`]+)`(?!`)", re.sub(r"```.*?```", "", text, flags=re.S)):
        command = " ".join(span.split())
        if command.startswith("sudo "):
            found.append(command)
    return found


def _program(words: list[str]) -> list[str]:
    """The program and its arguments, past ``sudo`` and its options (``-u USER``)."""
    while words and words[0] == "sudo":
        words = words[1:]
        while words and words[0].startswith("-"):
            words = words[2:] if words[0] in ("-u", "-g") else words[1:]
    return words


def _wordjudge_calls(command: str) -> list[tuple[str, list[str]]]:
    """The wordjudge invocations in a shell command: (the program as typed, its arguments)."""
    calls = []
    for part in re.split(r"&&|\|\||;|\|", command):
        try:
            words = _program(shlex.split(part.split(" #")[0]))
        except ValueError:
            continue
        if words and (words[0] in _INSTALLED or words[0].endswith("wordjudge")) and "..." not in words:
            calls.append((words[0], words[1:]))  # (a call with "..." in it stands for any command)
    return calls


@pytest.mark.parametrize("guide", _GUIDES)
def test_every_wordjudge_command_in_the_deploy_guides_runs_on_the_documented_install(guide: str) -> None:
    """Each wordjudge command of deploy/README.md and deploy/hall.md is one the documented install has on the
    machine (`wj`, or the venv's own path: `sudo -u postgres wordjudge` was "command not found" there), and its
    options are the command's (click parses them)."""
    calls = [call for command in _commands((DEPLOY / guide).read_text("utf-8")) for call in _wordjudge_calls(command)]
    assert len(calls) >= 6, calls
    for program, arguments in calls:
        assert program in _INSTALLED, f"{guide}: `{program} {' '.join(arguments)}` is not on the installed machine"
        parsed = CliRunner().invoke(main, [*arguments, "--help"])
        assert parsed.exit_code == 0, f"{guide}: wordjudge {' '.join(arguments)}: {parsed.output}"


def test_the_hall_guide_keeps_the_log_out_of_the_servers_reach_and_its_steps_work() -> None:
    """What the review found in deploy/hall.md, each against the install it refers to."""
    text = (DEPLOY / "hall.md").read_text("utf-8")
    commands = _commands(text)
    # The server's role owns nothing: the database is made by postgres and prepared with --server-role.
    assert not any("createdb -O" in command for command in commands)
    assert any("database init" in command and "--server-role wordjudge" in command for command in commands)
    # The superuser speaks over the socket (Debian's peer authentication), never TCP as postgres.
    assert not any(re.search(r"postgres(ql)?://postgres@localhost", command) for command in commands)
    assert not any(re.search(r"-U postgres\b", command) and "-h 127.0.0.1" in command for command in commands)
    # pg_rewind is not on Debian's PATH (and needs wal_log_hints): the guide's steps do not run it.
    assert not any(command.startswith(("pg_rewind", "sudo -u postgres pg_rewind")) for command in commands)
    # The server role's password has a home: the settings file, root's alone.
    assert "WORDJUDGE_DATABASE=postgresql://wordjudge:PASSWORD@localhost/hall" in text
    assert "sudo chmod 0600 /etc/wordjudge/wordjudge.env" in commands
    assert "sudo wj standby key" in commands  # the hall key, made once and copied with the folder
    # The pairing codes' life is the code's.
    assert f"for {PAIRING_TTL // 60} minutes" in (DEPLOY / "README.md").read_text("utf-8")
