"""The data folder: private to the TD, written safely, and known by its identity.

The folder holds the audit log (every challenged word and its per-word results), the access store
(hashes of device tokens and TD passwords) and the event file. Whatever the umask of the shell
that started wordjudge, the folder is made ``0700`` and wordjudge's databases ``0600``, so that
another account on the server machine cannot read them. Every file is written whole or not at all
(:func:`write_atomic`).

Each folder has an **identity**, made once (``identity.json``): devices remember the identity of
the server they paired with, so that a device facing another server (started from the wrong
folder, a replacement box) says so and keeps its enrolment, instead of taking a 401 as its
revocation. The demo event lives apart from a real one: when a folder that served the demo gets an
event file, the demo's log, devices, TD accounts and identity are set aside in ``demo-<time>/``
(:func:`open_event_folder`).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wordjudge.base.errors import AccessUnavailable
from wordjudge.base.files import FILE_MODE, FOLDER_MODE, fsync_path, secure_folder, write_atomic

log = logging.getLogger(__name__)

# -- which server this is ------------------------------------------------------------------------------------

IDENTITY_FILE = "identity.json"
# What belongs to one event, apart from the lexicons (which any event may use): moved aside together when a
# real event takes over a folder that served the demo.
EVENT_FILES = ("audit.sqlite3", "access.sqlite3", IDENTITY_FILE)
DATABASE_NOTE = "audit-database.txt"  # where a folder notes the database its state is in (audit_store)
_SQLITE_COMPANIONS = ("", "-wal", "-shm")


@dataclass(frozen=True)
class Identity:
    """Which server a data folder's devices belong to: made once, kept for as long as its log and devices."""

    id: str
    demo: bool  # made for the demo event
    created_at: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def identity(data_dir: Path, *, demo: bool) -> Identity:
    """The folder's identity, made (once) if it has none. Raises :class:`OSError`."""
    path = data_dir / IDENTITY_FILE
    try:
        data = json.loads(path.read_text("utf-8"))
        return Identity(str(data["id"]), bool(data["demo"]), str(data["created_at"]))
    except FileNotFoundError:
        pass
    except (ValueError, KeyError, TypeError) as exc:
        raise OSError(
            f"{path} is damaged ({exc}): restore it from a backup, or delete it to give this "
            "folder a new identity (every device must then be paired again)"
        ) from exc
    made = Identity(uuid.uuid4().hex, demo, datetime.now(UTC).isoformat(timespec="seconds"))
    secure_folder(data_dir)
    write_atomic(path, json.dumps(made.as_dict()) + "\n")
    return made


def set_demo_aside(data_dir: Path) -> Path | None:
    """Before a real event uses a folder that served the demo: move the demo's log, devices, TD accounts and
    identity into ``demo-<time>/`` beside them, so that nothing of the demo is part of the real event; return
    that folder (None when there was no demo there). Raises :class:`OSError`, naming the server if one serves
    the demo from the folder."""
    path = data_dir / IDENTITY_FILE
    try:
        was_demo = bool(json.loads(path.read_text("utf-8")).get("demo"))
    except (FileNotFoundError, ValueError, AttributeError):
        return None
    if not was_demo:
        return None
    noted = data_dir / DATABASE_NOTE
    if noted.is_file():
        # The demo's records and devices are in a database, not in files that can be moved: the real event must
        # not inherit them (an append-only log keeps the demo's records for good).
        raise OSError(
            f"the demo kept its log and devices in the database {noted.read_text('utf-8').strip()}, which a real "
            "event cannot take over: start the real event in a new data folder, with a database (or schema) of "
            "its own"
        )
    # Never from under a demo server still running (its log and devices would vanish): it must stop first.
    with _no_other_server(data_dir, _DEMO_SERVED):
        aside = data_dir / f"demo-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
        aside.mkdir(mode=FOLDER_MODE)
        for name in EVENT_FILES:
            for companion in _SQLITE_COMPANIONS if name.endswith(".sqlite3") else ("",):
                source = data_dir / (name + companion)
                if source.exists():
                    os.replace(source, aside / source.name)
        fsync_path(aside)
        fsync_path(data_dir)
    log.info("the demo's log, devices and TD accounts were set aside in %s: this folder now serves its event", aside)
    return aside


def open_event_folder(data_dir: Path, *, demo: bool) -> Identity:
    """Ready ``data_dir`` for its event (the demo or a real one) and return its identity; see the module's
    docstring. Raises :class:`~wordjudge.base.errors.AccessUnavailable`, naming the folder."""
    try:
        if not demo:
            set_demo_aside(data_dir)
        return identity(data_dir, demo=demo)
    except OSError as exc:
        raise AccessUnavailable("error.data_folder.not_ready", path=str(data_dir), reason=str(exc)) from exc


# -- one server per data folder ------------------------------------------------------------------------------

