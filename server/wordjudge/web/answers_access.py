"""The answers of the access API: TD sessions and accounts, pairing codes, enrolment, devices and alerts
(:mod:`wordjudge.access`). See :mod:`wordjudge.web.answers`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from wordjudge.model.auth import Role
from wordjudge.web.answers import MessageAnswer, Ok, Shape, absent


class SessionAnswer(Shape):
    """A TD signed in: the CSRF token that unsafe requests must send, and when the session ends."""

    actor: str
    role: Literal["td"]
    csrf_token: str
    expires_at: str
    proof_key: str | None = Field(
        description="The key the hall's servers prove themselves with to this holder (kiosk/shared/proof.js): the hall "
        "key's HMAC of the secret's digest, which the database lacks; null if this server has no hall key."
    )


class WhoamiAnswer(Shape):
    """Who a credential belongs to (``csrf_token``: a console session's only)."""

    actor: str
    role: Role
    channel: str
    division: str | None
    csrf_token: str = absent("A console session's CSRF token.")
    proof_key: str | None = absent(
        "A device's or a console session's proof key (kiosk/shared/proof.js): how a device paired before it had one "
        "learns it, from its own server; null if this server has no hall key."
    )


class TdCheckAnswer(Ok):
    actor: str
    role: Role


class SignedOutAnswer(Ok):
    actor: str


class DisabledAnswer(Ok):
    name: str


class DeviceAnswer(Shape):
    """An enrolled device: its role, division, last-seen time and state."""

    name: str
    role: Role
    division: str | None
    created_at: str
    created_by: str
    last_seen_at: str | None
    revoked_at: str | None
    revoked_by: str | None
    online: bool
    bound_client: str | None
    moved_to: str | None
    moved_at: str | None


class DevicesAnswer(Shape):
    devices: list[DeviceAnswer]


class EnrolledAnswer(Shape):
    """A device's token, shown this once, and the server it paired with."""

    token: str
    device: DeviceAnswer
    server_id: str
    event: str
    proof_key: str | None = Field(
        description="The key the hall's servers prove themselves with to this holder (kiosk/shared/proof.js): the hall "
        "key's HMAC of the secret's digest, which the database lacks; null if this server has no hall key."
    )


class HandedOutCode(Shape):
    """A pairing code with its pairing link and a QR code (SVG) of the link."""

    code: str
    role: Role
    division: str | None
    device_name: str | None
    expires_at: str
    repair: bool
    link: str
    qr_svg: str


class LinkNote(Shape):
    """Why a phone might not open the links (null when nothing is known against them)."""

    link_note: str | None
    link_note_message: MessageAnswer | None


class PairingCodeAnswer(HandedOutCode, LinkNote):
    pass


class PairingSheetAnswer(LinkNote):
    codes: list[HandedOutCode]


class AlertAnswer(Shape):
    """An alert for the TD (repeats within a minute counted: ``count``, ``last_at``)."""

    id: int
    created_at: str
    kind: str
    actor: str
    message: str
    count: int
    last_at: str


class AlertsAnswer(Shape):
    alerts: list[AlertAnswer]


class TdAccountAnswer(Shape):
    name: str
    created_at: str
    created_by: str
    disabled_at: str | None


class TdAccountsAnswer(Shape):
    tds: list[TdAccountAnswer]
