"""The event: its name and divisions, each with a lexicon profile and a challenge rule.

Read from ``<data dir>/event.toml``::

    name = "Spring Open 2026"
    rounds = true                # challenges carry a round number
    current_round = 3            # the round under way: kiosks and handhelds pre-fill it (the TD console sets it)
    challenges_per_minute = 6    # per kiosk or handheld (0: no limit); the TD has none
    kiosk_result_seconds = 10    # how long a kiosk shows a verdict

    [[division]]
    name = "A"
    lexicon = "CSW24"            # a compiled lexicon or a profile
    rule = "five-per-word"       # single, five-per-word, five-per-turn, ten-per-word, ten-per-turn, double

Several divisions may use different lexicons (CSW and NWL side by side). With no
event file, the server runs a demo event: one division on the DEMO lexicon. Lexicon names are
matched to the compiled ones whatever their case (``csw24`` is ``CSW24``). A running server serves
the TD's edits to the file within seconds, or says why not (``ServedEvent.pick_up_event_file``).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tomllib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .datadir import write_atomic
from .errors import InvalidInput
from .lexicon import DEMO_NAME, check_name
from .profile import Catalog
from .rules import ChallengeRule

EVENT_FILE = "event.toml"
_MAX_NAME = 100
DEFAULT_CHALLENGES_PER_MINUTE = 6
DEFAULT_KIOSK_RESULT_SECONDS = 10
MAX_ROUND = 999
_KEYS = ("name", "rounds", "current_round", "challenges_per_minute", "kiosk_result_seconds", "division")
_DIVISION_KEYS = ("name", "lexicon", "rule")


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
    # The round under way, set by the TD: kiosks and handhelds pre-fill it (never the last challenge's).
    current_round: int | None = None
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
            "current_round": self.current_round,
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


def known_lexicons(data_dir: Path) -> list[str]:
    """The names a division may use: the data dir's compiled lexicons and profiles, and the demo list."""
    return sorted({*Catalog(data_dir).names(), DEMO_NAME})


