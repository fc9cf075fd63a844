"""The request bodies the routes take: strict (a field the server does not know is an error, not ignored),
with the limits of :mod:`wordjudge.model.input_rules`. The challenge's is also read by the verdict path's own
route (:mod:`wordjudge.web.fast_challenge`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from wordjudge.model.input_rules import MAX_NOTE, RequestId


class StrictBody(BaseModel):
    """A request body that refuses fields it does not know (a typo is an error, not ignored)."""

    model_config = ConfigDict(extra="forbid")


_Words = Annotated[
    str | list[Annotated[str, Field(max_length=100)]],
    Field(description="The words, as a list or as one string separated by spaces, commas or new lines."),
]


class ChallengeIn(StrictBody):
    division: str = Field(max_length=100)
    table: str | int = Field(
        description="The table: a number, or a label when the event names its tables (GET /api/event: `tables`)."
    )
    round: int | None = Field(
        default=None,
        description="The round: required when the event has rounds (GET /api/event: `rounds`, `input_rules`).",
    )
    words: _Words = Field(max_length=500)
    request_id: RequestId = Field(description="Made by the client for each new challenge; reused on a retry.")


class RecheckIn(StrictBody):
    request_id: RequestId
    note: str | None = Field(default=None, max_length=MAX_NOTE)


class ReissueIn(StrictBody):
    words: _Words = Field(max_length=500)
    reason: str = Field(max_length=MAX_NOTE, description="Why the slip is reissued.")
    request_id: RequestId


class RulingIn(StrictBody):
    verdict: Literal["acceptable", "unacceptable"]
    note: str = Field(max_length=MAX_NOTE)
    request_id: RequestId
