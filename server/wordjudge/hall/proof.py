"""Proofs that a server is the hall's: what a phone at a peer's address cannot forge.

A hall's servers, its devices and its TDs' consoles ask each other where they stand over plain HTTP on a
network the players' phones may share. Nothing that answers at an address is believed for being there:

- **between servers**, an answer is a **claim** (role, epoch, active server, time, lexicons...) signed over the
  asker's fresh nonce with the **hall key**, 32 random bytes in each hall server's data folder (``hall.key``,
  mode 0600), made once at set-up (``wordjudge database init --data-dir``, or by the first server to take over)
  and copied with the folder to the other machine; the database records its id, so that a folder holding
  another key is named. A claim that does not verify (no key, another key, another nonce: a replay) is no claim.
- **to a device**, a server proves it holds the device's **proof key**: HMAC-SHA256, keyed with the hall key, of
  the digest of the device's token (:meth:`HallKey.proof_key`). The server hands it to the device when it pairs
  (and in every answer to ``GET /api/session`` with its token); the hall's database holds only the token's digest,
  which makes no proof key without the hall key: a dump or a backup of the database, or the server role's password
  in ``wordjudge.env``, proves nothing to a device. The device sends a hint (the first 16 hex digits of its
  token's digest) by which the server finds it, and a fresh nonce; the server signs the nonce, its own address, its
  role and its epoch with the proof key. The device checks the address it is about to talk to is the one signed,
  so that a proof relayed from another of the hall's servers does not pass.
- **to a console**, the same with the session's proof key: the hall key's HMAC of the digest of the session's
  CSRF token (the database holds only that digest), handed to the console at sign-in and with the session.
- a hint that names no device, or a revoked one, is answered alike: a MAC keyed with a key made from the hall key
  and the hint (:meth:`HallKey.decoy_key`), so that nobody without the proof key tells live from revoked.

Every server holds a hall key: a hall's is copied with the folder; a server alone makes its own at start.
The device and console side of the proof is ``kiosk/shared/proof.js`` (SHA-256 and HMAC in plain JavaScript: a phone's
page over plain HTTP has no WebCrypto). Nothing here imports the web framework.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import stat
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
CHRONY_KEY_ID = 1  # the key deploy/chrony/hall-b.conf names (``key 1``)
CHRONY_LABEL = b"wordjudge chrony key"


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

    def proof_key(self, of: str, secret_digest: str) -> str:
        """The proof key of a device (``of="device"``: ``secret_digest`` is its token's digest) or a console's
        session (``of="session"``: its CSRF token's digest), in hex: what the server proves itself the hall's
        with, and what the device or console checks it with. Made from the hall key, which the database lacks."""
        return hmac.new(self.secret, f"wordjudge {of} proof\n{secret_digest}".encode(), hashlib.sha256).hexdigest()

    def decoy_key(self, of: str, hint: str) -> str:
        """The key a proof to a hint that names nobody (or a revoked device, an ended session) is made with: as
        random to anyone without the hall key as a real proof key, and the same for every ask of that hint."""
        return hmac.new(self.secret, f"wordjudge {of} decoy\n{hint}".encode(), hashlib.sha256).hexdigest()

    def chrony_key(self) -> str:
        """The line of chrony's key file (``/etc/chrony/chrony.keys``) the hall's two machines share: key 1, SHA256,
        256 bits in hex, as ``chronyc keygen 1 SHA256 256`` writes one (chrony.conf(5), ``keyfile``). Made from the
        hall key (HMAC-SHA256), so each machine makes the same from the key typed on it and nothing for chrony
        travels on a USB stick; it reveals nothing of the hall key."""
        made = hmac.new(self.secret, CHRONY_LABEL, hashlib.sha256).hexdigest().upper()
        return f"{CHRONY_KEY_ID} SHA256 HEX:{made}"


def _canonical(data: Mapping[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def read_key(data_dir: Path) -> HallKey | None:
    """The hall key in ``data_dir`` (None: it holds none). Raises :class:`InvalidInput` naming a key file that
    cannot be read or is not a key (its length said), a key file that others than its owner may read (``chmod
    600``), or a folder holding it that they may enter (``chmod 700``): a key others read is no longer the hall's
    alone, so it is refused before it is used."""
    path = data_dir / KEY_FILE
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        text = path.read_text("ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput("error.hall.key_unreadable", path=str(path), reason=str(exc)) from exc
    if mode & 0o077:
        raise InvalidInput("error.hall.key_mode", path=str(path), mode=f"{mode:04o}")
    folder_mode = stat.S_IMODE(data_dir.stat().st_mode)
    if folder_mode & 0o077:
        raise InvalidInput("error.hall.folder_mode", path=str(data_dir), mode=f"{folder_mode:04o}")
    if _KEY_TEXT.fullmatch(text) is None:
        reason = f"{len(text)} characters, not 64 hex digits" if len(text) != 64 else "not 64 hex digits"
        raise InvalidInput("error.hall.key_unreadable", path=str(path), reason=reason)
    return HallKey(bytes.fromhex(text))


def make_key(data_dir: Path) -> HallKey:
    """Make the hall key in ``data_dir`` (mode 0600, the folder made or set to 0700), or return the one there.
    Raises :class:`OSError`, and :class:`InvalidInput` for a key file that is not a key or others may read."""
    # The folder that holds the key is its owner's alone (read_key refuses it otherwise): made so, or tightened
    # (``mkdir`` leaves it as the shell's umask says, 0755 most often).
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    if stat.S_IMODE(data_dir.stat().st_mode) & 0o077:
        os.chmod(data_dir, 0o700)
    found = read_key(data_dir)
    if found is not None:
        return found
    return _write_key(data_dir, HallKey(secrets.token_bytes(KEY_BYTES)))


def _write_key(data_dir: Path, key: HallKey) -> HallKey:
    """Write ``key`` as ``data_dir``'s hall key unless another process linked one first; return the one there."""
    path = data_dir / KEY_FILE
    # Written whole under another name, then linked into place: a server's other processes starting at once (or
    # a peer's copy arriving) never read half a key, and the first key made is the one every process keeps.
    draft = data_dir / f".{KEY_FILE}.{secrets.token_hex(4)}"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(key.secret.hex() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(draft, path)
        except FileExistsError:
            found = read_key(data_dir)
            assert found is not None  # it exists: linked by another process
            return found
    finally:
        draft.unlink(missing_ok=True)
    return key


def typed_key(text: str) -> HallKey:
    """The hall key a TD typed (as :func:`shown_key` shows it: 64 hex digits, spaces and case as they come).
    Raises :class:`InvalidInput` naming what is wrong (how many digits, or a character that is not one)."""
    digits = "".join(text.split()).lower()
    if _KEY_TEXT.fullmatch(digits) is None:
        wrong = next((c for c in digits if c not in "0123456789abcdef"), None)
        reason = f"{wrong!r} is not a hex digit" if wrong else f"{len(digits)} hex digits, not 64"
        raise InvalidInput("error.hall.key_typed", reason=reason)
    return HallKey(bytes.fromhex(digits))


def shown_key(key: HallKey) -> str:
    """The hall key as a TD reads it off one machine's screen to type on the other: 16 groups of 4 hex digits."""
    text = key.secret.hex()
    return " ".join(text[i : i + 4] for i in range(0, len(text), 4))


def enter_key(data_dir: Path, key: HallKey) -> bool:
    """Put ``key`` in ``data_dir`` (mode 0600, the folder 0700), as :func:`make_key` makes one; return whether it
    was written (False: the folder holds it already). Raises :class:`InvalidInput` if the folder holds another key
    (it is never replaced: a server that proved itself with it would stop proving itself), or one that is not a
    key or others may read; :class:`OSError`."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    if stat.S_IMODE(data_dir.stat().st_mode) & 0o077:
        os.chmod(data_dir, 0o700)
    found = read_key(data_dir)
    if found is not None and found != key:
        raise InvalidInput("error.hall.key_other", path=str(data_dir / KEY_FILE), own=found.id, typed=key.id)
    if found is not None:
        return False
    return _write_key(data_dir, key) == key


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
    """SHA-256 of a device's token or a session's CSRF token, in hex (what the database keeps of either); its
    first 16 digits are the hint a device or a console asks for a proof with."""
    return hashlib.sha256(secret.encode()).hexdigest()


def proof_mac(key: str, *, nonce: str, url: str, role: str, epoch: int | None) -> str:
    """A server's proof to a device or console: HMAC-SHA256, keyed with ``key`` (its proof key, as hex text:
    :meth:`HallKey.proof_key`), of the nonce, the server's own address, its role and its epoch, one a line ("" for
    no epoch)."""
    message = f"wordjudge hall proof\n{nonce}\n{url}\n{role}\n{'' if epoch is None else epoch}"
    return hmac.new(key.encode(), message.encode(), hashlib.sha256).hexdigest()
