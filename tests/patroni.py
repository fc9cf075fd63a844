"""A hall run by Patroni on loopback, for the tests and the failover benchmark: a three-member etcd and two
Patroni nodes, each managing its own PostgreSQL, made from ``deploy/patroni/patroni.yml`` (the file a hall's
machines use) with only the addresses, folders and passwords of this machine put in.

Debian's packages: ``patroni`` (and ``python3-etcd``, which it needs for etcd) and ``etcd-server``; the nodes
run as the ``postgres`` system user under root, as the clusters of :mod:`tests.postgres` do, in a folder of
:func:`tests.postgres.cluster_folder`. Without the packages a test that needs them is skipped, saying how to
install them (it fails instead in CI, where ``.ci/check`` installs them).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx2 as httpx
import yaml  # type: ignore[import-untyped]  # PyYAML (a test tool, from the dev lock) ships no types

from .helpers import free_port
from .postgres import Cluster, _environment, _owner_ids, _quit

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "deploy" / "patroni" / "patroni.yml"
PATRONI = "/usr/bin/patroni"  # Debian's: it runs on Debian's python3, which has its modules (python3-etcd...)
ETCD = "/usr/bin/etcd"
MISSING = "Patroni or etcd is not installed: apt-get install patroni python3-etcd etcd-server (.ci/check does)"
SUPERUSER = "postgres"
MEMBERS = 3  # the hall's etcd: two machines and the TD's laptop


def installed() -> bool:
    """Whether Debian's Patroni (with its etcd client) and etcd are here."""
    if not (Path(PATRONI).exists() and Path(ETCD).exists()):
        return False
    found = subprocess.run(["/usr/bin/python3", "-c", "import etcd, patroni"], capture_output=True, check=False)
    return found.returncode == 0


