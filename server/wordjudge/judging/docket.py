"""What a printed docket shows of a record: its words and verdict (never per-word results), the challenge's final
verdict after its re-checks, reissues and rulings, its lexicon, its own place in the audit log's chain, and a QR
code of its id and that place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wordjudge.base.qr import qr_svg
from wordjudge.judging.record_views import verdict_view
from wordjudge.log.chain import Head, head_text
from wordjudge.words.editions import short

if TYPE_CHECKING:
    from wordjudge.judging.final_verdict import FinalVerdict
    from wordjudge.model.records import Record


def docket_qr_text(record: Record) -> str:
    """What a docket's QR code says: ``wordjudge:challenge:ID:HEX`` (the record's head, as printed), or
    ``wordjudge:challenge:ID`` for a record whose hash may not leave the server."""
    return f"wordjudge:challenge:{head_text(record.id, record.hash) if record.hash_is_public else record.id}"


def docket_view(record: Record, lexicon_view: dict[str, Any] | None, head: Head, final: FinalVerdict) -> dict[str, Any]:
    """The docket of ``record``: ``lexicon_view`` is what screens show of its lexicon (None: no longer served),
    ``head`` the audit log's head now, ``final`` the final verdict of the challenge it belongs to. Checks
    nobody's right to see it: the caller does."""
    qr_text = docket_qr_text(record)
    return {
        "record": verdict_view(record),
        # Verdicts, kinds, ids, words and TD names of the linked records: never their notes (a TD's note may
        # name a word) or per-word results.
        "final": final.as_dict(),
        "lexicon_name": lexicon_view["shown_name"] if lexicon_view else record.lexicon,
        "lexicon_unverified": lexicon_view["unverified"] if lexicon_view else [],  # its UNVERIFIED badges
        # Its tiles that the board could hold two ways (Welsh NG): a word holding one is printed tile by tile.
        "tiles_split": (lexicon_view["tiles"] or {}).get("split", []) if lexicon_view else [],
        "short_fingerprint": short(record.fingerprint),
        "head": head.as_dict(),
        # The record's own place in the chain, as printed: with it, the docket can check the log later.
        "head_text": head_text(record.id, record.hash) if record.hash_is_public else None,
        "qr_text": qr_text,
        "qr_svg": qr_svg(qr_text),
    }
