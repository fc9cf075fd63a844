"""The event under ``/api/``: what it is (any signed-in device or TD) and how a TD changes it (settings,
divisions, the round under way), each change put on record before it is served."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from wordjudge.base.errors import InvalidInput
from wordjudge.model.auth import Principal
from wordjudge.service.resources import Resources
from wordjudge.tournament.changes import event_changes, put_on_record, require_confirmed, weigh
from wordjudge.tournament.event import Event, EventSettings, RoundSetting, parse_event_change
from wordjudge.tournament.event_loading import known_lexicons
from wordjudge.web.answers import answer
from wordjudge.web.answers_event import (
    AvailableLexiconsAnswer,
    EventAnswer,
    LexiconAnswer,
    PreviewAnswer,
    ServedEventAnswer,
)
from wordjudge.web.deps import ERROR_RESPONSES, PrincipalDep, ResourcesDep, json_object, td_only
from wordjudge.words.profile import Catalog

router = APIRouter(prefix="/api", responses=ERROR_RESPONSES)


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    """``schema`` with each ``$ref`` to its ``$defs`` replaced by the definition itself."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _inline(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
        return {key: _inline(value, defs) for key, value in schema.items() if key != "$defs"}
    if isinstance(schema, list):
        return [_inline(item, defs) for item in schema]
    return schema


# PUT /api/event's body is the event file's own schema (EventSettings), checked by parse_event, which
# words each refusal for the TD as for the file; documented here since the route reads the JSON itself.
_EVENT_SCHEMA = EventSettings.model_json_schema()
del _EVENT_SCHEMA["properties"]["current_round"]  # one way to set it: PUT /api/event/round
_EVENT_SCHEMA["properties"]["confirm"] = {
    "type": "boolean",
    "default": False,
    "description": "true: make the changes that need the TD's confirmation (a division's lexicon or rule, or its "
    "removal, once it has a challenge on record); without it they are refused (409)",
}
_EVENT_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": _inline(_EVENT_SCHEMA, _EVENT_SCHEMA.get("$defs", {}))}},
    }
}


@router.get("/event", tags=["event"], response_model=ServedEventAnswer)
def event(resources: ResourcesDep, who: PrincipalDep) -> JSONResponse:
    """The event and its divisions, each with its lexicon and challenge rule.

    `current_round`: the round under way (set by the TD; null if not set), which kiosks and handhelds
    pre-fill. `input_rules`: the limits a challenge must keep (words, letters, round, table) and the
    challenge rules a division may have, as the server checks them. `server_id`: the identity of this
    data folder (as in /api/health), which enrolled devices compare with the server they belong to."""
    return answer(resources.served.view())


@router.get("/lexicons", tags=["event"], response_model=list[LexiconAnswer])
def lexicons(resources: ResourcesDep, who: PrincipalDep) -> JSONResponse:
    """The lexicons and profiles served, with their fingerprints and the editions they match."""
    return answer(list(resources.served.lexicon_views.values()))


@router.put("/event", tags=["console"], openapi_extra=_EVENT_BODY, response_model=EventAnswer)
def replace_event(
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.change_event")],
    body: Annotated[dict[str, Any], Depends(json_object)],
) -> JSONResponse:
    """Change the event: name, divisions with their lexicon and rule, rate limit, kiosk result time (TD).

    Each change is written to the audit log as a `change` record (the TD, what changed, before and after),
    committed before the change is served; if it cannot be written, nothing changes (503). A division's
    lexicon or rule changed, or the division removed, once that division has a challenge on record, is
    refused (409, `error.event.confirm`, the changes in `details` as POST /api/event/preview lists them)
    unless `confirm` is true (WESPA 3.10.14(a): an announced penalty may not be changed). Then written to
    the event file and served at once; a lexicon that cannot be opened refuses the change. The body has the
    event file's keys (`division`: a list of name, lexicon, rule) but the current round, which stays as it
    is (PUT /api/event/round sets it). Lexicon names are matched to the compiled ones whatever their case.
    """
    confirmed = _confirmed(body)
    event = _asked_for(resources, body)
    devices = resources.access.devices.all()

    def put_on_record_first(served: Event, asked: Event) -> None:
        weighed = weigh(event_changes(served, asked), resources.audit, devices, event=served.name)
        require_confirmed(weighed, confirmed)
        put_on_record(resources.audit, [item.change for item in weighed], actor=who.actor, event=asked.name)

    resources.served.replace_event(event, before_serving=put_on_record_first)
    return answer(resources.served.event.as_dict())


@router.post("/event/preview", tags=["console"], openapi_extra=_EVENT_BODY, response_model=PreviewAnswer)
def preview_event(
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.change_event")],
    body: Annotated[dict[str, Any], Depends(json_object)],
) -> JSONResponse:
    """What PUT /api/event with this body would change, changing nothing (TD): each change (`what`, `subject`,
    `division`, `before`, `after`, `message`), with the kiosks and handhelds serving its division
    (`devices`: not revoked, enrolled for it or for every division), its challenges on record, and whether
    it `needs_confirmation`. Refused as PUT /api/event refuses a body (422)."""
    _confirmed(body)
    event = _asked_for(resources, body)
    served = resources.served.event
    weighed = weigh(event_changes(served, event), resources.audit, resources.access.devices.all(), event=served.name)
    return answer(
        {
            "changes": [item.as_dict() for item in weighed],
            "needs_confirmation": any(item.needs_confirmation for item in weighed),
        }
    )


def _confirmed(body: dict[str, Any]) -> bool:
    """The body's `confirm` (taken out of it: the rest is the event). Raises :class:`InvalidInput` unless a boolean."""
    confirmed = body.pop("confirm", False)
    if not isinstance(confirmed, bool):
        raise InvalidInput(
            "error.event.confirm_not_bool", details=[{"field": "confirm", "message": "must be true or false"}]
        )
    return confirmed


def _asked_for(resources: Resources, body: dict[str, Any]) -> Event:
    lexicons = known_lexicons(resources.settings.data_dir)
    return parse_event_change(body, resources.served.event.current_round, lexicons=lexicons)


@router.put("/event/round", tags=["console"], response_model=EventAnswer)
def set_current_round(
    body: RoundSetting, resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.set_round")]
) -> JSONResponse:
    """Set the round under way (TD): every kiosk and handheld pre-fills it in a new challenge (null: none).

    Written to the event file's `current_round` line and served at once. Refused (422) when the event has
    no rounds, or when the event file holds a hand edit that does not load.
    """
    return answer(resources.served.set_current_round(body.current_round, who.actor).as_dict())


@router.get("/lexicons/available", tags=["console"], response_model=AvailableLexiconsAnswer)
def available_lexicons(
    resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.see_lexicons")]
) -> JSONResponse:
    """The compiled lexicons and profiles in the data dir that a division may use (TD)."""
    return answer(
        {"names": Catalog(resources.settings.data_dir).names(), "served": list(resources.served.lexicon_views)}
    )
