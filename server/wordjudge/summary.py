"""After the event: challenges per division and round, the share found acceptable, the most challenged words."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .records import Kind, Record, Verdict

TOP_WORDS = 10


@dataclass
class Tally:
    challenges: int = 0
    acceptable: int = 0
    words: Counter[str] = field(default_factory=Counter)

    def add(self, record: Record) -> None:
        self.challenges += 1
        self.acceptable += record.verdict is Verdict.ACCEPTABLE
        self.words.update(set(record.words))

    def as_dict(self) -> dict[str, Any]:
        share = self.acceptable / self.challenges if self.challenges else None
        return {
            "challenges": self.challenges,
            "acceptable": self.acceptable,
            "unacceptable": self.challenges - self.acceptable,
            "acceptable_share": None if share is None else round(share, 3),
            "most_challenged": [{"word": w, "challenges": n} for w, n in self.words.most_common(TOP_WORDS)],
        }


def summarise(records: Iterable[Record]) -> dict[str, Any]:
    """Totals per division, and per round within each, over the challenges (not rechecks or rulings).

    Words count once per challenge they appear in; ties keep the order words were first challenged.
    """
    total = Tally()
    divisions: dict[str, Tally] = {}
    rounds: dict[tuple[str, int | None], Tally] = {}
    for record in records:
        if record.kind is not Kind.CHALLENGE:
            continue
        total.add(record)
        divisions.setdefault(record.division, Tally()).add(record)
        rounds.setdefault((record.division, record.round), Tally()).add(record)
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
