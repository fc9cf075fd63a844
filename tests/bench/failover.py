"""A hall's failover under load (issue 21, item 2): 40 simulated kiosks, two machines on loopback, the active one
dies; the TD promotes the standby, or Patroni does. Prints the failover table (docs/failover.md).

Run from the repository root as root or a user who can run Debian's PostgreSQL (not part of the test suite):

    .venv/bin/python -m tests.bench.failover [--kiosks 40] [--before 8] [--way td|patroni|both] [--markdown FILE]

Each scenario starts afresh: a primary cluster and its synchronous standby (``synchronous_commit = on``, fsync
on), ``wordjudge serve`` on each (``--peers`` naming the other), and
``--kiosks`` kiosks that challenge without pause. A kiosk is what kiosk.js does when its server fails it: the same
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

Afterwards the new active server's log is read: every acknowledged verdict must be there once (lost: acknowledged and missing; twice: a
request id recorded more than once), the chain must verify, and the docket heads printed before the death
(the last verdict each kiosk got) must check.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx2 as httpx
import psycopg

from tests import patroni, postgres
from tests.patroni import PatroniHall
from wordjudge.access.store import ACCESS_FILE, AccessStore
from wordjudge.hall.pg_setup import prepare
from wordjudge.hall.proof import KEY_FILE, digest, make_key, proof_mac, read_key
from wordjudge.log.audit import open_log
from wordjudge.log.chain import HEAD_HEX, HeadMark
from wordjudge.model.auth import Role
from wordjudge.model.records import RecordFilter

from .bench_challenges import benchmark_event, free_port


@dataclass
class Kiosk:
    """One simulated kiosk: its token, the server it speaks to, and what it was told."""

    token: str
    servers: list[str]
    proof_key: str = ""  # handed to a device at pairing (the hall key's, never the database's: wordjudge.hall.proof)
    current: int = 0
    acknowledged: dict[str, tuple[int, str]] = field(default_factory=dict)  # request id: record id, hash
    last_verdict_at: float = 0.0
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
    server: subprocess.Popen[bytes] | None = None

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
                httpx.get(f"{self.base}/api/health", timeout=2)
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


def _hall(way: str, work: Path, kiosks: int) -> tuple[Machine, Machine, list[str], PatroniHall | None]:
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
        url = cluster.url(name, "wordjudge", "bench-password")
        if label == "a":
            env, _, first = benchmark_event(data_dir, "kiosk-000", challenges_per_minute=0, database=url)
        else:
            shutil.copy(machines[0].data_dir / "event.toml", data_dir / "event.toml")
            env = {**machines[0].env, "WORDJUDGE_DATA_DIR": str(data_dir), "WORDJUDGE_DATABASE": url}
        machines.append(Machine(cluster, data_dir, url, f"http://127.0.0.1:{free_port()}", env))
    a, b = machines
    access = AccessStore(a.data_dir / ACCESS_FILE, database=a.url).open()
    tokens = [first]
    with access.database.write() as db:
        for n in range(1, kiosks):
            tokens.append(access.devices.insert(db, f"kiosk-{n:03d}", Role.KIOSK, None, "bench", "127.0.0.1").token)
    access.close()
    a.start_server(b.base)
    b.start_server(a.base)
    return a, b, tokens, managed


async def _scenario(way: str, label: str, kiosks: int, before: float, work: Path) -> dict[str, object]:
    a, b, tokens, managed = _hall(way, work, kiosks)
    try:
        return await _fail_over(way, label, a, b, tokens, managed, before)
    finally:
        if managed is not None:
            managed.close()


async def _fail_over(
    way: str, label: str, a: Machine, b: Machine, tokens: list[str], managed: PatroniHall | None, before: float
) -> dict[str, object]:
    kiosks = len(tokens)
    stop = asyncio.Event()
    hall_key = read_key(a.data_dir)
    assert hall_key is not None
    simulated = [Kiosk(token, [a.base, b.base], hall_key.proof_key("device", digest(token))) for token in tokens]
    limits = httpx.Limits(max_connections=kiosks * 2)
    async with httpx.AsyncClient(timeout=8, limits=limits) as client:
        tasks = [asyncio.create_task(kiosk.run(client, stop)) for kiosk in simulated]
        await asyncio.sleep(before)
        printed = [
            HeadMark(record_id, digest[:HEAD_HEX], f"kiosk {n}'s last docket")
            for n, kiosk in enumerate(simulated)
            for record_id, digest in list(kiosk.acknowledged.values())[-1:]
        ]
        acknowledged_before = sum(len(kiosk.acknowledged) for kiosk in simulated)
        frozen: list[int] = []
        if label == "hung disk":
            frozen = a.postgres_pids()
            for pid in frozen:
                os.kill(pid, signal.SIGSTOP)
            died = time.monotonic()
            if managed is None:
                await asyncio.sleep(2)  # commits under way hang, as on a dead disk; then the TD unplugs the machine
                a.kill_server()
        else:
            a.kill_server()
            if managed is not None:
                managed.nodes["a"].process.kill()  # type: ignore[union-attr]  # started by start_hall
            for pid in a.postgres_pids():  # the postmaster and every child: a power cut
                os.kill(pid, signal.SIGKILL)
            died = time.monotonic()
        promoted_in = None
        if managed is None:
            asked = time.monotonic()
            promote = await asyncio.to_thread(
                subprocess.run,
                [
                    str(Path(sys.executable).with_name("wordjudge")),
                    "standby",
                    "promote",
                    "--yes",
                    "--database",
                    b.cluster.url("hall"),
                ],  # a superuser: promotion is PostgreSQL's own
                env=b.env,
                capture_output=True,
                text=True,
            )
            promoted_in = time.monotonic() - asked  # the command's own time
            if promote.returncode != 0:
                raise RuntimeError(f"promote failed: {promote.stderr}")
        # Counted from the new active server's answers: a verdict of the old one still on its way is not one.
        while not any(b.base in kiosk.first_from for kiosk in simulated):
            if time.monotonic() - died > 90:
                raise RuntimeError("no verdict within 90 s of the death")
            await asyncio.sleep(0.05)
        first_verdict = min(k.first_from[b.base] for k in simulated if b.base in k.first_from) - died
        all_back = float("nan")
        while time.monotonic() - died < 90:
            if all(b.base in kiosk.first_from for kiosk in simulated):
                all_back = max(kiosk.first_from[b.base] for kiosk in simulated) - died
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(2)  # the hall goes on on the new active server
        stop.set()
        await asyncio.gather(*tasks)
    acknowledged = {rid: ids for kiosk in simulated for rid, ids in kiosk.acknowledged.items()}
    old_acknowledged_after = None
    if frozen:
        for pid in frozen:  # the disk answers again: the old primary goes on, alone, and must acknowledge nothing
            os.kill(pid, signal.SIGCONT)
    log = open_log(b.data_dir, b.url)
    try:
        recorded = [record.request_id for record in log.find(RecordFilter(), limit=1_000_000)]
        verification = log.verify(printed)
    finally:
        log.close()
    if frozen:
        old_acknowledged_after = len(_held(a.cluster) - set(recorded))
    b.kill_server()
    a.kill_server()
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
        "promote_s": promoted_in,
        "first_verdict_s": first_verdict,
        "all_kiosks_s": all_back,
        "chain": "verifies" if verification.ok else f"FAILED: {verification}",
        "heads": f"{len(printed)} checked" if verification.ok else "FAILED",
        "old_primary_only": old_acknowledged_after,
    }


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
    parser.add_argument("--scenario", choices=("kill -9", "hung disk", "both"), default="both")
    parser.add_argument("--way", choices=("td", "patroni", "both"), default="both", help="who fails over")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    rows = []
    ways = ("td", "patroni") if args.way == "both" else (args.way,)
    scenarios = ("kill -9", "hung disk") if args.scenario == "both" else (args.scenario,)
    for way in ways:
        for label in scenarios:
            work = postgres.cluster_folder()
            try:
                rows.append(asyncio.run(_scenario(way, label, args.kiosks, args.before, work)))
            except BaseException:
                print(f"failed: the servers' logs are kept in {work}", file=sys.stderr)
                raise
            else:
                shutil.rmtree(work, ignore_errors=True)
            finally:
                postgres.stop_all(work, _bin_dir())
            print(rows[-1], file=sys.stderr)
    lines = [
        "| failover | scenario | kiosks | promote (s) | first verdict after the death (s) | every kiosk back (s) "
        "| acknowledged | lost | recorded twice | recorded, not acknowledged | chain | docket heads "
        "| old primary's own records |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        old = "-" if r["old_primary_only"] is None else str(r["old_primary_only"])
        promote = "-" if r["promote_s"] is None else f"{r['promote_s']:.2f}"
        lines.append(
            f"| {r['way']} | {r['scenario']} | {r['kiosks']} | {promote} | {r['first_verdict_s']:.2f} "
            f"| {r['all_kiosks_s']:.2f} | {r['acknowledged']:,} | {r['lost']} | {r['twice']} "
            f"| {r['recorded_unacknowledged']} | {r['chain']} | {r['heads']} | {old} |"
        )
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    if any(r["lost"] or r["twice"] or r["chain"] != "verifies" for r in rows):
        sys.exit("a verdict was lost or recorded twice, or the chain did not verify")


if __name__ == "__main__":
    main()
