"""The figures in the docs are generated, not copied by hand (issue 47, point 4): docs/benchmarks.md's table from
each bench page's headline lines, docs/guide.md's table of tile sets from the registry of tile sets, and the code's
shape in docs/architecture.md from the tree (tests/docs_figures.py; ``python -m tests.docs_reference --write``)."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from wordjudge.words import tiles

from . import docs_figures
from .bench import (
    bench_challenges,
    bench_console,
    bench_flood,
    bench_lexicon,
    failover_tables,
    first_hour,
    processes,
    soak,
    verdict_postgres,
)
from .bench.headline import headline_lines, kept_sections, machine
from .docs_figures import BLOCKS, DOCS, PAGES, Block, headline, render_tiles

_REGENERATE = "regenerate it: .venv/bin/python -m tests.docs_reference --write"


@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: block.path.name)
def test_each_generated_part_of_the_docs_is_what_its_sources_give(block: Block) -> None:
    text = block.path.read_text("utf-8")
    assert block.applied(text) == text, f"{block.path.name}: {_REGENERATE}"


def test_every_bench_page_says_what_it_measures_and_its_headline_once() -> None:
    pages = {path.name for path in DOCS.glob("bench-*.md")} | {"failover.md"}
    pages -= {"bench-verdict-log.md"}  # not a page
    assert sorted(pages) == sorted(PAGES), "a bench page the table leaves out, or one that is gone"
    for name in PAGES:
        measures, said = headline(DOCS / name)
        assert measures
        assert said


def _figures(text: str) -> set[Decimal]:
    return {
        Decimal(figure.replace(",", "")) for figure in re.findall(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", text)
    }


def _quoted(figure: Decimal, page: set[Decimal]) -> bool:
    """Whether ``figure`` is one of ``page``'s, or one rounded to as many decimals (21.1 for 21.12, 163 for 163.00)."""
    step = Decimal(1).scaleb(figure.as_tuple().exponent)  # type: ignore[arg-type]  # a finite figure's exponent
    return any(other.quantize(step, ROUND_HALF_UP) == figure for other in page)


@pytest.mark.parametrize("name", PAGES)
def test_a_pages_headline_quotes_figures_the_page_holds(name: str) -> None:
    # The headline is a sentence on the latest run: every figure in it is in the page's own text (rounded at most),
    # so that a headline left behind when a new run's figures replace the old ones is caught.
    text = (DOCS / name).read_text("utf-8")
    said = headline(DOCS / name)[1]
    kept = [line for line in text.splitlines() if not line.startswith(("<!-- headline:", "<!-- machine:"))]
    body = _figures("\n".join(kept))
    missing = sorted(str(figure) for figure in _figures(said) if not _quoted(figure, body))
    assert missing == [], f"{name}: the headline's {missing} are nowhere else on the page"
    # The machine line too: its cores and load are the page's own.
    missing = sorted(
        str(figure) for figure in _figures(docs_figures.machine(DOCS / name) or "") if not _quoted(figure, body)
    )
    assert missing == [], f"{name}: the machine line's {missing} are nowhere else on the page"


def test_a_headline_figure_is_found_rounded_and_only_so() -> None:
    page = _figures("163.00 ms, 21.12 s, 1,532,026 a second")
    assert all(_quoted(figure, page) for figure in _figures("163 ms, 21.1 s, 1,532,026"))
    assert not any(_quoted(figure, page) for figure in _figures("164, 21.2, 1.53"))


def test_a_page_without_its_headline_or_with_two_is_named(tmp_path: Path) -> None:
    page = tmp_path / "bench-x.md"
    page.write_text("# X\n\n<!-- measures: x -->\n", "utf-8")
    with pytest.raises(ValueError, match=r"bench-x.md: 0 '<!-- headline"):
        headline(page)
    page.write_text("# X\n\n<!-- measures: x -->\n<!-- headline: 1 -->\n<!-- headline: 2 -->\n", "utf-8")
    with pytest.raises(ValueError, match=r"bench-x.md: 2 '<!-- headline"):
        headline(page)


