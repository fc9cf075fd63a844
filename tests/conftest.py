"""Fixture ladder: data dir -> settings -> app -> client. Every test gets a fresh data dir."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from wordjudge.app import create_app
from wordjudge.demo import demo_source, open_demo
from wordjudge.lexicon import DEMO_NAME, LexiconStore
from wordjudge.settings import Settings
from wordjudge.wordlist import normalise

from .wordgen import markov_words


@pytest.fixture(scope="session")
def demo_words() -> list[str]:
    """The demo list's words, normalised and sorted, read straight from the package file."""
    return sorted({normalise(word) for word in json.loads(demo_source().read_bytes())})


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


def write_event(data_dir: Path, divisions: list[tuple[str, str, str]], *, name: str = "Test Open") -> Path:
    """Write an event.toml with (name, lexicon, rule) divisions."""
    lines = [f'name = "{name}"', "rounds = true"]
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
