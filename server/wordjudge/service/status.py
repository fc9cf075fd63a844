"""What the server reports of its state, read from its resources when asked: the health check
(``GET /api/health``) and the metrics (``GET /metrics``). Nothing here imports the web framework."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wordjudge import __version__
from wordjudge.base.metrics import State
from wordjudge.tournament.health import EventSeen, HallSeen, Health, TransportSeen
from wordjudge.tournament.health import check as check_health

if TYPE_CHECKING:  # the routes hand the resources in: the type only
    from wordjudge.service.resources import Resources
    from wordjudge.service.serving import Serving

# The alerts that are rate-limit refusals, and the reason the metrics give them.
_REFUSALS = {"rate_limit": "challenges", "login_throttled": "login", "enrol_throttled": "pairing"}


def health_report(resources: Resources, serving: Serving | None = None) -> Health:
    """Check the server's state: lexicon files, the audit log's writer, disk space (see
    :mod:`wordjudge.tournament.health`);
    with ``serving``, its place in its hall and its clock too."""
    served = resources.served
    event = EventSeen(
        served.event.name,
        served.event.demo,
        served.event.language,
        served.event.demo_list_divisions(),
        served.event_file_problem,
    )
    hall = None
    if serving is not None:
        log_time = resources.audit.head.time
        hall = HallSeen(
            serving.view(), serving.warnings(), serving.clock.view(log_time), serving.clock.warnings(log_time)
        )
    return check_health(
        event=event,
        lexicon_views=served.lexicon_views,
        verified=served.verified,
        audit=resources.audit,
        data_dir=resources.settings.data_dir,
        server_id=served.server.id,
        hall=hall,
        transport=transport_of_resources(resources),
    )


def transport_of_resources(resources: Resources) -> TransportSeen | None:
    """How the server of ``resources`` is reached, as checked when it started (None: not known)."""
    return resources.transport.seen() if resources.transport is not None else None


def metrics_text(resources: Resources) -> str:
    """The metrics in Prometheus' text format, with the state read now (devices, audit log, lexicons, health).

    Raises :class:`~wordjudge.base.errors.AccessUnavailable` if the device list cannot be read.
    """
    return resources.metrics.render(scrape_state(resources))


def scrape_state(resources: Resources) -> State:
    """What the metrics read at each scrape. Raises :class:`~wordjudge.base.errors.AccessUnavailable`."""
    health = health_report(resources)
    stats = resources.audit.stats
    raised = resources.access.alerts.raised
    return State(
        version=__version__,
        healthy=health.ok,
        devices=[(d.role.value, d.online) for d in resources.access.devices.all() if not d.revoked_at],
        lexicons=[(name, p.fingerprint, p.demo) for name, p in resources.served.profiles.items()],
        audit_records=resources.audit.head.records,
        audit_commits=stats.commits,
        audit_failures=stats.failures,
        audit_queue_depth=resources.audit.queue_depth,
        audit_writable=health.body["audit"]["writable"],
        refusals={reason: raised[kind] for kind, reason in _REFUSALS.items()},
        free_bytes=health.free_bytes,
    )