def test_the_guides_tile_sets_are_the_registrys(monkeypatch: pytest.MonkeyPatch) -> None:
    table = render_tiles()
    for name, tile_set in tiles.BUILTIN.items():
        assert f"| `{name}` |" in table
        assert all(tile in table for tile in tile_set.tiles if len(tile) > 1)
    assert "| `spanish` | CH, LL, Ñ, RR (no K, no W) | `N~` for Ñ |" in table
    # A set added to the registry is in the guide's table the next time it is generated.
    extra = tiles.TileSet("maltese", tuple(_letters("A B Ċ D E F Ġ G GĦ H Ħ I IE J K L M N O P Q R S T U V W X Ż Z")))
    monkeypatch.setattr(docs_figures, "BUILTIN", {**tiles.BUILTIN, "maltese": extra})
    assert "| `maltese` | Ċ, Ġ, GĦ, Ħ, IE, Ż (no C, no Y) |  |  |" in render_tiles()


def test_a_doc_without_its_markers_is_refused(tmp_path: Path) -> None:
    block = Block(tmp_path / "x.md", "<!-- a -->", "<!-- b -->", lambda: "x\n")
    with pytest.raises(ValueError, match="lacks the markers"):
        block.applied("no markers here")
    assert block.applied("1\n<!-- a -->\nold\n<!-- b -->\n2") == "1\n<!-- a -->\nx\n<!-- b -->\n2"


def _letters(tiles: str) -> list[str]:
    return tiles.split()


def _table(page: Path) -> list[list[str]]:
    """The rows of the first Markdown table of ``page``, each a list of its cells (the header row first)."""
    rows = [line for line in page.read_text("utf-8").splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows if not row.startswith("|---")]


def test_the_benches_that_write_their_page_write_its_headline_from_its_table() -> None:
    # What bench_lexicon and first_hour would write as the headline, from the figures the page's table holds.
    header, *rows = _table(DOCS / "bench-lexicon.md")
    column = {"list": header[2], **{row[0]: row[2] for row in rows}}
    assert headline(DOCS / "bench-lexicon.md") == (bench_lexicon.MEASURES, bench_lexicon._headline(column))
    _, *steps, (_, total) = _table(DOCS / "bench-first-hour.md")  # the last row: **all**
    timings = [(name, float(seconds)) for name, seconds in steps]
    said = first_hour._headline(timings, float(total.strip("*")))
    assert headline(DOCS / "bench-first-hour.md") == (first_hour.MEASURES, said)
    # The console's page holds two runs a cell ("48 / 46"): every action of both at the largest log.
    header, *rows = _table(DOCS / "bench-console.md")
    times = [float(run) for row in rows for run in row[2].split(" / ")]
    said = bench_console.headline(int(header[2].split()[0].replace(",", "")), times)
    assert headline(DOCS / "bench-console.md") == (bench_console.MEASURES, said)
    with pytest.raises(ValueError, match="not one line"):
        headline_lines("x", "a --> b")


def _tables(page: Path) -> list[list[list[str]]]:
    """Every Markdown table of ``page`` in order, each a list of its rows (the header row first), each row a list
    of its cells."""
    tables: list[list[list[str]]] = []
    inside = False
    for line in page.read_text("utf-8").splitlines():
        if not line.startswith("|"):
            inside = False
            continue
        if not inside:
            tables.append([])
            inside = True
        if not line.startswith("|---"):
            tables[-1].append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return tables


def _number(cell: str) -> float:
    """The first figure of a cell ("3,709", "12.1 ms", "0.84x / 1.06x", "6.4 ms (23.7 ms)")."""
    found = re.search(r"\d[\d,]*(?:\.\d+)?", cell)
    assert found, f"no figure in the cell {cell!r}"
    return float(found.group().replace(",", ""))


def _loads(rows: list[list[str]], column: int) -> tuple[float, float]:
    loads = [float(end) for row in rows for end in row[column].split("-")]
    return min(loads), max(loads)


