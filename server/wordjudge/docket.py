"""What a printed docket shows of a record: its verdict (never per-word results), its lexicon, its place in
the audit log's chain, and a QR code of its id."""

from __future__ import annotations

from typing import Any

from .adjudication import verdict_view
from .chain import Head, head_text
from .editions import short
from .qr import qr_svg
from .records import Record


def docket_view(record: Record, lexicon_view: dict[str, Any] | None, head: Head) -> dict[str, Any]:
    """The docket of ``record``: ``lexicon_view`` is what screens show of its lexicon (None: no longer served),
    ``head`` the audit log's head now. Checks nobody's right to see it: the caller does."""
    return {
        "record": verdict_view(record),
        "lexicon_name": lexicon_view["shown_name"] if lexicon_view else record.lexicon,
        "lexicon_unverified": lexicon_view["unverified"] if lexicon_view else [],  # its UNVERIFIED badges
        "short_fingerprint": short(record.fingerprint),
        "head": head.as_dict(),
        # The record's own place in the chain, as printed: with it, the docket can check the log later.
        "head_text": head_text(record.id, record.hash) if record.hash_is_public else None,
        "qr_svg": qr_svg(
            f"wordjudge:challenge:{record.id}" + (f":{record.hash[:16]}" if record.hash_is_public else ""), scale=3
        ),
    }
