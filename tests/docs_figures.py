"""The figures in the docs, generated: the headline table of docs/benchmarks.md (from each bench page's own
headline lines) and its quotes of the compact pages' latest tables (nothing else there may hold a figure), the table of tile sets in docs/guide.md (from the registry, ``wordjudge.words.tiles.BUILTIN``)
and the code's shape and coverage floor in docs/architecture.md (measured on the tree, against the caps of
tests/test_architecture.py; the floor from pyproject.toml).

Each sits between two markers of its file. ``.venv/bin/python -m tests.docs_reference --write`` rewrites them with
the reference and the module map; tests/test_docs_figures.py fails while a file differs from what this module renders.

A bench page says its headline in two lines of its own, right under its title, which its script writes where it
writes the page (``tests/bench/headline.py``) and whoever edits a page by hand keeps with its latest run::

    <!-- measures: what the page measures -->
    <!-- headline: the latest run's figures, in a sentence -->
    <!-- machine: the machine it ran on, and its load over the run -->

(the machine line is written by the scripts that note it; a page without one shows so in the table).
"""

from __future__ import annotations

import ast
import re
import tomllib
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from wordjudge.words.tiles import BUILTIN, TileSet

from . import test_architecture as shape

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGE = ROOT / "server" / "wordjudge"
BENCHMARKS = DOCS / "benchmarks.md"
GUIDE = DOCS / "guide.md"
ARCHITECTURE = DOCS / "architecture.md"

