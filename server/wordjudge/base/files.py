"""Files written safely: private to their owner (``0700`` folders, ``0600`` files, whatever the umask of the
shell that started wordjudge), written whole or not at all (:func:`write_atomic`), and flushed to disk before
anyone is told they are there (:func:`fsync_path`)."""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from contextlib import suppress
from pathlib import Path

log = logging.getLogger(__name__)

FOLDER_MODE = 0o700
FILE_MODE = 0o600
# What files and folders wordjudge creates get at most: the owner's bits only.
UMASK = 0o077


def restrict_umask() -> None:
    """Make every file and folder this process creates from now on private to its user (umask 077)."""
    os.umask(UMASK)


def secure_folder(path: Path) -> Path:
    """Create ``path`` (and its parents) if needed and make it ``0700``; return it.

    Raises :class:`OSError` if it cannot be created. A folder that cannot be changed (another
    user's, or on a read-only disk) is left as it is, with a warning.
    """
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    _restrict(path, FOLDER_MODE)
    return path


def secure_file(path: Path) -> Path:
    """Create ``path`` empty if it does not exist, and make it ``0600`` (SQLite gives its -wal and -shm
    files the mode of the database file); return it. Raises :class:`OSError`."""
    # Never open and close a file that exists: closing any descriptor of a file drops every POSIX lock this
    # process holds on it, SQLite's included. A connection already open here then lost its locks and, once
    # another process had written, went on reading a stale copy (a device revoked from the command line was
    # still let in by the server: tests/test_access.py).
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    _restrict(path, FILE_MODE)
    for companion in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if companion.exists():
            _restrict(companion, FILE_MODE)
    return path


def _restrict(path: Path, mode: int) -> None:
    if stat.S_IMODE(path.stat().st_mode) & ~mode == 0:
        return
    try:
        path.chmod(stat.S_IMODE(path.stat().st_mode) & mode)
    except OSError as exc:  # another user's folder, or a read-only disk: whoever owns it decides
        log.warning("%s is open to other users and cannot be changed (%s): chmod %o it", path, exc, mode)


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` so that a crash or power cut leaves the old file or the new one, whole.

    The text goes to a temporary file beside it, which is fsynced, renamed over ``path``, and the
    folder fsynced (so that the rename itself survives a power cut). Raises :class:`OSError`.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".new")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    fsync_path(path.parent)
    return path


def fsync_path(path: Path) -> None:
    """Flush a file or folder to disk, so that a power cut cannot lose it once we have said it is there."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # folders cannot be opened on Windows, where renames are durable without it
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
