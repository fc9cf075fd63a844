"""A throwaway PostgreSQL for the tests (a pytest plugin, loaded by conftest.py).

- ``--backend sqlite|postgresql`` (or ``WORDJUDGE_TEST_BACKEND``; default sqlite) chooses the database the tests
  marked ``postgresql`` run on: the ``database_url`` fixture is ``None`` for SQLite, the URL of a fresh, empty
  PostgreSQL database for PostgreSQL. A test that uses ``database_url`` is marked ``postgresql`` whatever its
  module says, as conftest.py marks the browser tests. ``.ci/check`` runs the marked tests on both backends.
- ``postgres_cluster`` (session): a PostgreSQL cluster of each test process (each pytest-xdist worker has its
  own), started on first use with the newest server binaries present (Debian's ``/usr/lib/postgresql/<major>/bin``,
  or the ``initdb`` on ``PATH``), listening on 127.0.0.1 on a free port with password (SCRAM) logins, fsync on,
  stopped at the session's end. ``postgres_url`` is a fresh, empty database of it for one test, dropped after.
- ``postgres_clusters`` starts more clusters for one test (a standby: :meth:`Cluster.standby`), stopped after it.

Without the binaries, a test that needs PostgreSQL is skipped, saying how to install them; in CI or as root
(where ``.ci/check`` installs them) it fails instead, as the docket tools' tests do.

Each cluster lives in a folder of its own in the system's temp folder, not in pytest's (``tmp_path_factory``):
pytest makes its temp folders ``0700`` and closes ``/tmp/pytest-of-<user>`` again at every run's start, so the
``postgres`` system user that runs the server when the tests run as root (initdb refuses root) could not reach
one there, or would lose it mid-run when another pytest starts. A folder left by a test process that died
(killed, or timed out) is swept, its server stopped, by the next cluster started.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import quote

import psycopg
import pytest
from psycopg import sql
from psycopg.rows import TupleRow

from wordjudge.storage.postgres import shown

from .helpers import free_port

BACKENDS = ("sqlite", "postgresql")
BACKEND_ENV = "WORDJUDGE_TEST_BACKEND"
BACKEND_KEY = pytest.StashKey[str]()
# The fixtures that start a cluster, or give a test the binaries to start its own (marked ``cluster``).
CLUSTER_FIXTURES = {"postgres_bin_dir", "postgres_cluster", "postgres_url", "postgres_clusters"}

DEBIAN_VERSIONS = Path("/usr/lib/postgresql")  # <major>/bin/{initdb,pg_ctl,postgres}: package postgresql-<major>
SERVER_TOOLS = ("initdb", "pg_ctl", "postgres")
OWNER = "postgres"  # runs the clusters when the tests run as root: initdb and postgres refuse to run as root
SUPERUSER = "wordjudge_admin"
HOST = "127.0.0.1"
FOLDER_PREFIX = "wordjudge-pg-"
PID_FILE = "pytest.pid"  # the test process that owns a cluster's folder: the sweep removes it once that one is gone
MISSING = "PostgreSQL is not installed: apt-get install postgresql (.ci/check installs it)"
START_TIMEOUT = 60  # seconds pg_ctl waits for a starting server to accept connections


# -- the option -----------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        choices=BACKENDS,
        default=None,
        help=f"the database the tests marked 'postgresql' run on (default: ${BACKEND_ENV}, else sqlite)",
    )


def chosen_backend(option: str | None, environ: Mapping[str, str]) -> str:
    """The backend of ``--backend`` if given, else of ``WORDJUDGE_TEST_BACKEND``, else sqlite."""
    backend = option or environ.get(BACKEND_ENV) or "sqlite"
    if backend not in BACKENDS:
        raise pytest.UsageError(f"{BACKEND_ENV}={backend!r}: use one of {', '.join(BACKENDS)}")
    return backend


def pytest_configure(config: pytest.Config) -> None:
    config.stash[BACKEND_KEY] = chosen_backend(config.getoption("--backend"), os.environ)


def pytest_report_header(config: pytest.Config) -> str:
    bin_dir = find_bin_dir()
    where = f"server binaries in {bin_dir}" if bin_dir else "no PostgreSQL server binaries"
    return f"database backend: {config.stash[BACKEND_KEY]} (PostgreSQL: {where})"


@pytest.hookimpl(tryfirst=True)  # before -m selects, as conftest.py's marking
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that takes ``database_url`` ``postgresql``: it runs on the backend in force; and every test
    that takes a cluster's fixtures ``cluster`` (the fast suite leaves those out: database_url, which starts one
    only on ``--backend postgresql``, does not count). On PostgreSQL, skip those marked ``sqlite_only`` (they read or damage the data folder's SQLite files)."""
    on_postgresql = config.stash.get(BACKEND_KEY, "sqlite") == "postgresql"
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if "database_url" in names:
            item.add_marker(pytest.mark.postgresql)
        if names & CLUSTER_FIXTURES:
            item.add_marker(pytest.mark.cluster)
        marker = item.get_closest_marker("sqlite_only")
        if on_postgresql and marker is not None:
            item.add_marker(pytest.mark.skip(reason=f"SQLite only: {marker.args[0] if marker.args else ''}"))


