from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from wordjudge.base.errors import Forbidden, InvalidInput, NotFound, ProfileError
from wordjudge.judging.adjudication import Adjudicator
from wordjudge.judging.final_verdict import awaiting_ruling
from wordjudge.judging.record_views import record_view
from wordjudge.log.audit import AuditLog
from wordjudge.model.auth import Principal, Role
from wordjudge.model.input_rules import split_words
from wordjudge.model.records import Entry, Kind, Verdict
from wordjudge.model.rules import ChallengeRule
from wordjudge.storage.dialect import StateLocation
from wordjudge.tournament.event import Division, Event
from wordjudge.words.profile import Catalog
from wordjudge.words.wordlist import parse_word_list

KIOSK = Principal("kiosk-1", Role.KIOSK, "kiosk")
OTHER_KIOSK = Principal("kiosk-2", Role.KIOSK, "kiosk")
ALICE = Principal("alice", Role.TD, "console")
BOB = Principal("bob", Role.TD, "console")


@pytest.fixture
def adjudicator(tmp_path: Path, database_url: str | None) -> Iterator[Adjudicator]:
    """Two divisions' adjudicator, its log in the --backend's database (so .ci/check runs these on both)."""
    catalog = Catalog(tmp_path)
    words = "QI\nZA\nCAT\nCATS\nDOG\nÑU\nAÑO\nANTEFIX\n"
    catalog.lexicons.add(parse_word_list(words.encode(), source_name="small.txt"), "SMALL")
    catalog.lexicons.add(parse_word_list(b"QI\nCAT\nDOG\nSAD\n", source_name="tiny.txt"), "TINY")
    event = Event(
        "Test Open",
        (Division("A", "SMALL", ChallengeRule.FIVE_PER_WORD), Division("B", "TINY", ChallengeRule.DOUBLE)),
    )
    audit = AuditLog(StateLocation(tmp_path, database_url))
    audit.start()
    yield Adjudicator(event, {"SMALL": catalog.open("SMALL"), "TINY": catalog.open("TINY")}, audit)
    audit.close()


def submit(
    adjudicator: Adjudicator,
    words: str | list[str],
    *,
    who: Principal = KIOSK,
    division: str = "A",
    rid: str = "req-00001",
    table: str | int = 7,
):
    entry = adjudicator.challenge(who, division=division, table=table, round_number=3, words=words, request_id=rid)
    return adjudicator.audit.append_sync(entry).record


@pytest.mark.parametrize(
    ("typed", "entries"),
    [
        ("qi za", ["qi", "za"]),
        ("QI,ZA", ["QI", "ZA"]),
        ("qi\nza\r\ncat", ["qi", "za", "cat"]),
        (" qi ,  za, ", ["qi", "za"]),
        (["qi", "za cat"], ["qi", "za", "cat"]),
    ],
)
def test_separators(typed: str | list[str], entries: list[str]) -> None:
    assert split_words(typed) == entries


def awaits(audit: AuditLog, challenge_id: int) -> bool:
    """Whether the console's "needs a ruling" queue lists the challenge."""
    record = audit.get(challenge_id)
    assert record is not None
    return challenge_id in awaiting_ruling(audit, record.event)


def test_one_verdict_acceptable_only_if_every_word_is(adjudicator: Adjudicator) -> None:
    good = submit(adjudicator, "qi za cat", rid="req-00001")
    assert (good.verdict, good.words, good.words_typed) == (
        Verdict.ACCEPTABLE,
        ("QI", "ZA", "CAT"),
        ("qi", "za", "cat"),
    )
    assert good.consequence["text"] == "Play stands: challenger loses 15 points (3 words x 5)"
    bad = submit(adjudicator, "qi zo cat", rid="req-00002")
    assert bad.verdict is Verdict.UNACCEPTABLE
    assert bad.consequence["text"] == "Play comes off: tiles back to the rack, no score for the turn"
    assert [r["acceptable"] for r in bad.results] == [True, False, True]  # stored for the TD
    assert (bad.lexicon, bad.division, bad.table, bad.round, bad.actor, bad.channel) == (
        "SMALL",
        "A",
        "7",
        3,
        "kiosk-1",
        "kiosk",
    )
    assert bad.fingerprint == adjudicator.profiles["SMALL"].fingerprint


def test_divisions_use_their_own_lexicon_and_rule(adjudicator: Adjudicator) -> None:
    record = submit(adjudicator, "cat", division="b")
    assert (record.division, record.lexicon, record.rule) == ("B", "TINY", "double")
    assert record.consequence["text"] == "Play stands: challenger loses their turn"
    assert submit(adjudicator, "ad", division="B", rid="req-00002").verdict is Verdict.UNACCEPTABLE


