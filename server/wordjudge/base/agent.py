"""How wordjudge names itself to the servers it asks (the User-Agent of its own requests).

A hall server asks its peers for their signed claim, ``standby promote`` asks every listening port of its
machine for its health, and ``audit witness`` asks a server for its head. Each says who it is and why, so
that an access log (or whatever answers at a peer's address) tells one from another and from a browser.
"""

from __future__ import annotations

from wordjudge import __version__

PEER = "hall peer"  # a hall server asking a peer for its signed claim (hall/peers.py)
LOCAL_SCAN = "standby promote"  # the look for this machine's servers of a hall (hall/local.py)
WITNESS = "audit witness"  # the witness's look at a server's head (log/witness.py)


def user_agent(purpose: str) -> str:
    """The User-Agent of wordjudge's requests for ``purpose``: ``wordjudge/<version> (<purpose>)``."""
    return f"wordjudge/{__version__} ({purpose})"
