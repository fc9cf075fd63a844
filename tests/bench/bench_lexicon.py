"""Lexicon engine benchmark: compile time, size, load time, lookups/s and memory, against a Python set.

Run from the repository root (not part of the test suite; takes about a minute):

    .venv/bin/python -m tests.bench.bench_lexicon [--markdown docs/bench-lexicon.md]

Three lists: the demo list (ENABLE, 172,820 words); 280,000 generated words (the
size of CSW24) as compressible as real English lists; and 280,000 generated words
of higher entropy, a stress case (see tests/wordgen.py for both). Every figure is measured in this run, and the
baseline, a Python ``set`` of the same words, is measured in the same run on the same
machine, so the ratios are what to compare across machines. The process is pinned to
one core.
"""

from __future__ import annotations

import argparse
import lzma
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from wordjudge import __version__
from wordjudge.words.demo import read_demo_list
from wordjudge.words.lexicon import Lexicon, LexiconStore
from wordjudge.words.profile import Errata, Profile
from wordjudge.words.wordlist import read_word_list

from ..wordgen import markov_words, near_misses
from .headline import cpu_model, headline_lines, machine

LOOKUPS = 1_000_000
TARGETS = {"compile": "< 2 s", "size": "< 30% of text", "load": "< 10 ms", "lookups": ">= 1,000,000/s"}


