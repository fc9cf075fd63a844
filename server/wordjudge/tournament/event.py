"""The event: its name and divisions, each with a lexicon profile and a challenge rule (read from a data folder by
`event_loading.py`, its TOML edited by `event_toml.py`; the hall's copy is `hall/event_copy.py`).

Read from ``<data dir>/event.toml``::

    name = "Spring Open 2026"
    rounds = true                # challenges carry a round number
    current_round = 3            # the round under way: kiosks and handhelds pre-fill it (the TD console sets it)
    challenges_per_minute = 6    # per kiosk or handheld (0: no limit); the TD has none
    kiosk_result_seconds = 10    # how long a kiosk shows a verdict
    tables = "numbers"           # tables are numbers (1 to 9999); "names": letters, digits and '-' (A7, top-2)
    language = "en"              # en or fr: what the kiosks, handhelds, dockets, console and CLI say

    [[division]]
    name = "A"
    lexicon = "CSW24"            # a compiled lexicon or a profile
    rule = "five-per-word"       # single, five-per-word, five-per-turn, ten-per-word, ten-per-turn, double

Several divisions may use different lexicons (CSW and NWL side by side). With no
event file, the server runs a demo event: one division on the DEMO lexicon. Lexicon names are
matched to the compiled ones whatever their case (``csw24`` is ``CSW24``). A running server serves
the TD's edits to the file within seconds, or says why not (``ServedEvent.pick_up_event_file``).
What the server writes to the file (the console's changes, the round) is edited into it: the TD's comments
and layout stay (:mod:`wordjudge.tournament.event_toml`).
"""

from __future__ import annotations

import difflib
import os
import tomllib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError
from tomlkit.exceptions import TOMLKitError

from wordjudge.base.errors import DEFAULT_LANGUAGE, LANGUAGES, InvalidInput, Language, Message
from wordjudge.base.files import write_atomic
from wordjudge.base.messages import joined
from wordjudge.model.input_rules import MAX_EVENT_NAME, MAX_ROUND, MAX_TABLE, Tables
from wordjudge.model.rules import ChallengeRule
from wordjudge.tournament.event_toml import TableEdit, edit_file, kept_places, new_file
from wordjudge.words.editions import DEMO_NAME, check_name

EVENT_FILE = "event.toml"
_MAX_NAME = MAX_EVENT_NAME
DEFAULT_CHALLENGES_PER_MINUTE = 6
DEFAULT_KIOSK_RESULT_SECONDS = 10


def _printable(text: str) -> str:
    """Refuse control and format characters (U+007F, a new line, a right-to-left override...).

    Screens, dockets and the event file show names as they are: an invisible or reordering character
    would make them lie, and a control character cannot even be written back to TOML as it is.
    """
    for char in text:
        if unicodedata.category(char)[0] == "C" or unicodedata.category(char) in ("Zl", "Zp"):
            name = unicodedata.name(char, "a control character")
            raise PydanticCustomError(
                "wordjudge",
                "has U+{code} ({name}): use letters, digits, spaces and punctuation",
                {"code": f"{ord(char):04X}", "name": name},
            )
    return text.strip()


def _lexicon_name(name: str) -> str:
    try:
        return check_name(name)
    except InvalidInput as exc:
        # The message itself rides in the context, for parse_event's refusal (str() of it is its English).
        raise PydanticCustomError("wordjudge", "{message}", {"message": exc.msg}) from None


Name = Annotated[str, Field(min_length=1, max_length=_MAX_NAME, pattern=r"\S"), AfterValidator(_printable)]


