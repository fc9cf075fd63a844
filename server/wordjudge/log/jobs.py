"""What the audit log's single writer is handed and hands back: its jobs (a record to append, or something to run
on its connection once everything queued before is committed), their outcomes, and what it has done.

The writer (:class:`wordjudge.log.audit.AuditLog`) takes jobs from one queue and commits them in batches; a batch's
outcomes are handed back here with one wake-up per event loop, not one per record.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from wordjudge.base.errors import Message

if TYPE_CHECKING:
    from wordjudge.log.chain import Verification
    from wordjudge.model.records import Appended, Entry


@dataclass
class WriterStats:
    """What the writer has done since start: commits (one fsync each), the largest batch, failures."""

    commits: int = 0
    largest_batch: int = 0
    failures: int = 0
    last_commit_at: str | None = None  # UTC, ISO 8601
    last_failure_at: str | None = None
    last_failure: str | None = None  # the database's message, e.g. "database is locked"
    failing: bool = False  # the last write failed, and nothing has been committed since

    def failed(self, reason: str) -> None:
        """Count a write that failed for ``reason``."""
        self.failures += 1
        self.last_failure_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        self.last_failure = reason
        self.failing = True


@dataclass
class Integrity:
    """What the checks of the log found: at start (since the last checkpoint), and of the whole log."""

    at_start: Verification | None = None
    whole: Verification | None = None
    whole_running: bool = False

    @property
    def broken(self) -> Verification | None:
        """The failed check, if any: then no record may be added."""
        for check in (self.at_start, self.whole):
            if check is not None and not check.ok:
                return check
        return None

    def as_dict(self) -> dict[str, Any]:
        """The checks in English (``at_start``, ``whole``: "running" while it runs), and as messages to say them
        in the event's language (``at_start_message``, ``whole_message``: ``chain.*`` keys)."""
        whole = Message("chain.running") if self.whole_running else (self.whole.message() if self.whole else None)
        return {
            "at_start": self.at_start.describe() if self.at_start else None,
            "whole": "running" if self.whole_running else (self.whole.describe() if self.whole else None),
            "ok": self.broken is None,
            "at_start_message": self.at_start.message().as_dict() if self.at_start else None,
            "whole_message": whole.as_dict() if whole else None,
        }


@dataclass
class Job:
    """A record to append, and where its outcome goes."""

    entry: Entry
    future: Future[Appended] | asyncio.Future[Appended]
    loop: asyncio.AbstractEventLoop | None = None  # the event loop of an async caller


@dataclass
class Task:
    """Something to do on the writer's connection once everything queued before it is committed."""

    run: Callable[[sqlite3.Connection], Any]
    future: Future[Any]


def resolve(future: Future[Any] | asyncio.Future[Any], outcome: Any) -> None:
    if future.done():  # an async caller that gave up (its client went away); the record stands
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


def _resolve_all(outcomes: list[tuple[asyncio.Future[Appended], Appended | BaseException]]) -> None:
    for future, outcome in outcomes:
        resolve(future, outcome)


def settle(outcomes: list[tuple[Job, Appended | BaseException]]) -> None:
    """Hand each job its outcome: one wake-up per event loop for a whole batch, not one per record."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Appended], Appended | BaseException]]] = {}
    for job, outcome in outcomes:
        if job.loop is None:
            resolve(job.future, outcome)
        else:
            by_loop.setdefault(job.loop, []).append((job.future, outcome))  # type: ignore[arg-type]
    for loop, items in by_loop.items():
        with suppress(RuntimeError):  # that loop has closed: nobody is waiting any more
            loop.call_soon_threadsafe(_resolve_all, items)


def take_queued(jobs: queue.Queue[Any], limit: int) -> list[Job]:
    """Up to ``limit`` records queued at the front of ``jobs``, taken off it: they join a batch about to be written.
    Stops at anything else (a task, the stop), which stays first in the queue."""
    taken: list[Job] = []
    with jobs.mutex:  # the queue's own lock: what put() takes
        waiting = jobs.queue
        while waiting and len(taken) < limit and isinstance(waiting[0], Job):
            taken.append(waiting.popleft())
    return taken


def refuse_queued(jobs: queue.Queue[Any], refusal: BaseException) -> None:
    """Answer everything left in ``jobs`` with ``refusal``: nobody may be left waiting for a writer that is gone."""
    while True:
        try:
            job = jobs.get_nowait()
        except queue.Empty:
            return
        if isinstance(job, Job):
            settle([(job, refusal)])
        elif isinstance(job, Task):
            resolve(job.future, refusal)
