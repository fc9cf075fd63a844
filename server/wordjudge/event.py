"""The event: its name and divisions, each with a lexicon profile and a challenge rule.

Read from ``<data dir>/event.toml``::

    name = "Spring Open 2026"
    rounds = true                # challenges carry a round number
    challenges_per_minute = 6    # per kiosk or handheld (0: no limit); the TD has none
    kiosk_result_seconds = 10    # how long a kiosk shows a verdict

    [[division]]
    name = "A"
    lexicon = "CSW24"            # a compiled lexicon or a profile
    rule = "five-per-word"       # single, five-per-word, five-per-turn, ten-per-word, ten-per-turn, double

Several divisions may use different lexicons (CSW and NWL side by side). With no
event file, the server runs a demo event: one division on the DEMO lexicon.
"""

from __future__ import annotations

import json
import tomllib
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .datadir import write_atomic
from .errors import InvalidInput
from .lexicon import DEMO_NAME, check_name
from .rules import ChallengeRule

EVENT_FILE = "event.toml"
_MAX_NAME = 100
DEFAULT_CHALLENGES_PER_MINUTE = 6
DEFAULT_KIOSK_RESULT_SECONDS = 10
_KEYS = ("name", "rounds", "challenges_per_minute", "kiosk_result_seconds", "division")


@dataclass(frozen=True)
class Division:
    name: str
    lexicon: str  # name of a compiled lexicon or profile
    rule: ChallengeRule

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "lexicon": self.lexicon, "rule": self.rule.value, "rule_text": self.rule.description}


@dataclass(frozen=True)
class Event:
    name: str
    divisions: tuple[Division, ...]
    rounds: bool = True
    demo: bool = False  # the built-in demo event (no event file)
    # A device that could ask freely would be a study oracle during a game; 0 turns the limit off.
    challenges_per_minute: int = DEFAULT_CHALLENGES_PER_MINUTE
    # Long enough for both players to read, short enough that bystanders do not.
    kiosk_result_seconds: int = DEFAULT_KIOSK_RESULT_SECONDS

    def division(self, name: str) -> Division:
        """The division of that name (case-insensitive). Raises :class:`InvalidInput` listing the divisions."""
        for division in self.divisions:
            if division.name.casefold() == name.strip().casefold():
                return division
        known = ", ".join(d.name for d in self.divisions)
        raise InvalidInput(f"unknown division {name!r} (divisions of {self.name}: {known})")

    def lexicons(self) -> list[str]:
        """The lexicons or profiles the divisions use, each once, in order."""
        return list(dict.fromkeys(d.lexicon for d in self.divisions))

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rounds": self.rounds,
            "demo": self.demo,
            "challenges_per_minute": self.challenges_per_minute,
            "kiosk_result_seconds": self.kiosk_result_seconds,
            "divisions": [d.as_dict() for d in self.divisions],
        }


def demo_event() -> Event:
    """The event served when there is no event file: one division on the DEMO lexicon."""
    return Event(
        name="wordjudge demo event",
        divisions=(Division("Open", DEMO_NAME, ChallengeRule.FIVE_PER_WORD),),
        rounds=True,
        demo=True,
    )


def load_event(data_dir: Path) -> Event:
    """Read ``<data_dir>/event.toml``, or return the demo event if there is none.

    Raises :class:`InvalidInput` naming the file and the entry at fault.
    """
    path = data_dir / EVENT_FILE
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return demo_event()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot be read ({exc})") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path}: not valid TOML ({exc})") from exc
    return parse_event(data, str(path))


def parse_event(data: dict[str, Any], where: str = EVENT_FILE) -> Event:
    """Build an :class:`Event` from parsed TOML. Raises :class:`InvalidInput` naming the entry at fault."""
    unknown = set(data) - set(_KEYS)
    if unknown:
        raise InvalidInput(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(_KEYS)})")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_NAME:
        raise InvalidInput(f"{where}: 'name' must be the event's name (1 to {_MAX_NAME} characters)")
    _check_printable(name, f"{where}: the event's name")
    rounds = data.get("rounds", True)
    if not isinstance(rounds, bool):
        raise InvalidInput(f"{where}: 'rounds' must be true or false")
    per_minute = data.get("challenges_per_minute", DEFAULT_CHALLENGES_PER_MINUTE)
    if isinstance(per_minute, bool) or not isinstance(per_minute, int) or not 0 <= per_minute <= 600:
        raise InvalidInput(f"{where}: 'challenges_per_minute' must be a whole number from 0 (no limit) to 600")
    result_seconds = data.get("kiosk_result_seconds", DEFAULT_KIOSK_RESULT_SECONDS)
    if isinstance(result_seconds, bool) or not isinstance(result_seconds, int) or not 3 <= result_seconds <= 120:
        raise InvalidInput(f"{where}: 'kiosk_result_seconds' must be a whole number of seconds from 3 to 120")
    entries = data.get("division")
    if not isinstance(entries, list) or not entries:
        raise InvalidInput(f"{where}: needs at least one [[division]] with name, lexicon and rule")
    divisions = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, start=1):
        divisions.append(_division(entry, f"{where}: division {number}"))
        key = divisions[-1].name.casefold()
        if key in seen:
            raise InvalidInput(f"{where}: two divisions are named {divisions[-1].name!r}")
        seen.add(key)
    return Event(
        name=name.strip(), divisions=tuple(divisions), rounds=rounds, challenges_per_minute=per_minute,
        kiosk_result_seconds=result_seconds,
    )  # fmt: skip