def load_event(data_dir: Path, *, check_lexicons: bool = True) -> Event:
    """Read ``<data_dir>/event.toml``, or return the demo event if there is none.

    With ``check_lexicons``, each division's lexicon must be one compiled in the data dir (matched whatever
    its case; the event holds the compiled name). Raises :class:`InvalidInput` naming the file and the
    entry at fault.
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
    return parse_event(data, str(path), lexicons=known_lexicons(data_dir) if check_lexicons else None)


def parse_event(data: dict[str, Any], where: str = EVENT_FILE, *, lexicons: Sequence[str] | None = None) -> Event:
    """Build an :class:`Event` from parsed TOML. Raises :class:`InvalidInput` naming the entry at fault.

    ``lexicons``: the names a division may use (see :func:`known_lexicons`); each division's lexicon is
    then matched to one of them whatever its case, and an unknown one is refused with the closest names.
    Without it, a lexicon name is only checked to be one (the server checks it exists when it opens it).
    """
    _check_keys(data, _KEYS, where)
    name = data.get("name")
    if name is None:
        raise InvalidInput(f"{where}: 'name' is missing: give the event's name (name = \"My tournament\")")
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_NAME:
        raise InvalidInput(f"{where}: 'name' must be the event's name (1 to {_MAX_NAME} characters)")
    _check_printable(name, f"{where}: the event's name")
    rounds = data.get("rounds", True)
    if not isinstance(rounds, bool):
        raise InvalidInput(f"{where}: 'rounds' must be true or false")
    current_round = data.get("current_round")
    if current_round is not None and (
        isinstance(current_round, bool) or not isinstance(current_round, int) or not 1 <= current_round <= MAX_ROUND
    ):
        raise InvalidInput(f"{where}: 'current_round' must be a round number from 1 to {MAX_ROUND} (or left out)")
    per_minute = data.get("challenges_per_minute", DEFAULT_CHALLENGES_PER_MINUTE)
    if isinstance(per_minute, bool) or not isinstance(per_minute, int) or not 0 <= per_minute <= 600:
        raise InvalidInput(f"{where}: 'challenges_per_minute' must be a whole number from 0 (no limit) to 600")
    result_seconds = data.get("kiosk_result_seconds", DEFAULT_KIOSK_RESULT_SECONDS)
    if isinstance(result_seconds, bool) or not isinstance(result_seconds, int) or not 3 <= result_seconds <= 120:
        raise InvalidInput(f"{where}: 'kiosk_result_seconds' must be a whole number of seconds from 3 to 120")
    entries = data.get("division")
    if isinstance(entries, dict):  # [division] (one bracket): a single table, not a list of them
        raise InvalidInput(f"{where}: use [[division]] (two brackets) for each division, not [division]")
    if not isinstance(entries, list) or not entries:
        raise InvalidInput(f"{where}: needs at least one [[division]] with name, lexicon and rule")
    divisions = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, start=1):
        divisions.append(_division(entry, f"{where}: division {number}", lexicons))
        key = divisions[-1].name.casefold()
        if key in seen:
            raise InvalidInput(f"{where}: two divisions are named {divisions[-1].name!r}")
        seen.add(key)
    return Event(
        name=name.strip(), divisions=tuple(divisions), rounds=rounds, current_round=current_round,
        challenges_per_minute=per_minute, kiosk_result_seconds=result_seconds,
    )  # fmt: skip


def _check_keys(table: dict[str, Any], known: Sequence[str], where: str) -> None:
    """Refuse keys the file does not know, with the closest known one for a typo ('divisions': 'division')."""
    unknown = sorted(set(table) - set(known))
    if not unknown:
        return
    hints = [f"{key!r}: did you mean {close[0]!r}?" for key in unknown if (close := _closest(key, known))]
    hint = f"; {'; '.join(hints)}" if hints else ""
    raise InvalidInput(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(known)}){hint}")


def _closest(name: str, known: Sequence[str]) -> list[str]:
    """The known names closest to ``name`` whatever the case (difflib), best first."""
    folded = {k.casefold(): k for k in known}
    return [folded[k] for k in difflib.get_close_matches(name.casefold(), list(folded), n=3, cutoff=0.6)]


def match_lexicon(name: str, known: Sequence[str]) -> str:
    """The compiled lexicon or profile ``name`` means: the one of ``known`` that it is, whatever its case.

    Raises :class:`InvalidInput` for any other name, with the closest names and the whole list.
    """
    if name in known:
        return name
    same = [k for k in known if k.casefold() == name.casefold()]
    if len(same) == 1:
        return same[0]
    if same:
        raise InvalidInput(f"{name!r} could be {' or '.join(same)}, which differ only in case: write one exactly")
    close = _closest(name, known)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    raise InvalidInput(
        f"no lexicon or profile named {name!r} is compiled{hint}; compiled: {', '.join(known) or 'none'}. "
        "Compile one with: wordjudge lexicon add FILE --name NAME"
    )


def _check_printable(text: str, what: str) -> None:
    """Refuse control and format characters (U+007F, a new line, a right-to-left override...).

    Screens, dockets and the event file show names as they are: an invisible or reordering character
    would make them lie, and a control character cannot even be written back to TOML as it is.
    """
    for char in text:
        if unicodedata.category(char)[0] == "C" or unicodedata.category(char) in ("Zl", "Zp"):
            name = unicodedata.name(char, "a control character")
            raise InvalidInput(f"{what} has U+{ord(char):04X} ({name}): use letters, digits, spaces and punctuation")


def _division(entry: Any, where: str, lexicons: Sequence[str] | None = None) -> Division:
    if not isinstance(entry, dict):
        raise InvalidInput(f"{where}: must be a table with name, lexicon and rule")
    _check_keys(entry, _DIVISION_KEYS, where)
    name, lexicon, rule = entry.get("name"), entry.get("lexicon"), entry.get("rule")
    if name is None:
        raise InvalidInput(f"{where}: 'name' is missing: give the division's name (name = \"A\")")
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_NAME:
        raise InvalidInput(f"{where}: 'name' must be the division's name (1 to {_MAX_NAME} characters)")
    _check_printable(name, f"{where}: the division's name")
    where = f"{where} ({name.strip()})"
    rules = ", ".join(r.value for r in ChallengeRule)
    if lexicon is None:
        compiled = f" (compiled: {', '.join(lexicons) or 'none'})" if lexicons is not None else ""
        raise InvalidInput(f"{where}: 'lexicon' is missing: name a compiled lexicon or profile{compiled}")
    if not isinstance(lexicon, str):
        raise InvalidInput(f"{where}: 'lexicon' must name a compiled lexicon or profile")
    try:
        check_name(lexicon)
        if lexicons is not None:
            lexicon = match_lexicon(lexicon, lexicons)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc.message}") from None
    if rule is None:
        raise InvalidInput(f"{where}: 'rule' is missing: give one of {rules}")
    try:
        challenge_rule = ChallengeRule(str(rule))
    except ValueError:
        raise InvalidInput(f"{where}: 'rule' must be one of {rules}, not {rule!r}") from None
    return Division(name=name.strip(), lexicon=lexicon, rule=challenge_rule)


def template(lexicons: list[str]) -> str:
    """A commented event file to start from, with one division per lexicon given."""
    lines = [
        "# wordjudge event file: the event, its divisions, and each division's lexicon and challenge rule.",
        "# Rules: single (no penalty), five-per-word, five-per-turn, ten-per-word, ten-per-turn,",
        "# double (loss of turn).",
        'name = "My tournament"',
        "rounds = true  # challenges carry a round number",
        "# current_round = 1  # the round under way: kiosks and handhelds pre-fill it (the TD console sets it)",
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
        *([f"current_round = {event.current_round}"] if event.current_round is not None else []),
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


def save_current_round(data_dir: Path, event: Event) -> Path | None:
    """Write ``event``'s current round to ``<data_dir>/event.toml``, changing only that line of the file
    (the TD's own comments and layout stay); return the file, or None for the demo event (which has none:
    its round lives as long as the server).

    Raises :class:`InvalidInput` if the file on disk does not load (a hand edit under way: it is left as it
    is) or cannot be written.
    """
    if event.demo:
        return None
    path = data_dir / EVENT_FILE
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return save_event(data_dir, event)
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot be read ({exc})") from exc
    return write_event_file(path, with_current_round(text, event.current_round, str(path)))


def with_current_round(text: str, current_round: int | None, where: str = EVENT_FILE) -> str:
    """The event file ``text`` with its ``current_round`` line set to ``current_round`` (removed for None).

    The line is changed in place, or added after ``rounds`` (else before the first table). The result is
    read back: if it is not the same event with the new round (an unusual layout), the event is written
    out whole instead. Raises :class:`InvalidInput` if ``text`` itself does not load.
    """
    try:
        before = parse_event(tomllib.loads(text), where)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{where}: not valid TOML ({exc}): fix it, then set the round again") from exc
    except InvalidInput as exc:
        raise InvalidInput(f"{exc.message}: fix it, then set the round again") from exc
    wanted = replace(before, current_round=current_round)
    lines = text.splitlines(keepends=True)
    end = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[")), len(lines))
    setting = [] if current_round is None else [f"current_round = {current_round}\n"]
    found = next((i for i in range(end) if _ROUND_LINE.match(lines[i])), None)
    if found is not None:
        lines[found : found + 1] = setting
    elif setting:
        at = next((i + 1 for i in range(end) if _ROUNDS_LINE.match(lines[i])), end)
        if at and not lines[at - 1].endswith("\n"):
            lines[at - 1] += "\n"
        lines[at:at] = setting
    changed = "".join(lines)
    try:
        if parse_event(tomllib.loads(changed), where) == wanted:
            return changed
    except (tomllib.TOMLDecodeError, InvalidInput):
        pass
    return dump_event(wanted)


_ROUND_LINE = re.compile(r"\s*current_round\s*=")
_ROUNDS_LINE = re.compile(r"\s*rounds\s*=")


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """The file's inode, size and modification time (None if it is missing): cheap to compare, so that a
    running server notices within a second or two that the TD edited the event file by hand.

    Raises :class:`OSError` if the file cannot be looked at (another error than missing).
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns)
