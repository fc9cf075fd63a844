"""Backups of the audit log: a consistent copy of a live SQLite database, taken while the server writes."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from wordjudge.base.errors import AuditUnavailable, Conflict
from wordjudge.base.files import fsync_path


def backup_sqlite(source: Path, destination: Path) -> Path:
    """Copy the database ``source`` to ``destination`` (a file, or a folder to put a dated file in).

    Uses SQLite's online backup, so the copy is one consistent state even while a server
    appends; the copy is a single self-contained file (no WAL), written under a temporary
    name, fsynced, then renamed, so a crash never leaves a half backup under the final name.
    Raises :class:`Conflict` if the destination file exists, :class:`AuditUnavailable` if
    the source cannot be read or the destination written.
    """
    if destination.is_dir():
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        destination = destination / f"{source.stem}-{stamp}{source.suffix}"
    if destination.exists():
        raise Conflict("error.backup.exists", path=str(destination))
    partial = destination.with_name(destination.name + ".partial")
    try:
        if not source.is_file():
            raise FileNotFoundError(f"there is no database at {source}")
        reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        try:
            writer = sqlite3.connect(partial)
            try:
                reader.backup(writer)
                writer.execute("PRAGMA journal_mode = DELETE")  # one file, readable anywhere
            finally:
                writer.close()
        finally:
            reader.close()
        with partial.open("rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, destination)
        fsync_path(destination.parent)
    except (OSError, sqlite3.Error) as exc:
        partial.unlink(missing_ok=True)
        raise AuditUnavailable(
            "error.backup.failed", source=str(source), destination=str(destination), reason=str(exc)
        ) from exc
    return destination
