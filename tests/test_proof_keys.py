"""What a copy of the hall's database proves (issue 44, points 2, 3 and 6): nothing.

A server proves itself the hall's to a device or a console with a proof key made from the hall key and the digest
of the device's token (the session's CSRF token); the database holds the digests, never a key, and never a token
or a CSRF value in clear. Before, the proof was keyed with the token's SHA-256 (which the database holds) and with
the CSRF token (stored in clear): whoever read a dump, a backup or the server role's password proved itself to
every kiosk and console. The proof endpoint answers a hint alike whether it names a live device, a revoked one or
nobody. A key file (or its folder) others may read is refused, naming the fix.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from wordjudge.base.errors import InvalidInput
from wordjudge.cli.main import main
from wordjudge.hall.certs import make_hall_certs
from wordjudge.hall.proof import KEY_FILE, HallKey, digest, make_key, proof_mac, read_key
from wordjudge.storage.dialect import StateLocation

from .helpers import PASSWORD, access_store

_PROOF = "/api/hall/proof"


def _pair(client: TestClient, td: dict[str, str], name: str) -> dict[str, Any]:
    code = client.post("/api/pairing-codes", json={"role": "kiosk", "name": name}, headers=td)
    assert code.status_code == 201, code.text
    enrolled = client.post("/api/enrol", json={"code": code.json()["code"]})
    assert enrolled.status_code == 201, enrolled.text
    body: dict[str, Any] = enrolled.json()
    return body


def _sign_in(client: TestClient, data_dir: Path) -> dict[str, Any]:
    store = access_store(data_dir)
    try:
        store.tds.add("alice", PASSWORD, by="test")
    finally:
        store.close()
    signed = client.post("/api/session", json={"name": "alice", "password": PASSWORD})
    assert signed.status_code == 201, signed.text
    body: dict[str, Any] = signed.json()
    return body


def _stored_values(data_dir: Path) -> set[str]:
    """Every text the access store's tables hold, as a dump (or the server role, reading them) has them."""
    store = access_store(data_dir)
    values: set[str] = set()
    try:
        connection = store.database._connection
        assert connection is not None
        for table in ("devices", "pairing_codes", "tds", "sessions", "alerts"):
            for row in connection.execute(f"SELECT * FROM {table}").fetchall():
                values.update(str(value) for value in row if value is not None)
    finally:
        store.close()
    return values


def _attacker_keys(values: set[str]) -> set[str]:
    """What an attacker holding those values could key a proof with: each value, and its SHA-256 (the old proof
    key was the SHA-256 of the token, which the database holds; the console's, of its CSRF token, held in clear)."""
    return values | {hashlib.sha256(value.encode()).hexdigest() for value in values}


def test_a_copy_of_the_database_makes_no_proof_a_device_or_a_console_accepts(
    client: TestClient, data_dir: Path
) -> None:
    signed = _sign_in(client, data_dir)
    td = {"X-CSRF-Token": signed["csrf_token"]}
    enrolled = _pair(client, td, "kiosk-01")
    token, device_key = enrolled["token"], enrolled["proof_key"]
    csrf, session_key = signed["csrf_token"], signed["proof_key"]
    values = _stored_values(data_dir)
    # Tokens and CSRF values are stored as digests only.
    assert token not in values
    assert csrf not in values
    assert digest(token) in values
    assert digest(csrf) in values
    # The keys themselves are nowhere in the database.
    assert device_key not in values
    assert session_key not in values
    forged = _attacker_keys(values)
    for of, secret, key in (("device", token, device_key), ("session", csrf, session_key)):
        nonce = secrets.token_hex(16)
        answer = client.get(_PROOF, params={"nonce": nonce, "hint": digest(secret)[:16], "of": of})
        assert answer.status_code == 200, answer.text
        said = {name: answer.json()[name] for name in ("url", "role", "epoch")}
        # The proof verifies with the key the device (console) was handed, as kiosk/proof.js checks it...
        assert answer.json()["mac"] == proof_mac(key, nonce=nonce, **said)
        # ...and with nothing a copy of the database holds. Before: proof_mac(digest(token)) was the device's proof.
        made = {proof_mac(candidate, nonce=nonce, **said) for candidate in forged}
        assert answer.json()["mac"] not in made, of
    # A device paired before it was handed a key learns it from its own server, with its token.
    me = client.get("/api/session", headers={"Authorization": f"Bearer {token}"})
    assert me.json()["proof_key"] == device_key
    assert client.get("/api/session").json()["proof_key"] == session_key