class DivisionSettings(BaseModel):
    """One ``[[division]]`` of the event file, and of ``PUT /api/event``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: Name = Field(description=f"the division's name (1 to {_MAX_NAME} characters)")
    lexicon: Annotated[str, AfterValidator(_lexicon_name)] = Field(
        description="a compiled lexicon or profile (matched whatever its case)"
    )
    rule: ChallengeRule = Field(strict=False, description="the challenge rule")


class EventSettings(BaseModel):
    """The event file's schema (``event.toml``), and the body of ``PUT /api/event``: one model for both,
    read by :func:`parse_event` (which words its refusals for the TD) and written by :func:`dump_event`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: Name = Field(description=f"the event's name (1 to {_MAX_NAME} characters)")
    rounds: bool = Field(default=True, description="true or false: whether challenges carry a round number")
    current_round: int | None = Field(
        default=None,
        ge=1,
        le=MAX_ROUND,
        description=f"a round number from 1 to {MAX_ROUND} (or left out): the round under way",
    )
    challenges_per_minute: int = Field(
        default=DEFAULT_CHALLENGES_PER_MINUTE,
        ge=0,
        le=600,
        description="a whole number from 0 (no limit) to 600: challenges a minute per kiosk or handheld",
    )
    kiosk_result_seconds: int = Field(
        default=DEFAULT_KIOSK_RESULT_SECONDS,
        ge=3,
        le=120,
        description="a whole number of seconds from 3 to 120: how long a kiosk shows a verdict",
    )
    tables: Tables = Field(
        default="numbers",
        description=f'"numbers" (1 to {MAX_TABLE}) or "names" (letters, digits and -): how the tables are labelled',
    )
    language: Language = Field(
        default=DEFAULT_LANGUAGE,
        description=f"one of {', '.join(LANGUAGES)}: the language of the kiosks, handhelds, dockets, status page, "
        "console and the command line's verdict lines, with its region's way of writing dates (day-first, "
        "month-first in en-US, ISO in en-CA and fr-CA; qps-ploc: a pseudo-language, for testing)",
    )
    division: list[DivisionSettings] = Field(
        min_length=1, max_length=50, description="the divisions, in order: [[division]] with name, lexicon and rule"
    )


class RoundSetting(BaseModel):
    """The body of ``PUT /api/event/round``: the one way to set the round under way."""

    model_config = ConfigDict(extra="forbid", strict=True)

    current_round: int | None = Field(ge=1, le=MAX_ROUND, description="The round under way, or null for none.")


@dataclass(frozen=True)
class Division:
    name: str
    lexicon: str  # name of a compiled lexicon or profile
    rule: ChallengeRule

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "lexicon": self.lexicon,
            "rule": self.rule.value,
            "rule_text": self.rule.description,
            # The rule and its description as catalogue keys, for screens to say in the event's language.
            "rule_message": self.rule.message.as_dict(),
            "rule_text_message": self.rule.description_message.as_dict(),
        }


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
    # Tables are numbers unless the TD names them: a word typed where the table goes is refused.
    tables: Tables = "numbers"
    language: Language = DEFAULT_LANGUAGE  # what every screen and the CLI's verdict lines say things in

    def division(self, name: str) -> Division:
        """The division of that name (case-insensitive). Raises :class:`InvalidInput` listing the divisions."""
        for division in self.divisions:
            if division.name.casefold() == name.strip().casefold():
                return division
        known = ", ".join(d.name for d in self.divisions)
        raise InvalidInput("error.event.unknown_division", division=repr(name), event=self.name, known=known)

    def lexicons(self) -> list[str]:
        """The lexicons or profiles the divisions use, each once, in order."""
        return list(dict.fromkeys(d.lexicon for d in self.divisions))

    def demo_list_divisions(self) -> list[str]:
        """The divisions of a real event (an event file, not the demo) that use the DEMO list: an event file written
        before the TD compiled the event's list (``event init`` names the demo list then). Every place that shows
        the event (event init, event show, serve, health) warns of them."""
        if self.demo:
            return []
        return [d.name for d in self.divisions if d.lexicon.casefold() == DEMO_NAME]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rounds": self.rounds,
            "current_round": self.current_round,
            "demo": self.demo,
            "challenges_per_minute": self.challenges_per_minute,
            "kiosk_result_seconds": self.kiosk_result_seconds,
            "tables": self.tables,
            "language": self.language,
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


Where = str | Message  # what a refusal names: the event file, or the console's event settings, and the entry


