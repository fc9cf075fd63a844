"""The web clients' pure modules, unit-tested with Node's own test runner (node:test), against the input
rules the server serves: a client that restated a limit differently would fail here."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from wordjudge.base.errors import LANGUAGES, InvalidInput
from wordjudge.hall.proof import HallKey, digest, proof_mac
from wordjudge.model.input_rules import RequestId, check_note, served
from wordjudge.model.records import check_request_id
from wordjudge.storage.access_db import check_name
from wordjudge.words.normal_form import normalise
from wordjudge.words.tiles import TileError, builtin, shown_word

JS_TESTS = Path(__file__).resolve().parent / "js"


def test_the_client_modules_pass_their_node_tests() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is missing: apt-get install nodejs (Node 18 or newer runs node:test)")
    tests = sorted(str(path) for path in JS_TESTS.glob("*.test.mjs"))
    assert tests, f"no *.test.mjs in {JS_TESTS}"
    # The rules of an event that numbers its tables (the default), and of one whose TD names them.
    env = {
        **os.environ,
        "WORDJUDGE_INPUT_RULES": json.dumps(served()),
        "WORDJUDGE_INPUT_RULES_NAMED": json.dumps(served("names")),
        "WORDJUDGE_PROOF_VECTOR": _proof_vector(),
        "WORDJUDGE_TILE_CASES": _tile_cases(),
        "WORDJUDGE_NORMAL_CASES": json.dumps([[typed, normalise(typed)] for typed in NORMAL_CASES], ensure_ascii=False),
    }
    run = subprocess.run([node, "--test", *tests], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "# fail 0" in run.stdout, run.stdout


# Typed text whose normal form (NFC, upper case, NFC again) the clients must write as the server does
# (tests/js/words.test.mjs): the client's one normalise (kiosk/shared/words.js) against the server's, case by case.
# Upper-casing decomposes some letters (the Greek with dialytika and tonos, a long s with dots) and expands others
# (sharp s, ligatures, iota subscript); an NFC left out on either side gives another text for these.
NORMAL_CASES = [
    "qi za",
    "e\u0301te\u0301",  # decomposed: composed by the first NFC
    "\u0390",  # ΐ: upper case decomposes it, the second NFC composes it again
    "\u03b0",  # ΰ: likewise
    "\u1e9b\u0323",  # ẛ̣: long s with dot above and dot below
    "\u01f0",  # ǰ: upper case has no composed form (J, caron)
    "\u00df",  # ß: SS
    "\ufb01",  # ﬁ: FI
    "\u1fb3",  # alpha with ypogegrammeni: capital alpha and iota
    "\u0131",  # dotless i: I
    "\u03c2",  # final sigma: Σ
    "\u212b",  # the Angstrom sign: Å
    "n\u0303andu",  # ñ typed as n and a combining tilde
    "col\u0140legi",  # Catalan ŀ
    "\u0175",  # Welsh ŵ
    "\u01c6",  # the digraph ǆ
]


# Typed words and the tile sets they are read with: the kiosk must read each as the server does (tests/js/tiles.test.mjs).
TILE_CASES = {
    "spanish": [
        "chico",
        "perro",
        "llama",
        "ñandú",
        "n~andu",
        "c[h]ico",
        "[c][h]ico",
        "cachorro",
        "calle",
        "kilo",
        "a[xx]",
        "pingüino",
    ],
    "catalan": [
        "col·legi",
        "col.legi",
        "col-legi",
        "coŀlegi",
        "nyap",
        "quatre",
        "qatar",
        "llum",
        "caça",
        "qüestió",
        "freqüent",
        "aqüífer",
    ],
    "welsh": [
        "bangor",
        "ba[ng]or",
        "ban[g]or",
        "llanfairpwll",
        "rhedeg",
        "arhos",
        "tân",
        "ffordd",
        "x",
        "dddd",
        "[l][l]yfr",
    ],
    "english": ["cat", "quixotry", "ñu"],
}


# The tiles each set's test lexicon splits (Welsh NG: BANGOR is B A N G O R, DANGOS has the NG tile).
TILE_SPLITS: dict[str, list[str]] = {"welsh": ["NG"]}


def _tile_cases() -> str:
    """Each case with the readings the server finds (a list of tile lists; [] where it refuses the word), those a
    lexicon splitting ``split`` can hold, how each of those is stated and how it is shown."""
    cases: list[dict[str, Any]] = []
    for name, words in TILE_CASES.items():
        tiles = builtin(name)
        split = TILE_SPLITS.get(name, [])
        for word in words:
            try:
                found = [list(reading) for reading in tiles.readings(word)]
                held = [list(reading) for reading in tiles.readings(word, split)]
            except TileError:
                found = held = []
            cases.append(
                {
                    "tiles": {**tiles.as_dict(), "split": split},
                    "word": word,
                    "readings": found,
                    "held": held,
                    "stated": [tiles.stated(reading, split) for reading in held],
                    "shown": [shown_word(reading, split) for reading in held],
                }
            )
    return json.dumps(cases, ensure_ascii=False)


def _proof_vector() -> str:
    """A proof as the server makes it (wordjudge.hall.proof), for the client's check (tests/js/proof.test.mjs)."""
    secret, nonce, url = "wj_" + secrets.token_urlsafe(32), secrets.token_hex(16), "http://192.168.1.11:8000"
    hall_key = HallKey(secrets.token_bytes(32))
    key = hall_key.proof_key("device", digest(secret))  # as the server hands it to the device at pairing
    mac = proof_mac(key, nonce=nonce, url=url, role="active", epoch=2)
    # What a copy of the database holds of the device (its token's digest), and what an answer keyed with it is.
    stored = digest(secret)
    return json.dumps(
        {
            "secret": secret,
            "hint": stored[:16],
            "stored": stored,
            "stored_mac": proof_mac(stored, nonce=nonce, url=url, role="active", epoch=2),
            "key": key,
            "nonce": nonce,
            "url": url,
            "role": "active",
            "epoch": 2,
            "mac": mac,
            "long_key_mac": hmac.new(b"k" * 100, b"a message", hashlib.sha256).hexdigest(),
        }
    )


def test_the_served_limits_are_those_the_server_checks() -> None:
    """What the clients keep as typed (a name's, a note's length, the languages) is what the server refuses beyond,
    and the request id's type and its check are one rule."""
    rules = served()
    assert rules["languages"] == list(LANGUAGES)
    assert check_name("n" * rules["max_name"]) == "n" * rules["max_name"]
    with pytest.raises(InvalidInput):
        check_name("n" * (rules["max_name"] + 1))
    assert check_note("x" * rules["max_note"]) == "x" * rules["max_note"]
    with pytest.raises(InvalidInput):
        check_note("x" * (rules["max_note"] + 1))
    as_type = TypeAdapter(RequestId)
    for request_id in ("abcdefgh", "A_b-" * 16, "abcdefg", "a" * 65, "abcdefgh!", "abcdéfgh"):
        try:
            as_type.validate_python(request_id)
            typed = True
        except ValidationError:
            typed = False
        try:
            checked = check_request_id(request_id) == request_id
        except InvalidInput:
            checked = False
        assert typed == checked, request_id
