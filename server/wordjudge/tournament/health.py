"""What ``/api/health`` reports: whether the server can still do its job, and if not, why.

The server is **degraded** when it cannot stand behind a verdict: the audit log's last write
failed (nothing has been committed since), its writer has stopped, or a served lexicon's
compiled file is no longer the one verified at start (altered, replaced or missing). Low disk
space on the data dir is a **warning**: worth a look, not yet a failure; so is a lexicon named like
an edition it is not ("UNVERIFIED: not the official CSW24"), which the TD forced in, an event file
edited by hand that does not load (the server keeps serving the event it had), and a real event (an event
file) whose divisions use the DEMO list. Every check is cheap
(a ``stat`` per compiled trie, one ``statvfs``, counters the audit writer keeps), because
monitors and kiosks ask often.

Nothing here imports the web framework.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wordjudge import __version__
from wordjudge.base.errors import Message
from wordjudge.words.lexicon import TRIE_FILE

if TYPE_CHECKING:
    from wordjudge.log.audit import AuditLog
    from wordjudge.log.chain import Verification
    from wordjudge.log.jobs import WriterStats
    from wordjudge.words.profile import Profile

LOW_DISK_BYTES = 100 * 2**20  # below this much free space on the data dir's disk, health warns


@dataclass(frozen=True)
class FileStamp:
    """A file as it was when it was verified: enough to notice cheaply that it has changed since."""

    path: Path
    shown: str  # how reports name it: relative to the data dir
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path, data_dir: Path) -> FileStamp:
        """Stamp ``path`` now. Raises :class:`OSError` if it cannot be read."""
        info = path.stat()
        try:
            shown = str(path.relative_to(data_dir))
        except ValueError:
            shown = path.name
        return cls(path, shown, info.st_ino, info.st_size, info.st_mtime_ns)

    def state(self) -> str:
        """``unchanged``; ``changed`` (written in place); ``replaced`` (another file now has its name); ``missing``."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return "missing"
        except OSError:
            return "unreadable"
        if info.st_ino != self.inode:
            return "replaced"
        if (info.st_size, info.st_mtime_ns) != (self.size, self.mtime_ns):
            return "changed"
        return "unchanged"


@dataclass(frozen=True)
class Verified:
    """When a served profile was verified (trie files against their manifests, words against the fingerprint)."""

    at: str
    files: tuple[FileStamp, ...]

    @classmethod
    def now(cls, profile: Profile, data_dir: Path) -> Verified:
        """Stamp the compiled tries of a profile just verified. Raises :class:`OSError` if one is unreadable."""
        lexicons = [lexicon for lexicon in (profile.base, profile.secondary) if lexicon is not None]
        stamps = tuple(FileStamp.of(lexicon.directory / TRIE_FILE, data_dir) for lexicon in lexicons)
        return cls(_now(), stamps)


@dataclass(frozen=True)
class Health:
    """The health report: ``body`` is what ``/api/health`` sends; ``ok`` says whether it is 200 or 503."""

    ok: bool
    reasons: list[str]
    warnings: list[str]
    free_bytes: int | None
    body: dict[str, Any]


@dataclass(frozen=True)
class EventSeen:
    """What the health report says of the event served: its name, whether it is the demo, its language (a page
    that may not read the event yet, a kiosk never paired or the console's sign-in, speaks it from the first
    screen), the divisions of a real event served on the DEMO list (``Event.demo_list_divisions``), and why the
    event file on disk is not the event served (a hand edit that does not load), if so."""

    name: str
    demo: bool
    language: str | None = None
    demo_list_divisions: Sequence[str] = ()
    file_problem: Message | None = None


@dataclass(frozen=True)
class HallSeen:
    """What the health report says of this server's place in its hall (:meth:`~wordjudge.service.serving.Serving.view`)
    and of its clock (:meth:`~wordjudge.tournament.timekeeping.Timekeeper.view`), each reported as it is, and what
    each warns of (no synchronous standby follows, the standby could not take over; a step, record times held,
    another clock beyond the tolerance)."""

    view: Mapping[str, Any] | None = None
    warnings: Sequence[Message] = ()
    clock: Mapping[str, Any] | None = None
    clock_warnings: Sequence[Message] = ()


@dataclass(frozen=True)
class TransportSeen:
    """What the health report says of how the server is reached (:mod:`wordjudge.service.https`): HTTPS with the
    hall's certificate, with another, or plain HTTP (a single-machine demo; in a hall, a warning)."""

    view: Mapping[str, Any]
    warnings: Sequence[Message] = ()


def check(
    *,
    event: EventSeen,
    lexicon_views: Mapping[str, dict[str, Any]],
    verified: Mapping[str, Verified],
    audit: AuditLog,
    data_dir: Path,
    server_id: str,
    hall: HallSeen | None = None,
    transport: TransportSeen | None = None,
) -> Health:
    """Check the server's state and build the health report (never raises for a failed check: it reports it).
    ``hall``: for a server that knows its hall and its clock (see :class:`HallSeen`); ``transport``: how it is
    reached (see :class:`TransportSeen`)."""
    hall = hall or HallSeen()
    # Only warnings: the event served is still a whole, verified one, so every verdict stands; a server that no
    # standby follows still writes every verdict durably, on this machine only.
    warnings: list[Message] = [
        warning
        for warning in (
            event.file_problem,
            *hall.warnings,
            *hall.clock_warnings,
            *(transport.warnings if transport else ()),
        )
        if warning
    ]
    lexicons, reasons = _lexicons(lexicon_views, verified, warnings)
    # The log's state read once: the reasons and the view say the same.
    stats, writing, broken = audit.stats, audit.writing, audit.integrity.broken
    reasons += _audit_reasons(stats, writing, broken)
    free = _event_and_disk_warnings(event, data_dir, warnings)
    ok = not reasons
    body = _body(ok, reasons, warnings, event=event, server_id=server_id, lexicon_views=lexicon_views)
    body |= {
        "lexicons": lexicons,
        "audit": _audit_view(audit, stats, writing=writing, broken=broken),
        "disk": {"free_bytes": free, "warn_below_bytes": LOW_DISK_BYTES},
    }
    if transport is not None:
        body["transport"] = dict(transport.view)
    if hall.view is not None:
        body["hall"] = dict(hall.view)
    if hall.clock is not None:
        body["clock"] = dict(hall.clock)
    return Health(ok, body["reasons"], body["warnings"], free, body)