@dataclass
class Node:
    """One machine's Patroni and the PostgreSQL it manages (``cluster``: its address, folder and superuser)."""

    name: str
    cluster: Cluster
    api_port: int
    process: subprocess.Popen[bytes] | None = None
    output: IO[bytes] | None = None

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def says(self, check: str) -> bool:
        """Whether Patroni's REST API answers 200 to ``check`` (``primary``, ``sync``, ``replica``...)."""
        try:
            return httpx.get(f"{self.api}/{check}", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def postmaster(self) -> int | None:
        try:
            return int((self.cluster.data_dir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def log_end(self, lines: int = 30) -> str:
        try:
            text = (self.cluster.folder / "patroni.log").read_text(errors="replace")
        except OSError:
            return ""
        return f"\n-- end of {self.name}'s Patroni log:\n" + "\n".join(text.splitlines()[-lines:])


@dataclass
class PatroniHall:
    """A three-member etcd and two Patroni nodes (``a``, ``b``), all on loopback, in ``folder``."""

    folder: Path
    bin_dir: Path
    password: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    etcd: list[subprocess.Popen[bytes]] = field(default_factory=list)
    etcd_ports: list[int] = field(default_factory=list)
    nodes: dict[str, Node] = field(default_factory=dict)

    # -- etcd ---------------------------------------------------------------------------------------------

    def start_etcd(self) -> None:
        """Start the three etcd members and wait until they answer."""
        peers = [free_port() for _ in range(MEMBERS)]
        self.etcd_ports = [free_port() for _ in range(MEMBERS)]
        initial = ",".join(f"e{n}=http://127.0.0.1:{port}" for n, port in enumerate(peers))
        for n, (peer, client) in enumerate(zip(peers, self.etcd_ports, strict=True)):
            data = self.folder / f"etcd{n}"
            log = (self.folder / f"etcd{n}.log").open("wb")
            self.etcd.append(subprocess.Popen(
                [ETCD, "--name", f"e{n}", "--data-dir", str(data),
                 "--listen-client-urls", f"http://127.0.0.1:{client}",
                 "--advertise-client-urls", f"http://127.0.0.1:{client}",
                 "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                 "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                 "--initial-cluster", initial, "--initial-cluster-state", "new",
                 "--initial-cluster-token", self.folder.name],
                stdout=log, stderr=subprocess.STDOUT,
            ))  # fmt: skip
            log.close()
        deadline = time.monotonic() + 30
        for port in self.etcd_ports:
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).json().get("health") == "true":
                        break
                assert time.monotonic() < deadline, f"etcd on {port} did not answer"
                time.sleep(0.2)

    # -- the nodes ----------------------------------------------------------------------------------------

    def node(self, name: str) -> Node:
        """The node ``name``, made (not started) on first use."""
        if name not in self.nodes:
            folder = self.folder / name
            folder.mkdir()
            os.chown(folder, *_owner_ids())
            cluster = Cluster(folder, free_port(), self.bin_dir, SUPERUSER, self.password)
            self.nodes[name] = Node(name, cluster, free_port())
        return self.nodes[name]

    def configuration(self, node: Node) -> dict[str, Any]:
        """``deploy/patroni/patroni.yml`` with this machine's addresses, folders and passwords put in."""
        config: dict[str, Any] = yaml.safe_load(TEMPLATE.read_text())
        folder, port = node.cluster.folder, node.cluster.port
        config["scope"] = f"hall-{self.folder.name}"
        config["name"] = node.name
        config["restapi"] = {"listen": f"127.0.0.1:{node.api_port}", "connect_address": f"127.0.0.1:{node.api_port}"}
        config["etcd3"] = {"hosts": [f"127.0.0.1:{port}" for port in self.etcd_ports]}
        postgresql = config["postgresql"]
        postgresql.update(
            listen=f"127.0.0.1:{port}", connect_address=f"127.0.0.1:{port}", data_dir=str(node.cluster.data_dir),
            bin_dir=str(self.bin_dir), pgpass=str(folder / "pgpass"),
        )  # fmt: skip
        for role in ("superuser", "replication", "rewind"):
            postgresql["authentication"][role]["password"] = self.password
        postgresql["parameters"]["unix_socket_directories"] = str(folder)
        postgresql["pg_hba"] = [line.replace("peer", "trust") for line in postgresql["pg_hba"]]
        config["bootstrap"]["pg_hba"] = postgresql["pg_hba"]
        config["log"] = {"level": "INFO"}
        return config

    def start(self, name: str) -> Node:
        """Start the Patroni of ``name`` (it bootstraps, clones or rewinds its PostgreSQL as it sees fit)."""
        node = self.node(name)
        path = node.cluster.folder / "patroni.yml"
        path.write_text(yaml.safe_dump(self.configuration(node)))
        os.chown(path, *_owner_ids())
        uid, gid = _owner_ids()
        environment = {**_environment(), "HOME": str(node.cluster.folder)}
        with (node.cluster.folder / "patroni.log").open("ab") as log:
            node.process = subprocess.Popen(
                [PATRONI, str(path)], cwd=node.cluster.folder, env=environment, stdout=log, stderr=subprocess.STDOUT,
                user=uid if os.geteuid() == 0 else None, group=gid if os.geteuid() == 0 else None,
            )  # fmt: skip
        return node

    def wait(self, name: str, check: str, timeout: float = 60) -> float:
        """Wait until ``name``'s Patroni answers 200 to ``check``; return the seconds waited."""
        node, began = self.nodes[name], time.monotonic()
        while not node.says(check):
            assert node.process is not None, f"{name}'s Patroni is not started"
            assert node.process.poll() is None, f"{name}'s Patroni ended{node.log_end()}"
            assert time.monotonic() - began < timeout, f"{name} is not {check} after {timeout} s{node.log_end()}"
            time.sleep(0.1)
        return time.monotonic() - began

    def wait_sync(self, primary: str, timeout: float = 60) -> None:
        """Wait until a synchronous standby streams from ``primary``'s PostgreSQL."""
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(Exception), self.nodes[primary].cluster.connect() as connection:
                if connection.execute(
                    "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = 'sync'"
                ).fetchone() == (1,):
                    return
            assert time.monotonic() < deadline, f"no synchronous standby streams from {primary}"
            time.sleep(0.2)

    def kill(self, name: str) -> None:
        """kill -9 of ``name``'s Patroni and PostgreSQL (its postmaster): a power cut, as far as they know."""
        node = self.nodes[name]
        postmaster = node.postmaster()
        if node.process is not None:
            node.process.send_signal(signal.SIGKILL)
            node.process.wait(timeout=10)
            node.process = None
        if postmaster is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(postmaster, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while node.cluster.running() and time.monotonic() < deadline:
            time.sleep(0.05)

    def close(self) -> None:
        """Stop everything at once: the nodes, their PostgreSQL, the etcd members."""
        for node in self.nodes.values():
            if node.process is not None and node.process.poll() is None:
                node.process.kill()
                node.process.wait(timeout=10)
            _quit(node.cluster.data_dir / "postmaster.pid")
        for member in self.etcd:
            member.kill()
            member.wait(timeout=10)


def start_hall(folder: Path, bin_dir: Path) -> PatroniHall:
    """A Patroni hall in ``folder`` (a folder of :func:`tests.postgres.cluster_folder`): etcd, then ``a`` (it
    bootstraps, so it is the leader), then ``b`` (a copy of it), waiting until ``b`` streams synchronously."""
    hall = PatroniHall(folder, bin_dir)
    try:
        hall.start_etcd()
        hall.start("a")
        hall.wait("a", "primary", timeout=90)
        hall.start("b")
        hall.wait("b", "sync", timeout=90)
        hall.wait_sync("a")
    except BaseException:
        hall.close()
        raise
    return hall