# The bench pages in the order of the table, each with its two headline lines.
PAGES = (
    "bench-lexicon.md",
    "bench-log.md",
    "bench-console.md",
    "bench-verdict.md",
    "bench-challenges.md",
    "bench-soak.md",
    "bench-postgres.md",
    "bench-processes.md",
    "bench-flood.md",
    "bench-first-hour.md",
    "failover.md",
)
_LINE = re.compile(r"^<!-- (measures|headline|machine): (.+?) -->$", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    """A generated part of a doc: its file, its markers, and what renders it."""

    path: Path
    start: str
    end: str
    render: Callable[[], str]

    def applied(self, text: str) -> str:
        """``text`` (the file's) with the part between the markers replaced by what :attr:`render` gives.
        Raises ValueError naming the file if a marker is missing."""
        if self.start not in text or self.end not in text:
            raise ValueError(f"{self.path.name} lacks the markers {self.start!r} and {self.end!r}")
        before, rest = text.split(self.start, 1)
        return before + self.start + "\n" + self.render() + self.end + rest.split(self.end, 1)[1]


# -- the benchmarks' headlines --------------------------------------------------------------------------------------


def headline(page: Path) -> tuple[str, str]:
    """A bench page's (what it measures, its headline), from its two headline lines. Raises ValueError naming the
    page if either is missing or said twice."""
    found: dict[str, list[str]] = {}
    for kind, said in _LINE.findall(page.read_text("utf-8")):
        found.setdefault(kind, []).append(said)
    for kind in ("measures", "headline"):
        if len(found.get(kind, [])) != 1:
            raise ValueError(f"{page.name}: {len(found.get(kind, []))} '<!-- {kind}: ... -->' lines, not one")
    return found["measures"][0], found["headline"][0]


def machine(page: Path) -> str | None:
    """The machine line of a bench page (its processor, cores and load over the latest run), None if it has none.
    Raises ValueError naming the page if it says it twice."""
    said = [text for kind, text in _LINE.findall(page.read_text("utf-8")) if kind == "machine"]
    if len(said) > 1:
        raise ValueError(f"{page.name}: {len(said)} '<!-- machine: ... -->' lines, not one")
    return said[0] if said else None


def render_benchmarks() -> str:
    """The table of docs/benchmarks.md: each page, what it measures, its headline and its machine and load, as the
    page says them."""
    rows = [
        "| page | what it measures | headline (the page's latest run) | machine; load (1 min) over the run |",
        "|---|---|---|---|",
    ]
    for name in PAGES:
        measures, said = headline(DOCS / name)
        where = machine(DOCS / name) or "not on the page's lines (see the page)"
        rows.append(f"| [{name}]({name}) | {_cell(measures)} | {_cell(said)} | {_cell(where)} |")
    return "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


# The pages whose latest table docs/benchmarks.md quotes (each compact enough to read there), in its order.
QUOTED = ("bench-console.md", "bench-challenges.md", "bench-postgres.md", "bench-flood.md", "bench-soak.md")
# What benchmarks.md may hold digits in outside its generated parts: a link's target, a command or code, an issue's
# number. Anything else with a digit is a figure typed by hand.
_ALLOWED = re.compile(r"\]\([^)]*\)|`[^`]*`|\bissues? \d+(?: and \d+)?")


def latest_table(page: Path) -> str:
    """The first Markdown table of ``page`` (its latest run's: each page puts the latest first), as it stands.
    Raises ValueError naming the page if it has none."""
    lines: list[str] = []
    for line in page.read_text("utf-8").splitlines():
        if line.startswith("|"):
            lines.append(line)
        elif lines:
            break
    if not lines:
        raise ValueError(f"{page.name} holds no table")
    return "\n".join(lines) + "\n"


def render_processes() -> str:
    """The guide's table of verdicts a second at concurrency 16 for each place of the state and number of
    processes, from bench-processes.md's latest table (its ``target``, ``processes`` and ``c16 verdicts/s``)."""
    header, *rows = (
        [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        for line in latest_table(DOCS / "bench-processes.md").splitlines()
        if not line.startswith("|---")
    )
    target, processes, rate = (header.index(name) for name in ("target", "processes", "c16 verdicts/s"))
    rates: dict[str, dict[int, str]] = {}
    for row in rows:
        if row[processes].isdigit():
            rates.setdefault(row[target], {})[int(row[processes])] = row[rate]
    counts = sorted({count for by_count in rates.values() for count in by_count})
    lines = ["| state | " + " | ".join(f"{n} process{'es' if n > 1 else ''}" for n in counts) + " |"]
    lines.append("|---|" + "---|" * len(counts))
    for state, by_count in rates.items():
        cells = " | ".join(f"{by_count[n]}/s" if n in by_count else "-" for n in counts)
        lines.append(f"| {_STATES.get(state, state)} | {cells} |")
    return "\n".join(lines) + "\n"


_STATES = {
    "sqlite": "SQLite",
    "postgresql": "PostgreSQL",
    "postgresql + sync standby": "PostgreSQL + synchronous standby",
}


def quote(name: str) -> Callable[[], str]:
    """What renders the quote of the page ``name``'s latest table in docs/benchmarks.md."""
    return lambda: f"The latest table of [{name}]({name}):\n\n{latest_table(DOCS / name)}"


def hand_figures(text: str) -> list[str]:
    """The lines of ``text`` (docs/benchmarks.md's) holding a digit outside the generated parts, a link's target,
    a command or code, and an issue's number: figures typed by hand."""
    for block in BLOCKS:
        if block.path == BENCHMARKS and block.start in text:
            before, rest = text.split(block.start, 1)
            text = before + rest.split(block.end, 1)[-1]
    return [line for line in text.splitlines() if re.search(r"\d", _ALLOWED.sub("", line))]


# -- the guide's tile sets ----------------------------------------------------------------------------------------


def _plain(typed: str) -> str:
    """``typed`` without its accents (Á -> A)."""
    return "".join(c for c in unicodedata.normalize("NFD", typed) if not unicodedata.combining(c))


def tile_row(tile_set: TileSet) -> str:
    """One set's row: its tiles of more or other than one letter of A to Z, the letters of A to Z it lacks, its
    other spellings, and the accented letters it reads as the plain one."""
    special = [tile for tile in tile_set.tiles if len(tile) > 1 or not "A" <= tile <= "Z"]
    lacks = [letter for letter in map(chr, range(ord("A"), ord("Z") + 1)) if letter not in tile_set.tiles]
    accents = sorted((t for t, tile in tile_set.spellings.items() if _plain(t) == tile), key=lambda t: (_plain(t), t))
    others: dict[str, list[str]] = {}
    for typed, tile in tile_set.spellings.items():
        if typed not in accents:
            others.setdefault(tile, []).append(typed)
    tiles = ", ".join(special) if special else "none (A to Z)"
    if lacks:
        tiles += f" (no {', no '.join(lacks)})"
    spelt = "; ".join(f"{', '.join(f'`{t}`' for t in typed)} for {tile}" for tile, typed in others.items())
    plain = " ".join(accents)
    return f"| `{tile_set.name}` | {tiles} | {spelt} | {plain} |"


def render_tiles() -> str:
    """The guide's table of the built-in tile sets, one row a set of the registry."""
    rows = ["| Set | Tiles of several letters, or not of A to Z | Also typed as | Accents read as the plain letter |"]
    rows += ["|---|---|---|---|", *(tile_row(tile_set) for tile_set in BUILTIN.values())]
    return "\n".join(rows) + "\n"


# -- the code's shape ---------------------------------------------------------------------------------------------


def render_shape() -> str:
    """The code's shape as tests/test_architecture.py checks it, measured on the tree: modules, folders and lines,
    the fullest folder, the longest module-level import chain, module, function and class, each beside its cap.
    Lines are rounded (the package's to the thousand, a module's or function's to ten) so that not every edit of
    the longest module changes the page."""
    modules = shape._modules()
    paths = [path for path in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in path.parts]
    lines = {path: len(path.read_text("utf-8").splitlines()) for path in paths}
    folders: dict[str, int] = {}
    for path in paths:
        folder = path.parent.relative_to(PACKAGE).as_posix()
        folders[folder] = folders.get(folder, 0) + 1
    fullest = max(folders, key=lambda folder: (folders[folder], folder))
    chain = longest_chain({name: shape.imported(name, tree, top_level_only=True) for name, tree in modules.items()})
    longest_module = max(paths, key=lambda path: (lines[path], str(path)))
    functions = {
        f"{path.relative_to(PACKAGE).as_posix()}:{node.name}": (node.end_lineno or node.lineno) - node.lineno + 1
        for path in paths
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    longest_function = max(functions, key=lambda name: (functions[name], name))
    classes = {f"{cls.__module__.removeprefix('wordjudge.')}.{cls.__qualname__}": cls for cls in shape._classes()}
    methods = {name: len(shape.public_methods(cls)) for name, cls in classes.items()}
    busiest = max(methods, key=lambda name: (methods[name], name))
    return (
        f"The package holds {len(paths)} modules in {len(folders)} folders, about {round(sum(lines.values()), -3):,}"
        " lines."
        f" The fullest folder, `{fullest}/`, holds {folders[fullest]} modules (the cap: {shape.MAX_FOLDER});"
        f" the longest chain of module-level imports is {len(chain)} modules (the cap: {shape.MAX_CHAIN},"
        f" held {shape.HEADROOM} under it: room for the next change):"
        f" `{' -> '.join(chain)}`; the longest module, `{longest_module.relative_to(PACKAGE).as_posix()}`, has"
        f" about {round(lines[longest_module], -1)} lines (the cap: {shape.MAX_LINES}); the longest function,"
        f" `{longest_function}`, about {round(functions[longest_function], -1)} lines (the cap: {shape.MAX_FUNCTION});"
        " the class with the most public"
        f" methods, `{busiest}`, has {methods[busiest]} (the cap: {shape.MAX_PUBLIC_METHODS}).\n"
    )


def render_floor() -> str:
    """The coverage floor's sentence, from pyproject.toml's ``[tool.coverage.report] fail_under``."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        floor = tomllib.load(file)["tool"]["coverage"]["report"]["fail_under"]
    return (
        f"The coverage floor, as `pyproject.toml` sets it (`fail_under` of `[tool.coverage.report]`): {floor}% of"
        " the package's branches and statements, measured in the test process.\n"
    )


# A whole-suite run's figures in docs/architecture.md: a count of tests, a percentage, a duration, a date. They are
# a run's (.ci/check's output), not the tree's: only a generated part may hold them.
_RUN_FIGURE = re.compile(r"\b\d[\d,]* tests\b|\d+(?:\.\d+)? ?%|\b\d+(?:\.\d+)? (?:min|s)\b|\b20\d\d-\d\d-\d\d\b")


def run_figures(text: str, path: Path = ARCHITECTURE) -> list[str]:
    """The lines of ``text`` (the file ``path``'s) that hold a run's figure outside the generated parts."""
    for block in BLOCKS:
        if block.path == path and block.start in text:
            before, rest = text.split(block.start, 1)
            text = before + rest.split(block.end, 1)[-1]
    return [line for line in text.splitlines() if _RUN_FIGURE.search(line)]


def longest_chain(graph: dict[str, set[str]]) -> list[str]:
    """The longest chain of imports in ``graph``, as test_architecture's ``chain`` finds it but the same one
    every run where several are as long: names are walked in order, and the first longest kept."""
    longest: dict[str, list[str]] = {}

    def walk(name: str, seen: frozenset[str]) -> list[str]:
        if name not in longest:
            best = [name]
            for other in sorted(graph.get(name, set()) - seen):
                best = max(best, [name, *walk(other, seen | {other})], key=len)
            longest[name] = best
        return longest[name]

    return max((walk(name, frozenset({name})) for name in sorted(graph)), key=len)


BLOCKS = (
    Block(
        BENCHMARKS,
        "<!-- headlines: generated by tests/docs_figures.py from each page's headline lines, do not edit by hand -->",
        "<!-- end of the headlines -->",
        render_benchmarks,
    ),
    *(
        Block(
            BENCHMARKS,
            f"<!-- quote of {name}: generated by tests/docs_figures.py from the page's latest table, do not edit by"
            " hand -->",
            "<!-- end of the quote -->",
            quote(name),
        )
        for name in QUOTED
    ),
    Block(
        GUIDE,
        "<!-- processes: generated by tests/docs_figures.py from bench-processes.md's latest table, do not edit by"
        " hand -->",
        "<!-- end of the processes -->",
        render_processes,
    ),
    Block(
        GUIDE,
        "<!-- tile sets: generated by tests/docs_figures.py from wordjudge.words.tiles, do not edit by hand -->",
        "<!-- end of the tile sets -->",
        render_tiles,
    ),
    Block(
        ARCHITECTURE,
        "<!-- coverage floor: generated by tests/docs_figures.py from pyproject.toml, do not edit by hand -->",
        "<!-- end of the coverage floor -->",
        render_floor,
    ),
    Block(
        ARCHITECTURE,
        "<!-- shape: generated by tests/docs_figures.py from the tree, do not edit by hand -->",
        "<!-- end of the shape -->",
        render_shape,
    ),
)


def write() -> list[Path]:
    """Rewrite every generated part of the docs; the files that changed."""
    changed = []
    for block in BLOCKS:
        text = block.path.read_text("utf-8")
        if (new := block.applied(text)) != text:
            block.path.write_text(new, "utf-8")
            changed.append(block.path)
    return changed
