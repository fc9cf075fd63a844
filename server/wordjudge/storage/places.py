"""The two places an event's state can live, each its own behaviour: the data folder's files, or a database.

Each :class:`~wordjudge.storage.dialect.Dialect` holds its place (SQLite a :class:`FolderPlace`, PostgreSQL a
:class:`DatabasePlace`), so that what differs beyond SQL is asked of the place, never chosen by the caller: how a
store is named in messages, the note beside the event that says its state is in a database, a backup, who else may
be serving it, how its writers take turns, how requests look keys up in it, and the look before a server starts.
The dialect module hands each place what it needs of the rest of ``storage`` and of the data folder, so that this
module imports no module that imports another (it adds no step to a chain of imports).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from wordjudge.base.errors import InvalidInput
from wordjudge.base.lookups import Coalesced, InProcess, Lookups

K = TypeVar("K")
V = TypeVar("V")


class StateLocation(Protocol):
    """Where an event's state lives (:class:`wordjudge.storage.dialect.StateLocation`: described here, not
    imported, so that the places sit below the dialects that hold them)."""

    @property
    def folder(self) -> Path: ...
    @property
    def url(self) -> str | None: ...
    def file(self, name: str) -> Path: ...


class Turn:
    """What a writer holds while it writes a batch: nothing by default (a store's only writer, or a database's own
    lock orders the writers)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None

    def close(self) -> None:
        return None


class FileTurn(Turn):
    """The SQLite writers of one server's processes, one batch at a time, by an ``flock`` on a file beside the log:
    a writer waiting for it sleeps in the kernel and is woken the moment it is free. Without it they meet at
    ``BEGIN IMMEDIATE``, where SQLite's busy handler sleeps 1, 2, 5, 10... ms between tries: at hundreds of
    batches a second, most of the time."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)

    def __enter__(self) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self._fd)


class Place:
    """Where a store lives, and what that changes beyond SQL (see the module's docstring)."""

    def shown(self, where: StateLocation, file: str) -> str:
        """The store ``file`` at ``where`` as messages name it."""
        raise NotImplementedError

    def check_note(self, where: StateLocation, noted: str | None, kept: Sequence[Path]) -> None:
        """Check the event's state is here, by ``noted`` (what the note beside the event says, if there is one) and
        ``kept`` (the data folder's store files). Raises :class:`InvalidInput`, naming where the state is."""
        raise NotImplementedError

    def write_note(self, where: StateLocation, noted_file: Path) -> None:
        """Note beside the event (``noted_file``) that its state is here, once a store was opened here, where that
        must be said. Raises :class:`OSError`."""
        raise NotImplementedError

    def turn(self, where: StateLocation, file: str) -> Turn:
        """What each of a server's several writers of the store ``file`` at ``where`` holds while it writes."""
        raise NotImplementedError

    def probe(self, look: Callable[[], None]) -> None:
        """Before a server prepares its data folder: ``look`` at the store where there is something to see there
        (a database: reached, taking writes, not another server's); raises what ``look`` raises."""
        raise NotImplementedError

    def refuse_if_served(self, where: StateLocation) -> None:
        """Raise :class:`~wordjudge.base.datadir.FolderInUse` if a server serves the state at ``where`` by the
        data folder's lock; else (a database: its writer's lock refuses a second writer) nothing."""
        raise NotImplementedError

    def backup(self, where: StateLocation, file: str, destination: Path) -> Path:
        """A consistent copy of the store ``file`` at ``where``, at ``destination`` (a file, or a folder for a dated
        file); returns the copy's path. Raises :class:`InvalidInput` where wordjudge does not copy it (a
        database's own tools do), and what :func:`~wordjudge.storage.backup.backup_sqlite` raises."""
        raise NotImplementedError

    def lookups(self, fetch: Callable[[Collection[K]], Mapping[K, V]]) -> Lookups[K, V]:
        """How requests look keys up through ``fetch`` (thread-safe)."""
        raise NotImplementedError


class FolderPlace(Place):
    """The data folder's SQLite files: kept one server's by the folder's lock (``refuse_if_served``: raises if a
    server holds a folder's), read in the process, copied as files (``backup``: a consistent copy of a file, to a
    file or a folder), and written by a server's processes in turns by a lock of the OS."""

    def __init__(self, refuse_if_served: Callable[[Path], None], backup: Callable[[Path, Path], Path]) -> None:
        self._refuse_if_served = refuse_if_served
        self._backup = backup

    def shown(self, where: StateLocation, file: str) -> str:
        return str(where.file(file))

    def check_note(self, where: StateLocation, noted: str | None, kept: Sequence[Path]) -> None:
        if noted:
            raise InvalidInput("error.database.elsewhere", url=noted)

    def write_note(self, where: StateLocation, noted_file: Path) -> None:
        return None  # no note: the files are the state

    def turn(self, where: StateLocation, file: str) -> Turn:
        path = where.file(file)
        return FileTurn(path.with_name(path.name + ".turn"))

    def probe(self, look: Callable[[], None]) -> None:
        return None  # the server's own lock on its data folder (datadir) says the rest

    def refuse_if_served(self, where: StateLocation) -> None:
        self._refuse_if_served(where.folder)

    def backup(self, where: StateLocation, file: str, destination: Path) -> Path:
        return self._backup(where.file(file), destination)

    def lookups(self, fetch: Callable[[Collection[K]], Mapping[K, V]]) -> Lookups[K, V]:
        return InProcess(fetch)  # a lookup in the process: quicker than any hand-off to a worker thread


class DatabasePlace(Place):
    """A PostgreSQL database: named by its URL without the password (``shown``: that URL, given the URL), noted
    beside the event, copied by its own tools, its writers ordered by its own locks."""

    def __init__(self, shown: Callable[[str], str]) -> None:
        self._shown = shown

    def shown(self, where: StateLocation, file: str) -> str:
        return self._shown(_url(where))

    def check_note(self, where: StateLocation, noted: str | None, kept: Sequence[Path]) -> None:
        shown = self._shown(_url(where))
        if noted is not None and noted != shown:
            raise InvalidInput("error.database.other", url=shown, noted=noted)
        for path in kept:
            if noted is None and path.is_file():
                raise InvalidInput("error.database.file_here", url=shown, path=str(path))

    def write_note(self, where: StateLocation, noted_file: Path) -> None:
        if not noted_file.is_file():
            noted_file.write_text(self._shown(_url(where)) + "\n", "utf-8")

    def turn(self, where: StateLocation, file: str) -> Turn:
        return Turn()  # the database's own lock orders the writers (wordjudge.log.connections.chain_head)

    def probe(self, look: Callable[[], None]) -> None:
        look()

    def refuse_if_served(self, where: StateLocation) -> None:
        return None  # the writer's lock refuses a second writer when the log starts

    def backup(self, where: StateLocation, file: str, destination: Path) -> Path:
        raise InvalidInput("error.audit.backup_in_database")

    def lookups(self, fetch: Callable[[Collection[K]], Mapping[K, V]]) -> Lookups[K, V]:
        return Coalesced(fetch)  # each read a round trip: together, in a worker thread


def _url(where: StateLocation) -> str:
    assert where.url is not None  # a database's place is a location with a URL (dialect_for)
    return where.url
