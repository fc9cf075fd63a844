"""A hall's failover under load (issue 21, item 2): 40 simulated kiosks, two machines on loopback, the active one
dies; the TD promotes the standby, or Patroni does. Prints the failover table (docs/failover.md).

Run from the repository root as root or a user who can run Debian's PostgreSQL (not part of the test suite):

    .venv/bin/python -m tests.bench.failover [--kiosks 40] [--before 8] [--way td|patroni|both]
        [--scenario 'kill -9'|'hung disk'|standby|return|all] [--plain-http] [--markdown FILE]

Each scenario starts afresh: a primary cluster and its synchronous standby (``synchronous_commit = on``, fsync
on, ``wal_sender_timeout = 5s``), ``wordjudge serve`` on each (``--peers`` naming the other) over HTTPS, with the
hall's certificates made as deploy/hall.md makes them (the CA and hall-a's certificate on hall-a, hall-b's
requested on hall-b and signed on hall-a; ``--plain-http``: plain HTTP, as before issue 44, to compare), and
``--kiosks`` kiosks that challenge without pause, trusting the hall's CA and nothing else. A kiosk is what kiosk.js does when its server fails it: the same
request id is sent again, to the active server the refusal names (503 ``not_active``), or to the next server of
the hall when there is no answer, once that server proves it is the hall's active server (``/api/hall/proof``, as
api.js does), until a verdict comes; then the next challenge. Scenarios:

- **kill -9**: the active machine's PostgreSQL (postmaster) and server are killed at once;
- **hung disk**: the active machine's PostgreSQL is frozen mid-write (SIGSTOP of all its processes: what a disk
  that stops answering does); the hall stops then, and the seconds count from it. In the TD's way the TD
  unplugs the machine 2 s later (kill -9 of its server). Its PostgreSQL is let go again (SIGCONT) after the
  takeover, and must hold nothing the new active server lacks.

Two ways to fail over:

- **td**: two clusters made by hand (``synchronous_standby_names = '*'``, as deploy/hall.md), and the TD's
  promotion (``wordjudge standby promote --yes``) run as soon as the machine is dead (unplugged), the TD's
  reaction time not counted (add it); "promote" is the command's own time;
- **patroni**: deploy/patroni/patroni.yml on loopback (tests/patroni.py: a three-member etcd, Patroni on each
  machine), and nobody acts. kill -9 takes Patroni down with the machine; a hung disk freezes only PostgreSQL,
  and the machine's Patroni and server live on, as they would.

And two scenarios of one way each:

- **the standby's death** (the TD's way): the standby machine dies silently (SIGSTOP of its PostgreSQL and its
  server, as tests/hall_lab.py's ``freeze_machine``: no connection closed). Measured: the seconds until the active
  server's health says the hall is stopped (``error.hall.stopped``), the verdicts the kiosks were acknowledged
  meanwhile (the commits wait: only those the standby had confirmed before it froze), then, the TD running
  ``wordjudge standby alone --yes`` at once, the seconds to the first verdict after it and until health says the
  verdicts live on this machine only (``error.hall.alone``);
- **kill -9, then the old machine returns** (Patroni's way): after the kill -9 failover, the old machine starts
  again, its Patroni (which rewinds its PostgreSQL into the new primary's standby) and its server with it, as
  the units do. Measured: the seconds until the returning server's health says ``standby`` (the states it said
  on the way: ``unreached`` while its database is not up), and until the active server's health says a
  synchronous standby follows with no warning of a standby without a server (``error.hall.standby_serverless``).

Afterwards the active server's log is read: every acknowledged verdict must be there once (lost: acknowledged and missing; twice: a
request id recorded more than once), the chain must verify, and the docket heads printed before the death
(the last verdict each kiosk got) must check.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import ssl
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2 as httpx
import psycopg

from tests import patroni, postgres
from tests.patroni import PatroniHall
from tests.tls_hall import hall_certs, second_machine_certs
from wordjudge.access.access_store import AccessStore
from wordjudge.hall.pg_setup import prepare
from wordjudge.hall.proof import KEY_FILE, digest, make_key, proof_mac, read_key
from wordjudge.log.audit import open_log
from wordjudge.log.chain import HEAD_HEX, HeadMark
from wordjudge.model.auth import Role
from wordjudge.model.records import RecordFilter
from wordjudge.storage.dialect import StateLocation

from .bench_challenges import benchmark_event, free_port
from .failover_tables import HUNG, KILL, RETURN, STANDBY_DEATH, page, tables

WAIT_S = 120  # seconds any one wait of a scenario may take before the run fails, saying which


@dataclass
class Kiosk:
    """One simulated kiosk: its token, the server it speaks to, and what it was told."""

    token: str
    servers: list[str]
    proof_key: str = ""  # handed to a device at pairing (the hall key's, never the database's: wordjudge.hall.proof)
    current: int = 0
    acknowledged: dict[str, tuple[int, str]] = field(default_factory=dict)  # request id: record id, hash
    last_verdict_at: float = 0.0
    verdicts_at: list[float] = field(default_factory=list)  # when each verdict came (monotonic)
    first_from: dict[str, float] = field(default_factory=dict)  # server: when it gave this kiosk its first verdict

    async def run(self, client: httpx.AsyncClient, stop: asyncio.Event) -> None:
        while not stop.is_set():
            request_id = uuid.uuid4().hex
            body = {"division": "Open", "table": 7, "round": 1, "words": "cat dog", "request_id": request_id}
            while not stop.is_set():  # the same request id until a verdict: settled wherever it was recorded
                base = self.servers[self.current]
                try:
                    response = await client.post(
                        f"{base}/api/challenges", json=body, headers={"Authorization": f"Bearer {self.token}"}
                    )
                except httpx.TransportError:
                    await self._follow(client, (self.current + 1) % len(self.servers))  # no answer: the next server
                    await asyncio.sleep(0.2)
                    continue
                if response.status_code in (200, 201):
                    view = response.json()
                    self.acknowledged[request_id] = (int(view["id"]), str(view["hash"]))
                    self.last_verdict_at = time.monotonic()
                    self.verdicts_at.append(self.last_verdict_at)
                    self.first_from.setdefault(base, self.last_verdict_at)
                    break
                details = response.json().get("details") or {}
                active = details.get("active_url") if isinstance(details, dict) else None
                if response.status_code == 503 and active in self.servers:
                    # A standby or a fenced server names the active one.
                    await self._follow(client, self.servers.index(active))
                elif response.status_code != 503:
                    raise RuntimeError(f"{base}: {response.status_code} {response.text}")
                await asyncio.sleep(0.2)

    async def _follow(self, client: httpx.AsyncClient, index: int) -> None:
        """Speak to server ``index`` from now on if it proves it is the hall's active server (as api.js does:
        nothing is sent to a server before it proves itself); else stay."""
        if index == self.current:
            return
        base, nonce, key = self.servers[index], uuid.uuid4().hex, self.proof_key
        try:
            hint = digest(self.token)[:16]
            said = await client.get(f"{base}/api/hall/proof", params={"nonce": nonce, "hint": hint, "of": "device"})
            body = said.json() if said.status_code == 200 else {}
        except (httpx.TransportError, ValueError):
            return
        role, epoch = body.get("role"), body.get("epoch")
        if role == "active" and body.get("mac") == proof_mac(key, nonce=nonce, url=base, role=role, epoch=epoch):
            self.current = index


@dataclass
class Machine:
    cluster: postgres.Cluster
    data_dir: Path
    url: str
    base: str
    env: dict[str, str]
    trust: ssl.SSLContext  # the hall's CA, and nothing else
    server: subprocess.Popen[bytes] | None = None
    frozen: list[int] = field(default_factory=list)  # its processes SIGSTOPped, to let go at the end

    def start_server(self, peer: str) -> None:
        command = [
            str(Path(sys.executable).with_name("wordjudge")),
            "serve",
            "--max-requests-per-client",
            "0",
            "--port",
            self.base.rsplit(":", 1)[1],
            "--public-url",
            self.base,
            "--peers",
            peer,
        ]
        # Its output in a file, never a pipe nobody reads: a server that logs every second must not block on it.
        log = self.data_dir.parent / f"{self.data_dir.name}.log"
        with log.open("a") as output:
            self.server = subprocess.Popen(command, env=self.env, stdout=output, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{self.base}/api/health", timeout=2, verify=self.trust)
                return
            except httpx.TransportError:
                if self.server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{self.base} did not start: {log.read_text()[-2000:]}") from None
                time.sleep(0.1)

    def kill_server(self) -> None:
        if self.server is not None:
            self.server.kill()
            self.server.wait(timeout=10)
            self.server = None

    def freeze(self) -> list[int]:
        """SIGSTOP this machine's PostgreSQL (its postmaster and every child) and its server: a power cut as its peers
        see one, no connection closed (tests/hall_lab.py's freeze_machine). Returns the processes stopped."""
        assert self.server is not None
        stopped = [*self.postgres_pids(), self.server.pid]
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        return stopped

    def postgres_pids(self) -> list[int]:
        postmaster = int((self.cluster.data_dir / "postmaster.pid").read_text().split()[0])
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True).stdout.split()
        return [postmaster, *map(int, children)]