def _check_printable(text: str, what: str) -> None:
    """Refuse control and format characters (U+007F, a new line, a right-to-left override...).

    Screens, dockets and the event file show names as they are: an invisible or reordering character
    would make them lie, and a control character cannot even be written back to TOML as it is.
    """
    for char in text:
        if unicodedata.category(char)[0] == "C" or unicodedata.category(char) in ("Zl", "Zp"):
            name = unicodedata.name(char, "a control character")
            raise InvalidInput(f"{what} has U+{ord(char):04X} ({name}): use letters, digits, spaces and punctuation")


def _division(entry: Any, where: str) -> Division:
    if not isinstance(entry, dict):
        raise InvalidInput(f"{where}: must be a table with name, lexicon and rule")
    unknown = set(entry) - {"name", "lexicon", "rule"}
    if unknown:
        raise InvalidInput(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (known: name, lexicon, rule)")
    name, lexicon, rule = entry.get("name"), entry.get("lexicon"), entry.get("rule")
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_NAME:
        raise InvalidInput(f"{where}: 'name' must be the division's name (1 to {_MAX_NAME} characters)")
    _check_printable(name, f"{where}: the division's name")
    if not isinstance(lexicon, str):
        raise InvalidInput(f"{where} ({name}): 'lexicon' must name a compiled lexicon or profile")
    try:
        check_name(lexicon)
    except InvalidInput as exc:
        raise InvalidInput(f"{where} ({name}): {exc.message}") from None
    try:
        challenge_rule = ChallengeRule(str(rule))
    except ValueError:
        known = ", ".join(r.value for r in ChallengeRule)
        raise InvalidInput(f"{where} ({name}): 'rule' must be one of {known}, not {rule!r}") from None
    return Division(name=name.strip(), lexicon=lexicon, rule=challenge_rule)


def template(lexicons: list[str]) -> str:
    """A commented event file to start from, with one division per lexicon given."""
    lines = [
        "# wordjudge event file: the event, its divisions, and each division's lexicon and challenge rule.",
        "# Rules: single (no penalty), five-per-word, five-per-turn, ten-per-word, ten-per-turn,",
        "# double (loss of turn).",
        'name = "My tournament"',
        "rounds = true  # challenges carry a round number",
        f"challenges_per_minute = {DEFAULT_CHALLENGES_PER_MINUTE}  # per kiosk or handheld (0: no limit)",
        f"kiosk_result_seconds = {DEFAULT_KIOSK_RESULT_SECONDS}  # how long a kiosk shows a verdict (3 to 120)",
        "",
    ]
    for number, lexicon in enumerate(lexicons or [DEMO_NAME], start=1):
        lines += ["[[division]]", f'name = "{chr(64 + number) if number <= 26 else number}"', f'lexicon = "{lexicon}"']
        lines += ['rule = "five-per-word"', ""]
    return "\n".join(lines)


def dump_event(event: Event) -> str:
    """The event as the TOML of an event file (what :func:`load_event` reads back)."""

    def text(value: str) -> str:
        # A JSON string is a TOML basic string, but for U+007F, which JSON leaves as it is and TOML refuses.
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")

    lines = [
        "# wordjudge event file, written by the TD console.",
        f"name = {text(event.name)}",
        f"rounds = {'true' if event.rounds else 'false'}",
        f"challenges_per_minute = {event.challenges_per_minute}",
        f"kiosk_result_seconds = {event.kiosk_result_seconds}",
    ]
    for division in event.divisions:
        lines += ["", "[[division]]", f"name = {text(division.name)}", f"lexicon = {text(division.lexicon)}"]
        lines.append(f"rule = {text(division.rule.value)}")
    return "\n".join(lines) + "\n"


def save_event(data_dir: Path, event: Event) -> Path:
    """Write ``<data_dir>/event.toml`` atomically (a crash leaves the old file or the new one, whole)."""
    return write_event_file(data_dir / EVENT_FILE, dump_event(event))


def write_event_file(path: Path, text: str) -> Path:
    """Write an event file atomically. Raises :class:`InvalidInput` naming the file if it cannot be written."""
    try:
        return write_atomic(path, text)
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot be written ({exc})") from exc
