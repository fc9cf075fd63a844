"""The two lines under a bench page's title that docs/benchmarks.md's table is generated from
(tests/docs_figures.py): what the page measures, and its latest run's headline."""

from __future__ import annotations


def headline_lines(measures: str, headline: str) -> str:
    """The page's two headline lines (HTML comments: the page shows its figures in its own tables). Raises
    ValueError for a text that would end the comment or span lines."""
    for text in (measures, headline):
        if "-->" in text or "\n" in text:
            raise ValueError(f"not one line of a comment: {text!r}")
    return f"<!-- measures: {measures} -->\n<!-- headline: {headline} -->\n"