def _bin_dir() -> Path:
    bin_dir = postgres.find_bin_dir()
    if bin_dir is None:
        sys.exit(postgres.MISSING)
    return bin_dir


def _clusters_by_hand(work: Path) -> tuple[postgres.Cluster, postgres.Cluster]:
    """The TD's way (deploy/hall.md): a primary asking for a synchronous standby, and its standby."""
    primary = postgres.start_cluster(work / "pg-a", bin_dir=_bin_dir())
    primary.create_database("hall")
    with primary.connect() as admin:
        admin.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
        admin.execute("ALTER SYSTEM SET wal_sender_timeout = '5s'")  # as deploy/hall.md sets it
        # As deploy/hall.md says: a standby whose primary died retries its stream every 5 s by default, and a
        # promotion waits for the retry's sleep to end.
        admin.execute("ALTER SYSTEM SET wal_retrieve_retry_interval = '500ms'")
        admin.execute("SELECT pg_reload_conf()")
    standby = primary.standby(work / "pg-b")
    with primary.connect() as admin:
        deadline = time.monotonic() + 30
        while admin.execute("SELECT sync_state FROM pg_stat_replication").fetchall() != [("sync",)]:
            if time.monotonic() > deadline:
                sys.exit("the standby did not stream synchronously")
            time.sleep(0.1)
    return primary, standby