def parse_event(data: dict[str, Any], where: Where = EVENT_FILE, *, lexicons: Sequence[str] | None = None) -> Event:
    """Build an :class:`Event` from parsed TOML (or a ``PUT /api/event`` body), checked against
    :class:`EventSettings`. Raises :class:`InvalidInput` naming the entry at fault and what it must be.

    ``lexicons``: the names a division may use (see ``event_loading.known_lexicons``); each division's lexicon is
    then matched to one of them whatever its case, and an unknown one is refused with the closest names.
    Without it, a lexicon name is only checked to be one (the server checks it exists when it opens it).
    """
    if not isinstance(data, dict):
        raise InvalidInput("error.event.not_a_table", where=where)
    if isinstance(data.get("division"), dict):  # [division] (one bracket): a single table, not a list of them
        raise InvalidInput("error.event.division_brackets", where=where)
    # Unknown keys first, all of them at once, with the known key a typo meant ('divisions': 'division').
    _check_keys(data, list(EventSettings.model_fields), where)
    entries = data.get("division")
    for number, entry in enumerate(entries if isinstance(entries, list) else [], start=1):
        if isinstance(entry, dict):
            _check_keys(
                entry,
                list(DivisionSettings.model_fields),
                Message("error.event.where.division", where=where, number=number),
            )
    try:
        settings = EventSettings.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(_refusal(exc.errors()[0], data, where, lexicons)) from None
    divisions: list[Division] = []
    for number, entry in enumerate(settings.division, start=1):
        lexicon = entry.lexicon
        if lexicons is not None:
            try:
                lexicon = match_lexicon(lexicon, lexicons)
            except InvalidInput as exc:
                division = Message("error.event.where.division_named", where=where, number=number, name=entry.name)
                raise InvalidInput("error.event.entry", where=division, problem=exc.msg) from None
        if any(d.name.casefold() == entry.name.casefold() for d in divisions):
            raise InvalidInput("error.event.division_twice", where=where, name=repr(entry.name))
        divisions.append(Division(entry.name, lexicon, entry.rule))
    return Event(
        name=settings.name,
        divisions=tuple(divisions),
        rounds=settings.rounds,
        current_round=settings.current_round,
        challenges_per_minute=settings.challenges_per_minute,
        kiosk_result_seconds=settings.kiosk_result_seconds,
        tables=settings.tables,
        language=settings.language,
    )


def parse_event_change(
    data: dict[str, Any], current_round: int | None, *, lexicons: Sequence[str] | None = None
) -> Event:
    """The event the TD's console asks for (``PUT /api/event``): the event file's keys but ``current_round``,
    which stays ``current_round`` (only :class:`RoundSetting` sets it). Raises :class:`InvalidInput`."""
    if "current_round" in data:
        raise InvalidInput("error.event.round_not_here")
    return parse_event(
        {**data, "current_round": current_round}, Message("error.event.where.settings"), lexicons=lexicons
    )


# What a missing key's refusal says to write, by model and key.
_MISSING = {
    (EventSettings, "name"): "error.event.missing_event_name",
    (DivisionSettings, "name"): "error.event.missing_division_name",
    (DivisionSettings, "lexicon"): "error.event.missing_lexicon",
}
# What each setting must be, by model and key (the model's own description of the field says the same).
_MUST = {
    (EventSettings, "name"): "error.event.must.event_name",
    (EventSettings, "rounds"): "error.event.must.rounds",
    (EventSettings, "current_round"): "error.event.must.current_round",
    (EventSettings, "challenges_per_minute"): "error.event.must.challenges_per_minute",
    (EventSettings, "kiosk_result_seconds"): "error.event.must.kiosk_result_seconds",
    (EventSettings, "tables"): "error.event.must.tables",
    (DivisionSettings, "name"): "error.event.must.division_name",
    (DivisionSettings, "lexicon"): "error.event.must.lexicon",
}
# A name with a control character in it, by model.
_UNPRINTABLE = {
    EventSettings: "error.event.event_name_unprintable",
    DivisionSettings: "error.event.division_name_unprintable",
}
_LIMITS = {"max_name": _MAX_NAME, "max_round": MAX_ROUND, "max_table": str(MAX_TABLE)}  # a table number: no 9,999


