"""deploy/hall.md's PostgreSQL set-up (steps 1 and 2 of the TD-confirmed hall), its commands taken from the guide's
code blocks and run in order, each on its machine: two network namespaces (tests/netlab.py), hall-a and hall-b,
each with a PostgreSQL laid out as Debian's (configuration beside the data, a conf.d folder, Debian's pg_hba.conf)
on the default port 5432 of its own address, so that ``pg_basebackup -h 192.168.1.10`` reaches the other machine
as it would in the hall.

Run verbatim (the guide's words, addresses and paths mapped as below): the configuration block of step 1 (the file
itself, into conf.d), the ``pg_hba.conf`` line, ``createuser --replication -P replicator``, ``createuser -P
wordjudge`` (each password typed at its prompts, on a terminal), ``createdb hall``, ``wordjudge database init
--server-role wordjudge``, the ``GRANT``, ``pg_basebackup ... -R -X stream --checkpoint=fast -P`` (its password
typed at its prompt; its progress read), the ``ALTER SYSTEM SET synchronous_standby_names`` and the ``sync_state``
query, which must say ``sync``. Each is Debian's own client (``/usr/bin/psql``...), as the postgres user.

Mapped: the addresses 192.168.1.10 and .11 to the lab's; /etc/postgresql/15/main, /var/lib/postgresql/15/main
and /var/run/postgresql to each machine's folders of the test (the socket's through PGHOST); ``sudo systemctl
start|stop|restart postgresql`` to ``pg_ctl`` on the machine's configuration folder (what Debian's unit runs,
less systemd); ``sudo -u postgres`` to ``runuser -u postgres``; ``/opt/wordjudge/venv/bin/wordjudge`` to this
checkout's, run as root logging in as postgres over the socket (peer, mapped by pg_ident.conf: the checkout's
venv is not the postgres user's to run). Debian's pg_hba.conf is written as Debian's, with that one map.

Not covered here: steps 3 to 6 (the hall key and folder copy, the settings file, chrony, the servers' start: the
servers' own tests, tests/test_deploy.py's chrony tests in namespaces, tests/test_rehearse.py's check of a
running hall), the TD's steps after a failover (tests/test_hall.py runs them through the library and CLI, not the
guide's text) and Patroni's set-up (test_rehearse.py runs ``hallctl`` on the Patroni lab).
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shlex
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from .netlab import Lab, lab
from .postgres import _owner_ids, cluster_folder, find_bin_dir, remove_folder

pytestmark = pytest.mark.sqlite_only("starts PostgreSQL clusters of its own: runs in the suite's first pass")

GUIDE = Path(__file__).resolve().parent.parent / "deploy" / "hall.md"
DOCUMENTED = {"a": "192.168.1.10", "b": "192.168.1.11"}
PASSWORDS = {"replicator": "the-replicators-password", "wordjudge": "the-servers-password"}

# Debian's pg_hba.conf for a new cluster, the postgres user's peer login mapped to let root in too (see above).
DEBIAN_HBA = """local   all             postgres                                peer map=test
local   all             all                                     peer
host    all             all             127.0.0.1/32            scram-sha-256
host    all             all             ::1/128                 scram-sha-256
local   replication     all                                     peer
host    replication     all             127.0.0.1/32            scram-sha-256
host    replication     all             ::1/128                 scram-sha-256
"""


def _setup_blocks() -> list[str]:
    """The code blocks of the TD-confirmed set-up's steps 1 and 2, in the guide's order."""
    text = GUIDE.read_text("utf-8")
    section = text.split("## Setting up (once, before the event)", 1)[1].split("\n3. Give both", 1)[0]
    return re.findall(r"```[a-z]*\n(.*?)```", section, flags=re.S)


class Machine:
    """One machine of the lab with a PostgreSQL laid out as Debian's, in ``folder`` (the postgres user's)."""

    def __init__(self, hall: Lab, name: str, folder: Path, bin_dir: Path) -> None:
        self.hall, self.name, self.bin_dir = hall, name, bin_dir
        self.etc, self.data, self.run_dir = folder / "etc", folder / "data", folder / "run"
        self.log = folder / "server.log"
        self.seconds = 0.0  # how long the last command typed took
        for made in (folder, self.etc, self.etc / "conf.d", self.run_dir):
            made.mkdir(exist_ok=True)
            os.chown(made, *_owner_ids())

    @property
    def address(self) -> str:
        return self.hall.addresses[self.name]

    def as_postgres(self, *command: str) -> list[str]:
        return self.hall.run(self.name, "runuser", "-u", "postgres", "--", *command)

    def environment(self) -> dict[str, str]:
        clean = {name: value for name, value in os.environ.items() if not name.startswith("PG")}
        return {**clean, "PGHOST": str(self.run_dir)}

    def must(self, command: list[str]) -> str:
        done = subprocess.run(command, env=self.environment(), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{shlex.join(command)}: {done.stdout}{done.stderr}{self.log_end()}"
        return done.stdout

    def log_end(self) -> str:
        try:
            return "\n-- server log:\n" + "\n".join(self.log.read_text(errors="replace").splitlines()[-15:])
        except OSError:
            return ""

    def install(self) -> None:
        """What ``apt-get install postgresql`` makes: a cluster, its configuration in etc/, started."""
        self.must(
            self.as_postgres(
                str(self.bin_dir / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--auth-local=peer",
                "--auth-host=scram-sha-256",
            )
        )
        for name in ("postgresql.conf", "pg_hba.conf", "pg_ident.conf"):
            (self.data / name).unlink()  # Debian keeps them in /etc/postgresql/15/main
        (self.etc / "postgresql.conf").write_text(
            f"data_directory = '{self.data}'\nhba_file = '{self.etc}/pg_hba.conf'\n"
            f"ident_file = '{self.etc}/pg_ident.conf'\nport = 5432\nlisten_addresses = 'localhost'\n"
            f"unix_socket_directories = '{self.run_dir}'\nmax_connections = 20\nshared_buffers = 16MB\n"
            "include_dir = 'conf.d'\n"
        )
        (self.etc / "pg_hba.conf").write_text(DEBIAN_HBA)
        (self.etc / "pg_ident.conf").write_text("test root postgres\ntest postgres postgres\n")
        for path in self.etc.iterdir():
            if path.is_file():
                os.chown(path, *_owner_ids())
        self.systemctl("start")

    def systemctl(self, verb: str) -> None:
        """``sudo systemctl VERB postgresql``: Debian's unit runs pg_ctlcluster, which is pg_ctl on /etc's folder."""
        self.must(
            self.as_postgres(
                str(self.bin_dir / "pg_ctl"),
                verb,
                "-D",
                str(self.etc),
                "-l",
                str(self.log),
                "-w",
                "-t",
                "60",
                *(["-m", "fast"] if verb != "start" else []),
            )
        )

    def mapped(self, line: str) -> list[str]:
        """A line of the guide as run on this machine (see the module's docstring for what is mapped)."""
        for name, documented in DOCUMENTED.items():
            line = line.replace(documented, self.hall.addresses[name])
        line = line.replace("/var/lib/postgresql/15/main", str(self.data)).replace(
            "/etc/postgresql/15/main", str(self.etc)
        )
        words = shlex.split(line)
        if words[:2] == ["sudo", "systemctl"]:
            assert words[3:] == ["postgresql"], line
            return ["systemctl", words[2]]
        assert words[:3] == ["sudo", "-u", "postgres"], f"not a postgres user's command: {line}"
        words = words[3:]
        if words[0] == "/opt/wordjudge/venv/bin/wordjudge":
            words[0] = str(Path(sys.executable).with_name("wordjudge"))
            words = [word.replace("host=/var/run/postgresql", f"host={self.run_dir}&user=postgres") for word in words]
            return self.hall.run(self.name, *words)
        return self.as_postgres(*words)

    def type_in(self, command: list[str], answers: list[str], timeout: float = 120) -> tuple[str, float]:
        """Run ``command`` on a terminal, typing each of ``answers`` at each password prompt; (what it showed, the
        seconds it took). The prompts read the terminal, not standard input, as they do for the TD."""
        started = time.monotonic()
        pid, terminal = pty.fork()
        if pid == 0:  # the child: the command on a terminal of 24 lines (psql pages only longer output)
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
            os.execvpe(command[0], command, self.environment())
        shown, unanswered, waiting = "", list(answers), ""
        while True:
            ready, _, _ = select.select([terminal], [], [], max(0.0, started + timeout - time.monotonic()))
            assert ready, f"{shlex.join(command)} did not end in {timeout} s: {shown}"
            try:
                chunk = os.read(terminal, 4096).decode(errors="replace")
            except OSError:  # the command ended: its terminal is closed
                break
            shown, waiting = shown + chunk, waiting + chunk
            if unanswered and re.search(r"(?i)(password[^\n]*|again): *$", waiting):
                os.write(terminal, (unanswered.pop(0) + "\n").encode())
                waiting = ""
        _, status = os.waitpid(pid, 0)
        os.close(terminal)
        assert os.waitstatus_to_exitcode(status) == 0, f"{shlex.join(command)}: {shown}{self.log_end()}"
        assert not unanswered, f"{shlex.join(command)} asked for fewer passwords than typed: {shown}"
        return shown, time.monotonic() - started

    def do(self, line: str) -> str:
        """One line of the guide, typed on this machine: what it showed."""
        command = self.mapped(line)
        if command[0] == "systemctl":
            self.systemctl(command[1])
            return ""
        answers: list[str] = []
        if "createuser" in line and "-P" in line.split():
            role = shlex.split(line)[-1]
            answers = [PASSWORDS[role], PASSWORDS[role]]  # the password, then again
        elif "pg_basebackup" in line:
            answers = [PASSWORDS["replicator"]]
        shown, self.seconds = self.type_in(command, answers)
        return shown


@pytest.mark.live
def test_the_guides_postgresql_steps_make_a_synchronous_standby_in_network_namespaces() -> None:
    """Steps 1 and 2 of deploy/hall.md's set-up, typed as written on two machines: hall-b streams synchronously
    from hall-a (``sync``), pg_basebackup shows its progress and starts at once (a fast checkpoint), and
    synchronous_standby_names is set only once hall-b streams (before, hall-a's writes waited, unwarned, from
    step 1 until hall-b was copied)."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    blocks = _setup_blocks()
    assert len(blocks) == 4, (
        "steps 1 and 2: the configuration, the roles and database, the copy, the synchronous standby"
    )
    conf, roles, copy, synchronous = ([line.strip() for line in block.splitlines() if line.strip()] for block in blocks)
    assert not any("synchronous_standby_names" in line for line in roles)  # not before hall-b streams
    assert any("--checkpoint=fast" in line and " -P" in line for line in copy)
    text = GUIDE.read_text("utf-8")
    hba = re.search(r"`(host replication replicator 192\.168\.1\.11/32 scram-sha-256)`", text)
    assert hba is not None

    folder = cluster_folder()
    try:
        with lab(["a", "b"]) as hall:
            a, b = (Machine(hall, name, folder / name, bin_dir) for name in ("a", "b"))
            a.install()
            b.install()
            # Step 1, on hall-a: its conf.d file (the block as it is), its pg_hba.conf line, then the commands.
            (a.etc / "conf.d" / "wordjudge-hall.conf").write_text("\n".join(conf) + "\n")
            (a.etc / "conf.d" / "wordjudge-hall.conf").chmod(0o644)  # as an editor leaves it: postgres reads it
            with (a.etc / "pg_hba.conf").open("a") as hba_file:
                hba_file.write(hba.group(1).replace("192.168.1.11", b.address) + "\n")
            for line in roles:
                a.do(line)
            # Step 2, on hall-b: its cluster replaced with a copy of hall-a's.
            shown, copied_in = "", 0.0
            for line in copy:
                said = b.do(line)
                if "pg_basebackup" in line:
                    shown, copied_in = said, b.seconds
            assert re.search(r"\d+/\d+ kB \(100%\)", shown), shown  # -P: its progress, to the end
            # --checkpoint=fast: at once (without it, up to checkpoint_timeout's spread, 43-84 s in the issue).
            assert copied_in < 20, f"pg_basebackup took {copied_in:.1f} s"
            print(f"pg_basebackup, typed as the guide writes it: {copied_in:.1f} s")
            # Then, on hall-a: every commit waits for the standby; it must say `sync`.
            answers = [a.do(line) for line in synchronous]
            # As a TD would look again: the walsender takes the reloaded setting at its next round (within a second).
            deadline = time.monotonic() + 30
            while not re.search(r"^\s*sync\s*$", answers[-1], flags=re.M):
                assert time.monotonic() < deadline, answers[-1]
                time.sleep(0.3)
                answers[-1] = a.do(synchronous[-1])
            # The step's last words: hall-b gets the same conf.d file and lets hall-a replicate, then restarts.
            (b.etc / "conf.d" / "wordjudge-hall.conf").write_text("\n".join(conf) + "\n")
            (b.etc / "conf.d" / "wordjudge-hall.conf").chmod(0o644)  # as an editor leaves it: postgres reads it
            with (b.etc / "pg_hba.conf").open("a") as hba_file:
                hba_file.write(hba.group(1).replace("192.168.1.11", a.address) + "\n")
            b.systemctl("restart")
            deadline = time.monotonic() + 30
            while "sync" not in a.do('sudo -u postgres psql -c "SELECT sync_state FROM pg_stat_replication"'):
                assert time.monotonic() < deadline, "hall-b does not stream synchronously again after its restart"
                time.sleep(0.5)
            # A write on hall-a commits (it waits for hall-b, which acknowledges it).
            a.do('sudo -u postgres psql -d hall -c "CREATE TABLE rehearsed (x int)"')
            assert "rehearsed" in b.do('sudo -u postgres psql -d hall -c "\\dt rehearsed"')
            for machine in (b, a):
                machine.systemctl("stop")
    finally:
        remove_folder(folder)