def _hall(way: str, work: Path, kiosks: int, https: bool) -> tuple[Machine, Machine, list[str], PatroniHall | None]:
    managed: PatroniHall | None = None
    if way == "patroni":
        if not patroni.installed():
            sys.exit(patroni.MISSING)
        managed = patroni.start_hall(work, _bin_dir())
        primary, standby = managed.nodes["a"].cluster, managed.nodes["b"].cluster
        primary.create_database("hall")
    else:
        primary, standby = _clusters_by_hand(work)
    name = "hall"
    machines: list[Machine] = []
    # As deploy/hall.md sets it up: the server's role owns nothing (database init --server-role), and both data
    # folders hold the hall key.
    primary.create_role("wordjudge", "bench-password")
    with primary.connect() as admin:
        admin.execute("GRANT pg_read_all_stats TO wordjudge")
    prepare(primary.url(name), "wordjudge")
    for label, cluster in (("a", primary), ("b", standby)):
        data_dir = work / f"data-{label}"
        data_dir.mkdir()
        if label == "a":
            make_key(data_dir)
        else:
            shutil.copy2(machines[0].data_dir / KEY_FILE, data_dir / KEY_FILE)
            # The hall's CA comes with the copied folder (deploy/hall.md); `wordjudge hall cert` on this machine
            # then makes its own server certificate, signed by it.
        trust = ssl.create_default_context()
        if https:
            # As deploy/hall.md makes them (both machines are 127.0.0.1 here): the hall's CA and a's certificate made
            # on a (`wordjudge hall cert`); b's requested on b, signed on a, installed on b (the CA's key never on
            # b). `wordjudge serve` then serves HTTPS (--https on: it refuses to start without them).
            if label == "a":
                made = hall_certs(data_dir)
            else:
                made = second_machine_certs(machines[0].data_dir, data_dir, work / "stick")
            trust = ssl.create_default_context(cafile=str(made.ca_pem))  # the hall's CA only
        url = cluster.url(name, "wordjudge", "bench-password")
        if label == "a":
            env, _, first = benchmark_event(data_dir, "kiosk-000", challenges_per_minute=0, database_url=url)
        else:
            shutil.copy(machines[0].data_dir / "event.toml", data_dir / "event.toml")
            env = {**machines[0].env, "WORDJUDGE_DATA_DIR": str(data_dir), "WORDJUDGE_DATABASE": url}
        scheme = "https" if https else "http"
        env = {**env, "WORDJUDGE_HTTPS": "on" if https else "off"}
        machines.append(Machine(cluster, data_dir, url, f"{scheme}://127.0.0.1:{free_port()}", env, trust))
    a, b = machines
    access = AccessStore(StateLocation(a.data_dir, a.url)).open()
    tokens = [first]
    with access.database.write() as db:
        for n in range(1, kiosks):
            tokens.append(access.devices.insert(db, f"kiosk-{n:03d}", Role.KIOSK, None, "bench", "127.0.0.1").token)
    access.close()
    a.start_server(b.base)
    b.start_server(a.base)
    return a, b, tokens, managed


