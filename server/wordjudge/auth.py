"""Who is asking: the actor, their role and the channel they use.

This is the seam for access control. Today nothing is authenticated: the web app
takes the actor and role a client states (see ``wordjudge.app``), defaulting to the
least privileged role, and so the server must stay on a trusted machine. Enrolled
devices with tokens and TD logins replace that; the rules below stay as they are.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from enum import StrEnum

from .errors import Forbidden, InvalidInput


class Role(StrEnum):
    KIOSK = "kiosk"  # a self-adjudication device
    RUNNER = "runner"  # a runner's handheld
    TD = "td"  # the tournament director or a deputy


_CHANNELS = {Role.KIOSK: "kiosk", Role.RUNNER: "handheld", Role.TD: "console"}


@dataclass(frozen=True)
class Principal:
    actor: str  # a device's or a person's name, recorded on every audit record
    role: Role
    channel: str  # kiosk, handheld, console, cli

    @property
    def is_td(self) -> bool:
        return self.role is Role.TD

    def require_td(self, action: str) -> None:
        """Raise :class:`Forbidden` unless this is the TD."""
        if not self.is_td:
            raise Forbidden(f"only the TD may {action}")


def principal(actor: str, role: Role, channel: str | None = None) -> Principal:
    """Build a principal, checking the actor's name. Raises :class:`InvalidInput`."""
    actor = actor.strip()
    if not (1 <= len(actor) <= 64) or not actor.isprintable():
        raise InvalidInput("the actor's name must be 1 to 64 printable characters")
    return Principal(actor, role, channel or _CHANNELS[role])


def cli_principal() -> Principal:
    """The TD at the server machine's command line."""
    return Principal(f"cli:{getpass.getuser()}", Role.TD, "cli")
