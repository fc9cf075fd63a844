"""A hall run by Patroni on loopback, for the tests and the failover benchmark: a three-member etcd and two
Patroni nodes, each managing its own PostgreSQL, made from the files a hall's machines use (``deploy/patroni/``):
``patroni.yml`` as it is, and the variables of ``patroni.env`` and ``etcd.env`` (every one of them, and only
those) given this machine's loopback addresses, ports and passwords. Only what a test must move elsewhere is
changed in the YAML: the data folder, the password file and the socket's folder, into the test's own folder.

Patroni is PyPI's, at the version ``deploy/patroni/requirements.lock`` pins, in a venv on Debian's python3 at
``/opt/wordjudge-patroni`` (as deploy/hall.md installs it; the ``postgres`` user can run it there); etcd is
Debian's (``etcd-server``). The nodes run as the ``postgres`` system user under root, as the clusters of
:mod:`tests.postgres` do, in a folder of :func:`tests.postgres.cluster_folder`. Without them a test that needs
them is skipped, saying how to install them (it fails instead in CI, where ``.ci/check`` installs them).
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
from .netlab import Lab
from .postgres import Cluster, _environment, _owner_ids, _quit

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy" / "patroni"
TEMPLATE = DEPLOY / "patroni.yml"
VENV = Path("/opt/wordjudge-patroni")
# Another Patroni to try the tests with (Debian's /usr/bin/patroni, say); its version is then not checked.
OTHER_PATRONI = os.environ.get("WORDJUDGE_TEST_PATRONI")
PATRONI = OTHER_PATRONI or str(VENV / "bin" / "patroni")
ETCD = "/usr/bin/etcd"
MISSING = (
    f"Patroni or etcd is not installed: apt-get install etcd-server; /usr/bin/python3 -m venv {VENV}; "
    f"{VENV}/bin/pip install --require-hashes -r deploy/patroni/requirements.lock (.ci/check does both)"
)
SUPERUSER = "postgres"
MEMBERS = 3  # the hall's etcd: two machines and the TD's laptop
ETCD_MACHINES = ("a", "b", "l")  # where each member runs, in a lab (l: the TD's laptop)


def installed() -> bool:
    """Whether the Patroni of ``deploy/patroni/requirements.lock`` and Debian's etcd are here."""
    if not (Path(PATRONI).exists() and Path(ETCD).exists()):
        return False
    found = subprocess.run([PATRONI, "--version"], capture_output=True, text=True, check=False)
    return found.returncode == 0 and (OTHER_PATRONI is not None or found.stdout.split()[-1:] == [pinned_version()])