def test_the_proof_endpoint_answers_alike_for_a_live_a_revoked_and_an_unknown_hint(
    client: TestClient, data_dir: Path
) -> None:
    signed = _sign_in(client, data_dir)
    td = {"X-CSRF-Token": signed["csrf_token"]}
    live, revoked = _pair(client, td, "kiosk-01"), _pair(client, td, "kiosk-02")
    assert client.post("/api/devices/kiosk-02/revoke", headers=td).status_code == 200
    nonce = secrets.token_hex(16)
    hints = {
        "live": digest(live["token"])[:16],
        "revoked": digest(revoked["token"])[:16],
        "unknown": secrets.token_hex(8),
    }
    answers = {
        kind: client.get(_PROOF, params={"nonce": nonce, "hint": hint, "of": "device"}) for kind, hint in hints.items()
    }
    shapes = {
        kind: (
            a.status_code,
            tuple(sorted(a.json())),
            len(a.content),
            bool(re.fullmatch(r"[0-9a-f]{64}", a.json()["mac"])),
        )
        for kind, a in answers.items()
    }
    assert len(set(shapes.values())) == 1, shapes  # before: 200 for the live one, 404 for the others
    # Only the live device's proof key checks its answer; the revoked one's old key checks nothing now.
    said = {name: answers["live"].json()[name] for name in ("url", "role", "epoch")}
    assert answers["live"].json()["mac"] == proof_mac(live["proof_key"], nonce=nonce, **said)
    assert answers["revoked"].json()["mac"] != proof_mac(revoked["proof_key"], nonce=nonce, **said)
    # The same hint asked twice is answered the same way (a decoy is not random noise that tells itself apart).
    again = client.get(_PROOF, params={"nonce": nonce, "hint": hints["unknown"], "of": "device"})
    assert again.json()["mac"] == answers["unknown"].json()["mac"]
    # A console's hints too.
    session = client.get(_PROOF, params={"nonce": nonce, "hint": digest(signed["csrf_token"])[:16], "of": "session"})
    nobody = client.get(_PROOF, params={"nonce": nonce, "hint": secrets.token_hex(8), "of": "session"})
    assert (session.status_code, sorted(session.json()), len(session.content)) == (
        nobody.status_code,
        sorted(nobody.json()),
        len(nobody.content),
    )


def test_a_hall_key_others_may_read_is_refused_naming_the_fix(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    key = make_key(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / KEY_FILE).stat().st_mode) == 0o600
    assert read_key(folder) == key
    os.chmod(folder / KEY_FILE, 0o644)
    with pytest.raises(InvalidInput) as refused:
        read_key(folder)
    assert f"chmod 600 {folder / KEY_FILE}" in refused.value.message
    assert "0644" in refused.value.message
    os.chmod(folder / KEY_FILE, 0o600)
    os.chmod(folder, 0o755)
    with pytest.raises(InvalidInput) as refused:
        read_key(folder)
    assert f"chmod 700 {folder}" in refused.value.message
    os.chmod(folder, 0o700)
    (folder / KEY_FILE).write_text("ab" * 20 + "\n")
    with pytest.raises(InvalidInput) as refused:
        read_key(folder)
    assert "40 characters, not 64 hex digits" in refused.value.message
    assert str(folder / KEY_FILE) in refused.value.message


def test_a_server_alone_makes_its_own_key_and_refuses_one_others_may_read(tmp_path: Path, data_dir: Path) -> None:
    from wordjudge.service.opening import serving_of
    from wordjudge.service.settings import Settings

    serving = serving_of(Settings(data_dir=data_dir))
    assert not (data_dir / KEY_FILE).exists()  # made once it serves: a server that refuses to start writes nothing
    serving.start()
    try:
        assert serving.key is not None
        assert read_key(data_dir) == serving.key
    finally:
        serving.close()
    assert stat.S_IMODE((data_dir / KEY_FILE).stat().st_mode) == 0o600
    os.chmod(data_dir / KEY_FILE, 0o640)
    with pytest.raises(InvalidInput, match="chmod 600"):
        serving_of(Settings(data_dir=data_dir))


def test_standby_key_makes_a_private_folder_and_says_a_loose_one(tmp_path: Path) -> None:
    folder = tmp_path / "made"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)  # as mkdir leaves it under the shell's usual umask
    made = CliRunner().invoke(main, ["standby", "key", "--data-dir", str(folder)])
    assert made.exit_code == 0, made.output
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700  # before: left 0755
    assert stat.S_IMODE((folder / KEY_FILE).stat().st_mode) == 0o600
    os.chmod(folder / KEY_FILE, 0o644)
    shown = CliRunner().invoke(main, ["standby", "key", "--data-dir", str(folder)])
    assert shown.exit_code != 0
    assert f"chmod 600 {folder / KEY_FILE}" in shown.output