@pytest.mark.parametrize(
    ("words", "message"),
    [
        ("", "no words"),
        ("qi za cat qi za cat qi za cat", "9 words: a challenge has 1 to 8 words"),
        ("qi q", "word 2 'q' has 1 letter: a challenged word has 2 to 15 letters"),
        ("qi catcatcatcatcatca", "word 2 'catcatcatcatcatca' has 17 letters"),
        ("qi c4t", r"word 2 'c4t' has '4' \(DIGIT FOUR\), which is not a letter of SMALL"),
        ("qi ca-t", r"word 2 'ca-t' has '-' \(HYPHEN-MINUS\)"),
        ("qi caté", r"word 2 'caté' has 'É'"),
    ],
)
def test_input_rules_name_the_entry_and_never_a_verdict(adjudicator: Adjudicator, words: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as caught:
        submit(adjudicator, words)
    for hint in ("acceptable", "not in", "valid word"):
        assert hint not in caught.value.message
    assert adjudicator.audit.head.records == 0


def test_the_lexicons_own_letters_are_accepted(adjudicator: Adjudicator) -> None:
    assert submit(adjudicator, "ñu año").verdict is Verdict.ACCEPTABLE


def test_bad_table_round_division_and_request_id(adjudicator: Adjudicator) -> None:
    with pytest.raises(InvalidInput, match="table 'twelve please' is not a table number"):
        submit(adjudicator, "qi", table="twelve please")
    with pytest.raises(InvalidInput, match="unknown division 'Z'"):
        submit(adjudicator, "qi", division="Z")
    with pytest.raises(InvalidInput, match="request_id must be 8 to 64 characters"):
        submit(adjudicator, "qi", rid="short")
    with pytest.raises(InvalidInput, match="round 0 is not a round number"):
        adjudicator.challenge(KIOSK, division="A", table=1, round_number=0, words="qi", request_id="req-00001")


def test_tables_are_numbers_unless_the_event_names_them(adjudicator: Adjudicator) -> None:
    # A word typed where the table goes ("Table QUIXOTRY") is not a table of an event that numbers them.
    refused: tuple[str | int, ...] = ("QUIXOTRY", "A7", "0", "012", "10000", "-1", "1 2", True)
    for table in refused:
        with pytest.raises(InvalidInput) as raised:
            submit(adjudicator, "qi", table=table)
        assert raised.value.message == (
            f"table {str(table)!r} is not a table number: the tables of Test Open are a number from 1 to 9999"
        )
        assert raised.value.details == [{"field": "table", "message": "must be a number from 1 to 9999"}]
    tables: tuple[str | int, ...] = ("12", 12, " 7 ", "9999")
    assert [submit(adjudicator, "qi", table=t, rid=f"req-number-{n}").table for n, t in enumerate(tables)] == [
        "12",
        "12",
        "7",
        "9999",
    ]
    adjudicator.event = replace(adjudicator.event, tables="names")
    assert submit(adjudicator, "qi", table="top-1", rid="req-named-1").table == "top-1"
    assert submit(adjudicator, "qi", table="A7", rid="req-named-2").table == "A7"
    with pytest.raises(InvalidInput, match="the tables of Test Open are 1 to 10 letters, digits or '-'"):
        submit(adjudicator, "qi", table="QUIXOTRY-TABLE", rid="req-named-3")


def test_a_challenge_without_a_round_is_refused_when_the_event_has_rounds(adjudicator: Adjudicator) -> None:
    def without_round() -> Entry:
        return adjudicator.challenge(
            KIOSK, division="A", table=1, round_number=None, words="qi", request_id="req-00009"
        )

    with pytest.raises(InvalidInput) as raised:
        without_round()
    assert raised.value.message == (
        "round is missing: the challenges of Test Open carry a round number: type the round"
    )
    assert raised.value.details == [
        {"field": "round", "message": "required: this event's challenges carry a round number"}
    ]
    adjudicator.event = replace(adjudicator.event, current_round=5)
    with pytest.raises(InvalidInput, match=r"type the round \(the current round is 5\)$"):
        without_round()
    adjudicator.event = replace(adjudicator.event, rounds=False)  # an event without rounds: none needed
    assert without_round().round is None


def test_repeated_words_are_kept_and_pointed_out(adjudicator: Adjudicator) -> None:
    record = submit(adjudicator, "qi qi cat")
    assert record.words == ("QI", "QI", "CAT")
    assert record_view(record, KIOSK)["repeated"] == ["QI"]
    assert record.consequence["challenger_penalty"] == 15


def test_players_never_see_per_word_results(adjudicator: Adjudicator) -> None:
    record = submit(adjudicator, "qi zo")
    kiosk_view = record_view(record, KIOSK)
    assert "results" not in kiosk_view
    assert "ZO" in kiosk_view["words"]
    said = ("verdict", "verdict_message", "consequence")  # the verdict itself, in its words
    assert "acceptable" not in str({k: v for k, v in kiosk_view.items() if k not in said})
    td_view = record_view(record, ALICE, adjudicator.audit)
    assert [r["acceptable"] for r in td_view["results"]] == [True, False]
    with pytest.raises(NotFound):
        record_view(record, OTHER_KIOSK)


def test_recheck_by_someone_else_agrees_and_is_linked(adjudicator: Adjudicator) -> None:
    original = submit(adjudicator, "qi zo")
    entry = adjudicator.recheck(ALICE, original.id, request_id="recheck-1")
    recheck = adjudicator.audit.append_sync(entry).record
    assert (recheck.kind, recheck.parent_id, recheck.words, recheck.agrees) == (
        Kind.RECHECK,
        original.id,
        original.words,
        True,
    )
    assert record_view(original, ALICE, adjudicator.audit)["children"] == [recheck.id]


def test_the_original_adjudicator_may_not_recheck(adjudicator: Adjudicator) -> None:
    original = submit(adjudicator, "qi", who=ALICE)
    with pytest.raises(Forbidden, match=r"alice adjudicated record 1 .*someone else must re-adjudicate it"):
        adjudicator.recheck(ALICE, original.id, request_id="recheck-1")
    with pytest.raises(Forbidden, match="only the TD may re-adjudicate"):
        adjudicator.recheck(OTHER_KIOSK, original.id, request_id="recheck-1")


def test_reissue_needs_a_reason_and_is_checked_against_its_lineage(adjudicator: Adjudicator) -> None:
    original = submit(adjudicator, "cat dog")
    with pytest.raises(InvalidInput, match="the reason for the reissue is required"):
        adjudicator.reissue(ALICE, original.id, words="cats dog", reason=" ", request_id="reissue-1")
    entry = adjudicator.reissue(
        ALICE, original.id, words="cats dogz", reason="slip said CATS DOGZ", request_id="reissue-1"
    )
    reissue = adjudicator.audit.append_sync(entry).record
    assert (reissue.kind, reissue.words, reissue.verdict, reissue.agrees, reissue.note) == (
        Kind.REISSUE,
        ("CATS", "DOGZ"),
        Verdict.UNACCEPTABLE,
        False,
        "slip said CATS DOGZ",
    )
    with pytest.raises(Forbidden, match="someone else must re-adjudicate"):
        adjudicator.recheck(ALICE, reissue.id, request_id="recheck-2")


def test_a_reissue_is_not_a_disagreement(adjudicator: Adjudicator) -> None:
    original = submit(adjudicator, "cat dog")
    reissue = adjudicator.reissue(ALICE, original.id, words="cats dogz", reason="slip", request_id="reissue-1")
    assert adjudicator.audit.append_sync(reissue).record.agrees is False
    assert not awaits(adjudicator.audit, original.id)


def test_disagreeing_recheck_is_flagged_until_the_td_rules(adjudicator: Adjudicator) -> None:
    audit = adjudicator.audit
    original = submit(adjudicator, "cats")  # acceptable in SMALL
    # The TD then points division A at another list (as after an errata fix): a recheck now disagrees.
    event = Event("Test Open", (Division("A", "TINY", ChallengeRule.FIVE_PER_WORD),))
    changed = Adjudicator(event, {"TINY": adjudicator.profiles["TINY"]}, audit)
    recheck = audit.append_sync(changed.recheck(ALICE, original.id, request_id="recheck-1")).record
    assert (recheck.verdict, recheck.agrees, recheck.lexicon) == (Verdict.UNACCEPTABLE, False, "TINY")
    assert awaits(audit, original.id)
    with pytest.raises(Forbidden, match="only the TD may record a ruling"):
        adjudicator.ruling(KIOSK, original.id, verdict=Verdict.ACCEPTABLE, note="n", request_id="ruling-01")
    with pytest.raises(InvalidInput, match="the ruling's note is required"):
        adjudicator.ruling(BOB, original.id, verdict=Verdict.ACCEPTABLE, note="", request_id="ruling-01")
    ruling_entry = adjudicator.ruling(
        BOB, original.id, verdict=Verdict.ACCEPTABLE, note="CATS is in CSW", request_id="ruling-01"
    )
    ruling = audit.append_sync(ruling_entry).record
    assert (ruling.kind, ruling.verdict, ruling.parent_id, ruling.actor) == (
        Kind.RULING,
        Verdict.ACCEPTABLE,
        original.id,
        "bob",
    )
    assert ruling.consequence["text"] == "Play stands: challenger loses 5 points (1 word x 5)"
    assert not awaits(audit, original.id)
    with pytest.raises(InvalidInput, match="is a ruling"):
        adjudicator.recheck(ALICE, ruling.id, request_id="recheck-9")


def test_unknown_record(adjudicator: Adjudicator) -> None:
    with pytest.raises(NotFound, match="no record 42"):
        adjudicator.recheck(ALICE, 42, request_id="recheck-1")


def test_event_lexicons_must_be_loaded(adjudicator: Adjudicator) -> None:
    with pytest.raises(ProfileError, match="not loaded: TINY"):
        Adjudicator(adjudicator.event, {"SMALL": adjudicator.profiles["SMALL"]}, adjudicator.audit)
