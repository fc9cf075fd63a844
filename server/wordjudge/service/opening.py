"""Opening what a running server holds (:class:`~wordjudge.service.resources.Resources`): the event and its
lexicons, the audit log, the access database and the challenge service, each checked as it opens, in an order
that stops a bad start before anything is written.

:class:`~wordjudge.service.serving.Serving` says when to open them (at its start, or when it takes the hall over);
this module says what, and hands it its opener (:func:`serving_of`, for the shells that start a server).
Nothing here imports the web framework.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from argon2 import PasswordHasher

from wordjudge.access.access_store import AccessStore
from wordjudge.base.metrics import Metrics
from wordjudge.judging.challenges import ChallengeService
from wordjudge.log.audit import note_place, open_log, probe
from wordjudge.service.https import transport_of
from wordjudge.service.processes import Process, event_source, leads, share_event
from wordjudge.service.resources import Resources
from wordjudge.service.serving import Serving
from wordjudge.tournament.served import ServedEvent

if TYPE_CHECKING:
    from wordjudge.service.settings import Settings

log = logging.getLogger(__name__)


def open_resources(
    settings: Settings, *, hasher: PasswordHasher | None = None, process: Process | None = None
) -> Resources:
    """Read the event, open and verify every lexicon its divisions use, and open the access database and the
    audit log.

    ``hasher`` hashes and checks the TDs' passwords; without it (as ``wordjudge serve`` opens them), Argon2id at
    its full cost. Only tests hand in another: a cheap one (tests/helpers.py), never configurable by a setting.
    ``process``: one of the processes of a server of several (:mod:`wordjudge.service.processes`): its log
    is shared,
    and the processes but the first serve the event the first serves.

    Raises what :meth:`ServedEvent.open` raises (event file, lexicons), and
    :class:`~wordjudge.base.errors.AccessUnavailable` or :class:`~wordjudge.base.errors.AuditUnavailable`,
    naming the file (or database) at fault, and :class:`InvalidInput` for a database that is not the event's, or a
    certificate or key that must not be served (:func:`~wordjudge.service.https.transport_of`).
    """
    # A certificate or key that must not be served stops the start first, naming the file.
    transport = transport_of(settings)
    # A database that cannot be reached, or that another server writes, stops the start before anything is
    # written in the data folder (the server's identity, a demo set aside, the access store).
    probe(settings.location, alone=process is None)
    served = ServedEvent.open(settings.data_dir, source=event_source(process))
    event, views = served.event, served.lexicon_views
    audit = open_log(settings.location, shared=process.token if process else None)
    try:
        audit.start(check_whole=leads(process))  # one whole check a server
        access = AccessStore(settings.location, challenges_per_minute=event.challenges_per_minute, hasher=hasher).open()
    except BaseException:
        audit.close()
        raise
    metrics = Metrics()
    challenges = ChallengeService(served, audit, access, metrics)
    served.on_change = challenges.serve
    try:
        note_place(audit.location)
        share_event(served, process, audit)
    except BaseException:
        audit.close()
        access.close()
        raise
    log.info("event %s%s", event.name, " (demo event: no event.toml)" if event.demo else "")
    for division in event.divisions:
        log.info("division %s: %s, rule %s", division.name, views[division.lexicon]["label"], division.rule)
    for name, view in views.items():
        for claim in view["unverified"]:  # forced in by the TD: served, and said at every start
            log.warning("lexicon %s: %s (%s)", name, claim["badge"], claim["description"])
    log.info("audit log %s: %d record(s)", audit.where, audit.head.records)
    return Resources(settings, served, audit, access, metrics, challenges, process=process, transport=transport)


def serving_of(
    settings: Settings,
    *,
    resources: Resources | None = None,
    hasher: PasswordHasher | None = None,
    process: Process | None = None,
) -> Serving:
    """What serves ``settings``: a :class:`~wordjudge.service.serving.Serving` that opens its resources with
    :func:`open_resources` (``hasher`` and ``process`` as it takes them), unless ``resources`` opened already are
    handed in."""
    return Serving(
        settings,
        opener=lambda: open_resources(settings, hasher=hasher, process=process),
        resources=resources,
        process=process,
    )