def pinned_version() -> str:
    """The Patroni version deploy/patroni/requirements.lock pins."""
    for line in (DEPLOY / "requirements.lock").read_text().splitlines():
        if line.startswith("patroni"):
            return line.split("==", 1)[1].split()[0]
    raise AssertionError("deploy/patroni/requirements.lock pins no patroni")


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
        return f"http://{self.cluster.host}:{self.api_port}"

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
    """A three-member etcd and two Patroni nodes (``a``, ``b``), in ``folder``: all on loopback, or, given a
    ``lab`` (its machines ``a``, ``b`` and ``l``, the TD's laptop), each on its own machine of the lab."""

    folder: Path
    bin_dir: Path
    lab: Lab | None = None
    password: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    etcd: list[subprocess.Popen[bytes]] = field(default_factory=list)
    etcd_ports: list[int] = field(default_factory=list)
    nodes: dict[str, Node] = field(default_factory=dict)
    frozen: list[int] = field(default_factory=list)  # the processes of a PostgreSQL frozen by freeze()

    # -- etcd ---------------------------------------------------------------------------------------------

    def start_etcd(self) -> None:
        """Start the three etcd members and wait until they answer."""
        peers = [free_port() for _ in range(MEMBERS)]
        self.etcd_ports = [free_port() for _ in range(MEMBERS)]
        hosts = [self.host(machine) for machine in ETCD_MACHINES]
        initial = ",".join(f"e{n}=http://{hosts[n]}:{port}" for n, port in enumerate(peers))
        for n, (peer, client) in enumerate(zip(peers, self.etcd_ports, strict=True)):
            host = hosts[n]
            settings = {
                "ETCD_NAME": f"e{n}",
                "ETCD_DATA_DIR": str(self.folder / f"etcd{n}"),
                "ETCD_LISTEN_PEER_URLS": f"http://{host}:{peer}",
                "ETCD_INITIAL_ADVERTISE_PEER_URLS": f"http://{host}:{peer}",
                "ETCD_LISTEN_CLIENT_URLS": f"http://{host}:{client}",
                "ETCD_ADVERTISE_CLIENT_URLS": f"http://{host}:{client}",
                "ETCD_INITIAL_CLUSTER": initial,
                "ETCD_INITIAL_CLUSTER_STATE": "new",
                "ETCD_INITIAL_CLUSTER_TOKEN": self.folder.name,
            }
            environment = {**_environment(), **_as_deployed(DEPLOY / "etcd.env", settings)}
            with (self.folder / f"etcd{n}.log").open("wb") as log:
                command = self.on(ETCD_MACHINES[n], ETCD)
                self.etcd.append(subprocess.Popen(command, env=environment, stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 30
        for host, port in zip(hosts, self.etcd_ports, strict=True):
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"http://{host}:{port}/health", timeout=2).json().get("health") == "true":
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
            cluster = Cluster(folder, free_port(), self.bin_dir, SUPERUSER, self.password, host=self.host(name))
            self.nodes[name] = Node(name, cluster, free_port())
        return self.nodes[name]

    def configuration(self, node: Node) -> dict[str, Any]:
        """``deploy/patroni/patroni.yml`` with the folders moved into the test's (the socket's too)."""
        config: dict[str, Any] = yaml.safe_load(TEMPLATE.read_text())
        folder = node.cluster.folder
        postgresql = config["postgresql"]
        postgresql.update(data_dir=str(node.cluster.data_dir), bin_dir=str(self.bin_dir), pgpass=str(folder / "pgpass"))
        postgresql["parameters"]["unix_socket_directories"] = str(folder)
        return config

    def environment(self, node: Node) -> dict[str, str]:
        """The variables of ``deploy/patroni/patroni.env``, for ``node`` on loopback."""
        host = node.cluster.host
        api, postgresql = f"{host}:{node.api_port}", f"{host}:{node.cluster.port}"
        members = zip((self.host(machine) for machine in ETCD_MACHINES), self.etcd_ports, strict=True)
        return _as_deployed(
            DEPLOY / "patroni.env",
            {
                "PATRONI_NAME": node.name,
                "PATRONI_RESTAPI_LISTEN": api,
                "PATRONI_RESTAPI_CONNECT_ADDRESS": api,
                "PATRONI_POSTGRESQL_LISTEN": postgresql,
                "PATRONI_POSTGRESQL_CONNECT_ADDRESS": postgresql,
                "PATRONI_ETCD3_HOSTS": ",".join(f"'{member}:{client}'" for member, client in members),
                "PATRONI_SUPERUSER_PASSWORD": self.password,
                "PATRONI_REPLICATION_PASSWORD": self.password,
                "PATRONI_REWIND_PASSWORD": self.password,
            },
        )

    def start(self, name: str) -> Node:
        """Start the Patroni of ``name`` (it bootstraps, clones or rewinds its PostgreSQL as it sees fit)."""
        node = self.node(name)
        path = node.cluster.folder / "patroni.yml"
        path.write_text(yaml.safe_dump(self.configuration(node)))
        os.chown(path, *_owner_ids())
        uid, gid = _owner_ids()
        environment = {**_environment(), "HOME": str(node.cluster.folder), **self.environment(node)}
        command, as_owner = [PATRONI, str(path)], os.geteuid() == 0
        if self.lab is not None:  # into its machine's namespace as root, then the owner (ip and setpriv exec)
            command = self.on(name, "setpriv", f"--reuid={uid}", f"--regid={gid}", "--init-groups", *command)
            as_owner = False
        with (node.cluster.folder / "patroni.log").open("ab") as log:
            node.process = subprocess.Popen(
                command,
                cwd=node.cluster.folder,
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
                user=uid if as_owner else None,
                group=gid if as_owner else None,
            )
        return node

    def host(self, machine: str) -> str:
        """The address of ``machine`` (``a``, ``b`` or ``l``): loopback, or its address in the lab."""
        return self.lab.addresses[machine] if self.lab is not None else "127.0.0.1"

    def on(self, machine: str, *command: str) -> list[str]:
        """``command`` as run on ``machine``: in its namespace in a lab, as it is on loopback."""
        return self.lab.run(machine, *command) if self.lab is not None else list(command)

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

    def freeze(self, name: str) -> None:
        """Freeze ``name``'s PostgreSQL mid-write (SIGSTOP of its postmaster and every child: what a disk that
        stops answering does); its Patroni lives on, as it would, its loop hanging on its queries."""
        postmaster = self.nodes[name].postmaster()
        assert postmaster is not None, f"{name}'s PostgreSQL is not running"
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True, check=False)
        self.frozen = [postmaster, *map(int, children.stdout.split())]
        for pid in self.frozen:
            os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        """Let the frozen PostgreSQL go on (the disk answers again)."""
        for pid in self.frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        self.frozen = []

    def close(self) -> None:
        """Stop everything at once: the nodes, their PostgreSQL, the etcd members."""
        self.thaw()
        for node in self.nodes.values():
            if node.process is not None and node.process.poll() is None:
                node.process.kill()
                node.process.wait(timeout=10)
            _quit(node.cluster.data_dir / "postmaster.pid")
        for member in self.etcd:
            member.kill()
            member.wait(timeout=10)


def _as_deployed(example: Path, settings: dict[str, str]) -> dict[str, str]:
    """``settings``, checked to be exactly the variables the deployed ``example`` file sets: a variable added there
    is one the tests must set too, and one set here must be one a machine sets."""
    deployed = {line.split("=", 1)[0] for line in example.read_text().splitlines() if line and line[0] != "#"}
    assert deployed == set(settings), f"{example.name} sets {sorted(deployed)}; the tests set {sorted(settings)}"
    return settings


def start_hall(folder: Path, bin_dir: Path, lab: Lab | None = None) -> PatroniHall:
    """A Patroni hall in ``folder`` (a folder of :func:`tests.postgres.cluster_folder`), on loopback or on the
    machines of ``lab``: etcd, then ``a`` (it bootstraps, so it is the leader), then ``b`` (a copy of it),
    waiting until ``b`` streams synchronously."""
    hall = PatroniHall(folder, bin_dir, lab=lab)
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
