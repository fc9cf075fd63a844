"""Who is asking: the actor, their role, the channel they use, and what each role may do.

Every request to the server is made by a :class:`Principal`: an enrolled device
(a self-adjudication kiosk or a runner's handheld, by its token), a TD signed in to
the console (by a session cookie), or the TD at the server's command line. The
credentials themselves live in :mod:`wordjudge.access`; this module only says what
a principal is and checks the rules that depend on the role.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from enum import StrEnum

from .errors import Forbidden


class Role(StrEnum):
    KIOSK = "kiosk"  # a self-adjudication device
    RUNNER = "runner"  # a runner's handheld
    TD = "td"  # the tournament director or a deputy


CHANNELS = {Role.KIOSK: "kiosk", Role.RUNNER: "handheld", Role.TD: "console"}


@dataclass(frozen=True)
class Principal:
    actor: str  # a device's or a person's name, recorded on every audit record
    role: Role
    channel: str  # kiosk, handheld, console, cli
    division: str | None = None  # a device enrolled for one division may only submit challenges there

    @property
    def is_td(self) -> bool:
        return self.role is Role.TD

    def require_td(self, action: str) -> None:
        """Raise :class:`Forbidden` unless this is the TD."""
        if not self.is_td:
            raise Forbidden(f"only the TD may {action}")

    def require_division(self, division: str) -> None:
        """Raise :class:`Forbidden` if this device is enrolled for another division."""
        if self.division is not None and self.division.casefold() != division.casefold():
            raise Forbidden(f"{self.actor} is enrolled for division {self.division}, not {division}: ask the TD")


def cli_principal() -> Principal:
    """The TD at the server machine's command line."""
    return Principal(f"cli:{getpass.getuser()}", Role.TD, "cli")
