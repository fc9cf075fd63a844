"""The lines under a bench page's title that docs/benchmarks.md's table is generated from (tests/docs_figures.py):
what the page measures, its latest run's headline, and the machine it ran on with the machine's load."""

from __future__ import annotations

import os
import platform
from collections.abc import Iterable
from pathlib import Path


def headline_lines(measures: str, headline: str, machine: str | None = None) -> str:
    """The page's headline lines (HTML comments: the page shows its figures in its own tables), with the machine
    line when ``machine`` is given. Raises ValueError for a text that would end the comment or span lines."""
    for text in (measures, headline, machine or ""):
        if "-->" in text or "\n" in text:
            raise ValueError(f"not one line of a comment: {text!r}")
    lines = f"<!-- measures: {measures} -->\n<!-- headline: {headline} -->\n"
    return lines + (f"<!-- machine: {machine} -->\n" if machine is not None else "")


def kept_sections(page: Path) -> str:
    """The hand-written sections of a bench page, from its first ``## `` heading to its end (what the figures rest
    on, written when they were first measured), which a re-run keeps under the table it writes; "" for a page not
    written yet or with no such heading."""
    try:
        text = page.read_text("utf-8")
    except FileNotFoundError:
        return ""
    start = text.find("\n## ")
    return text[start + 1 :] if start >= 0 else ""


def cpu_model() -> str:
    """This machine's processor as /proc/cpuinfo names it, else as the platform module does."""
    try:
        return next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def machine(loads: Iterable[float]) -> str:
    """This machine as a page's machine line says it: its processor and cores, and the range of the load average
    (1 min) over the run (``loads``: those taken during it; none: not noted)."""
    taken = list(loads)
    load = f"load {min(taken):.1f} to {max(taken):.1f}" if taken else "load not noted"
    return f"{cpu_model()}, {os.cpu_count()} cores; {load}"