def test_a_proof_key_is_the_hall_keys_and_no_other() -> None:
    one, other = HallKey(secrets.token_bytes(32)), HallKey(secrets.token_bytes(32))
    stored = digest("wj_" + secrets.token_urlsafe(32))
    assert one.proof_key("device", stored) != other.proof_key("device", stored)
    assert one.proof_key("device", stored) != one.proof_key("session", stored)
    assert one.proof_key("device", stored) != one.decoy_key("device", stored[:16])
    assert json.dumps(one.proof_key("device", stored)).strip('"') != stored


def test_the_hall_key_goes_to_the_other_machine_typed_never_on_a_stick(tmp_path: Path) -> None:
    """deploy/hall.md, set-up step 3: the key is shown on hall-a and typed on hall-b (before: a tarball on a USB
    stick held it, for good)."""
    a, b = tmp_path / "a", tmp_path / "b"
    assert CliRunner().invoke(main, ["standby", "key", "--data-dir", str(a)]).exit_code == 0
    shown = CliRunner().invoke(main, ["standby", "key", "--show", "--data-dir", str(a)])
    assert shown.exit_code == 0, shown.output
    typed = shown.output.splitlines()[0]
    assert re.fullmatch(r"([0-9a-f]{4} ){15}[0-9a-f]{4}", typed), typed
    key = read_key(a)
    assert key is not None
    # A slip of the fingers: named, nothing written.
    short = CliRunner().invoke(main, ["standby", "key", "--enter", "--data-dir", str(b)], input=typed[:-5] + "\n")
    assert short.exit_code != 0
    assert "60 hex digits, not 64" in short.output
    assert not (b / KEY_FILE).exists()
    wrong = CliRunner().invoke(main, ["standby", "key", "--enter", "--data-dir", str(b)], input=typed[:-1] + "g\n")
    assert "'g' is not a hex digit" in wrong.output
    entered = CliRunner().invoke(main, ["standby", "key", "--enter", "--data-dir", str(b)], input=typed.upper() + "\n")
    assert entered.exit_code == 0, entered.output
    assert key.id in entered.output
    assert read_key(b) == key
    assert stat.S_IMODE((b / KEY_FILE).stat().st_mode) == 0o600
    assert stat.S_IMODE(b.stat().st_mode) == 0o700
    # Another key is never replaced by typing.
    other = tmp_path / "other"
    make_key(other)
    refused = CliRunner().invoke(main, ["standby", "key", "--enter", "--data-dir", str(other)], input=typed + "\n")
    assert refused.exit_code != 0
    assert "the key is never replaced" in refused.output


def test_the_migration_keeps_no_csrf_value_in_clear_and_ends_the_sessions_open_before(tmp_path: Path) -> None:
    import sqlite3

    from wordjudge.access.access_store import ACCESS_FILE, AccessStore
    from wordjudge.base.errors import Unauthorized
    from wordjudge.storage.access_db import MIGRATIONS
    from wordjudge.storage.dialect import SQLITE, SQLITE_MIGRATIONS_TABLE

    path = tmp_path / ACCESS_FILE
    connection = sqlite3.connect(path, isolation_level=None)
    SQLITE.migrate(connection, MIGRATIONS[:4], SQLITE_MIGRATIONS_TABLE)  # the store as the version before kept it
    connection.execute(
        "INSERT INTO tds (id, name, password_hash, created_at, created_by) VALUES (1, 'alice', 'x', 't', 'test')"
    )
    clear = "a-csrf-token-kept-in-clear"
    connection.execute(
        "INSERT INTO sessions (id_hash, td_id, csrf_token, client, created_at, expires_at, last_seen_at)"
        " VALUES (?, 1, ?, 'test', '2026-11-29T00:00:00.000+00:00', '2099-01-01T00:00:00.000+00:00', 'x')",
        (digest("old-session"), clear),
    )
    connection.close()
    store = AccessStore(StateLocation(path.parent)).open()
    try:
        with pytest.raises(Unauthorized):  # ended by the migration: its TD signs in again
            store.tds.authenticate("old-session")
        db = store.database._connection
        assert db is not None
        columns = [row[1] for row in db.execute("PRAGMA table_info(sessions)").fetchall()]
        assert "csrf_token" not in columns
        assert "csrf_hash" in columns
        assert clear not in str(db.execute("SELECT * FROM sessions").fetchall())
    finally:
        store.close()


