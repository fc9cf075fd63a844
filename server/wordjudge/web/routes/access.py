"""The access API under ``/api/``: TD sign-in and TD accounts, pairing codes, enrolment, devices and alerts.

Thin glue over :class:`wordjudge.access.access_store.AccessStore`; the rules live there.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import Field

from wordjudge.access.accounts import SESSION_TTL
from wordjudge.access.devices import Device
from wordjudge.access.pairing import EXAMPLE, MAX_OPEN_CODES, PairingCode
from wordjudge.base.qr import qr_svg
from wordjudge.hall.proof import digest
from wordjudge.model.auth import Principal, Role
from wordjudge.model.input_rules import Name
from wordjudge.service.links import DeviceUrl, pairing_link, server_url
from wordjudge.service.serving import Serving
from wordjudge.tournament.changes import device_revoked, put_on_record, repair_code_made, td_added, td_disabled
from wordjudge.web.answers import answer
from wordjudge.web.answers_access import (
    AlertsAnswer,
    DeviceAnswer,
    DevicesAnswer,
    DisabledAnswer,
    EnrolledAnswer,
    PairingCodeAnswer,
    PairingSheetAnswer,
    SessionAnswer,
    SignedOutAnswer,
    TdAccountAnswer,
    TdAccountsAnswer,
    TdCheckAnswer,
    WhoamiAnswer,
)
from wordjudge.web.bodies import StrictBody
from wordjudge.web.deps import (
    ERROR_RESPONSES,
    SESSION_COOKIE,
    LoginIn,
    PrincipalDep,
    ResourcesDep,
    ServingDep,
    client_address,
    td_only,
)

router = APIRouter(prefix="/api", responses=ERROR_RESPONSES)

_DeviceName = Annotated[Name, Path(description="The device's name.")]


class PairingCodeIn(StrictBody):
    role: Literal["kiosk", "runner"]
    division: str | None = Field(default=None, max_length=100, description="Limit the device to one division.")
    name: Name | None = Field(default=None, description="The device's name (default: kiosk-N).")


class EnrolIn(StrictBody):
    code: str = Field(max_length=20, description=f"The pairing code the TD gave, e.g. {EXAMPLE}.")


def _proof_key(serving: Serving, of: str, secret: str) -> str | None:
    """The proof key of the holder of ``secret`` (a device's token, a session's CSRF token): made from the hall
    key, which the database lacks (None: this server has none)."""
    return serving.key.proof_key(of, digest(secret)) if serving.key is not None else None


@router.post("/session", status_code=201, tags=["access"], response_model=SessionAnswer)
async def login(body: LoginIn, request: Request, resources: ResourcesDep, serving: ServingDep) -> JSONResponse:
    """Sign a TD in: sets the session cookie and returns the CSRF token that unsafe requests must send, and the
    session's proof key (the hall's servers prove themselves to the console with it)."""
    session = await run_in_threadpool(
        resources.access.tds.login, body.name, body.password, client=client_address(request)
    )
    response = JSONResponse(
        {
            "actor": session.principal.actor,
            "role": "td",
            "csrf_token": session.csrf_token,
            "expires_at": session.expires_at,
            "proof_key": _proof_key(serving, "session", session.csrf_token),
        },
        status_code=201,
    )
    response.set_cookie(
        SESSION_COOKIE,
        session.token,
        max_age=SESSION_TTL,
        path="/",
        secure=resources.settings.tls,
        httponly=True,
        samesite="strict",
    )
    return response


@router.post("/td-check", tags=["access"], response_model=TdCheckAnswer)
async def check_td(body: LoginIn, request: Request, resources: ResourcesDep) -> JSONResponse:
    """Check a TD's name and password without signing in (a kiosk's settings screen asks for them).

    Throttled like signing in; opens no session and sets no cookie.
    """
    principal = await run_in_threadpool(
        resources.access.tds.check, body.name, body.password, client=client_address(request)
    )
    return answer({"ok": True, "actor": principal.actor, "role": principal.role.value})


@router.get("/session", tags=["access"], response_model=WhoamiAnswer)
async def whoami(request: Request, who: PrincipalDep, serving: ServingDep) -> JSONResponse:
    """Who this credential belongs to: name, role, division; for a console session, its CSRF token; and the
    device's or session's proof key (a device paired before it was handed one learns it here, from its own
    server, the one its page came from)."""
    body: dict[str, Any] = {
        "actor": who.actor,
        "role": who.role.value,
        "channel": who.channel,
        "division": who.division,
    }
    csrf_token = getattr(request.state, "csrf_token", None)  # set when a console session signed the request
    if csrf_token:
        body["csrf_token"] = csrf_token
        body["proof_key"] = _proof_key(serving, "session", csrf_token)
    device_token = getattr(request.state, "device_token", None)  # set when a device's token signed the request
    if device_token:
        body["proof_key"] = _proof_key(serving, "device", device_token)
    return answer(body)


@router.delete("/session", tags=["access"], response_model=SignedOutAnswer)
async def logout(request: Request, resources: ResourcesDep, who: PrincipalDep) -> JSONResponse:
    """Sign the TD out: the session ends on the server and the cookie is cleared."""
    if SESSION_COOKIE in request.cookies:
        resources.access.tds.logout(request.cookies[SESSION_COOKIE])
    response = JSONResponse({"ok": True, "actor": who.actor})
    response.delete_cookie(SESSION_COOKIE, path="/", secure=resources.settings.tls, httponly=True, samesite="strict")
    return response


@router.post("/pairing-codes", status_code=201, tags=["access"], response_model=PairingCodeAnswer)
def create_pairing_code(
    body: PairingCodeIn,
    request: Request,
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.pairing_codes")],
) -> JSONResponse:
    """A one-time code (30 minutes) that enrols one kiosk or handheld, with a QR code of its pairing link (TD).

    The link points at `--public-url`, else at the server's mDNS name (`wordjudge.local`) when it is
    announced, else at the address this request came to unless that is loopback, else at a LAN address;
    `link_note` says why a phone might not open it (null when nothing is known against it).
    """
    division = resources.served.event.division(body.division).name if body.division else None
    code = resources.access.pairing.create_code(Role(body.role), division, body.name, by=who.actor)
    base = server_url(resources.settings, resources.mdns, seen_at=str(request.base_url))
    return answer(_handed_out(code, base) | _link_note(base), 201)


class SheetDeviceIn(StrictBody):
    name: Name = Field(description="The device's name, e.g. kiosk-07.")
    division: str | None = Field(default=None, max_length=100, description="Limit the device to one division.")


class PairingSheetIn(StrictBody):
    role: Literal["kiosk", "runner"]
    devices: list[SheetDeviceIn] = Field(min_length=1, max_length=MAX_OPEN_CODES)


@router.post("/pairing-sheets", status_code=201, tags=["access"], response_model=PairingSheetAnswer)
def create_pairing_sheet(
    body: PairingSheetIn,
    request: Request,
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.pairing_codes")],
) -> JSONResponse:
    """One code per named device, all or none, to print on one sheet (a hall: kiosk-01..kiosk-40) (TD).

    Each code is as `POST /pairing-codes` makes it (with its link and QR code); they live 30 minutes.
    """
    event = resources.served.event
    wanted = [(d.name, event.division(d.division).name if d.division else None) for d in body.devices]
    codes = resources.access.pairing.create_codes(Role(body.role), wanted, by=who.actor)
    base = server_url(resources.settings, resources.mdns, seen_at=str(request.base_url))
    return answer({"codes": [_handed_out(code, base) for code in codes]} | _link_note(base), 201)


@router.post("/enrol", status_code=201, tags=["access"], response_model=EnrolledAnswer)
def enrol(body: EnrolIn, request: Request, resources: ResourcesDep, serving: ServingDep) -> JSONResponse:
    """Swap a pairing code for this device's token, shown this once; send it as `Authorization: Bearer`. With it,
    the device's proof key: the hall's servers prove themselves to the device with it."""
    enrolled = resources.access.pairing.enrol(body.code, client=client_address(request))
    # The device keeps which server it paired with: facing another one later, it says so and keeps its token.
    server = {"server_id": resources.served.server.id, "event": resources.served.event.name}
    proof_key = _proof_key(serving, "device", enrolled.token)
    return answer({"token": enrolled.token, "device": enrolled.device.as_dict(), **server, "proof_key": proof_key}, 201)


@router.get("/devices", tags=["access"], response_model=DevicesAnswer)
def devices(resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.see_devices")]) -> JSONResponse:
    """Every enrolled device with its role, division, last-seen time and state (TD)."""
    return answer({"devices": [device.as_dict() for device in resources.access.devices.all()]})


@router.post("/devices/{name}/revoke", tags=["access"], response_model=DeviceAnswer)
def revoke_device(
    name: _DeviceName, resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.revoke_devices")]
) -> JSONResponse:
    """Revoke a device: its next request fails (TD). Put on record first (a `change` record `device.revoked`
    naming its role and division; 503 if it cannot be, and the device stays as it was); revoking a revoked
    device changes nothing."""

    def put_on_record_first(device: Device) -> None:
        put_on_record(resources.audit, [device_revoked(device)], actor=who.actor, event=resources.served.event.name)

    return answer(resources.access.devices.revoke(name, by=who.actor, before_commit=put_on_record_first).as_dict())


@router.post("/devices/{name}/pairing-code", status_code=201, tags=["access"], response_model=PairingCodeAnswer)
def repair_device(
    name: _DeviceName,
    request: Request,
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.repair")],
) -> JSONResponse:
    """A one-time code (30 minutes) that pairs this kiosk or handheld again, as `POST /pairing-codes` makes one (TD).

    For a device replaced, wiped, or revoked by mistake: the device that enrols with the code becomes `name`
    (same role and division) with a new token bound to its address, and is no longer revoked; the old token
    stops working then. A newer code for the device, or revoking it, voids this one. `repair` is true.
    404 for an unknown device, 422 for a monitor.
    """
    revoked = resources.access.devices.get(name).revoked_at is not None  # 404 for an unknown device

    def put_on_record_first(device: str, division: str | None) -> None:
        change = repair_code_made(device, division, was_revoked=revoked)
        put_on_record(resources.audit, [change], actor=who.actor, event=resources.served.event.name)

    code = resources.access.pairing.create_repair_code(name, by=who.actor, before_commit=put_on_record_first)
    base = server_url(resources.settings, resources.mdns, seen_at=str(request.base_url))
    return answer(_handed_out(code, base) | _link_note(base), 201)


def _handed_out(code: PairingCode, base: DeviceUrl) -> dict[str, Any]:
    """A pairing code as the console shows it: with its pairing link and a QR code of the link."""
    link = pairing_link(base.url, code.role, code.code)
    return {**code.as_dict(), "link": link, "qr_svg": qr_svg(link)}


def _link_note(base: DeviceUrl) -> dict[str, Any]:
    """Why a phone might not open the links (null when nothing is known against them), in words and as a message."""
    return {"link_note": base.note, "link_note_message": base.said.as_dict() if base.said else None}


class MoveIn(StrictBody):
    client: str = Field(max_length=100, description="The address the device's token was refused from (moved_to).")


@router.post("/devices/{name}/accept-move", tags=["access"], response_model=DeviceAnswer)
def accept_move(
    name: _DeviceName,
    body: MoveIn,
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.accept_move")],
) -> JSONResponse:
    """Let a device's token work from the new address it was refused from (it moved: a new cable, Wi-Fi) (TD).

    409 if the token was last refused from another address than `client` (it moved again since).
    """
    return answer(resources.access.devices.accept_move(name, body.client, by=who.actor).as_dict())


@router.get("/alerts", tags=["access"], response_model=AlertsAnswer)
def alerts(resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.see_alerts")]) -> JSONResponse:
    """Alerts for the TD, newest first: rate limits, throttled guessing, devices that moved, lost writes (TD).

    Repeats within a minute are counted (`count`, `last_at`) rather than listed; the newest of each kind are
    listed, so a flood of one kind cannot hide another.
    """
    return answer({"alerts": [asdict(alert) for alert in resources.access.alerts.latest()]})


@router.get("/tds", tags=["access"], response_model=TdAccountsAnswer)
def tds(resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.see_tds")]) -> JSONResponse:
    """The TD accounts (TD)."""
    return answer({"tds": [vars(account) for account in resources.access.tds.all()]})


@router.post("/tds", status_code=201, tags=["access"], response_model=TdAccountAnswer)
async def add_td(
    body: LoginIn, resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.add_tds")]
) -> JSONResponse:
    """Add a TD or deputy account (TD), put on record first (a `change` record `td.added`; 503 if it cannot be)."""

    def put_on_record_first(name: str) -> None:
        put_on_record(
            resources.audit, [td_added(name, by=who.actor)], actor=who.actor, event=resources.served.event.name
        )

    account = await run_in_threadpool(
        resources.access.tds.add, body.name, body.password, by=who.actor, before_commit=put_on_record_first
    )
    return answer(vars(account), 201)


@router.post("/tds/{name}/disable", tags=["access"], response_model=DisabledAnswer)
def disable_td(
    name: Annotated[Name, Path()],
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.disable_tds")],
) -> JSONResponse:
    """Disable a TD account and end its sessions (TD; not one's own), put on record first (a `change` record
    `td.disabled`; 503 if it cannot be)."""
    who.require_not_own_account(name)
    was = {account.name: account for account in resources.access.tds.all()}

    def put_on_record_first(found: str) -> None:
        change = td_disabled(found, was_disabled=found in was and was[found].disabled_at is not None)
        put_on_record(resources.audit, [change], actor=who.actor, event=resources.served.event.name)

    resources.access.tds.disable(name, before_commit=put_on_record_first)
    return answer({"ok": True, "name": name.strip()})
