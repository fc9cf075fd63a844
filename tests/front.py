"""The HAProxy front of ``wordjudge serve --processes N``, as deployed: Debian's ``haproxy`` runs the very file
deploy/haproxy/wordjudge.cfg in the foreground, on ports of the test's choosing (its addresses come from the
environment variables the file documents). Not a fixture: :func:`front` is a context manager, and tests skip
with :data:`MISSING` where :data:`HAPROXY` is not installed.

The file names four processes. With fewer, the unused lines point at the processes that exist (process ``k`` at
port ``processes_port + k % count``), so the file is unchanged and no line points at a port something else on
the machine may be using; a process named twice only gets a larger share of the kiosks.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "deploy" / "haproxy" / "wordjudge.cfg"
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
MISSING = "haproxy is missing: sudo apt-get install haproxy (Debian package)"
SERVERS = 4  # the process lines in CONFIG: WORDJUDGE_FRONT_PROCESS_0 .. _3
HOST = "127.0.0.1"
# How long HAProxy may take to listen, then to see every process UP (two checks 250 ms apart): well under a
# second on an idle machine, sized for a loaded 2-core one (as tests/browser.py's PAGE_WAIT_MS).
START_SECONDS = 30.0


def installed() -> bool:
    return Path(HAPROXY).is_file() and os.access(HAPROXY, os.X_OK)


def environment(processes_port: int, count: int, front_port: int, admin_socket: Path) -> dict[str, str]:
    """The variables of deploy/haproxy/wordjudge.cfg for processes on ``HOST:processes_port ..`` and a front on
    ``HOST:front_port``; HAProxy runs as the current user unless that is root (then as the package's user)."""
    if not 1 <= count <= SERVERS:
        raise ValueError(f"the front has {SERVERS} process lines: count must be 1..{SERVERS}, not {count}")
    variables = {
        "WORDJUDGE_FRONT_HOST": HOST,
        "WORDJUDGE_FRONT_PORT": str(front_port),
        "WORDJUDGE_FRONT_SOCKET": str(admin_socket),
    }
    for k in range(SERVERS):
        variables[f"WORDJUDGE_FRONT_PROCESS_{k}"] = f"{HOST}:{processes_port + k % count}"
    if os.geteuid() != 0 or not _has_user("haproxy"):
        variables["WORDJUDGE_FRONT_USER"] = pwd.getpwuid(os.geteuid()).pw_name
        variables["WORDJUDGE_FRONT_GROUP"] = grp.getgrgid(os.getegid()).gr_name
    return variables


@contextlib.contextmanager
def front(
    processes_port: int, count: int, front_port: int, folder: Path, *, prefix: Sequence[str] = ()
) -> Iterator[str]:
    """HAProxy with deploy/haproxy/wordjudge.cfg in front of ``count`` processes listening on
    ``127.0.0.1:processes_port`` and up, once ``127.0.0.1:front_port`` accepts connections and the admin socket
    reports every process line of every backend UP after a passed check: the front's base URL. Raises
    RuntimeError if HAProxy stops, or does not get there in :data:`START_SECONDS`.
    Its output (errors, servers going down or up) is left in ``folder/haproxy.log``. ``prefix`` goes before the
    command (e.g. ``taskset -c 0-1``: it must exec HAProxy). Stopped on leaving: SIGTERM, then SIGKILL after 5 s."""
    if not installed():
        raise RuntimeError(MISSING)
    folder.mkdir(parents=True, exist_ok=True)
    output = folder / "haproxy.log"
    # A unix socket's path has at most 107 bytes: a deep test folder gets a short one of its own.
    spare = None if len(str(folder / "haproxy.sock")) < 100 else Path(tempfile.mkdtemp(prefix="wjfront-"))
    admin_socket = (spare or folder) / "haproxy.sock"
    env = {**os.environ, **environment(processes_port, count, front_port, admin_socket)}
    if _accepts(front_port):  # HAProxy would fail to bind, and the wait below would meet the other listener
        raise RuntimeError(f"{HOST}:{front_port} is in use already")
    with output.open("w") as log:
        haproxy = subprocess.Popen(
            [*prefix, HAPROXY, "-db", "-f", str(CONFIG)], env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
        )
    try:
        _wait_for_port(front_port, haproxy, output)
        _wait_for_servers_up(admin_socket, haproxy, output)
        yield f"http://{HOST}:{front_port}"
    finally:
        haproxy.terminate()
        try:
            haproxy.wait(timeout=5)
        except subprocess.TimeoutExpired:
            haproxy.kill()
            haproxy.wait()
        if spare is not None:
            shutil.rmtree(spare, ignore_errors=True)


def _wait_for_port(port: int, haproxy: subprocess.Popen[bytes], output: Path, seconds: float = START_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while True:
        if _accepts(port):
            return
        if haproxy.poll() is not None:
            raise RuntimeError(f"haproxy stopped ({haproxy.returncode}): {output.read_text(errors='replace')}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"haproxy did not listen on {HOST}:{port} in {seconds} s: {output.read_text()}")
        time.sleep(0.05)


def _wait_for_servers_up(
    admin_socket: Path, haproxy: subprocess.Popen[bytes], output: Path, seconds: float = START_SECONDS
) -> None:
    """Wait until HAProxy's admin socket reports every server line of every backend plainly ``UP`` after a
    passed check (``L4OK``). A server starts as "UP 1/2" with no check yet (INI); a test's first requests then
    could meet a process the front is about to mark down (a slow first check, or ``observe layer4 ... on-error
    mark-down`` on a slow connection), and the kiosks would all be given the others. Raises RuntimeError if
    HAProxy stops, or with the last states seen after ``seconds``."""
    deadline = time.monotonic() + seconds
    states: dict[str, tuple[str, str]] = {}
    while True:
        with contextlib.suppress(OSError):
            states = server_states(admin_socket)
            if states and all(state == ("UP", "L4OK") for state in states.values()):
                return
        if haproxy.poll() is not None:
            raise RuntimeError(f"haproxy stopped ({haproxy.returncode}): {output.read_text(errors='replace')}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"haproxy did not see every process UP in {seconds} s: {states}; {output.read_text()}")
        time.sleep(0.05)


def server_states(admin_socket: Path) -> dict[str, tuple[str, str]]:
    """Each server line's (status, last check) from HAProxy's ``show stat`` on its admin socket, by
    ``backend/server`` (e.g. ``{"verdicts/process1": ("UP", "L4OK")}``); raises OSError if the socket does not
    answer."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(5)
        sock.connect(str(admin_socket))
        sock.sendall(b"show stat\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    lines = answer.decode(errors="replace").splitlines()
    if not lines or not lines[0].startswith("# "):
        raise OSError(f"not a stat table: {answer[:200]!r}")
    names = lines[0].removeprefix("# ").split(",")
    states = {}
    for line in lines[1:]:
        row = dict(zip(names, line.split(","), strict=False))
        if row.get("svname") not in (None, "FRONTEND", "BACKEND"):
            states[f"{row['pxname']}/{row['svname']}"] = (row["status"], row["check_status"].lstrip("* "))
    return states


def _accepts(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.5):
        return True
    return False


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