# -- finding the binaries -------------------------------------------------------------------------------


def major_version(bin_dir: Path) -> int:
    """The major version of the server binaries in ``bin_dir`` (0 if pg_ctl does not say it)."""
    done = subprocess.run([str(bin_dir / "pg_ctl"), "--version"], capture_output=True, text=True, check=False)
    found = re.search(r"\(PostgreSQL\) (\d+)", done.stdout)
    return int(found.group(1)) if found else 0


def find_bin_dir(debian: Path = DEBIAN_VERSIONS) -> Path | None:
    """The folder of the newest PostgreSQL server binaries present (initdb, pg_ctl, postgres side by side):
    Debian's ``<debian>/<major>/bin`` folders and that of the ``initdb`` on ``PATH``; None if there are none."""
    candidates = [path for path in debian.glob("*/bin") if path.parent.name.isdigit()]
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    complete = {path.resolve() for path in candidates if all(os.access(path / t, os.X_OK) for t in SERVER_TOOLS)}
    if not complete:
        return None
    return max(sorted(complete), key=major_version)


def missing(message: str = MISSING) -> NoReturn:
    """Skip the test for want of PostgreSQL; fail it in CI or as root, where .ci/check installs it."""
    if os.environ.get("CI") or os.getuid() == 0:
        pytest.fail(message)
    pytest.skip(message)


# -- clusters -------------------------------------------------------------------------------------------


def _as_owner(command: list[str]) -> list[str]:
    """``command`` run as the clusters' owner: the postgres system user under root, else the user as is."""
    return ["runuser", "-u", OWNER, "--", *command] if os.geteuid() == 0 else command


def _environment() -> dict[str, str]:
    """The tools' environment: this one without the PG* variables (PGHOST, PGPORT...) that would redirect them."""
    return {name: value for name, value in os.environ.items() if not name.startswith("PG")}


