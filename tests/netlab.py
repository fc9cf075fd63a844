"""Machines of a hall on one LAN, on one computer: a network namespace each, joined by a bridge in the test's own
namespace (which holds the bridge's address, so the test reaches every machine as a device on the LAN would).
:meth:`Lab.cut` unplugs a machine's cable (its veth's end on the bridge goes down): a real partition, for the
hall's failover tests. Needs root and iproute2's ``ip``; :func:`lab` skips, saying why, without them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import pytest


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10, check=False)


def _must(*args: str) -> None:
    done = _ip(*args)
    assert done.returncode == 0, f"ip {' '.join(args)}: {done.stderr.strip()}"


@dataclass
class Lab:
    """Machines by name: each a namespace and an address on the bridge's /24."""

    tag: str
    subnet: str
    names: Sequence[str]
    addresses: dict[str, str] = field(default_factory=dict)

    @property
    def bridge(self) -> str:
        return f"wjbr{self.tag}"

    def namespace(self, name: str) -> str:
        return f"wj{self.tag}{name}"

    def _cable(self, name: str) -> str:
        return f"wjv{self.tag}{name}"  # the bridge's end of the machine's veth

    def run(self, name: str, *command: str) -> list[str]:
        """``command`` run on the machine ``name`` (as root: ``ip netns exec`` needs it)."""
        return ["ip", "netns", "exec", self.namespace(name), *command]

    def cut(self, name: str) -> None:
        """Unplug ``name``'s cable: it reaches no other machine, and none reaches it."""
        _must("link", "set", self._cable(name), "down")

    def mend(self, name: str) -> None:
        """Plug ``name``'s cable back in."""
        _must("link", "set", self._cable(name), "up")

    def make(self) -> None:
        _must("link", "add", self.bridge, "type", "bridge")
        _must("addr", "add", f"{self.subnet}.254/24", "dev", self.bridge)
        _must("link", "set", self.bridge, "up")
        for number, name in enumerate(self.names, start=1):
            namespace, cable, inside = self.namespace(name), self._cable(name), f"wji{self.tag}{name}"
            _must("netns", "add", namespace)
            _must("link", "add", cable, "type", "veth", "peer", "name", inside)
            _must("link", "set", inside, "netns", namespace)
            address = f"{self.subnet}.{number}"
            _must("-n", namespace, "addr", "add", f"{address}/24", "dev", inside)
            _must("-n", namespace, "link", "set", "lo", "up")
            _must("-n", namespace, "link", "set", inside, "up")
            _must("link", "set", cable, "master", self.bridge)
            _must("link", "set", cable, "up")
            self.addresses[name] = address

    def remove(self) -> None:
        for name in self.names:
            _ip("netns", "del", self.namespace(name))  # takes its veth pair with it
        _ip("link", "del", self.bridge)


@contextlib.contextmanager
def lab(names: Sequence[str]) -> Iterator[Lab]:
    """A lab of the machines ``names``, removed on leaving; skips the test without root or ``ip``."""
    if shutil.which("ip") is None:
        pytest.skip("iproute2's ip is not installed: the partition tests make network namespaces with it")
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root: the partition tests run as root (as CI does)")
    tag = uuid.uuid4().hex[:4]
    subnet = f"10.{100 + os.getpid() % 100}.{int(tag, 16) % 250}"
    made = Lab(tag, subnet, names)
    try:
        made.make()
        yield made
    finally:
        made.remove()
