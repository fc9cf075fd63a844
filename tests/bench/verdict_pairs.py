"""The verdict path before and after a change, in alternating pairs beside the naive judges: docs/bench-verdict.md.

Run from the repository root (needs Debian's ``wrk`` and ``taskset``; not part of the test suite), with the code
before the change checked out apart (``git worktree add ../verdict-before COMMIT``):

    .venv/bin/python -m tests.bench.verdict_pairs --before ../verdict-before [--after ../verdict-after]
        [--pairs 3] [--seconds 8] [--server-cores 0,1] [--load-cores 0,1] [--profile FILE] [--cpu FILE]
        [--page docs/bench-verdict.md] [--save FILE.json]
    .venv/bin/python -m tests.bench.verdict_pairs --before ../verdict-before --again FILE.json --page ...

Each round starts ``wordjudge serve`` twice, once on the code after the change (the venv's install, or
``--after``'s tree: a checkout kept still while others edit this one) and once on ``--before``'s, a tree's
``server/`` put first on ``PYTHONPATH`` (its ``server/wordjudge/kiosk`` and ``server/wordjudge/lexicons`` must
be links to its ``kiosk/`` and ``lexicons/``, or the venv's editable install would serve this tree's), in
alternating order (after first in odd rounds, before first in
even ones), then the two naive judges of :mod:`tests.bench.naive_judge`; each server on a fresh data folder,
prepared as :mod:`tests.bench.bench_verdict` prepares it (durable log, 200 kiosks, the rate limit counted, the
per-address request limit off: the load comes from one address). wordjudge is measured closed loop at
concurrency 16 (wrk) and open loop at 500 and 1,000 verdicts a second (:mod:`tests.bench.open_loop`); the naive
judges at concurrency 16. After every wordjudge run its audit log is read: at least one record per acknowledged
verdict, the chain verified. The 1-minute load average is taken when each run starts.

``--page`` writes the whole bench page: the rounds, the medians, the issue's targets against them, the log's
checks and, with ``--profile``, a profile's summary saved by ``tests.bench.profile_verdict --summary FILE``, with
``--cpu``, the CPU per verdict of wordjudge's threads and of the naive judges (``tests.bench.verdict_threads
--peers``'s output, saved to a file); nothing in it is written by hand. ``--save`` keeps the rounds' figures, and ``--again`` writes the page of a
saved run without running anything.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wordjudge import __version__

from .bench_verdict import Bench, Row, load_average, serving_wordjudge
from .headline import cpu_model, headline_lines, machine

_KEPT = ("seconds", "server_cores", "load_cores", "after_code", "before_code", "measured")  # saved with the rounds
MEASURES = "the verdict path beside two naive judges (issue 19)"
CLOSED_AT = 16
RATES = (500, 1000)
P99_TARGETS = {500: 10.0, 1000: 25.0}  # ms (issue 48, point 4)
NAIVE_RATIO, DURABLE_RATIO = 1.0, 1.5  # the verdict rate's targets at concurrency 16 (issue 48, point 3)


class _Levels(Bench):
    """:class:`Bench` measuring one closed-loop concurrency and the open-loop rates of this script."""

    def measure(
        self,
        target: str,
        base: str,
        path: str,
        tokens: Path | None,
        after: Any = None,
        *,
        health: bool = False,
    ) -> None:
        script = self.work / "challenge.lua"
        load = load_average()
        figures = self.wrk(base + path, CLOSED_AT, script, os.urandom(4).hex(), str(tokens))
        row = Row(target, "closed", CLOSED_AT, figures, load)
        row.audit = after(figures["ok"]) if after is not None else ""
        self.rows.append(row)
        print(f"{target} closed c{CLOSED_AT}: {figures['rps']:,.0f}/s load {load:.2f} {row.audit}", file=sys.stderr)
        if target != "wordjudge":
            return
        for rate in RATES:
            load = load_average()
            figures = self.open_loop(base + path, rate, tokens)
            row = Row(target, "open", rate, figures, load)
            row.audit = after(figures["ok"]) if after is not None else ""
            self.rows.append(row)
            print(f"{target} open {rate}/s: p99 {figures['p99']:.1f} ms load {load:.2f}", file=sys.stderr)


@dataclass
class Round:
    """One round: wordjudge after and before (in the order run), the naive judges, each one's rows."""

    number: int
    order: tuple[str, str]
    rows: dict[str, list[Row]] = field(default_factory=dict)

    def closed(self, code: str) -> Row:
        return next(row for row in self.rows[code] if row.mode == "closed")

    def open(self, code: str, rate: int) -> Row:
        return next(row for row in self.rows[code] if row.mode == "open" and row.level == rate)