LOCK_FILE = "server.lock"
# A command setting the demo aside holds the lock for a moment: a server starting then waits that long for it.
_LOCK_TRIES = 5
_LOCK_WAIT_SECONDS = 0.1
_DEMO_SERVED = (
    "a wordjudge server (pid {pid}) is serving the demo from this folder: stop it before starting the real event"
)


@dataclass(frozen=True)
class LockHolder:
    """The server holding a data folder's lock, as it wrote itself in the lock file (None: not written yet)."""

    pid: int | None
    host: str | None
    port: int | None


class FolderInUse(OSError):
    """Another wordjudge server holds the data folder's lock; the message names it."""

    def __init__(self, message: str, holder: LockHolder) -> None:
        super().__init__(message)
        self.holder = holder


class ServerLock:
    """A data folder's lock, held by the server using it until :meth:`release`, or until it dies (the OS
    releases it then, even after kill -9)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        """Let another server use the folder."""
        if self._fd is not None:
            os.close(self._fd)  # closing the file releases its lock
            self._fd = None


def lock_for_server(data_dir: Path, *, host: str, port: int) -> ServerLock:
    """Take ``data_dir``'s lock (``server.lock``, an exclusive ``flock``) for this server, and write its pid,
    host and port in the file, so that a second server on the folder is refused by name: two servers on one
    folder would both take challenges and fight over the log's record ids.

    Raises :class:`FolderInUse` naming the server that holds it, or :class:`OSError` if the folder or the
    lock file cannot be made.
    """
    secure_folder(data_dir)
    path = data_dir / LOCK_FILE
    writable = True
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    except OSError as exc:
        # A read-only disk: still locked if the file is there (flock needs no write access), and the start then
        # stops where it first must write, saying why; without the file, said here.
        try:
            fd, writable = os.open(path, os.O_RDONLY), False
        except OSError:
            raise OSError(f"{data_dir} cannot be written (a read-only disk, or no permission): {exc}") from exc
    try:
        for attempt in range(_LOCK_TRIES):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if attempt + 1 < _LOCK_TRIES:
                    time.sleep(_LOCK_WAIT_SECONDS)
                    continue
                raise _in_use(data_dir, _holder(fd)) from None
        if writable:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": host, "port": port}).encode() + b"\n", 0)
    except BaseException:
        os.close(fd)
        raise
    return ServerLock(path, fd)


def refuse_if_served(data_dir: Path) -> None:
    """Raise :class:`FolderInUse` if a server holds ``data_dir``'s lock. Writes nothing, so that a server
    refused this way leaves no trace (:func:`lock_for_server` then takes the lock for good)."""
    try:
        fd = os.open(data_dir / LOCK_FILE, os.O_RDONLY)
    except OSError:  # no lock file, no folder: no server; a folder that cannot be read: lock_for_server says so
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # shared: commands holding it for a moment do not count
    except BlockingIOError:
        raise _in_use(data_dir, _holder(fd)) from None
    finally:
        os.close(fd)


def serving_server(data_dir: Path) -> LockHolder | None:
    """The server that holds ``data_dir``'s lock now (its pid, host and port as it wrote them in ``server.lock``),
    or None if no server runs on the folder. Writes nothing."""
    try:
        fd = os.open(data_dir / LOCK_FILE, os.O_RDONLY)
    except OSError:  # no lock file, no folder: no server
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # shared: commands holding it for a moment do not count
    except BlockingIOError:
        return _holder(fd)
    finally:
        os.close(fd)
    return None


def _in_use(data_dir: Path, holder: LockHolder) -> FolderInUse:
    return FolderInUse(
        f"another wordjudge server (pid {_known(holder.pid)}, port {_known(holder.port)}) is using this data "
        f"folder {data_dir.resolve()}: stop it, or give this one another --data-dir",
        holder,
    )


@contextmanager
def _no_other_server(data_dir: Path, refusal: str) -> Iterator[None]:
    """Hold ``data_dir``'s lock shared while the body runs, so that no server starts on the folder meanwhile.
    Raises :class:`OSError` with ``refusal`` (its ``{pid}`` filled in) if another process serves the folder;
    this process's own server (setting the demo aside at its start) may go on."""
    fd = os.open(data_dir / LOCK_FILE, os.O_RDONLY | os.O_CREAT, FILE_MODE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            if holder.pid != os.getpid():
                raise OSError(refusal.format(pid=_known(holder.pid))) from None
        yield
    finally:
        os.close(fd)


def _holder(fd: int) -> LockHolder:
    try:
        data = json.loads(os.pread(fd, 4096, 0))
        return LockHolder(int(data["pid"]), str(data["host"]), int(data["port"]))
    except (OSError, ValueError, KeyError, TypeError):  # still being written, or not ours
        return LockHolder(None, None, None)


def _known(value: int | None) -> str:
    return "unknown" if value is None else str(value)
