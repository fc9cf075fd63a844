"""QR codes as SVG, for pairing links and dockets."""

from __future__ import annotations

import io

import segno


def qr_svg(text: str, *, scale: int = 4) -> str:
    """A QR code of ``text`` as a standalone SVG element (with its namespace, so a page can parse it).

    It is ``scale`` pixels a module wide as it stands, and scales to any size a stylesheet gives it: its
    drawing is in modules (a viewBox), with its quiet zone, and its edges stay sharp when a printer
    rasterises it.
    """
    code = segno.make(text, error="m", micro=False)  # phones and zbar read QR codes, not Micro QR
    out = io.BytesIO()
    # omitsize: a viewBox instead of a fixed width and height, so CSS can size it without clipping it.
    code.save(out, kind="svg", xmldecl=False, svgns=True, scale=1, omitsize=True)
    width, height = code.symbol_size(scale=scale)
    markup = out.getvalue().decode().strip()
    return markup.replace("<svg ", f'<svg width="{width}" height="{height}" shape-rendering="crispEdges" ', 1)