def _owner_ids() -> tuple[int, int]:
    if os.geteuid() != 0:
        return os.geteuid(), os.getegid()
    try:
        entry = pwd.getpwnam(OWNER)
    except KeyError:
        pytest.fail(
            f"the {OWNER} system user is missing (PostgreSQL refuses to run as root): apt-get install postgresql"
        )
    return entry.pw_uid, entry.pw_gid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _quit(postmaster: Path) -> None:
    """Stop the server of ``postmaster`` (its postmaster.pid) at once (SIGQUIT), if it still runs; wait 5 s at most."""
    try:
        pid = int(postmaster.read_text().split()[0])
        command_line = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError, IndexError):
        return  # no server runs there
    if str(postmaster.parent).encode() not in command_line:
        return  # the process is gone and its number taken by another
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGQUIT)
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def sweep_orphans(temp: Path | None = None) -> list[Path]:
    """Stop the servers of, and remove, the cluster folders whose test process is gone; return them."""
    swept = []
    for folder in Path(temp or tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*"):
        try:
            pid = int((folder / PID_FILE).read_text())
        except (OSError, ValueError):
            continue  # not one of ours, or being made
        if _alive(pid):
            continue
        for postmaster in folder.glob("*/data/postmaster.pid"):
            _quit(postmaster)
        shutil.rmtree(folder, ignore_errors=True)
        swept.append(folder)
    return swept


def cluster_folder() -> Path:
    """A new folder for clusters, the owner's, in the system's temp folder, removed by :func:`remove_folder`."""
    sweep_orphans()
    folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))  # 0700
    (folder / PID_FILE).write_text(str(os.getpid()))
    os.chown(folder, *_owner_ids())
    return folder


