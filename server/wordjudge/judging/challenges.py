"""The challenge pipeline: a challenge adjudicated within the device's rate limit and recorded in the audit log,
then counted in the metrics and logged in one line.

The rate limit is spent before the record is written and refunded if nothing new is recorded (a
retry, a failed write); a write that fails for want of the audit log also raises an alert for the TD.
A retry of a recorded request is answered with its original record. Nothing here imports the web framework.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from wordjudge.base.errors import AmbiguousTiles, AuditUnavailable, RateLimited
from wordjudge.judging.adjudication import Adjudicator
from wordjudge.model.records import Appended, Entry, Kind, conflicting_request, verdict_of

if TYPE_CHECKING:
    from wordjudge.access.access_store import AccessStore
    from wordjudge.base.metrics import Metrics
    from wordjudge.log.audit import AuditLog
    from wordjudge.model.auth import Principal
    from wordjudge.tournament.served import ServedEvent

log = logging.getLogger(__name__)
# One line per adjudication answered: ids, kind, place, verdict, actor, latency. Never the words or
# per-word results: logs may end up where players see them (the audit log has those).
adjudication_log = logging.getLogger("wordjudge.adjudications")


class ChallengeService:
    """Challenges and the records that follow them, from adjudication to the answer: limit, record, count, log.

    ``adjudicator`` is the served event's; it is replaced (a plain attribute swap) when the event changes,
    and a challenge under way finishes with the one it started with.
    """

    def __init__(self, served: ServedEvent, audit: AuditLog, access: AccessStore, metrics: Metrics) -> None:
        self.audit = audit
        self.access = access
        self.metrics = metrics
        self.adjudicator = Adjudicator(served.event, served.profiles, audit)

    def serve(self, served: ServedEvent) -> None:
        """Adjudicate for the event ``served`` now (its divisions, their lexicons, its rounds), within its rate
        limit. Raises :class:`~wordjudge.base.errors.ProfileError` if a division's lexicon is not open.
        """
        self.adjudicator = Adjudicator(served.event, served.profiles, self.audit)
        self.access.limits.challenges.per_minute = served.event.challenges_per_minute

    async def adjudicate(
        self,
        who: Principal,
        *,
        division: str,
        table: str | int,
        round_number: int | None,
        words: str | Sequence[str],
        request_id: str,
    ) -> Appended:
        """Adjudicate a challenge and record it, within the device's rate limit.

        A retry of a recorded challenge is answered even when the device is over its
        limit, and does not count against it: a kiosk that lost a response must get it.
        Raises what :meth:`Adjudicator.challenge` and :meth:`AuditLog.append` raise,
        :class:`RateLimited`, and :class:`Conflict` for a recorded request id sent with other words.
        """
        started = time.perf_counter()
        adjudicator = self.adjudicator  # the event the challenge started with, whatever happens meanwhile

        def build() -> Entry:
            return adjudicator.challenge(
                who, division=division, table=table, round_number=round_number, words=words, request_id=request_id
            )

        try:
            self.access.limits.spend_challenge(who)
        except RateLimited:
            original = self.audit.by_request(who.actor, request_id)
            if original is None:
                raise
            if not original.same_request(build()):  # the id of a recorded challenge, sent with other words
                raise conflicting_request(request_id, original.id) from None
            return self._answered(Appended(original, replayed=True), started)
        try:
            appended = await self.audit.append(build())
        except AuditUnavailable as exc:
            recorded = self._recorded_despite(exc, who.actor, request_id)
            if recorded is not None:
                return self._answered(recorded, started)
            self.access.limits.refund_challenge(who)
            self.access.alerts.raise_alert("audit_unavailable", who.actor, f"a challenge got no verdict: {exc.message}")
            raise
        except AmbiguousTiles:
            # Spent as a challenge, and told to the TD: a device that asks which tiles a word is, again and again,
            # is not stating the tiles its players see (the kiosk and handheld always do).
            self.access.alerts.raise_alert(
                "tile_question",
                who.actor,
                f"{who.actor} sent a word without its tiles where the board could hold it two ways (no verdict"
                " given); the kiosk and handheld state them: repeated questions may be someone trying words",
            )
            raise
        except BaseException:
            self.access.limits.refund_challenge(who)
            raise
        if appended.replayed:
            self.access.limits.refund_challenge(who)
        return self._answered(appended, started)

    async def record(self, entry: Entry) -> Appended:
        """Append a re-check, reissue or ruling the adjudicator made, counted and logged like a challenge.

        Raises what :meth:`AuditLog.append` raises.
        """
        started = time.perf_counter()
        try:
            appended = await self.audit.append(entry)
        except AuditUnavailable as exc:
            recorded = self._recorded_despite(exc, entry.actor, entry.request_id)
            if recorded is None:
                raise
            appended = recorded
        record = appended.record
        if record.kind is Kind.RECHECK and record.agrees is False and not appended.replayed:
            # WESPA 3.10.10: the results differ, so the TD rules; the TD must hear of it wherever they are.
            self.access.alerts.raise_alert(
                "needs_ruling",
                f"#{record.parent_id}",
                f"re-check #{record.id} of challenge #{record.parent_id} (table {record.table}) disagrees with"
                " it: the TD rules",
            )
        return self._answered(appended, started)

    def _recorded_despite(self, failure: AuditUnavailable, actor: str, request_id: str) -> Appended | None:
        """After a failed write: the record if it was committed all the same (the failure came after the
        commit), else None, with the failure's message saying whether the record exists.

        Raises ``failure`` with a message saying it is not known, if the log cannot even be read.
        """
        try:
            record = self.audit.by_request(actor, request_id)
        except AuditUnavailable:
            # The write's own reason (SQLite's words), without its "was not recorded": that is not known now.
            reason = failure.msg.params.get("reason", failure.msg)
            raise AuditUnavailable("error.audit.unknown_outcome", reason=reason) from None
        if record is None:
            return None
        log.warning("a write failed after record %d was committed: answering with it (%s)", record.id, failure)
        return Appended(record, replayed=False)

    def _answered(self, appended: Appended, started: float) -> Appended:
        """Count an adjudication answered in the metrics and log one line about it (never its words)."""
        seconds = time.perf_counter() - started
        record = appended.record
        verdict = verdict_of(record)  # an adjudication's record: it has one
        self.metrics.adjudicated(record.kind.value, record.division, verdict.value, seconds, replayed=appended.replayed)
        if not adjudication_log.isEnabledFor(logging.INFO):  # --log-level warning: not even the fields' cost
            return appended
        fields = {
            "id": record.id,
            "parent_id": record.parent_id,
            "kind": record.kind.value,
            "division": record.division,
            "table": record.table,
            "round": record.round,
            "verdict": verdict.value,
            "actor": record.actor,
            "replayed": appended.replayed,
            "latency_ms": round(seconds * 1000, 2),
        }
        adjudication_log.info(
            "%s #%d: %s (division %s, table %s, round %s, by %s%s, %.1f ms)",
            record.kind.value,
            record.id,
            verdict.value,
            record.division,
            record.table,
            record.round if record.round is not None else "-",
            record.actor,
            ", a retry: the original record" if appended.replayed else "",
            seconds * 1000,
            extra=fields,
        )
        return appended
