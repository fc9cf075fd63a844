"""The answers about the event (:mod:`wordjudge.tournament.event`, :mod:`wordjudge.tournament.served`): the event
and its divisions, the input rules, the lexicons served, and what a change to the event would change. See
:mod:`wordjudge.web.answers`."""

from __future__ import annotations

from typing import Any

from wordjudge.web.answers import MessageAnswer, OpenShape, Shape


class IdentificationAnswer(OpenShape):
    """Which edition a list's words are, by its fingerprint and word count."""

    match: str
    edition: str | None
    official: bool
    description: str


class TilesAnswer(OpenShape):
    """A lexicon's tile set, where a tile can be several letters: its tiles in order, other ways to type them."""

    name: str
    tiles: list[str]
    spellings: dict[str, str]
    fingerprint: str
    split: list[str]  # the longer tiles whose letters the lexicon also has as separate tiles (Welsh NG, N G)


class LexiconAnswer(OpenShape):
    """What screens show of a lexicon or profile served: name, fingerprint, edition, DEMO flag, UNVERIFIED claims
    (never word results)."""

    name: str
    base: str
    fingerprint: str
    word_count: int
    alphabet: str
    tiles: TilesAnswer | None
    demo: bool
    amended: bool
    additions: int
    removals: int
    secondary: str | None
    secondary_min_length: int | None
    short_fingerprint: str
    edition: str
    identification: IdentificationAnswer
    shown_name: str
    unverified: list[dict[str, Any]]
    label: str


class DivisionAnswer(OpenShape):
    """A division with its lexicon and challenge rule (the rule also in words, as catalogue keys)."""

    name: str
    lexicon: str
    rule: str
    rule_text: str
    rule_message: MessageAnswer
    rule_text_message: MessageAnswer


class EventAnswer(OpenShape):
    """The event's settings and divisions."""

    name: str
    rounds: bool
    current_round: int | None
    demo: bool
    challenges_per_minute: int
    kiosk_result_seconds: int
    tables: str
    language: str
    divisions: list[DivisionAnswer]


class ChallengeRuleAnswer(OpenShape):
    value: str
    text: str
    message: MessageAnswer
    text_message: MessageAnswer


class InputRulesAnswer(OpenShape):
    """The limits a challenge must keep, as the server checks them, and the challenge rules a division may have."""

    max_words: int
    min_letters: int
    max_letters: int
    max_round: int
    max_name: int
    max_note: int
    max_event_name: int
    max_password: int
    languages: list[str]
    tables: str
    max_table: int
    table_pattern: str
    table_chars: str
    challenge_rules: list[ChallengeRuleAnswer]


class ServedDivisionAnswer(DivisionAnswer):
    lexicon_view: LexiconAnswer


class ServedEventAnswer(EventAnswer):
    """The event as devices and the console read it: with each division's lexicon as screens show it, the input
    rules, and this server's identity."""

    divisions: list[ServedDivisionAnswer]  # type: ignore[assignment]  # each with its lexicon's view
    server_id: str
    input_rules: InputRulesAnswer


class WeighedChangeAnswer(Shape):
    """One change to the event, with the devices serving its division, its challenges on record, and whether the
    TD must confirm it."""

    what: str
    subject: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    division: str | None
    devices: dict[str, int] | None
    challenges: int | None
    needs_confirmation: bool
    message: MessageAnswer


class PreviewAnswer(Shape):
    changes: list[WeighedChangeAnswer]
    needs_confirmation: bool


class AvailableLexiconsAnswer(Shape):
    """The compiled lexicons and profiles a division may use, and those served."""

    names: list[str]
    served: list[str]