def _refusal(error: ErrorDetails, data: dict[str, Any], where: Where, lexicons: Sequence[str] | None) -> Message:
    """The TD's words for the first thing :class:`EventSettings` refused: the entry, and what it must be."""
    location = list(error["loc"])
    model: type[BaseModel] = EventSettings
    if location[:1] == ["division"] and len(location) >= 2 and isinstance(location[1], int):
        number = location[1] + 1
        entry = data["division"][location[1]]
        label = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(label, str) and label.strip() and location[2:] != ["name"]:
            where = Message("error.event.where.division_named", where=where, number=number, name=label.strip())
        else:
            where = Message("error.event.where.division", where=where, number=number)
        model, location = DivisionSettings, location[2:]
        if not location:
            return Message("error.event.division_not_table", where=where)
    key = str(location[0]) if location else ""
    if key == "division" and model is EventSettings:
        if error["type"] == "too_long":
            return Message("error.event.too_many_divisions", where=where, max=error["ctx"]["max_length"])
        return Message("error.event.no_division", where=where)
    if error["type"] == "missing":
        if (model, key) == (DivisionSettings, "lexicon") and lexicons is not None:
            compiled: str | Message = ", ".join(lexicons) or Message("error.none")
            return Message("error.event.missing_lexicon_compiled", where=where, compiled=compiled)
        if (model, key) == (DivisionSettings, "rule"):
            return Message("error.event.missing_rule", where=where, rules=_RULES)
        return Message(_MISSING.get((model, key), "error.event.missing"), where=where, key=repr(key))
    if error["type"] == "wordjudge":  # our own check, worded already
        context = error.get("ctx", {})
        if key == "lexicon":
            return Message("error.event.entry", where=where, problem=context["message"])
        return Message(_UNPRINTABLE[model], where=where, code=context["code"], name=context["name"])
    if key == "rule":
        return Message("error.event.rule_invalid", where=where, choices=_RULES, given=repr(error["input"]))
    if key == "language":
        return Message(
            "error.event.language_invalid", where=where, choices=", ".join(LANGUAGES), given=repr(error["input"])
        )
    return Message(_MUST.get((model, key), "error.event.must.valid"), where=where, key=repr(key), **_LIMITS)


_RULES = ", ".join(r.value for r in ChallengeRule)


def _check_keys(table: dict[str, Any], known: Sequence[str], where: Where) -> None:
    """Refuse keys the file does not know, with the closest known one for a typo ('divisions': 'division')."""
    unknown = sorted(set(table) - set(known))
    if not unknown:
        return
    hints: list[str | Message] = [
        Message("error.event.did_you_mean", key=repr(key), close=repr(close[0]))
        for key in unknown
        if (close := _closest(key, known))
    ]
    found = {"where": where, "unknown": ", ".join(unknown), "known": ", ".join(known)}
    if hints:
        raise InvalidInput("error.event.unknown_keys_hints", **found, hints=joined(hints, "error.list.then"))
    raise InvalidInput("error.event.unknown_keys", **found)


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
        raise InvalidInput("error.lexicon.ambiguous_case", name=repr(name), same=joined(list(same), "error.list.or"))
    close = _closest(name, known)
    compiled: str | Message = ", ".join(known) or Message("error.none")
    if close:
        raise InvalidInput(
            "error.lexicon.not_compiled_close",
            name=repr(name),
            close=joined(list(close), "error.list.or"),
            compiled=compiled,
        )
    raise InvalidInput("error.lexicon.not_compiled", name=repr(name), compiled=compiled)


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
        f'tables = "numbers"  # tables are numbers (1 to {MAX_TABLE}); "names": letters, digits and - (A7, top-2)',
        f'language = "{DEFAULT_LANGUAGE}"  # what screens, dockets and verdict lines say: en (English) or fr (French)',
        "# dates are day-first (27/11/2026); a region writes them its way: en-US 11/27/2026, en-CA or fr-CA ISO",
        "# (2026-11-27); also en-GB, en-AU, en-IE, en-IN, en-NZ, en-ZA, fr-FR, fr-BE, fr-CH (day-first)",
        "",
    ]
    for number, lexicon in enumerate(lexicons or [DEMO_NAME], start=1):
        lines += ["[[division]]", f'name = "{chr(64 + number) if number <= 26 else number}"', f'lexicon = "{lexicon}"']
        lines += ['rule = "five-per-word"', ""]
    return "\n".join(lines)


def _settings(event: Event) -> EventSettings:
    return EventSettings(
        name=event.name,
        rounds=event.rounds,
        current_round=event.current_round,
        challenges_per_minute=event.challenges_per_minute,
        kiosk_result_seconds=event.kiosk_result_seconds,
        tables=event.tables,
        language=event.language,
        division=[DivisionSettings(name=d.name, lexicon=d.lexicon, rule=d.rule) for d in event.divisions],
    )


def dump_event(event: Event) -> str:
    """The event as the TOML of a new event file (what ``event_loading.load_event`` reads back): the file the console
    writes where there is none, and the text a hall keeps of the event served."""
    data = _settings(event).model_dump(mode="json", exclude_none=True)
    divisions = data.pop("division")
    return new_file("wordjudge event file, written by the TD console.", data, "division", divisions)


