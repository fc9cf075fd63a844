"""The audit log's group commit when it fails (issue 48): a batch whose commit fails gives none of its verdicts as
done, loses nothing committed before it, and what is answered as recorded is in the log, in the chain."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from wordjudge.base.errors import AuditUnavailable
from wordjudge.log.audit import AuditLog
from wordjudge.log.jobs import Task
from wordjudge.storage.dialect import StateLocation

from .helpers import fill_disk
from .test_audit import entry, fill

_BATCH = 200  # records queued behind the held writer: one batch of them is far more WAL than the disk has left


def test_a_group_commit_that_fails_answers_each_verdict_with_the_error_and_loses_nothing(small_disk: Path) -> None:
    log = AuditLog(StateLocation(small_disk))
    log.start()
    try:
        written = fill(log, 30)
        gate = threading.Event()
        held: Future[Any] = Future()
        log._enqueue(Task(lambda connection: gate.wait(10), held))  # the writer waits: the batch queues up
        futures = [log.submit(entry(n)) for n in range(100, 100 + _BATCH)]
        filler = fill_disk(small_disk)
        commits = log.stats.commits
        gate.set()
        assert held.result(10) is True
        answered: list[Any] = []
        refused: list[str] = []
        for future in futures:
            try:
                answered.append(future.result(30).record)
            except AuditUnavailable as exc:
                refused.append(exc.message)
        assert len(answered) + len(refused) == _BATCH  # every verdict waiting on the batch is answered, one way
        assert refused, "the disk took the whole batch: nothing was tested"
        assert all("disk is full" in message and "no verdict is given" in message for message in refused)
        assert log.stats.failures >= 1
        # What was answered as recorded was committed alone after the batch failed, each record in its place.
        assert log.stats.commits - commits == len(answered)
        assert [record.id for record in answered] == list(range(31, 31 + len(answered)))
        filler.unlink()
        after = log.append_sync(entry(999)).record
        result = log.verify()
        assert result.ok, result.describe()
        assert result.records == 30 + len(answered) + 1 == after.id
        assert [log.get(record.id) for record in (*written, *answered)] == [*written, *answered]
        refused_ids = {e.request_id for e in (entry(n) for n in range(100, 100 + _BATCH))} - {
            record.request_id for record in answered
        }
        assert len(refused_ids) == len(refused)
        assert all(log.by_request("kiosk-1", request_id) is None for request_id in refused_ids)
    finally:
        log.close()