def _page_headline(name: str) -> str:
    """What the script of the page ``name`` makes of the page's latest table (the first on the page)."""
    page = DOCS / name
    tables = _tables(page)
    if name == "bench-challenges.md":
        _, *rows = tables[0]
        return bench_challenges.headline(
            [(int(r[0]), _number(r[3]), _number(r[4].split(" / ")[1]), _number(r[5])) for r in rows]
        )
    if name == "bench-flood.md":
        _, *rows = tables[0]
        median = {row[0]: _number(row[2]) for row in rows}
        return bench_flood.headline(median[bench_flood.LIMITS["50"]], median[bench_flood.LIMITS["0"]])
    if name == "bench-soak.md":
        text = page.read_text("utf-8")
        rss = re.search(r"Server RSS: ([\d.]+) MiB at the start, .* ([\d.]+) MiB at the end", text)
        cpu = re.search(r"Server CPU: ([\d.]+)% of one core", text)
        log = re.search(r"Audit log: ([\d,]+) records for ([\d,]+) challenges", text)
        assert rss, "bench-soak.md: the report's memory line is missing"
        assert cpu, "bench-soak.md: the report's CPU line is missing"
        assert log, "bench-soak.md: the report's log line is missing"
        records, challenges = (int(figure.replace(",", "")) for figure in log.groups())
        return soak.headline(records, challenges, float(rss[1]), float(rss[2]), float(cpu[1]))
    if name == "bench-processes.md":
        header, *rows = tables[0]
        first = rows[0][0]
        rates = {int(row[1]): _number(row[2]) for row in rows if row[0] == first}
        return processes.headline(first, rates, _loads(rows, header.index("load")))
    if name == "bench-postgres.md":
        header, *rows = tables[0]
        row = next(row for row in rows if row[0] == verdict_postgres.STANDBY)
        return verdict_postgres.headline(_number(row[1]), _number(row[5]), _loads(rows, header.index("load")))
    assert name == "failover.md", name
    died, standby, returned = tables[:3]
    deaths = [(row[0], row[1], _number(row[4])) for row in died[1:]]
    told = _number(standby[1][2])
    lost = sum(int(row[header.index("lost")]) for header, *rows in (died, standby, returned) for row in rows)
    twice = sum(int(row[header.index("recorded twice")]) for header, *rows in (died, standby, returned) for row in rows)
    return failover_tables.headline(deaths, told, lost, twice)


_WRITTEN = {
    "bench-challenges.md": bench_challenges.MEASURES,
    "bench-flood.md": bench_flood.MEASURES,
    "bench-soak.md": soak.MEASURES,
    "bench-processes.md": processes.MEASURES,
    "bench-postgres.md": verdict_postgres.MEASURES,
    "failover.md": failover_tables.MEASURES,
}


@pytest.mark.parametrize("name", sorted(_WRITTEN))
def test_the_pages_whose_script_notes_the_machine_say_it_and_its_load(name: str) -> None:
    # Issue 48, point 5: the machine and its load noted; these scripts write the line (headline.machine).
    said = docs_figures.machine(DOCS / name)
    assert said is not None, f"{name}: no '<!-- machine: ... -->' line"
    assert re.fullmatch(r".+, \d+ cores; load (not noted|[\d.]+ to [\d.]+)", said), said
    assert f"| {said} |" in docs_figures.BENCHMARKS.read_text("utf-8")


def test_the_machine_line_is_written_once_and_read_back(tmp_path: Path) -> None:
    lines = headline_lines("x", "y", machine([1.25, 3.5]))
    assert re.fullmatch(
        r"<!-- measures: x -->\n<!-- headline: y -->\n<!-- machine: .+, \d+ cores; load 1.2 to 3.5 -->\n", lines
    )
    assert machine([]).endswith("; load not noted")
    page = tmp_path / "bench-x.md"
    page.write_text("# X\n\n" + lines, "utf-8")
    assert docs_figures.machine(page) == lines.splitlines()[2].removeprefix("<!-- machine: ").removesuffix(" -->")
    page.write_text("# X\n\n" + lines + "<!-- machine: b -->\n", "utf-8")
    with pytest.raises(ValueError, match=r"bench-x\.md: 2 '<!-- machine"):
        docs_figures.machine(page)
    with pytest.raises(ValueError, match="not one line"):
        headline_lines("x", "y", "a\nb")


