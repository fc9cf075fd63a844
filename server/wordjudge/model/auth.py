"""Who is asking: the actor, their role, the channel they use, and what each role may do.

Every request to the server is made by a :class:`Principal`: an enrolled device
(a self-adjudication kiosk or a runner's handheld, by its token), a monitoring system
(a device of role monitor, which may read the metrics and nothing else), a TD signed
in to the console (by a session cookie), or the TD at the server's command line. The
credentials themselves live in :mod:`wordjudge.access.access_store`; this module only says what
a principal is and checks the rules that depend on the role.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from wordjudge.base.errors import Forbidden, InvalidInput, NotFound

if TYPE_CHECKING:
    from wordjudge.model.records import Record


class Role(StrEnum):
    KIOSK = "kiosk"  # a self-adjudication device
    RUNNER = "runner"  # a runner's handheld
    TD = "td"  # the tournament director or a deputy
    MONITOR = "monitor"  # a monitoring system (Prometheus): reads GET /metrics, nothing else


CHANNELS = {Role.KIOSK: "kiosk", Role.RUNNER: "handheld", Role.TD: "console", Role.MONITOR: "monitor"}


@dataclass(frozen=True)
class Principal:
    actor: str  # a device's or a person's name, recorded on every audit record
    role: Role
    channel: str  # kiosk, handheld, console, cli
    division: str | None = None  # a device enrolled for one division may only submit challenges there

    @property
    def is_td(self) -> bool:
        return self.role is Role.TD

    def require_not_monitor(self) -> None:
        """Raise :class:`Forbidden` for a monitor: its token reads the metrics and nothing else."""
        if self.role is Role.MONITOR:
            raise Forbidden("error.access.monitor_only_metrics", actor=self.actor)

    def require_metrics_reader(self) -> None:
        """Raise :class:`Forbidden` unless this is a monitor or the TD (kiosks and handhelds do not read metrics)."""
        if self.role not in (Role.MONITOR, Role.TD):
            raise Forbidden("error.access.metrics_readers")

    def require_td(self, refusal: str) -> None:
        """Raise :class:`Forbidden` with the message ``refusal`` (an ``error.td_only.*`` key: "only the TD may
        ...") unless this is the TD."""
        if not self.is_td:
            raise Forbidden(refusal)

    def require_may_see(self, record: Record) -> None:
        """Raise :class:`NotFound` unless this is the TD or the device that submitted ``record``.

        Not found rather than forbidden: a device learns nothing of the records other devices made.
        """
        if not self.is_td and record.actor != self.actor:
            raise NotFound("error.record.not_yours", id=str(record.id), actor=self.actor)

    def require_not_own_account(self, name: str) -> None:
        """Raise :class:`Forbidden` if ``name`` is this TD's own account (another TD, or the command line, may
        disable it)."""
        if name.strip().casefold() == self.actor.casefold():
            raise Forbidden("error.td.disable_self")

    def require_division(self, division: str) -> None:
        """Raise :class:`Forbidden` if this device is enrolled for another division."""
        if self.division is not None and self.division.casefold() != division.casefold():
            raise Forbidden("error.access.other_division", actor=self.actor, enrolled=self.division, division=division)


def cli_principal() -> Principal:
    """The TD at the server machine's command line."""
    return Principal(f"cli:{getpass.getuser()}", Role.TD, "cli")


def device_role(role: Role | str, *, pairing: bool) -> Role:
    """The role of a device to enrol: kiosk or runner, or (not by a pairing code) monitor.

    Raises :class:`InvalidInput` for any other role.
    """
    try:
        chosen = Role(role)
    except ValueError:
        chosen = Role.TD
    if chosen is Role.TD:
        raise InvalidInput("error.device.role_paired" if pairing else "error.device.role", role=repr(role))
    if chosen is Role.MONITOR and pairing:
        raise InvalidInput("error.device.monitor_pairing")
    return chosen
