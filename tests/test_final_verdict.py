"""A challenge's final verdict after its re-checks, reissues and rulings (wordjudge.judging.final_verdict), on chains
written by the real adjudication service into a real audit log."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from wordjudge.base.errors import NotFound
from wordjudge.judging.adjudication import Adjudicator
from wordjudge.judging.final_verdict import (
    FinalVerdict,
    awaiting_ruling,
    corrections,
    final_verdict,
    finals_of_linked,
    read_corrections,
    settle,
)
from wordjudge.log.audit import AuditLog
from wordjudge.model.auth import Principal, Role
from wordjudge.model.records import Kind, Record, RecordFilter, Verdict
from wordjudge.model.rules import ChallengeRule
from wordjudge.storage.dialect import StateLocation
from wordjudge.tournament.event import Division, Event
from wordjudge.words.profile import Catalog
from wordjudge.words.wordlist import parse_word_list

KIOSK = Principal("kiosk-1", Role.KIOSK, "kiosk")
ALICE = Principal("alice", Role.TD, "console")
BOB = Principal("bob", Role.TD, "console")
ACC, UNACC = Verdict.ACCEPTABLE, Verdict.UNACCEPTABLE


@dataclass
class Log:
    """The audit log, with division A served from SMALL (``before``) or, as after an errata fix, TINY
    (``after``): CATS is acceptable in SMALL and not in TINY, so a re-check under ``after`` disagrees."""

    audit: AuditLog
    before: Adjudicator
    after: Adjudicator
    requests: int = 0

    def _rid(self) -> str:
        self.requests += 1
        return f"request-{self.requests:04d}"

    def challenge(self, words: str) -> Record:
        entry = self.before.challenge(KIOSK, division="A", table=7, round_number=3, words=words, request_id=self._rid())
        return self.audit.append_sync(entry).record

    def recheck(self, parent: Record, *, after: bool = False, by: Principal = ALICE) -> Record:
        adjudicator = self.after if after else self.before
        return self.audit.append_sync(adjudicator.recheck(by, parent.id, request_id=self._rid())).record

    def reissue(self, parent: Record, words: str) -> Record:
        entry = self.before.reissue(ALICE, parent.id, words=words, reason="the board shows it", request_id=self._rid())
        return self.audit.append_sync(entry).record

    def ruling(self, parent: Record, verdict: Verdict) -> Record:
        entry = self.before.ruling(BOB, parent.id, verdict=verdict, note="checked", request_id=self._rid())
        return self.audit.append_sync(entry).record

    def final(self, record: Record) -> FinalVerdict:
        return final_verdict(self.audit, record.id)


@pytest.fixture
def log(tmp_path: Path, database_url: str | None) -> Iterator[Log]:
    """A log with two adjudicators, in the --backend's database (so .ci/check runs these tests on both)."""
    catalog = Catalog(tmp_path)
    catalog.lexicons.add(parse_word_list(b"CAT\nCATS\nDOG\nQI\nZA\n", source_name="small.txt"), "SMALL")
    catalog.lexicons.add(parse_word_list(b"CAT\nDOG\nQI\nZA\n", source_name="tiny.txt"), "TINY")
    profiles = {"SMALL": catalog.open("SMALL"), "TINY": catalog.open("TINY")}
    audit = AuditLog(StateLocation(tmp_path, database_url))
    audit.start()

    def serving(lexicon: str) -> Adjudicator:
        return Adjudicator(Event("Test Open", (Division("A", lexicon, ChallengeRule.FIVE_PER_WORD),)), profiles, audit)

    yield Log(audit, serving("SMALL"), serving("TINY"))
    audit.close()


def awaits(audit: AuditLog, challenge_id: int) -> bool:
    """Whether the console's "needs a ruling" queue lists the challenge."""
    record = audit.get(challenge_id)
    assert record is not None
    return challenge_id in awaiting_ruling(audit, record.event)