def test_a_rerun_keeps_the_pages_hand_written_sections(tmp_path: Path) -> None:
    # bench_console rewrites its page's lines, method and table, and keeps what the figures rest on below them.
    page = tmp_path / "bench-x.md"
    assert kept_sections(page) == ""
    page.write_text("# X\n\n<!-- headline: 1 -->\n\n| a |\n|---|\n| 1 |\n", "utf-8")
    assert kept_sections(page) == ""
    page.write_text("# X\n\n| a |\n\n## Why\n\nBecause.\n\n## More\n\nYes.\n", "utf-8")
    assert kept_sections(page) == "## Why\n\nBecause.\n\n## More\n\nYes.\n"
    assert kept_sections(DOCS / "bench-console.md").startswith("## What the figures rest on\n")


@pytest.mark.parametrize("name", sorted(_WRITTEN))
def test_each_benchs_page_headline_is_what_its_script_makes_of_the_pages_table(name: str) -> None:
    # The script writes these two lines with the page (--markdown); a page whose table was edited, or whose lines
    # were typed by hand, differs from what the script would write from the same figures.
    assert headline(DOCS / name) == (_WRITTEN[name], _page_headline(name))


def test_benchmarks_holds_no_figure_typed_by_hand() -> None:
    # Below its generated parts benchmarks.md says how each benchmark is measured: a figure typed there (a digit
    # outside a link's target, a command or code, an issue's number) goes stale with the next run of its page.
    typed = docs_figures.hand_figures(docs_figures.BENCHMARKS.read_text("utf-8"))
    assert typed == [], f"benchmarks.md: figures typed by hand (quote the page's table instead): {typed}"


def test_a_figure_typed_by_hand_is_found_and_only_it() -> None:
    start, end = BLOCKS[0].start, BLOCKS[0].end
    text = (
        f"# B\n\n{start}\n| 1,234 |\n{end}\n\n"
        "See [a](bench-x2.md) and `python -m x --minutes 10` (issue 47; issues 19 and 48).\n"
        "The summary took 28 ms.\n"
        "Two cores, a million records.\n"
    )
    assert docs_figures.hand_figures(text) == ["The summary took 28 ms."]


def test_a_quoted_page_without_a_table_is_named(tmp_path: Path) -> None:
    page = tmp_path / "bench-x.md"
    page.write_text("# X\n\nno table\n", "utf-8")
    with pytest.raises(ValueError, match=r"bench-x\.md holds no table"):
        docs_figures.latest_table(page)
    page.write_text("# X\n\n| a |\n|---|\n| 1 |\n\n| b |\n|---|\n| 2 |\n", "utf-8")
    assert docs_figures.latest_table(page) == "| a |\n|---|\n| 1 |\n"


def test_architecture_holds_no_whole_suite_run_figure_typed_by_hand() -> None:
    # How many tests a .ci/check run ran, how long it took, its coverage and its date are the run's, not the
    # tree's: typed into architecture.md they went stale with the next commit. The coverage floor is generated.
    text = docs_figures.ARCHITECTURE.read_text("utf-8")
    assert docs_figures.run_figures(text) == [], "architecture.md: a run's figures typed by hand"
    assert "fail_under" in text
    sample = "It ran 1,109 tests, 89.75% covered.\nIn 24 min on 2026-11-27.\nA cap of 12 modules, 1024x600.\n"
    assert docs_figures.run_figures(sample) == sample.splitlines()[:2]


def test_the_guides_processes_table_is_bench_processes_latest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The guide quotes bench-processes.md's latest table (concurrency 16), not figures typed in: a new run's
    # figures reach the guide the next time the docs are generated.
    (tmp_path / "bench-processes.md").write_text(
        "# P\n\n| target | processes | c16 verdicts/s | load |\n|---|---|---|---|\n| sqlite | 1 | 1,234 | 1.0-1.1 |\n"
        "| sqlite | 2 | 999 | 1.2-1.3 |\n| durable | - | 4,000 | 1.0-1.0 |\n\n| target |\n|---|\n| older |\n",
        "utf-8",
    )
    monkeypatch.setattr(docs_figures, "DOCS", tmp_path)
    assert docs_figures.render_processes() == (
        "| state | 1 process | 2 processes |\n|---|---|---|\n| SQLite | 1,234/s | 999/s |\n"
    )
