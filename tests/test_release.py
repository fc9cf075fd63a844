"""The release is one number everywhere: the newest version released in CHANGELOG.md is the one the package and
`wordjudge --version` say, each release is listed once, and what is unreleased stays short (a release is made
before it grows)."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

import wordjudge
from wordjudge.cli.main import main

CHANGELOG = Path(__file__).resolve().parent.parent / "CHANGELOG.md"
RELEASE = re.compile(r"^## \[?(\d+\.\d+\.\d+)\]? - (\d{4}-\d{2}-\d{2})$")
MAX_UNRELEASED_LINES = 30


def _headings() -> list[str]:
    return [line for line in CHANGELOG.read_text("utf-8").splitlines() if line.startswith("## ")]


def _released() -> list[tuple[str, str]]:
    """The releases listed, newest first: (version, date)."""
    found = []
    for heading in _headings():
        match = RELEASE.match(heading)
        if match:
            found.append((match.group(1), match.group(2)))
    return found


def _unreleased() -> list[str]:
    """The lines of the Unreleased section, from its heading up to the next release's."""
    lines = CHANGELOG.read_text("utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"^## \[?Unreleased\]?$", line))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    return lines[start:end]


def test_the_newest_release_is_the_version_the_package_and_the_command_say() -> None:
    newest, _ = _released()[0]
    assert wordjudge.__version__ == newest
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"wordjudge, version {newest}"


def test_each_heading_is_a_release_or_unreleased_and_appears_once() -> None:
    headings = _headings()
    assert headings[0] in ("## [Unreleased]", "## Unreleased")
    assert all(RELEASE.match(h) for h in headings[1:]), [h for h in headings[1:] if not RELEASE.match(h)]
    assert len(headings) == len(set(headings))
    versions = [tuple(int(part) for part in version.split(".")) for version, _ in _released()]
    dates = [date for _, date in _released()]
    assert versions == sorted(versions, reverse=True)
    assert len(set(versions)) == len(versions)
    assert dates == sorted(dates, reverse=True)


def test_the_unreleased_section_is_short() -> None:
    unreleased = _unreleased()
    assert len(unreleased) <= MAX_UNRELEASED_LINES, f"{len(unreleased)} lines unreleased: make a release"


def test_each_release_lists_each_kind_of_change_once() -> None:
    """Added, Changed, Fixed... at most once a release: entries of one kind together, not a heading per change."""
    section: list[str] = []
    for line in [*CHANGELOG.read_text("utf-8").splitlines(), "## end"]:
        if line.startswith("## "):
            assert len(section) == len(set(section)), f"a heading repeated in one release: {section}"
            section = []
        elif line.startswith("### "):
            section.append(line)