def test_a_challenge_alone_keeps_its_own_verdict(log: Log) -> None:
    challenge = log.challenge("cat dogz")
    final = log.final(challenge)
    assert (final.verdict, final.decided_by, final.awaiting_ruling) == (UNACC, final.challenge, None)
    assert (final.challenge.id, final.words, final.linked, final.changed) == (challenge.id, ("CAT", "DOGZ"), (), False)


def test_an_agreeing_recheck_confirms_the_verdict(log: Log) -> None:
    challenge = log.challenge("cats")
    recheck = log.recheck(challenge)
    final = log.final(challenge)
    assert final.verdict is ACC
    assert final.decided_by is not None
    assert (final.decided_by.kind, final.decided_by.id, final.decided_by.actor) == (Kind.RECHECK, recheck.id, "alice")
    assert not final.changed


def test_a_disagreeing_recheck_then_a_ruling(log: Log) -> None:
    challenge = log.challenge("cats dog")  # acceptable in SMALL
    recheck = log.recheck(challenge, after=True)  # TINY has no CATS: it disagrees
    waiting = log.final(challenge)
    assert (waiting.verdict, waiting.decided_by) == (None, None)
    assert waiting.awaiting_ruling is not None
    assert (waiting.awaiting_ruling.id, waiting.awaiting_ruling.verdict) == (recheck.id, UNACC)
    assert waiting.changed
    assert awaits(log.audit, challenge.id)  # the console's flag says the same

    ruling = log.ruling(challenge, UNACC)
    for record in (challenge, recheck, ruling):  # any record of the family gives the challenge's final verdict
        final = log.final(record)
        assert final.challenge.id == challenge.id
        assert (final.verdict, final.awaiting_ruling) == (UNACC, None)
        assert final.decided_by is not None
        assert (final.decided_by.kind, final.decided_by.id, final.decided_by.actor) == (Kind.RULING, ruling.id, "bob")
        assert [(step.kind, step.id) for step in final.linked] == [(Kind.RECHECK, recheck.id), (Kind.RULING, ruling.id)]
        assert final.changed
    assert not awaits(log.audit, challenge.id)


def test_a_ruling_is_not_overturned_by_a_later_recheck_that_agrees_with_the_original(log: Log) -> None:
    challenge = log.challenge("cats")
    log.recheck(challenge, after=True)
    ruling = log.ruling(challenge, UNACC)
    log.recheck(challenge)  # SMALL again: agrees with the challenge's ACCEPTABLE
    final = log.final(challenge)
    assert final.verdict is UNACC
    assert final.decided_by is not None
    assert final.decided_by.id == ruling.id


def test_a_recheck_after_a_ruling_that_disagrees_asks_for_a_new_ruling(log: Log) -> None:
    challenge = log.challenge("cats")
    log.ruling(challenge, ACC)
    late = log.recheck(challenge, after=True)
    final = log.final(challenge)
    assert final.verdict is None
    assert final.awaiting_ruling is not None
    assert final.awaiting_ruling.id == late.id
    assert awaits(log.audit, challenge.id)


def test_a_reissue_decides_on_its_corrected_words(log: Log) -> None:
    challenge = log.challenge("cat dogz")
    reissue = log.reissue(challenge, "cat dog")
    final = log.final(challenge)
    assert (final.verdict, final.words, final.changed) == (ACC, ("CAT", "DOG"), True)
    assert final.decided_by is not None
    assert (final.decided_by.kind, final.decided_by.id) == (Kind.REISSUE, reissue.id)
    assert log.final(reissue) == final


def test_a_recheck_of_words_a_reissue_replaced_changes_nothing(log: Log) -> None:
    challenge = log.challenge("cats")
    reissue = log.reissue(challenge, "cat")
    log.recheck(challenge, after=True)  # disagrees with the old words, which no longer count
    final = log.final(challenge)
    assert (final.verdict, final.awaiting_ruling) == (ACC, None)
    assert final.decided_by is not None
    assert final.decided_by.id == reissue.id
    assert not awaits(log.audit, challenge.id)  # nor does the queue list it


