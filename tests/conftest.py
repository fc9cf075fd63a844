"""Fixture ladder: data dir -> settings -> app -> client. Every test gets a fresh data dir."""

from __future__ import annotations

import gzip
import hashlib
import inspect
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType, FunctionType
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from wordjudge.log.audit import note_place
from wordjudge.model.auth import Role
from wordjudge.service.settings import Settings
from wordjudge.storage.dialect import StateLocation
from wordjudge.web.app import create_app
from wordjudge.words.demo import demo_source, open_demo
from wordjudge.words.editions import DEMO_NAME, canonical_form
from wordjudge.words.lexicon import Lexicon, LexiconStore
from wordjudge.words.normal_form import normalise

from . import helpers, wordgen
from .helpers import (
    CHEAP_HASHER,
    PROFILE,
    Actors,
    LiveServer,
    ServeProcess,
    device_headers,
    serve_process,
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


# What a plain ``pytest`` leaves out (pyproject.toml's addopts): the tests that start a live server, a browser or a
# PostgreSQL cluster. Any ``-m`` given replaces it: ``-m ""`` runs every test (as .ci/check does), ``-m live`` those.
DEFAULT_SELECTION = "not live and not browser and not cluster"
SLOW_KINDS = {
    "live": "start a wordjudge server",
    "browser": "drive Chromium",
    "cluster": "start a PostgreSQL cluster",
}


def _is_server_start(obj: object) -> bool:
    """Whether ``obj`` is one of the ways the tests start ``wordjudge serve``: everything that starts one goes
    through these (tests/helpers.py) or a ``subprocess.Popen`` of ``serve`` (seen in the code that calls it)."""
    return obj is LiveServer or obj is serve_process or obj is ServeProcess


def _codes_of(obj: object) -> list[tuple[CodeType, dict[str, Any]]]:
    """The code of a function, or of a class's methods, each with the globals it runs with."""
    functions = list(vars(obj).values()) if isinstance(obj, type) else [obj]
    functions = [inspect.unwrap(function) for function in functions if callable(function)]  # @contextmanager's
    return [(function.__code__, function.__globals__) for function in functions if isinstance(function, FunctionType)]


def _starts(code: CodeType, where: dict[str, Any], found: Callable[[object], bool], seen: set[CodeType]) -> bool:
    """Whether ``code`` (run with globals ``where``) may reach something ``found`` says yes to: through the names
    it uses, the tests' own functions and classes they name (in any tests module), and the code nested in it."""
    if code in seen:
        return False
    seen.add(code)
    if "Popen" in code.co_names and found(code):  # a subprocess.Popen of what ``found`` sees in its constants
        return True
    for name in code.co_names:
        obj = where.get(name)
        if obj is None:
            continue
        if found(obj):
            return True
        ours = str(getattr(obj, "__module__", "") or "").startswith("tests.")
        if ours and any(_starts(inner, inner_globals, found, seen) for inner, inner_globals in _codes_of(obj)):
            return True
    return any(isinstance(const, CodeType) and _starts(const, where, found, seen) for const in code.co_consts)


def _reaches(item: pytest.Item, found: Callable[[object], bool]) -> bool:
    """Whether the test, or a fixture it uses, may reach something ``found`` says yes to (_starts)."""
    functions = [getattr(item, "obj", None)]
    fixture_info = getattr(item, "_fixtureinfo", None)
    if fixture_info is not None:
        functions += [fixturedef.func for defs in fixture_info.name2fixturedefs.values() for fixturedef in defs]
    seen: set[CodeType] = set()
    for function in functions:
        function = inspect.unwrap(function) if callable(function) else function
        if isinstance(function, FunctionType) and _starts(function.__code__, function.__globals__, found, seen):
            return True
    return False


def _serves(obj: object) -> bool:
    if isinstance(obj, CodeType):  # a Popen whose command is ``... serve ...``
        return "serve" in obj.co_consts
    return _is_server_start(obj)


def _drives_chromium(obj: object) -> bool:
    from .browser import CHROMIUM  # a plugin of this file's: imported once the plugins are

    return obj is CHROMIUM


@pytest.hookimpl(tryfirst=True)  # before -m selects: a module that forgot its marker is still left out
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark, whatever its module says, every test that drives Chromium (the ``browser`` fixture, or Debian's
    chromium started otherwise) ``browser`` and ``live``, and every test that starts a ``wordjudge serve``
    (``live_server``, :class:`LiveServer`, ``serving``, ``serve_process``, a Popen of ``serve``: in the test, its
    fixtures or the tests' own code they call) ``live``: the fast suite then never starts a browser or a server
    (the i18n screen walks, unmarked, once took half its time). tests/postgres.py marks ``cluster``."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if "browser" in names or _reaches(item, _drives_chromium):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.live)
        elif "live_server" in names or _reaches(item, _serves):
            item.add_marker(pytest.mark.live)


@pytest.fixture(autouse=True)
def _servers_only_in_live_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test not marked ``live`` that starts a server anyway (in a way the marking above did not see) fails,
    saying so, rather than slowing the fast suite unnoticed."""
    helpers.SERVERS_UNMARKED = None if request.node.get_closest_marker("live") else request.node.nodeid
    yield
    helpers.SERVERS_UNMARKED = None


def pytest_report_header(config: pytest.Config) -> list[str]:
    other = "a fifth of the examples; WORDJUDGE_TESTS=full runs them all" if PROFILE == "fast" else "every example"
    lines = [f"randomised tests: {PROFILE} profile ({other})"]
    if config.option.markexpr == DEFAULT_SELECTION:
        kinds = ", ".join(f"{kind} (they {what})" for kind, what in SLOW_KINDS.items())
        lines.append(
            f'left out (the fast suite): tests marked {kinds}; -m "" runs every test (as .ci/check does), '
            "-m live (or browser, cluster) only those"
        )
    return lines


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
    whose words were verified against this fingerprint (and tile set) once need not be again. Any other pair, such as the
    manifest or trie a test altered, is verified in full, as the code does it.
    """
    verified: set[tuple[object, ...]] = set()
    verify = Lexicon.verify_content

    def verify_once(lexicon: Lexicon) -> None:
        # Everything verify_content checks the words against: the fingerprint, and a tile set's split tiles.
        manifest = lexicon.manifest
        key = (manifest.trie_sha256, manifest.fingerprint, manifest.split_tiles, str(manifest.tiles))
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
        note_place(StateLocation(data, database_url))
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