def save_event(data_dir: Path, event: Event) -> Path:
    """Write ``event`` to ``<data_dir>/event.toml`` atomically (a crash leaves the old file or the new one, whole).

    The file the TD wrote is edited, not replaced: only the settings and divisions that change are written
    (:func:`edit_event_text`), so the TD's comments and layout stay. Where there is no file, or one that does
    not load (a hand edit the console's change overrides), the whole event is written (:func:`dump_event`).
    Raises :class:`InvalidInput` if the file cannot be written.
    """
    path = data_dir / EVENT_FILE
    try:
        text = edit_event_text(path.read_text("utf-8"), event, str(path))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, InvalidInput):
        text = dump_event(event)
    return write_event_file(path, text)


def write_event_file(path: Path, text: str) -> Path:
    """Write an event file atomically. Raises :class:`InvalidInput` naming the file if it cannot be written."""
    try:
        return write_atomic(path, text)
    except OSError as exc:
        raise InvalidInput("error.file.unwritable", path=str(path), reason=str(exc)) from exc


def save_current_round(data_dir: Path, event: Event) -> Path | None:
    """Write ``event``'s current round to ``<data_dir>/event.toml``, changing only its ``current_round`` key
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
        raise InvalidInput("error.file.unreadable", path=str(path), reason=str(exc)) from exc
    try:
        before = _read_event_text(text, str(path))
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput("error.event.round_not_toml", path=str(path), reason=str(exc)) from exc
    except InvalidInput as exc:
        raise InvalidInput("error.event.round_file_refused", problem=exc.msg) from exc
    # The file's own event with the new round: what the TD changed by hand meanwhile stays the TD's.
    return write_event_file(path, edit_event_text(text, replace(before, current_round=event.current_round)))


def _read_event_text(text: str, where: str) -> Event:
    """The event an event file's text holds, lexicon names as written. Raises :class:`tomllib.TOMLDecodeError`
    or :class:`InvalidInput`."""
    return parse_event(tomllib.loads(text), where)


# The event's settings in the order a file lists them (a key the file lacks is added after the one before it).
_KEYS = ("name", "rounds", "current_round", "challenges_per_minute", "kiosk_result_seconds", "tables", "language")


def edit_event_text(text: str, event: Event, where: str = EVENT_FILE) -> str:
    """The event file ``text`` edited to hold ``event`` (:func:`~wordjudge.tournament.event_toml.edit_file`), the
    TD's comments and layout kept: only the settings and divisions' keys whose meaning changes are written (a
    lexicon's case is no change), divisions added or removed. A division is matched by name whatever its case,
    else by its place (renamed, it keeps its table). Read back: where it is not ``event`` (a layout not edited
    here), the event is written whole (:func:`dump_event`). Raises :class:`tomllib.TOMLDecodeError` or
    :class:`InvalidInput` if ``text`` does not load.
    """
    before = _read_event_text(text, where)
    wanted = _settings(event).model_dump(mode="json")
    settings = {key: wanted[key] for key in _KEYS if getattr(before, key) != getattr(event, key)}
    tables = None
    if not _same_divisions(before.divisions, event.divisions):
        places = kept_places([d.name for d in before.divisions], [d.name for d in event.divisions])
        tables = [
            TableEdit(was, _changed(None if was is None else before.divisions[was], now), whole)
            for was, now, whole in zip(places, event.divisions, wanted["division"], strict=True)
        ]
    try:
        edited = edit_file(text, settings, _KEYS, "division", tables)
        if _same_event(_read_event_text(edited, where), event):
            return edited
    except (TOMLKitError, tomllib.TOMLDecodeError, InvalidInput, TypeError, ValueError, KeyError):
        pass
    return dump_event(event)


def _changed(old: Division | None, now: Division) -> list[str]:
    """The keys of a division's table to write: those whose meaning changed (a lexicon's case is no change)."""
    if old is None:
        return []
    same = {"name": old.name == now.name, "lexicon": old.lexicon.casefold() == now.lexicon.casefold()}
    return [key for key, kept in {**same, "rule": old.rule is now.rule}.items() if not kept]


def _same_divisions(first: Sequence[Division], second: Sequence[Division]) -> bool:
    """The same divisions in the same order, a lexicon named in any case being the same lexicon."""
    return len(first) == len(second) and all(
        (a.name, a.lexicon.casefold(), a.rule) == (b.name, b.lexicon.casefold(), b.rule)
        for a, b in zip(first, second, strict=True)
    )


def _same_event(read: Event, event: Event) -> bool:
    """Whether an event file read back (lexicons as written) holds ``event``."""
    return replace(read, divisions=event.divisions, demo=event.demo) == event and _same_divisions(
        read.divisions, event.divisions
    )


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