def test_a_reissue_that_a_recheck_disputes_awaits_a_ruling_and_a_reissue_ends_a_dispute(log: Log) -> None:
    challenge = log.challenge("cat")
    reissue = log.reissue(challenge, "cats")
    recheck = log.recheck(reissue, after=True, by=BOB)  # alice reissued it
    final = log.final(challenge)
    assert final.verdict is None
    assert final.awaiting_ruling is not None
    assert final.awaiting_ruling.id == recheck.id
    assert final.words == ("CATS",)
    assert queue(log) == [challenge.id]  # the challenge waits, not the reissue
    again = log.reissue(challenge, "cat dog")
    final = log.final(recheck)
    assert (final.verdict, final.awaiting_ruling, final.words) == (ACC, None, ("CAT", "DOG"))
    assert final.decided_by is not None
    assert final.decided_by.id == again.id
    assert queue(log) == []


def queue(log: Log) -> list[int]:
    """What the console's "needs a ruling" queue lists (GET /api/challenges?needs_ruling=true), newest first."""
    awaiting = awaiting_ruling(log.audit, "Test Open")
    return [record.id for record in log.audit.find(RecordFilter(needs_ruling=True, awaiting=awaiting))]


def test_a_reissue_after_a_disagreeing_recheck_settles_it_and_leaves_the_queue(log: Log) -> None:
    challenge = log.challenge("cats")
    log.recheck(challenge, after=True)  # disagrees: the TD must rule
    assert queue(log) == [challenge.id]
    log.reissue(challenge, "cat")  # the slip did not match the board: the corrected words decide
    assert log.final(challenge).awaiting_ruling is None
    assert queue(log) == []
    others = [record.id for record in log.audit.find(RecordFilter(needs_ruling=False, awaiting=frozenset()))]
    assert challenge.id in others


@pytest.mark.parametrize("seed", range(12))
def test_the_queue_lists_exactly_the_challenges_whose_final_verdict_awaits_a_ruling(log: Log, seed: int) -> None:
    """Whatever the TDs do, in any order: the queue and each final verdict say the same thing."""
    rng = random.Random(seed)
    challenges = [log.challenge(rng.choice(["cats", "cat", "cats dog", "dogz"])) for _ in range(4)]
    family: dict[int, list[Record]] = {c.id: [c] for c in challenges}
    for _ in range(10):
        challenge = rng.choice(challenges)
        target = rng.choice(family[challenge.id])
        if target.kind not in (Kind.CHALLENGE, Kind.REISSUE):  # what a re-check or reissue may follow
            continue
        action = rng.choice(["recheck", "recheck", "reissue", "ruling"])
        if action == "recheck":
            # alice cannot re-check what she adjudicated herself (a reissue of hers): bob does
            done = log.recheck(target, after=rng.random() < 0.7, by=BOB if target.actor == "alice" else ALICE)
        elif action == "reissue" and target.actor != "alice":
            done = log.reissue(target, rng.choice(["cat", "cats", "dog"]))
        elif action == "ruling" and target.kind is Kind.CHALLENGE:
            done = log.ruling(target, rng.choice([ACC, UNACC]))
        else:
            continue
        family[challenge.id].append(done)
    expected = sorted((c.id for c in challenges if log.final(c).verdict is None), reverse=True)
    assert queue(log) == expected


def test_what_it_says_never_holds_per_word_results_or_notes(log: Log) -> None:
    challenge = log.challenge("cats dogz")
    log.recheck(challenge, after=True)
    ruling = log.ruling(challenge, ACC)
    said = log.final(ruling).as_dict()
    assert said["verdict"] == "acceptable"
    assert said["decided_by"]["id"] == ruling.id
    assert said["decided_by"]["actor"] == "bob"
    text = repr(said)
    for secret in ("results", "source", "note", "checked", "salt"):
        assert secret not in text
    assert [step["kind"] for step in said["linked"]] == ["recheck", "ruling"]