SCENARIOS = {"td": (KILL, HUNG, STANDBY_DEATH), "patroni": (KILL, HUNG, RETURN)}
WORDJUDGE = str(Path(sys.executable).with_name("wordjudge"))


async def _scenario(
    way: str, label: str, kiosks: int, before: float, work: Path, https: bool = True
) -> dict[str, object]:
    a, b, tokens, managed = _hall(way, work, kiosks, https)
    try:
        return await _run(label, a, b, tokens, managed, before)
    finally:
        for machine in (a, b):  # a frozen process cannot be stopped: let it go first
            for pid in machine.frozen:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
            machine.kill_server()
        if managed is not None:
            managed.close()


async def _health(client: httpx.AsyncClient, base: str) -> dict[str, Any]:
    """``base``'s health, as the TD's console reads it; empty while it does not answer."""
    try:
        body = (await client.get(f"{base}/api/health", timeout=3)).json()
    except (httpx.TransportError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def _warning_keys(health: dict[str, Any]) -> list[str]:
    return [str(message.get("key")) for message in health.get("warning_messages") or []]


def _verdicts_since(simulated: list[Kiosk], since: float) -> list[float]:
    return sorted(at for kiosk in simulated for at in kiosk.verdicts_at if at > since)


async def _every_kiosk_since(simulated: list[Kiosk], since: float, what: str) -> tuple[float, float]:
    """Seconds from ``since`` to the first verdict any kiosk got after it, and to the time by which each had one
    (nan if one had none within WAIT_S)."""
    while not _verdicts_since(simulated, since):
        if time.monotonic() - since > WAIT_S:
            raise RuntimeError(f"no verdict within {WAIT_S} s of {what}")
        await asyncio.sleep(0.05)
    first = _verdicts_since(simulated, since)[0] - since
    while time.monotonic() - since < WAIT_S:
        firsts = [min((at for at in kiosk.verdicts_at if at > since), default=None) for kiosk in simulated]
        if None not in firsts:
            return first, max(at for at in firsts if at is not None) - since
        await asyncio.sleep(0.05)
    return first, float("nan")


async def _run(
    label: str, a: Machine, b: Machine, tokens: list[str], managed: PatroniHall | None, before: float
) -> dict[str, object]:
    kiosks = len(tokens)
    stop = asyncio.Event()
    hall_key = read_key(a.data_dir)
    assert hall_key is not None
    simulated = [Kiosk(token, [a.base, b.base], hall_key.proof_key("device", digest(token))) for token in tokens]
    # Each kiosk keeps its connections open, as a browser does: HTTPS's handshake once per server, not per request
    # (the client's default keeps 20 for all).
    limits = httpx.Limits(max_connections=kiosks * 2, max_keepalive_connections=kiosks * 2)
    # The kiosks trust the hall's CA and nothing else (verify: host names and addresses checked).
    async with httpx.AsyncClient(timeout=8, limits=limits, verify=a.trust) as client:
        tasks = [asyncio.create_task(kiosk.run(client, stop)) for kiosk in simulated]
        await asyncio.sleep(before)
        printed = [
            HeadMark(record_id, digest[:HEAD_HEX], f"kiosk {n}'s last docket")
            for n, kiosk in enumerate(simulated)
            for record_id, digest in list(kiosk.acknowledged.values())[-1:]
        ]
        acknowledged_before = sum(len(kiosk.acknowledged) for kiosk in simulated)
        if label == STANDBY_DEATH:
            measured = await _standby_dies(a, b, simulated, client)
            active, old = a, None
        else:
            measured = await _active_dies(label, a, b, simulated, managed)
            active, old = b, a
            if label == RETURN:
                assert managed is not None
                measured |= await _old_machine_returns(a, b, managed, client)
        await asyncio.sleep(2)  # the hall goes on on its active server
        stop.set()
        await asyncio.gather(*tasks)
    acknowledged = {rid: ids for kiosk in simulated for rid, ids in kiosk.acknowledged.items()}
    old_acknowledged_after = None
    frozen = old is not None and bool(old.frozen)
    if old is not None:
        for pid in old.frozen:  # the disk answers again: the old primary goes on, alone, and must acknowledge nothing
            os.kill(pid, signal.SIGCONT)
        old.frozen = []
    log = open_log(StateLocation(active.data_dir, active.url))
    try:
        recorded = [record.request_id for record in log.find(RecordFilter(), limit=1_000_000)]
        verification = log.verify(printed)
    finally:
        log.close()
    if frozen:
        assert old is not None
        old_acknowledged_after = len(_held(old.cluster) - set(recorded))
    counts: dict[str, int] = {}
    for request_id in recorded:
        counts[request_id] = counts.get(request_id, 0) + 1
    return {
        "way": "Patroni (automatic)" if managed is not None else "TD's promote",
        "scenario": label,
        "kiosks": kiosks,
        "acknowledged_before": acknowledged_before,
        "acknowledged": len(acknowledged),
        "lost": len(set(acknowledged) - set(counts)),
        "twice": sum(1 for n in counts.values() if n > 1),
        "recorded_unacknowledged": len(set(counts) - set(acknowledged)),
        "chain": "verifies" if verification.ok else f"FAILED: {verification}",
        "heads": f"{len(printed)} checked" if verification.ok else "FAILED",
        "old_primary_only": old_acknowledged_after,
        **measured,
    }


async def _active_dies(
    label: str, a: Machine, b: Machine, simulated: list[Kiosk], managed: PatroniHall | None
) -> dict[str, object]:
    """The active machine dies (``label``: kill -9 or a hung disk); the TD promotes the standby, or Patroni does.
    Returns the seconds measured."""
    if label == HUNG:
        a.frozen = a.postgres_pids()
        for pid in a.frozen:
            os.kill(pid, signal.SIGSTOP)
        died = time.monotonic()
        if managed is None:
            await asyncio.sleep(2)  # commits under way hang, as on a dead disk; then the TD unplugs the machine
            a.kill_server()
    else:
        a.kill_server()
        if managed is not None:
            managed.nodes["a"].process.kill()  # type: ignore[union-attr]  # started by start_hall
            managed.nodes["a"].process.wait(timeout=10)  # type: ignore[union-attr]
            managed.nodes["a"].process = None
        for pid in a.postgres_pids():  # the postmaster and every child: a power cut
            with contextlib.suppress(ProcessLookupError):  # a backend of the killed server, gone meanwhile
                os.kill(pid, signal.SIGKILL)
        died = time.monotonic()
    promoted_in = None
    if managed is None:
        asked = time.monotonic()
        # As deploy/hall.md writes it: no --port (the command finds this machine's servers by their listening
        # ports), as a superuser (promotion is PostgreSQL's own).
        promote = await asyncio.to_thread(
            subprocess.run,
            [WORDJUDGE, "standby", "promote", "--yes", "--database", b.cluster.url("hall")],
            env=b.env,
            capture_output=True,
            text=True,
        )
        promoted_in = time.monotonic() - asked  # the command's own time
        if promote.returncode != 0:
            raise RuntimeError(f"promote failed: {promote.stdout}{promote.stderr}")
    # Counted from the new active server's answers: a verdict of the old one still on its way is not one.
    while not any(b.base in kiosk.first_from for kiosk in simulated):
        if time.monotonic() - died > WAIT_S:
            raise RuntimeError(f"no verdict within {WAIT_S} s of the death")
        await asyncio.sleep(0.05)
    first_verdict = min(k.first_from[b.base] for k in simulated if b.base in k.first_from) - died
    all_back = float("nan")
    while time.monotonic() - died < WAIT_S:
        if all(b.base in kiosk.first_from for kiosk in simulated):
            all_back = max(kiosk.first_from[b.base] for kiosk in simulated) - died
            break
        await asyncio.sleep(0.05)
    return {"promote_s": promoted_in, "first_verdict_s": first_verdict, "all_kiosks_s": all_back}


async def _standby_dies(a: Machine, b: Machine, simulated: list[Kiosk], client: httpx.AsyncClient) -> dict[str, object]:
    """The standby machine dies silently (its PostgreSQL and server frozen: no connection closed); the TD, told by
    the active server's health that the hall is stopped, runs ``standby alone`` at once. Returns the seconds
    measured and what the kiosks were acknowledged meanwhile."""
    b.frozen = b.freeze()
    died = time.monotonic()
    said: list[str] = []  # each hall warning the active server's health gave meanwhile, first time
    while "error.hall.stopped" not in said:
        if time.monotonic() - died > WAIT_S:
            raise RuntimeError(f"health did not say the hall is stopped within {WAIT_S} s: {said}")
        keys = _warning_keys(await _health(client, a.base))
        said += [key for key in keys if key.startswith("error.hall.") and key not in said]
        await asyncio.sleep(0.1)
    stopped_s = time.monotonic() - died
    asked = time.monotonic()
    alone = await asyncio.to_thread(
        subprocess.run,
        [WORDJUDGE, "standby", "alone", "--yes", "--database", a.cluster.url("hall")],  # as a superuser
        env=a.env,
        capture_output=True,
        text=True,
    )
    alone_s = time.monotonic() - asked
    if alone.returncode != 0:
        raise RuntimeError(f"standby alone failed: {alone.stdout}{alone.stderr}")
    meanwhile = [at - died for at in _verdicts_since(simulated, died) if at < asked]
    first, all_back = await _every_kiosk_since(simulated, asked, "standby alone")
    told_alone = None  # seconds from `alone` until health says the verdicts live on this machine only
    while told_alone is None and time.monotonic() - asked < WAIT_S:
        if "error.hall.alone" in _warning_keys(await _health(client, a.base)):
            told_alone = time.monotonic() - asked
        await asyncio.sleep(0.1)
    for pid in b.frozen:  # the standby machine is back (its kiosks' questions to it end)
        os.kill(pid, signal.SIGCONT)
    b.frozen = []
    return {
        "stopped_s": stopped_s,
        "warned_before": [key for key in said if key != "error.hall.stopped"],
        "meanwhile": len(meanwhile),
        "meanwhile_last_s": max(meanwhile, default=None),
        "alone_s": alone_s,
        "first_verdict_s": first,
        "all_kiosks_s": all_back,
        "told_alone": told_alone,
    }


async def _old_machine_returns(
    a: Machine, b: Machine, managed: PatroniHall, client: httpx.AsyncClient
) -> dict[str, object]:
    """After Patroni's failover, the old machine starts again: its Patroni (which rewinds its PostgreSQL into the
    new primary's standby) and its wordjudge server with it, as the units do. Returns the seconds until that
    server says it is the standby, and until the active server's health says a standby follows with no warning
    of one without a server; the states the returning server said, in order."""
    returned = time.monotonic()
    managed.start("a")
    started = asyncio.create_task(asyncio.to_thread(a.start_server, b.base))
    states: list[str] = []
    warned: list[str] = []  # each hall warning the active server's health gave meanwhile, first time
    standby_s = follows_s = None
    while standby_s is None or follows_s is None:
        now = time.monotonic() - returned
        if now > WAIT_S:
            raise RuntimeError(f"the old machine's return: {states} {warned} after {WAIT_S} s")
        if started.done():
            started.result()  # raises if the server did not start
        state = (await _health(client, a.base)).get("state")
        if isinstance(state, str) and state not in states[-1:]:
            states.append(state)
        if state == "standby" and standby_s is None:
            standby_s = time.monotonic() - returned
        active = await _health(client, b.base)
        keys = _warning_keys(active)
        warned += [key for key in keys if key.startswith("error.hall.") and key not in warned]
        hall = active.get("hall") or {}
        if follows_s is None and hall.get("alone") is False and "error.hall.standby_serverless" not in keys:
            follows_s = time.monotonic() - returned
        await asyncio.sleep(0.2)
    await started
    return {"return_states": states, "return_standby_s": standby_s, "return_follows_s": follows_s, "warned": warned}


def _held(cluster: postgres.Cluster) -> set[str]:
    """The request ids the old primary holds, once it answers again (30 s at most: its Patroni may be
    restarting it as a standby)."""
    deadline = time.monotonic() + 30
    while True:
        time.sleep(2)
        try:
            with cluster.connect("hall") as admin:
                return {row[0] for row in admin.execute("SELECT request_id FROM records")}
        except psycopg.Error:
            if time.monotonic() > deadline:
                raise


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiosks", type=int, default=40)
    parser.add_argument("--before", type=float, default=8.0, help="seconds of challenges before the death")
    parser.add_argument(
        "--scenario",
        choices=(KILL, HUNG, "standby", "return", "all"),
        default="all",
        help="standby: the standby's death (the TD's way); return: the old machine's return (Patroni's way)",
    )
    parser.add_argument("--way", choices=("td", "patroni", "both"), default="both", help="who fails over")
    parser.add_argument(
        "--plain-http", action="store_true", help="the hall served over plain HTTP, as before issue 44 (to compare)"
    )
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    start_load = os.getloadavg()[0]
    ways = ("td", "patroni") if args.way == "both" else (args.way,)
    chosen = {"standby": STANDBY_DEATH, "return": RETURN}.get(args.scenario, args.scenario)
    for way in ways:
        for label in SCENARIOS[way]:
            if chosen not in ("all", label):
                continue
            work, done = postgres.cluster_folder(), False
            try:
                rows.append(asyncio.run(_scenario(way, label, args.kiosks, args.before, work, not args.plain_http)))
                done = True
            except BaseException:
                print(f"failed: the servers' logs are kept in {work}", file=sys.stderr)
                raise
            finally:
                # Stopped before their folder goes: a cluster whose folder was removed ran on for up to a minute,
                # until it found its lock file gone, beside the next scenario.
                postgres.stop_all(work, _bin_dir())
                if done:
                    shutil.rmtree(work, ignore_errors=True)
            print(rows[-1], file=sys.stderr, flush=True)
    text = tables(rows)
    print(text)
    if args.markdown:
        args.markdown.write_text(page(rows, [start_load, os.getloadavg()[0]]), "utf-8")
    if any(r["lost"] or r["twice"] or r["chain"] != "verifies" for r in rows):
        sys.exit("a verdict was lost or recorded twice, or the chain did not verify")


if __name__ == "__main__":
    main()
