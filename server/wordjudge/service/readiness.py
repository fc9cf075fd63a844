"""A standby's look at its own folder: could it serve the event as the active server serves it?

The compiled lexicons and profiles are each folder's, not the database's, so a takeover by a standby that lacks one
would fail, or adjudicate by another edition held under the same name. Every few seconds the standby opens each
lexicon and profile the active server serves (as its proven claim lists them, with their fingerprints) from its
own folder, and says in its health what it lacks or holds with another fingerprint; the active server warns the
TD of it (:mod:`wordjudge.service.serving`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from wordjudge.hall.peers import PeerSays, Unready, unready_for
from wordjudge.hall.roles import ACTIVE, LOOK_FAILURES

log = logging.getLogger(__name__)

LEXICONS_EVERY_S = 5.0  # how often a standby looks whether its folder could serve what the active server serves


class FolderReadiness:
    """What a standby's folder could not serve as the active server does (:attr:`unready`; None: nothing)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.unready: Unready | None = None
        self._at = -LEXICONS_EVERY_S  # when it last looked (time.monotonic)
        self._looking: threading.Thread | None = None

    def check(self, said: Callable[[], list[PeerSays]], standby: Callable[[], bool]) -> None:
        """Look again, in a thread of its own, if the last look is :data:`LEXICONS_EVERY_S` old: against what the
        peers last ``said``, kept only while this server is still a ``standby``."""
        now = time.monotonic()
        if now - self._at < LEXICONS_EVERY_S or (self._looking and self._looking.is_alive()):
            return
        self._at = now
        # In a thread of its own: a dead active machine keeps its peers waiting for their timeout, and the step
        # must not be slower to see the promotion for it.
        self._looking = threading.Thread(target=self._look, args=(said, standby), name="hall lexicons", daemon=True)
        self._looking.start()

    def _look(self, said: Callable[[], list[PeerSays]], standby: Callable[[], bool]) -> None:
        served = next((peer.lexicons for peer in said() if peer.proven and peer.role == ACTIVE and peer.lexicons), None)
        if served is None:  # as last seen: an active server that does not answer says nothing new
            return
        try:
            unready = unready_for(self.data_dir, served)
        except LOOK_FAILURES as exc:
            log.warning("this folder's lexicons could not be looked at (%s): trying again", exc)
            return
        if not standby():  # it took over meanwhile: the event is its own now
            return
        if unready != self.unready:
            if unready is not None:
                log.warning(
                    "this folder could not serve the event as the active server does: it lacks %s; other "
                    "fingerprints: %s",
                    ", ".join(unready.lacks) or "nothing",
                    ", ".join(unready.differs) or "none",
                )
            else:
                log.info("this folder holds every lexicon and profile the active server serves")
        self.unready = unready