def test_settle_refuses_what_is_not_one_challenges_family(log: Log) -> None:
    first = log.challenge("cat")
    second = log.challenge("dog")
    recheck = log.recheck(second)
    with pytest.raises(ValueError, match="starts with its challenge"):
        settle([])
    with pytest.raises(ValueError, match="starts with its challenge"):
        settle([recheck])
    with pytest.raises(ValueError, match=f"record {recheck.id} does not follow"):
        settle([first, recheck])
    assert settle([recheck, second]).decided_by == settle([second, recheck]).decided_by  # any order


def test_an_unknown_record_is_not_found(log: Log) -> None:
    with pytest.raises(NotFound, match="no record 42"):
        final_verdict(log.audit, 42)


# -- the summary's corrections: the challenges whose final verdict is not their first -----------------------------


def test_corrections_are_the_challenges_whose_final_verdict_is_not_the_first_as_settle_says(log: Log) -> None:
    assert corrections(log.audit, "Test Open") == {}  # read once here: what follows is kept up to date
    alone = log.challenge("cat dogz")
    confirmed = log.challenge("cats")
    log.recheck(confirmed)  # agrees: no correction
    ruled = log.challenge("cats dog")
    log.recheck(ruled, after=True)
    log.ruling(ruled, UNACC)  # overturned by the TD
    upheld = log.challenge("cats")
    log.recheck(upheld, after=True)
    log.ruling(upheld, ACC)  # the ruling keeps the first verdict: nothing to correct
    waiting = log.challenge("cats")
    log.recheck(waiting, after=True)  # awaiting a ruling
    reissued = log.challenge("cat dogz")
    reissue = log.reissue(reissued, "cat dog")
    disputed = log.recheck(reissue, after=True, by=BOB)  # agrees (CAT DOG in TINY too): stays reissued
    deep = log.challenge("cat")
    deep_reissue = log.reissue(deep, "cats")
    log.recheck(deep_reissue, after=True, by=BOB)  # the reissue's own re-check disagrees: awaiting
    assert disputed.agrees is True

    found = corrections(log.audit, "Test Open")
    # Kept up to date from the records written since the first call, read whole (only the deciding records, or
    # whole families): the same answer.
    read = read_corrections(log.audit, "Test Open")
    assert (
        found
        == {cid: c for cid, c in read.items() if c}
        == {cid: c for cid, c in read_corrections(log.audit, "Test Open", after_id=0).items() if c}
    )
    assert read[upheld.id] is None  # decided, and the same as first given
    assert {cid: (c.first, c.final) for cid, c in found.items()} == {
        ruled.id: (ACC, UNACC),
        waiting.id: (ACC, None),
        reissued.id: (UNACC, ACC),
        deep.id: (ACC, None),
    }
    for challenge in (alone, confirmed, ruled, upheld, waiting, reissued, deep):
        final = log.final(challenge)  # settle() on the family, record by record: the same answer
        assert (challenge.id in found) == (final.verdict is not challenge.verdict)
    assert (found[ruled.id].division, found[ruled.id].round) == ("A", 3)
    assert corrections(log.audit, "Another Event") == {}
    log.ruling(waiting, ACC)  # the TD upholds the first verdict: no longer a correction
    log.ruling(alone, ACC)
    assert set(corrections(log.audit, "Test Open")) == {ruled.id, reissued.id, deep.id, alone.id}


def test_finals_of_linked_gives_each_challenge_once_as_it_is_now(log: Log) -> None:
    first = log.challenge("cats")
    second = log.challenge("cat")
    recheck = log.recheck(first, after=True)
    ruling = log.ruling(first, UNACC)
    reissue = log.reissue(second, "dog")
    finals = finals_of_linked(log.audit, [reissue, ruling, recheck, log.challenge("dog")])
    assert [(f.challenge.id, f.verdict, f.decided_by.id if f.decided_by else None) for f in finals] == [
        (first.id, UNACC, ruling.id),
        (second.id, ACC, reissue.id),
    ]
