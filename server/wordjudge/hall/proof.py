"""Proofs that a server is the hall's: what a phone at a peer's address cannot forge.

A hall's servers, its devices and its TDs' consoles ask each other where they stand over plain HTTP on a
network the players' phones may share. Nothing that answers at an address is believed for being there:

- **between servers**, an answer is a **claim** (role, epoch, active server, time, lexicons...) signed over the
  asker's fresh nonce with the **hall key**, 32 random bytes in each hall server's data folder (``hall.key``,
  mode 0600), made once at set-up (``wordjudge database init --data-dir``, or by the first server to take over)
  and copied with the folder to the other machine; the database records its id, so that a folder holding
  another key is named. A claim that does not verify (no key, another key, another nonce: a replay) is no claim.
- **to a device**, a server proves it knows the device's token: it signs the device's nonce, its own address,
  its role and its epoch with the token's digest (what the hall's database holds of the token, never the token
  itself), found by a hint the device sends (the digest's first 16 hex digits: the rest stays a 192-bit
  secret). A phone holds no device's digest; a server that is not the hall's holds none either. The device
  checks the address it is about to talk to is the one signed, so that a proof relayed from another of the
  hall's servers does not pass.
- **to a console**, the same with the session's CSRF token (the console holds it; the database holds it).

The device and console side of the proof is ``kiosk/proof.js`` (SHA-256 and HMAC in plain JavaScript: a phone's
page over plain HTTP has no WebCrypto). Nothing here imports the web framework.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wordjudge.base.errors import InvalidInput

KEY_FILE = "hall.key"
KEY_BYTES = 32
NONCE = re.compile(r"[0-9a-f]{32,64}")  # 128 to 256 random bits, in lower-case hex
HINT = re.compile(r"[0-9a-f]{16}")  # the first 16 hex digits of the key's digest
_KEY_TEXT = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class HallKey:
    """The hall's key: the secret its servers sign their claims with."""

    secret: bytes

    @property
    def id(self) -> str:
        """The key's id, as the database records it and messages name it (it reveals nothing of the key)."""
        return hashlib.sha256(b"wordjudge hall key id\n" + self.secret).hexdigest()[:16]

    def sign(self, claim: Mapping[str, Any]) -> str:
        """The claim's MAC: HMAC-SHA256 over its canonical JSON (sorted keys, no spaces), in hex."""
        return hmac.new(self.secret, _canonical(claim), hashlib.sha256).hexdigest()

    def signs(self, claim: Mapping[str, Any], mac: Any) -> bool:
        """Whether ``mac`` is this key's MAC of ``claim`` (in constant time)."""
        return isinstance(mac, str) and hmac.compare_digest(self.sign(claim), mac)


def _canonical(data: Mapping[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def read_key(data_dir: Path) -> HallKey | None:
    """The hall key in ``data_dir`` (None: it holds none). Raises :class:`InvalidInput` naming a key file that
    cannot be read or is not a key."""
    path = data_dir / KEY_FILE
    try:
        text = path.read_text("ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput("error.hall.key_unreadable", path=str(path), reason=str(exc)) from exc
    if _KEY_TEXT.fullmatch(text) is None:
        raise InvalidInput("error.hall.key_unreadable", path=str(path), reason="not 64 hex digits")
    return HallKey(bytes.fromhex(text))


def make_key(data_dir: Path) -> HallKey:
    """Make the hall key in ``data_dir`` (mode 0600), or return the one there. Raises :class:`OSError`, and
    :class:`InvalidInput` for a key file that is not a key."""
    found = read_key(data_dir)
    if found is not None:
        return found
    key = HallKey(secrets.token_bytes(KEY_BYTES))
    path = data_dir / KEY_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key.secret.hex() + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return key


def check_nonce(nonce: str) -> str:
    """``nonce`` if it is one (32 to 64 lower-case hex digits). Raises :class:`InvalidInput`."""
    if NONCE.fullmatch(nonce) is None:
        raise InvalidInput("error.hall.nonce")
    return nonce


def check_hint(hint: str) -> str:
    """``hint`` if it is one (16 lower-case hex digits). Raises :class:`InvalidInput`."""
    if HINT.fullmatch(hint) is None:
        raise InvalidInput("error.hall.hint")
    return hint


def digest(secret: str) -> str:
    """SHA-256 of a device's token or a session's CSRF token, in hex: the proof's key (as the database keeps a
    device's token)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def proof_mac(key: str, *, nonce: str, url: str, role: str, epoch: int | None) -> str:
    """A server's proof to a device or console: HMAC-SHA256, keyed with ``key`` (a token's digest, as hex
    text), of the nonce, the server's own address, its role and its epoch, one a line ("" for no epoch)."""
    message = f"wordjudge hall proof\n{nonce}\n{url}\n{role}\n{'' if epoch is None else epoch}"
    return hmac.new(key.encode(), message.encode(), hashlib.sha256).hexdigest()