def _round(saved: dict[str, Any]) -> Round:
    """A round as ``--save`` kept it."""
    rows = {code: [Row(**row) for row in kept] for code, kept in saved["rows"].items()}
    return Round(saved["number"], tuple(saved["order"]), rows)


@contextmanager
def _code(tree: Path | None) -> Iterator[None]:
    """wordjudge's commands (the server, the CLI that prepares its folder) run from ``tree``'s code, if given."""
    if tree is None:
        yield
        return
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree / "server"), before]))
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before


def _wordjudge(args: argparse.Namespace, work: Path, tree: Path | None) -> list[Row]:
    bench = _Levels(args.seconds, args.server_cores, args.load_cores, work)
    with _code(tree), serving_wordjudge(work, args.server_cores) as (_, base, data_dir):
        bench._measure_wordjudge({"wordjudge"}, base, data_dir)
    return bench.rows


def _naive(args: argparse.Namespace, work: Path, durable: bool) -> list[Row]:
    bench = _Levels(args.seconds, args.server_cores, args.load_cores, work)
    bench.naive(durable=durable)
    return bench.rows


def run(args: argparse.Namespace) -> list[Round]:
    """Every round, each server on a fresh folder under a temporary one (removed after)."""
    rounds = []
    top = Path(tempfile.mkdtemp(prefix="wordjudge-pairs-"))
    try:
        for number in range(1, args.pairs + 1):
            order = ("after", "before") if number % 2 else ("before", "after")
            one = Round(number, order)
            for code in order:
                work = top / f"{number}-{code}"
                work.mkdir()
                one.rows[code] = _wordjudge(args, work, args.before if code == "before" else args.after)
            for durable in (False, True):
                work = top / f"{number}-{'durable' if durable else 'naive'}"
                work.mkdir()
                one.rows["durable" if durable else "naive"] = _naive(args, work, durable)
            rounds.append(one)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return rounds


# The parts of a checkout that the measured server runs.
_CODE = ("server", "kiosk", "lexicons", "pyproject.toml")


def _commit(tree: Path | None) -> str:
    """The commit ``tree`` (this one if None) has checked out, and whether the code that runs differs from it."""
    where = ["-C", str(tree)] if tree is not None else []
    head = subprocess.run(["git", *where, "log", "-1", "--format=%h"], capture_output=True, text=True).stdout.strip()
    # Only what the server runs counts: a bench page another bench has just rewritten is no change to the code.
    status = ["status", "--porcelain", "--untracked-files=no", "--", *_CODE]
    changed = subprocess.run(["git", *where, *status], capture_output=True)
    return f"`{head or 'unknown'}`" + (" with uncommitted changes to its code" if changed.stdout.strip() else "")