def remove_folder(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def stop_all(folder: Path, bin_dir: Path) -> None:
    """Stop at once (immediate mode: they are thrown away) every cluster still running in ``folder``."""
    for data in folder.glob("*/data"):
        with contextlib.suppress(ClusterError, subprocess.TimeoutExpired):
            Cluster(data.parent, 0, bin_dir).stop("immediate")


class ClusterError(RuntimeError):
    """A tool of PostgreSQL failed: the message holds its output and the server log's end."""


@dataclass
class Cluster:
    """A PostgreSQL cluster of the tests: ``folder`` holds ``data/``, ``server.log`` and the server's socket; it
    listens on 127.0.0.1:``port`` and its ``superuser`` logs in with ``password`` (SCRAM) over TCP."""

    folder: Path
    port: int
    bin_dir: Path
    superuser: str = SUPERUSER
    password: str = ""
    settings: Mapping[str, str] | None = None  # more server settings, given as -c NAME=VALUE at each start
    host: str = HOST

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    @property
    def log(self) -> Path:
        return self.folder / "server.log"

    def url(self, dbname: str = "postgres", user: str | None = None, password: str | None = None) -> str:
        """``postgresql://USER:PASSWORD@127.0.0.1:PORT/DBNAME``: the superuser's unless ``user`` is given."""
        if user is None:
            user, password = self.superuser, self.password
        secret = f":{quote(password, safe='')}" if password is not None else ""
        return f"postgresql://{quote(user, safe='')}{secret}@{self.host}:{self.port}/{quote(dbname, safe='')}"

    def connect(self, dbname: str = "postgres") -> psycopg.Connection[TupleRow]:
        """A connection of the superuser's to ``dbname``, in autocommit mode."""
        return psycopg.connect(self.url(dbname), autocommit=True, connect_timeout=10)

    def create_database(self, name: str | None = None, owner: str | None = None) -> str:
        """Create an empty database (``wj_<uuid>`` unless ``name`` is given) owned by ``owner`` (the superuser
        unless given); return its name."""
        name = name or f"wj_{uuid.uuid4().hex}"
        statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if owner is not None:
            statement += sql.SQL(" OWNER {}").format(sql.Identifier(owner))
        with self.connect() as connection:
            connection.execute(statement)
        return name

    def drop_database(self, name: str) -> None:
        """Drop the database ``name`` if it exists, ending its sessions."""
        with self.connect() as connection:
            connection.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def create_role(
        self, name: str, password: str, *, superuser: bool = False, replication: bool = False, createdb: bool = False
    ) -> str:
        """Create a role that logs in with ``password``; return its name."""
        options = [
            "LOGIN",
            "SUPERUSER" if superuser else "NOSUPERUSER",
            "REPLICATION" if replication else "NOREPLICATION",
            "CREATEDB" if createdb else "NOCREATEDB",
        ]
        statement = sql.SQL("CREATE ROLE {} WITH {} PASSWORD {}").format(
            sql.Identifier(name), sql.SQL(" ".join(options)), sql.Literal(password)
        )
        with self.connect() as connection:
            connection.execute(statement)
        return name

    def run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run the PostgreSQL tool ``tool`` (pg_ctl, pg_basebackup, psql...) with ``args`` as the cluster's owner,
        in its folder; raise :class:`ClusterError` with its output if it fails and ``check``."""
        command = _as_owner([str(self.bin_dir / tool), *args])
        done = subprocess.run(
            command, cwd=self.folder, env=_environment(), capture_output=True, text=True, timeout=START_TIMEOUT + 30
        )
        if check and done.returncode != 0:
            raise ClusterError(
                f"{shlex.join(command)} exited {done.returncode}:\n{done.stdout}{done.stderr}{self._log_end()}"
            )
        return done

    def _log_end(self) -> str:
        try:
            return "\n-- end of the server log:\n" + "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])
        except OSError:
            return ""

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = {
            "listen_addresses": self.host,
            "unix_socket_directories": str(self.folder),
            "fsync": "on",  # the default, said aloud: the durability tests count on it
            **(self.settings or {}),
        }
        flags = ["-p", str(self.port)]
        for name, value in options.items():
            flags += ["-c", f"{name}={value}"]
        self.run(
            "pg_ctl",
            "start",
            "-D",
            str(self.data_dir),
            "-l",
            str(self.log),
            "-w",
            "-t",
            str(START_TIMEOUT),
            "-o",
            shlex.join(flags),
        )

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``mode``: smart, fast or immediate, as pg_ctl's -m), if it runs."""
        if self.running():
            self.run("pg_ctl", "stop", "-D", str(self.data_dir), "-m", mode, "-w", "-t", str(START_TIMEOUT))

    def running(self) -> bool:
        return self.run("pg_ctl", "status", "-D", str(self.data_dir), check=False).returncode == 0

    def standby(self, folder: Path, port: int | None = None, **settings: str) -> Cluster:
        """A streaming standby of this cluster in ``folder`` (a base backup, with -R), started; its settings
        are this cluster's and ``settings``."""
        folder.mkdir(parents=True, exist_ok=True)
        os.chown(folder, *_owner_ids())
        self.run("pg_basebackup", "-D", str(folder / "data"), "-R", "-X", "stream", "-c", "fast", "-d", self.url())
        standby = Cluster(
            folder,
            port or free_port(),
            self.bin_dir,
            self.superuser,
            self.password,
            {**(self.settings or {}), **settings},
        )
        standby.start()
        return standby


@contextlib.contextmanager
def fresh_database(cluster: Cluster) -> Iterator[str]:
    """The superuser's URL of a new, empty database of ``cluster``, dropped on leaving; if the body stopped the
    cluster (a crash test, say), it is started again first, for the tests that follow."""
    name = cluster.create_database()
    try:
        yield cluster.url(name)
    finally:
        try:
            cluster.drop_database(name)
        except psycopg.OperationalError:
            if cluster.running():
                raise
            cluster.start()
            cluster.drop_database(name)


def start_cluster(
    folder: Path,
    port: int | None = None,
    *,
    bin_dir: Path | None = None,
    superuser: str = SUPERUSER,
    password: str | None = None,
    settings: Mapping[str, str] | None = None,
) -> Cluster:
    """A new cluster in ``folder`` (made if need be; as root, the postgres user must be able to reach it, as
    in a folder of :func:`cluster_folder`), started on ``port`` (a free one unless given).

    initdb makes it with the superuser ``superuser`` (password ``password``, a random one unless given), UTF-8
    and the C.UTF-8 locale; its pg_hba.conf asks a SCRAM password of every TCP login (replication too) and
    trusts the socket, which only the owner can reach. ``settings`` are more server settings. Raises
    :class:`ClusterError` if a tool fails.
    """
    bin_dir = bin_dir or find_bin_dir()
    if bin_dir is None:
        raise ClusterError(MISSING)
    folder.mkdir(parents=True, exist_ok=True)
    os.chown(folder, *_owner_ids())
    password = password or secrets.token_urlsafe(18)
    cluster = Cluster(folder, port or free_port(), bin_dir, superuser, password, settings)
    secret = folder / "password"
    secret.write_text(password + "\n")
    os.chown(secret, *_owner_ids())
    try:
        cluster.run(
            "initdb",
            "-D",
            str(cluster.data_dir),
            "-U",
            superuser,
            f"--pwfile={secret}",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
        )
    finally:
        secret.unlink()
    (cluster.data_dir / "pg_hba.conf").write_text(
        "# wordjudge's test cluster: a SCRAM password over TCP; the socket, in the owner's 0700 folder, trusted\n"
        "local all all trust\n"
        f"host all all {HOST}/32 scram-sha-256\n"
        "local replication all trust\n"
        f"host replication all {HOST}/32 scram-sha-256\n"
    )
    for attempt in range(3):
        try:
            cluster.start()
            return cluster
        except ClusterError:
            # A free port taken by another between free_port() and the server's bind: try another, if ours
            if port is not None or attempt == 2 or "could not bind" not in cluster._log_end():
                raise
            cluster.port = free_port()
    raise AssertionError("unreachable")


# -- fixtures -------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def backend(pytestconfig: pytest.Config) -> str:
    """The backend in force: ``sqlite`` or ``postgresql`` (``--backend``, ``WORDJUDGE_TEST_BACKEND``)."""
    return pytestconfig.stash[BACKEND_KEY]


@pytest.fixture(scope="session")
def postgres_bin_dir() -> Path:
    """The folder of the server binaries; skips (fails in CI or as root) without them."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        missing()
    return bin_dir


@pytest.fixture(scope="session")
def postgres_cluster(postgres_bin_dir: Path) -> Iterator[Cluster]:
    """This test process's cluster, started on first use and stopped at the session's end."""
    folder = cluster_folder()
    try:
        cluster = start_cluster(folder / "main", bin_dir=postgres_bin_dir)
        yield cluster
        cluster.stop()  # fast mode: a clean shutdown; a failure to stop shows as the session's error
    finally:
        stop_all(folder, postgres_bin_dir)  # the standbys tests made of it, or all if the start or stop failed
        remove_folder(folder)


# Each test database's URL by its URL as a data folder notes it (without the password): for the helpers that
# open a data folder's state as a command would, given its --database (tests/helpers.py, database_of).
PASSWORDED: dict[str, str] = {}


@pytest.fixture
def postgres_url(postgres_cluster: Cluster) -> Iterator[str]:
    """The superuser's URL of a fresh, empty database of ``postgres_cluster``, dropped after the test."""
    with fresh_database(postgres_cluster) as url:
        PASSWORDED[shown(url)] = url
        yield url
        PASSWORDED.pop(shown(url), None)


@pytest.fixture
def database_url(backend: str, request: pytest.FixtureRequest) -> str | None:
    """``None`` on the SQLite backend (the data folder's own files); a fresh database's URL on PostgreSQL."""
    if backend == "sqlite":
        return None
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def postgres_clusters(postgres_bin_dir: Path) -> Iterator[Callable[..., Cluster]]:
    """Start more clusters for this test: ``start(port=None, *, settings=None) -> Cluster``, each a new one in a
    folder of its own (:func:`start_cluster`); ``cluster.standby(cluster.folder.parent / NAME)`` makes a standby
    of one. All are stopped (immediately: they are thrown away) and removed after the test."""
    folder = cluster_folder()
    count = 0

    def start(port: int | None = None, *, settings: Mapping[str, str] | None = None) -> Cluster:
        nonlocal count
        count += 1
        return start_cluster(folder / f"cluster{count}", port, bin_dir=postgres_bin_dir, settings=settings)

    try:
        yield start
    finally:
        stop_all(folder, postgres_bin_dir)
        remove_folder(folder)
