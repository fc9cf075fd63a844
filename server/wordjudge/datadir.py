"""The data folder: what wordjudge keeps there is for the TD's eyes only.

The folder holds the audit log (every challenged word and its per-word results), the access store
(hashes of device tokens and TD passwords) and the event file. Whatever the umask of the shell
that started wordjudge, the folder is made ``0700`` and wordjudge's databases ``0600``, so that
another account on the server machine cannot read them.
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
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
    os.close(os.open(path, os.O_RDONLY | os.O_CREAT, FILE_MODE))
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
