"""Lookups through the real profile path on one core, and a server's memory with two big lexicons (issue 19, item 4).

Run from the repository root (not part of the test suite; about a minute):

    .venv/bin/python -m tests.bench.bench_lookup [--markdown FILE]

Two generated lists (tests/wordgen.py: English-shaped words from a Markov chain trained on the demo
list, realistic lengths; never an official list): one the size of CSW24 (279,077 words) and one the size
of NWL2023 (196,601). Each is compiled as ``wordjudge lexicon add`` compiles a list.

- **Lookups**: :meth:`Profile.lookup` (what a verdict calls for each word: removals, base, additions,
  secondary source, and the result the TD sees), in-process, pinned to one core, on 1,000,000 queries
  (half words of the list, half near misses), best of 3; also with errata and a secondary source (the
  amended path, every source asked), and :meth:`Profile.check` (normalising the typed words first).
- **Memory**: ``wordjudge serve`` on a data folder whose event has one division on each list, the RSS
  of the server process (``VmRSS``) once it answers, and again after 2,000 challenges spread over both
  divisions (so that the tries' pages are touched); the demo event's server beside it.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import httpx2 as httpx

from wordjudge import __version__
from wordjudge.words.demo import read_demo_list
from wordjudge.words.lexicon import LexiconStore
from wordjudge.words.profile import Errata, Profile
from wordjudge.words.wordlist import SourceFormat, WordList

from ..wordgen import markov_words, near_misses
from .bench_challenges import free_port, wait_until_up
from .headline import cpu_model

SIZES = {"CSW24-sized": 279_077, "NWL-sized": 196_601}
NAMES = {"CSW24-sized": "bigsynth", "NWL-sized": "midsynth"}
QUERIES = 1_000_000
TARGET_RATE = 1_000_000
TARGET_RSS_MIB = 90


def best(run: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def every(lookup: Callable[[str], object], queries: list[str]) -> None:
    # Each answer dropped as the next comes, as a verdict drops its own: a million kept would time the
    # garbage collector's walks over them, not the lookups.
    deque(map(lookup, queries), maxlen=0)


def challenges(profile: Profile, typed: list[str]) -> None:
    """The typed words checked two at a time, as 2-word challenges are."""
    for i in range(0, len(typed), 2):
        profile.check(typed[i : i + 2])


def word_list(words: list[str], name: str) -> WordList:
    return WordList(source_name=name, source_sha256="0" * 64, format=SourceFormat.PLAIN, words=set(words))


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def server_rss(data_dir: Path, lists: dict[str, list[str]], token: str, env: dict[str, str]) -> tuple[float, float]:
    """The server's RSS once it answers, and after 2,000 challenges over every division (MiB)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = str(Path(sys.executable).with_name("wordjudge"))
    server = subprocess.Popen(
        [command, "serve", "--max-requests-per-client", "0", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_up(f"{base}/api/health", server)
        time.sleep(1.0)
        started = rss_mib(server.pid)
        rng = random.Random(19)
        divisions = list(lists)
        playable = {division: [w for w in words if len(w) <= 15] for division, words in lists.items()}  # the board
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=10) as client:
            for i in range(2000):
                division = divisions[i % len(divisions)]
                words = " ".join(rng.choice(playable[division]) for _ in range(2))
                body = {"division": division, "table": 1, "round": 1, "words": words, "request_id": f"rss-{i:06d}"}
                client.post("/api/challenges", json=body).raise_for_status()
        return started, rss_mib(server.pid)
    finally:
        server.terminate()
        server.communicate(timeout=60)


def make_server(work: Path, lists: dict[str, list[str]]) -> tuple[Path, str, dict[str, str]]:
    data_dir = work / "data"
    env = {**os.environ, "WORDJUDGE_DATA_DIR": str(data_dir), "WORDJUDGE_LOG_LEVEL": "warning"}
    data_dir.mkdir(parents=True, exist_ok=True)
    lines = ['name = "Lookup bench"', "challenges_per_minute = 0"]
    store = LexiconStore(data_dir / "lexicons")
    for division, words in lists.items():
        lexicon = "demo" if division == "demo" else NAMES[division]
        if lexicon != "demo":
            store.add(word_list(words, f"{lexicon}.txt"), lexicon)
        lines += ["[[division]]", f'name = "{division}"', f'lexicon = "{lexicon}"', 'rule = "single"']
    (data_dir / "event.toml").write_text("\n".join(lines) + "\n")
    command = str(Path(sys.executable).with_name("wordjudge"))
    token = subprocess.run(
        [command, "device", "add", "rss-kiosk", "--role", "kiosk"], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    return data_dir, token, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    parser.add_argument("--lookups-only", action="store_true", help="no server: the lookups' figures alone")
    args = parser.parse_args()
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    demo = read_demo_list().sorted_words()
    lists = {label: markov_words(demo, size, seed=2024 + size) for label, size in SIZES.items()}
    load = os.getloadavg()[0]
    rows = []
    work = Path(tempfile.mkdtemp(prefix="wordjudge-lookup-"))
    try:
        store = LexiconStore(work / "lexicons")
        for label, words in lists.items():
            store.add(word_list(words, f"{NAMES[label]}.txt"), NAMES[label])
            lexicon = store.open(NAMES[label])
            misses = near_misses(words, lexicon.manifest.alphabet, QUERIES // 2)
            queries = [words[i % len(words)] for i in range(0, QUERIES // 2 * 7, 7)] + misses
            random.Random(1).shuffle(queries)
            plain = Profile(NAMES[label], lexicon)
            amended = Profile(
                "amended",
                lexicon,
                additions=Errata(("ZZZZZZ",)),
                removals=Errata((words[0],)),
                secondary=store.open(NAMES[label]),
                secondary_min_length=9,
            )
            typed = [query.lower() for query in queries]
            found = sum(result.acceptable for result in map(plain.lookup, queries))
            assert found == QUERIES // 2, found
            rows.append(
                (
                    label,
                    len(words),
                    QUERIES / best(partial(every, plain.lookup, queries)),
                    QUERIES / best(partial(every, amended.lookup, queries)),
                    QUERIES / best(partial(challenges, plain, typed)),
                    QUERIES / best(partial(every, lexicon.__contains__, queries)),
                )
            )
            print(f"measured lookups on {label}", file=sys.stderr)
        if args.lookups_only:
            for row in rows:
                print(row)
            return
        server_work = work / "server"
        data_dir, token, env = make_server(server_work, lists)
        big = server_rss(data_dir, lists, token, env)
        demo_work = work / "demo-server"
        demo_dir, demo_token, demo_env = make_server(demo_work, {"demo": demo})
        alone = server_rss(demo_dir, {"demo": demo}, demo_token, demo_env)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cpu = cpu_model()
    lines = [
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {cpu}, pinned to core {core}, Python "
        f"{platform.python_version()}, wordjudge {__version__}; load average {load:.2f} at the start. "
        f"Targets: Profile.lookup >= {TARGET_RATE:,} words/s on one core; server RSS <= {TARGET_RSS_MIB} MB with both.",
        "",
        "| list | words | Profile.lookup words/s | amended profile (errata + secondary) | check (normalise + lookup, 2 words a call) "
        "| `word in lexicon` (the trie alone) |",
        "|---|---|---|---|---|---|",
    ]
    for label, count, rate, amended_rate, check_rate, raw_rate in rows:
        lines.append(
            f"| {label} | {count:,} | {rate:,.0f} | {amended_rate:,.0f} | {check_rate:,.0f} | {raw_rate:,.0f} |"
        )
    lines += [
        "",
        "| server | RSS once serving | RSS after 2,000 challenges |",
        "|---|---|---|",
        f"| both lists (two divisions) | {big[0]:.1f} MiB | {big[1]:.1f} MiB |",
        f"| demo only | {alone[0]:.1f} MiB | {alone[1]:.1f} MiB |",
    ]
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        args.markdown.write_text(table + "\n")


if __name__ == "__main__":
    main()
