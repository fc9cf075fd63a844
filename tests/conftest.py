"""Fixture ladder: data dir -> settings -> app -> client. Every test gets a fresh data dir."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from wordjudge.log.audit import note_place
from wordjudge.model.auth import Role
from wordjudge.service.settings import Settings
from wordjudge.web.app import create_app
from wordjudge.words.demo import demo_source, open_demo
from wordjudge.words.editions import canonical_form
from wordjudge.words.lexicon import DEMO_NAME, Lexicon, LexiconStore
from wordjudge.words.wordlist import normalise

from . import wordgen
from .helpers import (
    CHEAP_HASHER,
    PROFILE,
    Actors,
    LiveServer,
    device_headers,
    td_headers,
    write_event,
)
from .wordgen import markov_words

# the browser fixture, for the web clients' tests; --backend and a throwaway PostgreSQL (postgres_url, database_url)
pytest_plugins = ["tests.browser", "tests.postgres", "tests.hall_lab"]

# The test workers (pytest-xdist) start after this file is read, with its environment. Where the machine says
# PYTHONDONTWRITEBYTECODE, each worker would parse and assertion-rewrite some 400 modules (schemathesis,
# hypothesis, the tests) again at every run, 9 to 14 s of each fast run: its workers keep bytecode caches
# (in __pycache__ folders, which git ignores) whatever the machine's default.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


@pytest.hookimpl(tryfirst=True)  # before -m selects: a module that forgot its marker is still left out
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that drives the browser ``browser`` and ``live``, and every test that starts a server
    through ``live_server`` ``live``, whatever its module says: the fast suite (``-m "not live and not browser"``)
    then never starts a browser or a server (the i18n screen walks, unmarked, once took half its time)."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if "browser" in names:
            item.add_marker(pytest.mark.browser)
        if names & {"browser", "live_server"}:
            item.add_marker(pytest.mark.live)


def pytest_report_header() -> str:
    other = "a fifth of the examples; WORDJUDGE_TESTS=full runs them all" if PROFILE == "fast" else "every example"
    return f"randomised tests: {PROFILE} profile ({other})"


@pytest.fixture(scope="session")
def demo_words() -> list[str]:
    """The demo list's words, normalised and sorted, read straight from the file shipped in the package."""
    return sorted({normalise(word) for word in gzip.decompress(demo_source().read_bytes()).decode().split()})


@pytest.fixture(scope="session")
def generated_words(demo_words: list[str], pytestconfig: pytest.Config) -> list[str]:
    """280,000 generated pseudo-words (the size of CSW24).

    Generating them takes ten seconds, so they are kept in pytest's cache folder (``.pytest_cache``) from one run
    to the next, in a file named by a hash of all that makes them (the generator's code, the demo list, the
    count): a change to any of these makes new ones. Without the cache (``-p no:cacheprovider``) every run
    generates them.
    """
    count = 280_000
    cache: pytest.Cache | None = getattr(pytestconfig, "cache", None)
    if cache is None:
        return markov_words(demo_words, count)
    made_of = hashlib.sha256(Path(wordgen.__file__).read_bytes() + canonical_form(demo_words) + b"%d" % count)
    path = cache.mkdir("generated-words") / f"markov-{count}-{made_of.hexdigest()[:16]}.txt"
    if path.is_file():
        words = path.read_text("utf-8").split("\n")
        if len(words) == count:
            return words
    words = markov_words(demo_words, count)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False) as handle:
        handle.write("\n".join(words))  # whole or not at all: another run may read it at once
    os.replace(handle.name, path)
    return words


