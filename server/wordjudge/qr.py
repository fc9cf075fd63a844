"""QR codes as SVG, for pairing links and dockets."""

from __future__ import annotations

import io

import segno


def qr_svg(text: str, *, scale: int = 4) -> str:
    """A QR code of ``text`` as a standalone SVG element (with its namespace, so a page can parse it)."""
    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="svg", xmldecl=False, svgns=True, scale=scale)
    return out.getvalue().decode().strip()