def best_and_median(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def rss_kib(mode: str, path: Path) -> int:
    """Resident memory added by loading the list as ``mode`` and looking every word up, in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.bench_lexicon", "--child", mode, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.strip())


def child(mode: str, path: Path) -> None:
    def rss() -> int:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    words = (path / "words.txt").read_text().split()  # the queries, read before measuring
    before = rss()
    if mode == "set":
        container: object = set((path / "words.txt").read_text().split())  # its own strings, as a server's would be
    else:
        container = Lexicon.open(path / "lexicons" / "BENCH")
    assert all(word in container for word in words)  # type: ignore[operator]
    print(rss() - before)


def bench_list(label: str, words: list[str], workdir: Path) -> dict[str, str]:
    text_path = workdir / "words.txt"
    text_path.write_text("".join(word + "\n" for word in words), "utf-8")
    text_bytes = text_path.stat().st_size
    xz_bytes = len(lzma.compress(text_path.read_bytes(), preset=9))
    store = LexiconStore(workdir / "lexicons")

    def compile_once() -> None:
        store.add(read_word_list(text_path), "BENCH", replace=True)

    compile_best, compile_median = best_and_median(compile_once, 5)
    lexicon = Lexicon.open(store.path("BENCH"))
    trie_bytes = lexicon.manifest.trie_bytes

    load_best, load_median = best_and_median(lambda: Lexicon.open(store.path("BENCH")), 50)
    verify_best, _ = best_and_median(lexicon.verify_content, 5)
    set_load_best, set_load_median = best_and_median(lambda: set(text_path.read_text("utf-8").split()), 10)

    misses = near_misses(words, lexicon.manifest.alphabet, LOOKUPS // 2)
    queries = [words[i % len(words)] for i in range(0, LOOKUPS // 2 * 7, 7)] + misses
    reference = set(words)
    profile = Profile("P", lexicon, additions=Errata(("ZZZZZZ",)))

    def rate(contains: Callable[[str], bool]) -> float:
        best, _ = best_and_median(lambda: sum(map(contains, queries)), 5)
        return len(queries) / best

    trie_rate = rate(lexicon._trie.__contains__)
    lexicon_rate = rate(lexicon.__contains__)
    set_rate = rate(reference.__contains__)
    profile_best, _ = best_and_median(lambda: [profile.lookup(q) for q in queries[:200_000]], 3)
    profile_rate = 200_000 / profile_best
    assert sum(map(lexicon.__contains__, queries)) == sum(map(reference.__contains__, queries)) == LOOKUPS // 2

    trie_rss, set_rss = rss_kib("trie", workdir), rss_kib("set", workdir)
    return {
        "list": label,
        "words": f"{len(words):,}",
        "text": f"{text_bytes / 1024:,.0f} KiB",
        "xz -9": f"{xz_bytes / 1024:,.0f} KiB",
        "trie": f"{trie_bytes / 1024:,.0f} KiB",
        "trie/text": f"{trie_bytes / text_bytes:.1%}",
        "trie/xz": f"{trie_bytes / xz_bytes:.2f}x",
        "compile (best/median)": f"{compile_best:.2f} s / {compile_median:.2f} s",
        "load: open+verify sha+mmap (best/median)": f"{load_best * 1000:.2f} ms / {load_median * 1000:.2f} ms",
        "baseline: set from text (best/median)": f"{set_load_best * 1000:.0f} ms / {set_load_median * 1000:.0f} ms",
        "load ratio (set / trie, median)": f"{set_load_median / load_median:.0f}x faster",
        "content re-verify (fingerprint from trie)": f"{verify_best * 1000:.0f} ms",
        "lookups/s: `word in lexicon`": f"{lexicon_rate:,.0f}",
        "lookups/s: raw marisa Trie": f"{trie_rate:,.0f}",
        "lookups/s: baseline set": f"{set_rate:,.0f}",
        "lookup ratio (lexicon / set)": f"{lexicon_rate / set_rate:.2f}",
        "profile.lookup/s (with source, TD view)": f"{profile_rate:,.0f}",
        "memory: trie, RSS after all words looked up": f"{trie_rss / 1024:,.1f} MiB",
        "memory: baseline set, RSS": f"{set_rss / 1024:,.1f} MiB",
        "memory ratio (trie / set)": f"{trie_rss / set_rss:.1%}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--markdown", type=Path, help="also write the table to this Markdown file")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    start_load = os.getloadavg()[0]
    demo = read_demo_list().sorted_words()
    started = time.perf_counter()
    realistic = markov_words(demo, 280_000)
    stress = markov_words(demo, 280_000, order=3)
    print(f"generated 2 x 280,000 words in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    columns = []
    lists = (("demo (ENABLE)", demo), ("generated 280k (order 5)", realistic), ("stress 280k (order 3)", stress))
    for label, words in lists:
        with tempfile.TemporaryDirectory() as workdir:
            columns.append(bench_list(label, words, Path(workdir)))
            print(f"measured {label}", file=sys.stderr)

    cpu = cpu_model()
    header = (
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {cpu}, 1 core pinned, Python {platform.python_version()}, "
        f"wordjudge {__version__}. Targets for 280,000 words: compile {TARGETS['compile']}, "
        f"size {TARGETS['size']}, load {TARGETS['load']}, lookups {TARGETS['lookups']}."
    )
    lines = [header, "", "| | " + " | ".join(c["list"] for c in columns) + " |", "|---|" + "---|" * len(columns)]
    for key in columns[0]:
        if key != "list":
            lines.append(f"| {key} | " + " | ".join(c[key] for c in columns) + " |")
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        said = headline_lines(MEASURES, _headline(columns[1]), machine([start_load, os.getloadavg()[0]]))
        args.markdown.write_text(
            f"# Lexicon engine benchmark\n\n{said}\n`python -m tests.bench.bench_lexicon`\n\n{table}\n"
        )


# What the page measures (docs/benchmarks.md's table says it, from the page).
MEASURES = "the compiled lexicons: compile, size, load, lookups, memory"


def _headline(column: dict[str, str]) -> str:
    """The headline of the realistic 280,000-word list's column: medians, as the table shows them."""
    compiled = column["compile (best/median)"].split(" / ")[-1]
    loaded = column["load: open+verify sha+mmap (best/median)"].split(" / ")[-1]
    return (
        f"{column['words']} words: compiled in {compiled}, {column['trie/text']} of the text, loaded in {loaded},"
        f" {column['lookups/s: `word in lexicon`']} lookups a second"
    )


if __name__ == "__main__":
    main()
