"""A witness: the audit log's head, written down every few seconds on another machine.

``wordjudge witness URL --out FILE`` runs on a second machine (a TD's laptop, any box on the
hall's network) with a monitor's token. It asks the server for the log's head every few seconds
and appends it to FILE (``TIME ID:HASH``, one a line), which it never rewrites, and fsyncs each
line. Afterwards ``wordjudge audit verify --heads FILE`` checks every head it wrote: to rewrite
the log's history undetectably, someone would need both machines.

It also checks as it goes: when the head moves, the server must still give the last head written
for that record; when it does not (the log was rewritten, or cut back), the witness says so at
once, on its output and in FILE, and keeps witnessing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from wordjudge.base.agent import WITNESS, user_agent
from wordjudge.base.errors import InvalidInput
from wordjudge.log.chain import HeadMark, read_heads


@dataclass(frozen=True)
class Observed:
    """What one look at the server found: the head written (or None: unchanged), or a problem."""

    head: HeadMark | None = None
    problem: str | None = None


class Witness:
    """Polls ``url``'s head with ``token`` and appends it to ``out`` (see the module's docstring)."""

    def __init__(self, url: str, token: str, out: Path, *, client: httpx.Client | None = None) -> None:
        self.url = url.rstrip("/")
        self.out = out
        self._client = client or httpx.Client(timeout=10)
        self._client.headers["User-Agent"] = user_agent(WITNESS)
        self._headers = {"Authorization": f"Bearer {token}"}
        self.last = _last_head(out)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Witness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def observe(self) -> Observed:
        """Ask for the head once; write it if it moved. Raises :class:`httpx.HTTPError` (no answer)
        and :class:`InvalidInput` (an answer that is not a head, or a refused token)."""
        head = self._head()
        if head is None or (self.last is not None and (head.id, head.hex) == (self.last.id, self.last.hex)):
            return Observed()
        last = self.last
        if last is not None:
            then = self._head(at=last.id)
            if then is None or then.hex != last.hex:
                now = "gone" if then is None else then.hex
                problem = (
                    f"record {last.id} was {last.hex} when witnessed and is now {now}: the log was "
                    f"{'cut back' if then is None else 'rewritten'} (head now {head})"
                )
                self._write(f"# PROBLEM {problem}")
                self._write(self._line(head))
                self.last = head
                return Observed(head, problem)
        self._write(self._line(head))
        self.last = head
        return Observed(head)

    def run(self, every: float, report: Callable[[str], None], stop: Callable[[], bool] = lambda: False) -> None:
        """Observe every ``every`` seconds until ``stop()``, telling ``report`` what happened."""
        failing = False
        while not stop():
            try:
                seen = self.observe()
            except (httpx.HTTPError, InvalidInput) as exc:
                if not failing:
                    report(f"cannot read the head from {self.url}: {exc} (trying again every {every:g} s)")
                failing = True
            else:
                if failing:
                    report(f"{self.url} answers again")
                failing = False
                if seen.problem:
                    report(f"PROBLEM: {seen.problem}")
                elif seen.head:
                    report(f"head {seen.head.id}:{seen.head.hex[:16]}")
            time.sleep(every)

    def _head(self, at: int | None = None) -> HeadMark | None:
        params = {"at": at} if at is not None else {}
        response = self._client.get(f"{self.url}/api/audit/head", params=params, headers=self._headers)
        if response.status_code == 404 and at is not None:
            return None
        if response.status_code != 200:
            raise InvalidInput("error.witness.answer", status=str(response.status_code), error=_message(response))
        data: dict[str, Any] = response.json()
        if data.get("id") is None:
            return None  # an empty log: nothing to witness yet
        return HeadMark.parse(f"{data['id']}:{data['hash']}", "the server's answer")

    @staticmethod
    def _line(head: HeadMark) -> str:
        return f"{datetime.now(UTC).isoformat(timespec='seconds')} {head.id}:{head.hex}"

    def _write(self, line: str) -> None:
        # Appended and fsynced, never rewritten: what was witnessed stays witnessed.
        with self.out.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def _last_head(path: Path) -> HeadMark | None:
    if not path.exists():
        return None
    heads = read_heads(path)
    return heads[-1] if heads else None


def _message(response: httpx.Response) -> str:
    try:
        return str(response.json().get("error", response.text))
    except ValueError:
        return response.text[:200]