@pytest.fixture(scope="session", autouse=True)
def words_verified_once_a_session() -> Iterator[None]:
    """Verify the words of the same compiled files once a session, not once for each app of each test.

    Every app verifies its lexicons' words against their fingerprints (:meth:`Lexicon.verify_content`: a tenth
    of a second for the demo, in nearly every test, as each data dir holds a copy of the same compiled demo).
    :meth:`Lexicon.open` has checked the trie file against the SHA-256 its manifest names, so a trie of a SHA-256
    whose words were verified against this fingerprint once need not be again. Any other pair, such as the
    manifest or trie a test altered, is verified in full, as the code does it.
    """
    verified: set[tuple[str, str]] = set()
    verify = Lexicon.verify_content

    def verify_once(lexicon: Lexicon) -> None:
        key = (lexicon.manifest.trie_sha256, lexicon.manifest.fingerprint)
        if key not in verified:
            verify(lexicon)
            verified.add(key)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Lexicon, "verify_content", verify_once)
        yield


@pytest.fixture(scope="session")
def compiled_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo lexicon compiled once per session; tests get copies."""
    store = LexiconStore(tmp_path_factory.mktemp("demo") / "lexicons")
    return open_demo(store).directory


@pytest.fixture
def data_dir(tmp_path: Path, compiled_demo: Path, database_url: str | None, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data dir holding a copy of the compiled demo lexicon (compiling it is tested on its own). On the
    PostgreSQL backend (--backend), its state is in a fresh database: noted as ``serve --database`` notes it,
    and named by WORDJUDGE_DATABASE for the settings, the commands and the servers the test starts (the helpers
    open it by the note: helpers.database_of)."""
    data = tmp_path / "data"
    shutil.copytree(compiled_demo, data / "lexicons" / DEMO_NAME)
    if database_url is not None:
        note_place(data, database_url)
        monkeypatch.setenv("WORDJUDGE_DATABASE", database_url)
    return data


@pytest.fixture
def settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir)


@pytest.fixture
def app(settings: Settings) -> FastAPI:
    """The app on the test's data dir; TD passwords it hashes use the cheap test hasher (helpers.CHEAP_HASHER)."""
    return create_app(settings, hasher=CHEAP_HASHER)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as client:
        yield client


@pytest.fixture
def event_client(data_dir: Path, settings: Settings) -> Iterator[TestClient]:
    """A client of a server for a real event (the demo's settings cannot be changed: they are the demo's)."""
    write_event(data_dir, [("Open", "demo", "five-per-word")], name="Test Open")
    with TestClient(create_app(settings, hasher=CHEAP_HASHER)) as client:
        yield client


@pytest.fixture
def actors(data_dir: Path) -> Actors:
    return Actors(
        kiosk=device_headers(data_dir, "kiosk-1"),
        kiosk2=device_headers(data_dir, "kiosk-2"),
        runner=device_headers(data_dir, "runner-1", Role.RUNNER),
        alice=td_headers(data_dir, "alice"),
        bob=td_headers(data_dir, "bob"),
    )


@pytest.fixture
def quick_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite connections opened from now on wait 0.2 s for a lock held elsewhere, not the server's 2 s
    (database.BUSY_TIMEOUT_MS): for a test that holds the audit log's lock on purpose, to see what is
    refused while it is held and that the next write succeeds. Ask for it before the app or log it affects."""
    monkeypatch.setattr("wordjudge.storage.database.BUSY_TIMEOUT_MS", 200)
    monkeypatch.setattr("wordjudge.log.store.BUSY_TIMEOUT_MS", 200)  # imported by name


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MiB tmpfs, mounted for this test (needs root, as CI and the dev machines have)."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount_point)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


@pytest.fixture
def live_server() -> Iterator[Callable[..., LiveServer]]:
    """Start ``wordjudge serve`` on a data folder, on a free loopback port, with the flags given (default
    ``--log-level warning``), once its health check answers; every server started is stopped after the test."""
    started: list[LiveServer] = []

    def start(data_dir: Path, *extra: str) -> LiveServer:
        server = LiveServer(data_dir, *extra)
        started.append(server)
        server.start()
        return server

    yield start
    for server in started:
        server.stop()
