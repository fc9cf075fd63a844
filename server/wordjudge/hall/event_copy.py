"""The hall's copy of the event file: the event its active server serves, on the hall's record, kept there as it
changes (replicated with the log) and adopted by a server taking over, so that the standby takes over with the event
as it was served.

The event itself is :mod:`wordjudge.tournament.event`'s, read from a data folder by
:mod:`wordjudge.tournament.event_loading`.

Nothing here imports the web framework.
"""

from __future__ import annotations

import logging
from pathlib import Path

from wordjudge.base.errors import InvalidInput
from wordjudge.hall import roles as hall
from wordjudge.tournament.event import EVENT_FILE, Event, dump_event, write_event_file
from wordjudge.tournament.event_loading import load_event

log = logging.getLogger(__name__)


def served_file(event: Event) -> tuple[str, str]:
    """The event file of ``event`` as the hall keeps it: its digest and its text."""
    body = dump_event(event)
    return hall.event_file_digest(body), body


BEFORE_TAKEOVER = "event-before-takeover.toml"  # this folder's own event file, set aside when the hall's is taken


def adopt_event_file(data_dir: Path, kept: tuple[str, str] | None) -> bool:
    """Serve the event the hall's last active server served (``kept``: its digest and text, from
    :func:`wordjudge.hall.roles.latest_event_file`): write it as ``data_dir``'s event file unless that file holds the
    same event already; the folder's own file is kept as :data:`BEFORE_TAKEOVER`. Returns whether it was
    written. Raises :class:`InvalidInput` if a file cannot be written."""
    if kept is None:
        return False
    digest, body = kept
    path = data_dir / EVENT_FILE
    try:
        own = path.read_text("utf-8")
    except FileNotFoundError:
        own = None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput("error.file.unreadable", path=str(path), reason=str(exc)) from exc
    if own is not None:
        try:
            if hall.event_file_digest(dump_event(load_event(data_dir, check_lexicons=False))) == digest:
                return False
        except InvalidInput:
            pass  # a file that does not load is not the hall's event: it is set aside
        write_event_file(data_dir / BEFORE_TAKEOVER, own)
    write_event_file(path, body)
    log.warning(
        "this folder's event file was not the event the hall's active server served last: that one is served "
        "now (this folder's own is kept as %s)",
        BEFORE_TAKEOVER,
    )
    return True