def _lexicons(
    views: Mapping[str, dict[str, Any]], verified: Mapping[str, Verified], warnings: list[Message]
) -> tuple[list[dict[str, Any]], list[Message]]:
    """Each lexicon as the report shows it (verified when, its files on disk), and the reasons the server is
    degraded by them (a file changed since it was verified); a lexicon forced in under an edition's name it is
    not adds a warning to ``warnings``."""
    lexicons, reasons = [], []
    for name, view in views.items():
        stamp = verified.get(name)
        states = {file.shown: file.state() for file in stamp.files} if stamp else {}
        on_disk = next((state for state in states.values() if state != "unchanged"), "unchanged")
        if on_disk != "unchanged":
            files = ", ".join(f"{shown} {state}" for shown, state in states.items() if state != "unchanged")
            reasons.append(Message("error.health.lexicon_changed", name=name, files=files))
        lexicons.append(
            {**view, "verified": stamp is not None, "verified_at": stamp.at if stamp else None, "on_disk": on_disk}
        )
        # Named like an edition it is not: the TD forced it in, so the server serves it, but says so.
        warnings.extend(
            Message("error.health.unverified", name=name, badge=c["badge"], description=c["description"])
            for c in view.get("unverified", ())
        )
    return lexicons, reasons


def _audit_reasons(stats: WriterStats, writing: bool, broken: Verification | None) -> list[Message]:
    """Why the audit log degrades the server: its chain failed a check (``broken``), its writer stopped (not
    ``writing``), or it is failing (its ``stats``)."""
    reasons = []
    if broken is not None:
        reasons.append(Message("error.health.audit_broken", check=broken.message()))
    if not writing:
        reasons.append(Message("error.health.audit_stopped"))
    elif stats.failing:
        reasons.append(
            Message("error.health.audit_failing", at=str(stats.last_failure_at), reason=str(stats.last_failure))
        )
    return reasons


def _event_and_disk_warnings(event: EventSeen, data_dir: Path, warnings: list[Message]) -> int | None:
    """Add to ``warnings`` a real event served on the demo list and a data folder low on disk; the free bytes."""
    if event.demo_list_divisions:  # a real event on the demo list: every verdict stands, on a list no tournament uses
        warnings.append(
            Message("error.health.demo_list", event=repr(event.name), divisions=", ".join(event.demo_list_divisions))
        )
    free = free_bytes(data_dir)
    if free is not None and free < LOW_DISK_BYTES:
        warnings.append(Message("error.health.low_disk", free=round(free / 2**20), below=LOW_DISK_BYTES // 2**20))
    return free


def _body(
    ok: bool,
    reasons: list[Message],
    warnings: list[Message],
    *,
    event: EventSeen,
    server_id: str,
    lexicon_views: Mapping[str, dict[str, Any]],
) -> dict[str, Any]:
    """The report's head: whether the server is ok, why not, what it warns of, and which server and event it is."""
    return {
        "ok": ok,
        # `status` is the HTTP code, as in every error body; `state` says it in words.
        "status": 200 if ok else 503,
        "state": "ok" if ok else "degraded",
        "reasons": [reason.text() for reason in reasons],
        "warnings": [warning.text() for warning in warnings],
        # The same, as catalogue keys and their parameters: screens say them in the event's language.
        "reason_messages": [reason.as_dict() for reason in reasons],
        "warning_messages": [warning.as_dict() for warning in warnings],
        "version": __version__,
        "event": event.name,
        "language": event.language,
        # Which server this is: a device remembers it from its pairing, and knows another server when it sees one.
        "server_id": server_id,
        "demo": any(item["demo"] for item in lexicon_views.values()) or event.demo,
    }


def _audit_view(audit: AuditLog, stats: WriterStats, *, writing: bool, broken: Verification | None) -> dict[str, Any]:
    """What the report says of the audit log: its head, its writer's work (``stats``), its checks."""
    head = audit.head
    return {
        # Not Head.as_dict(): dataclasses.asdict would be half the cost of this whole check.
        "records": head.records,
        "id": head.id,
        "hash": head.hash,
        "commits": stats.commits,
        "largest_batch": stats.largest_batch,
        "failures": stats.failures,
        "writable": writing and not stats.failing and broken is None,
        "text": head.text,
        "integrity": audit.integrity.as_dict(),
        "queue_depth": audit.queue_depth,
        "last_commit_at": stats.last_commit_at,
        "last_failure_at": stats.last_failure_at,
        "last_failure": stats.last_failure,
    }


def free_bytes(path: Path) -> int | None:
    """Free space on the file system holding ``path`` (for an unprivileged user), or None if it cannot be read."""
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