def test_the_guides_copy_of_the_folder_leaves_no_key_on_the_stick(tmp_path: Path) -> None:
    """deploy/hall.md, set-up step 3, run as written (its paths moved under a temp folder): the tarball on the stick
    holds the folder's files and the hall CA's certificate, never a private key (hall.key, tls/hall-ca.key,
    tls/server.key), and the guide's own check says so. Before, the tarball held hall.key; then the CA's key, which
    the check did not see."""
    import shlex
    import subprocess

    guide = (Path(__file__).parent.parent / "deploy" / "hall.md").read_text("utf-8")
    [packed] = [line.strip() for line in guide.splitlines() if "tar -C /var/lib " in line and "-czf" in line]
    [check] = [line.strip().split("#")[0] for line in guide.splitlines() if line.strip().startswith("tar -tzf")]
    assert "standby key --enter" in guide
    assert "standby key --show" in guide
    lib, stick = tmp_path / "var" / "lib", tmp_path / "media" / "usb"
    (lib / "wordjudge" / "lexicons").mkdir(parents=True)
    stick.mkdir(parents=True)
    make_key(lib / "wordjudge")
    make_hall_certs(lib / "wordjudge", names=["hall-a"], addresses=[])  # sudo wj hall cert: the CA and hall-a's
    (lib / "wordjudge" / "event.toml").write_text('name = "Open"\n')

    def here(command: str) -> str:
        return command.replace("sudo ", "").replace("/var/lib", str(lib)).replace("/media/usb", str(stick))

    subprocess.run(shlex.split(here(packed)), check=True)
    listed = subprocess.run(shlex.split(here(check).split("|")[0]), check=True, capture_output=True, text=True)
    assert "wordjudge/event.toml" in listed.stdout
    assert KEY_FILE not in listed.stdout
    assert "wordjudge/tls/hall-ca.pem" in listed.stdout  # public: hall-b checks its certificate against it
    assert [line for line in listed.stdout.splitlines() if line.endswith(".key")] == []
    counted = subprocess.run(here(check), shell=True, capture_output=True, text=True)
    assert counted.stdout.strip() == "0"
    # The guide's check counts any key the tarball would hold: the CA's key put back in, it says so.
    (stick / "wordjudge-folder.tar.gz").unlink()
    subprocess.run(shlex.split(here(packed).replace(" --exclude=wordjudge/tls/hall-ca.key", "")), check=True)
    counted = subprocess.run(here(check), shell=True, capture_output=True, text=True)
    assert counted.stdout.strip() == "1"


def test_the_chrony_key_is_made_from_the_hall_key_the_same_on_both_machines(tmp_path: Path) -> None:
    """deploy/hall.md, set-up step 5: ``standby key --chrony`` prints the line chrony's key file takes (key 1,
    SHA256, 64 hex digits, as ``chronyc keygen 1 SHA256 256`` writes it), the same on hall-b (its hall key typed)
    as on hall-a, another from another hall key; nothing of the hall key shows, and a folder with none is refused
    by name, no key made."""
    a, b, other = tmp_path / "a", tmp_path / "b", tmp_path / "other"

    def chrony(folder: Path) -> Any:
        return CliRunner().invoke(main, ["standby", "key", "--chrony", "--data-dir", str(folder)])

    refused = chrony(a)
    assert refused.exit_code == 1
    assert f"{(a / KEY_FILE).resolve()} holds no hall key" in refused.output
    assert "set-up step 3" in refused.output
    assert refused.stdout == ""  # nothing a `| tee` would write as a key
    assert not (a / KEY_FILE).exists()
    key = make_key(a)
    assert (
        CliRunner().invoke(main, ["standby", "key", "--enter", "--data-dir", str(b)], input=key.secret.hex()).exit_code
        == 0
    )
    make_key(other)
    lines = {name: chrony(folder) for name, folder in (("a", a), ("b", b), ("other", other))}
    for done in lines.values():
        assert done.exit_code == 0, done.output
        assert re.fullmatch(r"1 SHA256 HEX:[0-9A-F]{64}\n", done.stdout), done.stdout
    assert lines["a"].stdout == lines["b"].stdout
    assert lines["a"].stdout != lines["other"].stdout
    assert key.secret.hex().upper() not in lines["a"].stdout
    assert chrony(a).stdout == lines["a"].stdout  # the same each time: both machines, and again after a restart


def test_no_step_of_the_guide_puts_a_key_on_the_stick() -> None:
    """Issue 44: every file deploy/hall.md writes to or reads from the USB stick is a public one (the folder's
    tarball, checked by test_the_guides_copy_of_the_folder_leaves_no_key_on_the_stick, hall-b's certificate
    request and certificate, the lexicons). Before, set-up step 5 carried /etc/chrony/chrony.keys on it."""
    guide = (Path(__file__).parent.parent / "deploy" / "hall.md").read_text("utf-8")
    on_stick = re.findall(r"/media/usb(/[^\s`'\"]*)?", guide)
    assert on_stick, "the guide uses no stick: this test would see nothing"
    public = {"/wordjudge-folder.tar.gz", "/hall-b.csr", "/hall-b.pem", "/wordjudge-lexicons.tar.gz"}
    assert set(on_stick) <= public, set(on_stick) - public
    # The chrony key is made on each machine from its hall key, by the guide's command.
    assert "sudo wj standby key --chrony | sudo tee /etc/chrony/chrony.keys" in guide
    assert "chronyc keygen" not in guide
