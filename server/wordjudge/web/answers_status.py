"""The answers about the server's state: its health (:mod:`wordjudge.tournament.health`,
:meth:`wordjudge.service.serving.Serving.health_body`) and the hall's claims and proofs
(:mod:`wordjudge.hall.peers`). See :mod:`wordjudge.web.answers`."""

from __future__ import annotations

from typing import Any

from wordjudge.web.answers import MessageAnswer, Shape, absent
from wordjudge.web.answers_event import LexiconAnswer


class HealthLexiconAnswer(LexiconAnswer):
    """A lexicon served, and whether its files are still those verified at start."""

    verified: bool
    verified_at: str | None
    on_disk: str


class HealthAuditAnswer(Shape):
    """The audit log: its head, its writer's commits and failures, whether it is writable, its queue."""

    records: int
    id: int | None
    hash: str
    commits: int
    largest_batch: int
    failures: int
    writable: bool
    text: str
    integrity: dict[str, Any]
    queue_depth: int
    last_commit_at: str | None
    last_failure_at: str | None
    last_failure: str | None


class DiskAnswer(Shape):
    free_bytes: int | None
    warn_below_bytes: int


class HealthAnswer(Shape):
    """Whether the server can do its job (`state` ok, degraded, or a hall role when it is not active), why not
    (`reasons`), what it warns of; the rest is an active server's only (``hall`` and ``clock``: a hall server's)."""

    ok: bool
    status: int
    state: str
    reasons: list[str]
    warnings: list[str]
    reason_messages: list[MessageAnswer]
    warning_messages: list[MessageAnswer]
    server_id: str | None
    version: str = absent()
    event: str = absent()
    language: str | None = absent()
    demo: bool = absent()
    lexicons: list[HealthLexiconAnswer] = absent()
    audit: HealthAuditAnswer = absent()
    disk: DiskAnswer = absent()
    hall: dict[str, Any] = absent("This server's place in its hall: role, epoch, the active server, every server.")
    clock: dict[str, Any] = absent("This server's clock, and the others' against it.")
    transport: dict[str, Any] = absent(
        "How devices reach this server: scheme https with the hall's certificate (certificate hall, its CA's "
        "SHA-256 fingerprint) or another (other), or http (certificate null; demo true alone, a warning in a hall)."
    )


class ClaimBody(Shape):
    """What a hall server says of itself, over the asker's nonce."""

    url: str
    role: str
    epoch: int | None
    active_url: str | None
    time: str
    nonce: str
    lexicons: dict[str, str] | None
    unready: dict[str, Any] | None


class ClaimAnswer(Shape):
    """A server's claim and its MAC with the hall key (null without a key: it then proves nothing)."""

    claim: ClaimBody
    mac: str | None


class ProofAnswer(Shape):
    """The active server's proof to a device or console: ``mac`` over the nonce, its address, role and epoch."""

    url: str
    role: str
    epoch: int | None
    mac: str
