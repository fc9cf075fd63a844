"""Fixture ladder: data dir -> settings -> app -> client. Every test gets a fresh data dir."""

from __future__ import annotations

import errno
import gzip
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from fastapi import FastAPI
from fastapi.testclient import TestClient

from wordjudge.access import ACCESS_FILE, AccessStore
from wordjudge.app import create_app
from wordjudge.auth import Role
from wordjudge.demo import demo_source, open_demo
from wordjudge.deps import CSRF_HEADER, SESSION_COOKIE
from wordjudge.lexicon import DEMO_NAME, LexiconStore
from wordjudge.settings import Settings
from wordjudge.wordlist import normalise

from .wordgen import markov_words

pytest_plugins = ["tests.browser"]  # the browser fixture, for the web clients' tests


@pytest.fixture(scope="session")
def demo_words() -> list[str]:
    """The demo list's words, normalised and sorted, read straight from the file shipped in the package."""
    return sorted({normalise(word) for word in gzip.decompress(demo_source().read_bytes()).decode().split()})


@pytest.fixture(scope="session")
def generated_words(demo_words: list[str]) -> list[str]:
    """280,000 generated pseudo-words (the size of CSW24)."""
    return markov_words(demo_words, 280_000)


@pytest.fixture(scope="session")
def compiled_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo lexicon compiled once per session; tests get copies."""
    store = LexiconStore(tmp_path_factory.mktemp("demo") / "lexicons")
    return open_demo(store).directory


@pytest.fixture
def data_dir(tmp_path: Path, compiled_demo: Path) -> Path:
    """A fresh data dir holding a copy of the compiled demo lexicon (compiling it is tested on its own)."""
    data = tmp_path / "data"
    shutil.copytree(compiled_demo, data / "lexicons" / DEMO_NAME)
    return data


@pytest.fixture
def settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir)


@pytest.fixture
def app(settings: Settings) -> FastAPI:
    return create_app(settings)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as client:
        yield client


@pytest.fixture
def event_client(data_dir: Path, settings: Settings) -> Iterator[TestClient]:
    """A client of a server for a real event (the demo's settings cannot be changed: they are the demo's)."""
    write_event(data_dir, [("Open", "demo", "five-per-word")], name="Test Open")
    with TestClient(create_app(settings)) as client:
        yield client


# Tests sign TDs in with cheap Argon2 settings (the hash records its own settings, so the server
# checks it as it is); test_access checks that the server's own hashes use the real, costly ones.
CHEAP_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
PASSWORD = "correct horse battery"


def access_store(data_dir: Path) -> AccessStore:
    """The data dir's access store, as the CLI opens it (the server may have it open too)."""
    return AccessStore(data_dir / ACCESS_FILE, hasher=CHEAP_HASHER).open()


def device_headers(data_dir: Path, name: str, role: Role = Role.KIOSK, division: str | None = None) -> dict[str, str]:
    """Enrol a device as ``wordjudge device add`` does; return the headers it sends."""
    store = access_store(data_dir)
    try:
        token = store.devices.add(name, role, division, by="test").token
    finally:
        store.close()
    return {"Authorization": f"Bearer {token}"}


def td_headers(data_dir: Path, name: str) -> dict[str, str]:
    """Add a TD and sign them in; return the headers a console page sends (cookie and CSRF token)."""
    store = access_store(data_dir)
    try:
        store.tds.add(name, PASSWORD, by="test")
        session = store.tds.login(name, PASSWORD, client="test")
    finally:
        store.close()
    return {"Cookie": f"{SESSION_COOKIE}={session.token}", CSRF_HEADER: session.csrf_token}


@dataclass(frozen=True)
class Actors:
    """Request headers of two kiosks, a runner and two TDs, enrolled in the test's data dir."""

    kiosk: dict[str, str]
    kiosk2: dict[str, str]
    runner: dict[str, str]
    alice: dict[str, str]
    bob: dict[str, str]


@pytest.fixture
def actors(data_dir: Path) -> Actors:
    return Actors(
        kiosk=device_headers(data_dir, "kiosk-1"),
        kiosk2=device_headers(data_dir, "kiosk-2"),
        runner=device_headers(data_dir, "runner-1", Role.RUNNER),
        alice=td_headers(data_dir, "alice"),
        bob=td_headers(data_dir, "bob"),
    )


def write_event(
    data_dir: Path,
    divisions: list[tuple[str, str, str]],
    *,
    name: str = "Test Open",
    challenges_per_minute: int | None = None,
    kiosk_result_seconds: int | None = None,
) -> Path:
    """Write an event.toml with (name, lexicon, rule) divisions."""
    lines = [f'name = "{name}"', "rounds = true"]
    if challenges_per_minute is not None:
        lines.append(f"challenges_per_minute = {challenges_per_minute}")
    if kiosk_result_seconds is not None:
        lines.append(f"kiosk_result_seconds = {kiosk_result_seconds}")
    for division, lexicon, rule in divisions:
        lines += ["[[division]]", f'name = "{division}"', f'lexicon = "{lexicon}"', f'rule = "{rule}"']
    path = data_dir / "event.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def write_list(path: Path, lines: list[str], *, newline: str = "\n", bom: bool = False, gz: bool = False) -> Path:
    """Write a word-list file the way a TD's file might arrive."""
    data = (("\ufeff" if bom else "") + newline.join(lines) + newline).encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


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


def fill_disk(directory: Path) -> Path:
    """Write a file until the file system is full; return it."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as handle:  # unbuffered: nothing left to flush at close
        try:
            while True:
                handle.write(b"\0" * 65536)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
    return filler
