"""What wordjudge's SQLite files share: how they are opened for writing, and named migrations.

The migrations are run by :meth:`wordjudge.storage.dialect.Dialect.migrate` (with SQLite's table of them), which
builds on this module.

Each database has one writer per process (a thread or a lock owns its connection),
WAL so that readers never wait for it, ``synchronous = FULL`` so that a committed
transaction survives a power cut, and ``BEGIN IMMEDIATE`` for every write so that
two processes (the server and a CLI command) queue for the lock instead of failing
half-way through.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from wordjudge.base.files import secure_file, secure_folder

BUSY_TIMEOUT_MS = 2000

# (name, step) pairs, applied in order, each once. Never edit one that has shipped: add another. A step is
# SQL, or a function given the connection inside the migration's transaction (for what SQL cannot compute).
Migration = str | Callable[[sqlite3.Connection], None]
Migrations = list[tuple[str, Migration]]


def connect_writer(path: Path) -> sqlite3.Connection:
    """Open ``path`` (creating it) for writing: autocommit mode, WAL, ``synchronous = FULL``.

    The connection may be handed to another thread, but must be used by one at a time.
    Raises :class:`sqlite3.Error` or :class:`OSError`.
    """
    secure_folder(path.parent)
    if not os.access(path.parent, os.W_OK):
        # SQLite would say only "unable to open database file": say why.
        raise PermissionError(
            f"{path.parent} cannot be written (a read-only disk, or no permission): SQLite keeps {path.name} "
            "and its -wal and -shm files there"
        )
    secure_file(path)  # before SQLite makes its -wal and -shm files, which take the database file's mode
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    return connection