def _rate(row: Row) -> str:
    f = row.figures
    return f"{f['rps']:,.0f}/s ({f['p50']:.1f} / {f['p99']:.1f} ms; load {row.load:.2f})"


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def page(rounds: list[Round], args: argparse.Namespace, profile: str | None, cpu: str | None = None) -> str:
    """The bench page: what was run, each round, the medians against the targets, the log's checks, the CPU per
    verdict and the profile (each if given)."""
    rps = {code: [r.closed(code).figures["rps"] for r in rounds] for code in ("after", "before", "naive", "durable")}
    vs_naive = [_ratio(r.closed("after").figures["rps"], r.closed("naive").figures["rps"]) for r in rounds]
    vs_durable = [_ratio(r.closed("after").figures["rps"], r.closed("durable").figures["rps"]) for r in rounds]
    before_naive = [_ratio(r.closed("before").figures["rps"], r.closed("naive").figures["rps"]) for r in rounds]
    before_durable = [_ratio(r.closed("before").figures["rps"], r.closed("durable").figures["rps"]) for r in rounds]
    loads = [row.load for r in rounds for rows in r.rows.values() for row in rows]
    median = statistics.median
    p99 = {
        (code, rate): [r.open(code, rate).figures["p99"] for r in rounds]
        for code in ("after", "before")
        for rate in RATES
    }
    met_naive, met_durable = median(vs_naive) >= NAIVE_RATIO, median(vs_durable) >= DURABLE_RATIO
    busy = max(loads) > (os.cpu_count() or 1)

    def met(yes: bool) -> str:
        # The targets are for a quiet machine: on a busy one a run shows little either way (the durable
        # judge, one fsync a request, suffers most from other processes' writes to the disk).
        if not yes:
            return "**no**" + (", on a busy machine" if busy else "")
        return (
            "yes, but on a busy machine (load above its cores): not the quiet run the target asks for"
            if busy
            else "yes"
        )

    def said(yes: bool) -> str:
        return ("met only on a busy machine" if busy else "met") if yes else "not met"

    headline = (
        f"concurrency 16: {median(rps['after']):,.0f}/s, {median(vs_naive):.2f}x the naive judge, "
        f"{median(vs_durable):.2f}x the naive durable one (medians of {len(rounds)} rounds); "
        f"target {NAIVE_RATIO:.1f}x the naive judge {said(met_naive)}, {DURABLE_RATIO:.1f}x the durable one "
        f"{said(met_durable)}; open loop p99 "
        + ", ".join(
            f"{median(p99[('after', rate)]):.1f} ms at {rate:,}/s "
            f"(target {P99_TARGETS[rate]:.0f}: {said(median(p99[('after', rate)]) <= P99_TARGETS[rate])})"
            for rate in RATES
        )
        + f"; load {min(loads):.2f} to {max(loads):.2f}"
    )
    lines = [
        "# The verdict path: side by side with naive judges (issues 19 and 48)",
        "",
        headline_lines(MEASURES, headline, machine(loads)).rstrip(),
        "",
        "Written by `python -m tests.bench.verdict_pairs` (its docstring says how it runs); nothing here is written "
        "by hand. How fast a durable, authenticated, rate-limited verdict is next to what a club would hack instead: "
        "a FastAPI app with one POST route and a Python set (`tests/bench/naive_judge.py`), with no log (*naive*) "
        "and with one SQLite INSERT + commit per request, WAL, synchronous=FULL (*durable*). wordjudge runs with its "
        "default settings but the per-address request limit (off: the load comes from one address): durable log "
        "(WAL, synchronous=FULL, every verdict committed with fsync, chained and authenticated before it is "
        "answered), 200 kiosks bound to 127.0.0.1, each request a 2-word challenge with a new request id and the "
        f"next kiosk's token. *after* is the code at {args.after_code}, *before* the code at "
        f"{args.before_code}, run in alternating order. Earlier runs, what each change measured and the "
        "designs tried and not kept (issue 19: the fast path, the WAL copied after the answers, a process per "
        "core): this page's history (`git log -p docs/bench-verdict.md`).",
        "",
        f"Measured {args.measured} UTC on {cpu_model()}, {os.cpu_count()} cores, a machine "
        "shared with other engineers' builds and tests (the 1-minute load average is beside each figure: above 2 "
        "on 2 cores, the benchmark had less than the machine); servers pinned to core(s) "
        f"{args.server_cores}, load generators on core(s) {args.load_cores}; Python "
        f"{sys.version.split()[0]}, wordjudge {__version__}; {args.seconds} s per run; load "
        f"{min(loads):.2f} to {max(loads):.2f}.",
        "",
        "## Closed loop, concurrency 16 (wrk -t1): verdicts a second (p50 / p99)",
        "",
        "| round | order | after | before | naive (no log) | naive durable | after / before | after vs naive "
        "| after vs durable |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rounds:
        after, before = r.closed("after").figures["rps"], r.closed("before").figures["rps"]
        lines.append(
            f"| {r.number} | {', '.join(r.order)} | {_rate(r.closed('after'))} | {_rate(r.closed('before'))} "
            f"| {_rate(r.closed('naive'))} | {_rate(r.closed('durable'))} | {_ratio(after, before):.2f}x "
            f"| {_ratio(after, r.closed('naive').figures['rps']):.2f}x "
            f"| {_ratio(after, r.closed('durable').figures['rps']):.2f}x |"
        )
    lines += [
        "",
        "## Open loop (tests/bench/open_loop.py, 64 connections, latency from each request's due time)",
        "",
        "| round | code | rate | achieved | p50 ms | p99 ms | p99.9 ms | max ms | errors | load |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rounds:
        for code in r.order:
            for rate in RATES:
                row = r.open(code, rate)
                f = row.figures
                lines.append(
                    f"| {r.number} | {code} | {rate:,}/s | {f['achieved']:,.0f}/s | {f['p50']:.2f} | {f['p99']:.2f} "
                    f"| {f['p999']:.2f} | {f['max']:.1f} | {f['errors']} | {row.load:.2f} |"
                )

    def spread(values: list[float], unit: str = "x", digits: int = 2) -> str:
        low, mid, high = min(values), median(values), max(values)
        return f"{mid:,.{digits}f}{unit} (rounds: {low:,.{digits}f} to {high:,.{digits}f})"

    lines += [
        "",
        "## The targets (issue 48, points 3 and 4): medians of the rounds",
        "",
        "| target | after | before | met (after)? |",
        "|---|---|---|---|",
        f"| concurrency 16: >= {NAIVE_RATIO:.1f}x the naive no-log judge | {spread(vs_naive)} | {spread(before_naive)} "
        f"| {met(met_naive)} |",
        f"| concurrency 16: >= {DURABLE_RATIO:.1f}x the naive durable judge | {spread(vs_durable)} "
        f"| {spread(before_durable)} | {met(met_durable)} |",
    ]
    for rate in RATES:
        after_p99, before_p99 = p99[("after", rate)], p99[("before", rate)]
        lines.append(
            f"| open loop {rate:,}/s: p99 <= {P99_TARGETS[rate]:.0f} ms | {spread(after_p99, ' ms')} "
            f"| {spread(before_p99, ' ms')} | {met(median(after_p99) <= P99_TARGETS[rate])} |"
        )
    lines.append(
        f"| (the rates: wordjudge after / before / naive / durable, median) | {median(rps['after']):,.0f} / "
        f"{median(rps['before']):,.0f} / {median(rps['naive']):,.0f} / {median(rps['durable']):,.0f} a second | | |"
    )
    lines += ["", "## The log after each wordjudge run", ""]
    for r in rounds:
        for code in r.order:
            for row in r.rows[code]:
                lines.append(f"- round {r.number}, {code}, {row.mode} {row.level}: {row.audit}")
    if cpu:
        lines += ["", "## CPU per verdict (`python -m tests.bench.verdict_threads --peers`)", "", cpu.strip()]
    if profile:
        lines += ["", "## Where the time goes (`python -m tests.bench.profile_verdict`)", "", profile.strip()]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the code before the change")
    parser.add_argument("--after", type=Path, help="a checkout of the code after it (default: the venv's install)")
    parser.add_argument("--pairs", type=int, default=3, help="rounds (each a pair of wordjudge runs)")
    parser.add_argument("--seconds", type=int, default=8, help="length of each run")
    parser.add_argument("--server-cores", default="0,1")
    parser.add_argument("--load-cores", default="0,1")
    parser.add_argument("--profile", type=Path, help="a profile summary to put in the page (profile_verdict's)")
    parser.add_argument("--cpu", type=Path, help="CPU per verdict to put in the page (verdict_threads --peers')")
    parser.add_argument("--page", type=Path, help="write the page here (docs/bench-verdict.md)")
    parser.add_argument("--save", type=Path, help="keep the rounds' figures in this JSON file")
    parser.add_argument("--again", type=Path, help="run nothing: the page of the rounds --save kept in this file")
    args = parser.parse_args()
    for tree in filter(None, (args.before, args.after)):
        package = tree / "server" / "wordjudge"
        if not package.is_dir():
            sys.exit(f"{tree} is not a checkout of wordjudge (no server/wordjudge in it)")
        for part in ("kiosk", "lexicons"):
            if not (package / part).exists():
                sys.exit(f"{package / part} is missing: ln -s {(tree / part).resolve()} {package / part}")
    args.before = args.before.resolve()
    args.after = args.after.resolve() if args.after else None
    if args.again is not None:  # the page of a run saved before: its rounds and its settings as they were
        saved = json.loads(args.again.read_text("utf-8"))
        rounds = [_round(one) for one in saved["rounds"]]
        for name in _KEPT:
            setattr(args, name, saved[name])
    else:
        args.after_code, args.before_code = _commit(args.after), _commit(args.before)
        args.measured = f"{datetime.now(UTC):%Y-%m-%d %H:%M}"
        rounds = run(args)
    if args.save:
        kept = {name: getattr(args, name) for name in _KEPT}
        args.save.write_text(json.dumps({**kept, "rounds": [asdict(one) for one in rounds]}, indent=1), "utf-8")
    text = page(
        rounds,
        args,
        args.profile.read_text("utf-8") if args.profile else None,
        args.cpu.read_text("utf-8") if args.cpu else None,
    )
    print(text)
    if args.page:
        args.page.write_text(text, "utf-8")
    failed = [row for r in rounds for rows in r.rows.values() for row in rows if row.audit.startswith("FAILED")]
    if failed:
        sys.exit(f"{len(failed)} log check(s) failed")


if __name__ == "__main__":
    main()
