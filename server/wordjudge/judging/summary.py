"""After the event: challenges per division and round, the share found acceptable, the most challenged words.

Kept as the log is written: every challenge updates its event's, division's and round's tallies in
the same transaction (:mod:`wordjudge.storage.audit_schema`), so the summary of an event, a division or a
division's round reads a few rows whatever the size of the log (:func:`from_tallies`). Other
filters (a table, a device, a time range...) are summarised from the matching records
(:func:`summarise`).

Verdicts are counted final (after re-checks, reissues and rulings): the tallies count each challenge's first
verdict, and the few challenges whose final verdict is another (:func:`wordjudge.judging.final_verdict.corrections`)
are moved from one count to the other, or to ``awaiting_ruling``. Words count as challenged (the slip's).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wordjudge.model.records import Kind, Record, Verdict

if TYPE_CHECKING:
    from wordjudge.judging.final_verdict import Correction

TOP_WORDS = 10


@dataclass
class Tally:
    challenges: int = 0
    acceptable: int = 0  # final verdicts, once corrected
    words: Counter[str] = field(default_factory=Counter)
    awaiting_ruling: int = 0  # a re-check disagreed; no ruling yet
    overturned: int = 0  # a final verdict other than the first

    def add(self, record: Record, final: Verdict | None) -> None:
        self.challenges += 1
        self.acceptable += final is Verdict.ACCEPTABLE
        self.awaiting_ruling += final is None
        self.overturned += final is not None and final is not record.verdict
        self.words.update(sorted(set(record.words)))  # ties: the order first challenged, then alphabetical

    def as_dict(self) -> dict[str, Any]:
        decided = self.challenges - self.awaiting_ruling
        share = self.acceptable / decided if decided else None
        return {
            "challenges": self.challenges,
            "acceptable": self.acceptable,
            "unacceptable": decided - self.acceptable,
            "awaiting_ruling": self.awaiting_ruling,
            "overturned": self.overturned,
            "acceptable_share": None if share is None else round(share, 3),
            "most_challenged": [{"word": w, "challenges": n} for w, n in self.words.most_common(TOP_WORDS)],
        }


def summarise(records: Iterable[Record], corrections: Mapping[int, Correction]) -> dict[str, Any]:
    """Totals per division, and per round within each, over the challenges (not rechecks or rulings), each with
    its final verdict: its own, or its ``corrections`` entry's.

    Words count once per challenge they appear in; ties keep the order words were first challenged.
    """
    total = Tally()
    divisions: dict[str, Tally] = {}
    rounds: dict[tuple[str, int | None], Tally] = {}
    for record in records:
        if record.kind is not Kind.CHALLENGE:
            continue
        correction = corrections.get(record.id)
        final = correction.final if correction else record.verdict
        total.add(record, final)
        divisions.setdefault(record.division, Tally()).add(record, final)
        rounds.setdefault((record.division, record.round), Tally()).add(record, final)
    return {
        "total": total.as_dict(),
        "divisions": [
            {
                "division": name,
                **tally.as_dict(),
                "rounds": [
                    {"round": round_number, **rounds[(name, round_number)].as_dict()}
                    for round_number in sorted((r for d, r in rounds if d == name), key=lambda r: (r is None, r or 0))
                ],
            }
            for name, tally in divisions.items()
        ],
    }


def from_tallies(
    counts: Sequence[tuple[Any, ...]],
    words: Sequence[tuple[Any, ...]],
    corrected: Mapping[tuple[str, int], tuple[int, int, int]],
    division: str | None = None,
    round_number: int | None = None,
) -> dict[str, Any]:
    """The summary :func:`summarise` gives, from the tallies kept with the log (``AuditLog.tallies``) and the
    corrections of their first verdicts summed by division and round (``corrected``: how many more acceptable,
    awaiting a ruling and overturned; :func:`wordjudge.judging.final_verdict.correction_sums`), for the whole event
    or, with ``division`` (and ``round_number``), for that part of it."""
    tallies: dict[tuple[int, str, int], Tally] = {}
    for scope, name, round_key, challenges, acceptable in counts:
        tallies[(scope, name, round_key)] = Tally(challenges, acceptable)
    for scope, name, round_key, word, challenges in words:
        tallies[(scope, name, round_key)].words[word] = challenges
    for (division_name, round_key), (acceptable, awaiting, overturned) in corrected.items():
        for key in ((0, "", 0), (1, division_name, 0), (2, division_name, round_key)):
            tallies[key].acceptable += acceptable
            tallies[key].awaiting_ruling += awaiting
            tallies[key].overturned += overturned
    divisions = [key[1] for key in tallies if key[0] == 1 and division in (None, key[1])]
    total = tallies.get((0, "", 0), Tally())
    if division is not None:
        total = tallies.get((1, division, 0), Tally())
        if round_number is not None:
            total = tallies.get((2, division, round_number), Tally())
    return {
        "total": total.as_dict(),
        "divisions": [
            {
                "division": name,
                **(total if round_number is not None else tallies[(1, name, 0)]).as_dict(),
                "rounds": [
                    {"round": key[2] or None, **tally.as_dict()}
                    for key, tally in sorted(tallies.items(), key=lambda item: (item[0][2] == 0, item[0][2]))
                    if key[0] == 2 and key[1] == name and round_number in (None, key[2])
                ],
            }
            for name in divisions
            if round_number is None or (2, name, round_number) in tallies
        ],
    }
