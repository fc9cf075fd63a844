"""What this machine's clock follows, as health tells it: chrony's source, and whether chrony authenticates it.

A hall's standby follows the active machine's clock (deploy/hall.md, step 5). After a failover that machine is dead,
and whatever takes its address would be the standby's time source: unless chrony authenticates it (a symmetric key
the two machines share, ``server ADDRESS key 1``; or NTS), when a forged answer is dropped. The server reads what
it can without privileges: chrony's tracking (its source now, by ``chronyc -n -c tracking``, a monitoring
command chronyd answers anyone on the machine) and chrony's configuration files (world-readable), where the source's
``server`` line says ``key`` or ``nts``. (``chronyc authdata`` says it too, but only to root.) A source on the
hall's network (a private address) that chrony does not authenticate is a health warning. Nothing here imports the
web framework.
"""

from __future__ import annotations

import glob
import ipaddress
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wordjudge.base.errors import Message

# chrony's configuration as Debian lays it out (deploy/hall.md installs the hall's file in conf.d).
CHRONY_CONFIGS = ("/etc/chrony/chrony.conf", "/etc/chrony/conf.d/*.conf", "/etc/chrony/sources.d/*.sources")
READ_EVERY_S = 60.0  # seconds between two readings (chronyc is a process: not once a second)
_SOURCE_DIRECTIVES = {"server", "pool", "peer"}
_UNSYNCHRONISED = "Not synchronised"


@dataclass(frozen=True)
class TimeSource:
    """What the clock follows: ``via`` chrony (or ``unknown``: no chronyc, or no chronyd answering);
    ``reference``, the source's address ("" for none: the machine's own clock, or chrony's ``local`` stratum);
    whether chrony is ``synchronised`` to it; and whether chrony ``authenticated`` it (None: not known, the
    source in no configuration file this server can read)."""

    via: str
    reference: str = ""
    synchronised: bool = False
    authenticated: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "via": self.via,
            "reference": self.reference,
            "synchronised": self.synchronised,
            "authenticated": self.authenticated,
        }

    def warning(self) -> Message | None:
        """The warning of a source on the hall's network (a private address) that chrony follows without
        authenticating it; None for anything else."""
        if self.via != "chrony" or not self.synchronised or self.authenticated is not False:
            return None
        try:
            private = ipaddress.ip_address(self.reference).is_private
        except ValueError:
            return None
        return Message("error.clock.source_unauthenticated", reference=self.reference) if private else None


def tracking(text: str) -> tuple[str, bool]:
    """chrony's source and whether it is synchronised, from ``chronyc -n -c tracking``'s line (its reference's
    address is its second field, its leap status its last). Raises :class:`ValueError` for anything else."""
    fields = text.strip().split(",")
    if len(fields) < 14:
        raise ValueError(f"not chronyc's tracking: {text!r}")
    reference, leap = fields[1], fields[-1]
    local = reference.startswith("127.127.") or fields[0] == "7F7F0101"  # chrony's own `local` stratum
    return ("" if local else reference), leap != _UNSYNCHRONISED and bool(reference) and not local


def keyed_sources(texts: Iterable[str]) -> dict[str, bool]:
    """Each source named by a ``server``, ``pool`` or ``peer`` directive of chrony's configuration ``texts``:
    whether chrony authenticates it (``key N`` or ``nts`` on its line)."""
    sources: dict[str, bool] = {}
    for text in texts:
        for line in text.splitlines():
            words = line.split("#", 1)[0].split()
            if len(words) >= 2 and words[0] in _SOURCE_DIRECTIVES:
                options = words[2:]
                keyed = "nts" in options or ("key" in options and options.index("key") + 1 < len(options))
                sources[words[1]] = sources.get(words[1], False) or keyed
    return sources


def _config_texts(patterns: Sequence[str]) -> list[str]:
    texts = []
    for pattern in patterns:
        for name in sorted(glob.glob(pattern)):
            try:
                texts.append(Path(name).read_text("utf-8", errors="replace"))
            except OSError:
                continue  # unreadable: its sources are not known
    return texts


def read_source(
    chronyc: Sequence[str] = ("chronyc",),
    configs: Sequence[str] = CHRONY_CONFIGS,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> TimeSource:
    """What this machine's clock follows now, as chrony (``chronyc``, a command) says and its configuration
    files (``configs``, glob patterns) tell. Never raises: ``unknown`` when chrony cannot be asked."""
    try:
        said = run([*chronyc, "-n", "-c", "tracking"], capture_output=True, text=True, timeout=2, check=False)
        if said.returncode != 0:
            return TimeSource("unknown")
        reference, synchronised = tracking(said.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return TimeSource("unknown")
    if not reference:
        return TimeSource("chrony", "", synchronised)
    return TimeSource("chrony", reference, synchronised, keyed_sources(_config_texts(configs)).get(reference))
