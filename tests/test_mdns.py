"""Finding the server as wordjudge.local: name rules, addresses, pairing links, and real mDNS between hosts.

The live tests put ``wordjudge serve --host 0.0.0.0`` in one network namespace and ask for
``wordjudge.local`` with python-zeroconf from another, joined by a veth pair: two hosts on one
LAN, as in a hall. Making namespaces needs root (as in CI); without it those tests skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fastapi.testclient import TestClient

from wordjudge.base.errors import InvalidInput, Message
from wordjudge.cli.main import main
from wordjudge.service import mdns
from wordjudge.service.links import device_url
from wordjudge.service.mdns import Advertisement, Advertiser, candidate_names, is_loopback_host, lan_addresses
from wordjudge.service.settings import Settings, load_settings
from wordjudge.web.app import create_app

from .helpers import td_headers

# -- names, addresses and links (no network) ---------------------------------------------------


def test_candidate_names_fall_back_to_numbered_names() -> None:
    assert candidate_names("WordJudge") == ["wordjudge", *(f"wordjudge-{n}" for n in range(2, 10))]
    for bad in ("", "-wj", "wj-", "wj.local", "word judge", "x" * 61, "wörd"):
        with pytest.raises(ValueError, match="not a valid mDNS name"):
            candidate_names(bad)


def test_the_setting_takes_the_names_the_advertiser_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("wordjudge", "hall-2", "H4", "h" * 60, "h" * 61, "-hall", "hall-", "hall b", "wordjudge.local"):
        try:
            candidate_names(name)
        except ValueError:
            with pytest.raises(InvalidInput, match=r"mdns_name \(WORDJUDGE_MDNS_NAME\)"):
                load_settings(mdns_name=name)
        else:
            assert load_settings(mdns_name=name).mdns_name == name
    assert load_settings().mdns_name == "wordjudge"
    monkeypatch.setenv("WORDJUDGE_MDNS_NAME", "")
    assert load_settings().mdns_name == ""  # off
    assert load_settings(mdns_name="hall-2").mdns_name == "hall-2"
    with pytest.raises(Exception, match=r"mdns_name \(WORDJUDGE_MDNS_NAME\)"):
        load_settings(mdns_name="wordjudge.local")


def test_loopback_is_never_announced() -> None:
    for host in ("127.0.0.1", "127.0.1.1", "::1", "[::1]", "localhost"):
        assert is_loopback_host(host)
        assert lan_addresses(host) == []
        assert Advertiser("wordjudge", host, 8000).start() is None  # opens no socket
    assert not is_loopback_host("0.0.0.0")
    assert lan_addresses("10.1.2.3") == ["10.1.2.3"]
    assert all(not is_loopback_host(address) for address in lan_addresses("::"))


def test_device_url_prefers_the_public_url_then_the_mdns_name() -> None:
    advertised = Advertisement("wordjudge.local", ("10.0.0.5",), 8000, False, "wordjudge._http._tcp.local.", "x")
    lan: dict[str, Any] = {"host": "0.0.0.0", "port": 8000, "tls": False}
    assert device_url(**lan, public_url="http://10.0.0.5:8000/", advertisement=advertised).url == "http://10.0.0.5:8000"
    assert device_url(**lan, advertisement=advertised, seen_at="http://127.0.0.1:8000/").url == (
        "http://wordjudge.local:8000"
    )
    # Not announced (off, taken, no multicast): the address the TD's browser used, unless it is loopback...
    assert device_url(**lan, seen_at="http://192.168.1.10:8000/").url == "http://192.168.1.10:8000"
    # ...in which case a LAN address of this machine, never 127.0.0.1.
    seen_locally = device_url(**lan, seen_at="http://127.0.0.1:8000/")
    if lan_addresses("0.0.0.0"):
        assert seen_locally.url == f"http://{lan_addresses('0.0.0.0')[0]}:8000"
        assert seen_locally.note is None
    local_only = device_url(host="127.0.0.1", port=8443, tls=True, seen_at="https://localhost:8443/")
    assert local_only.url == "https://127.0.0.1:8443"
    assert local_only.note is not None
    assert "Only this machine can open this link" in local_only.note
    assert device_url(host="::1", port=80, tls=False).url == "http://[::1]:80"


def test_the_console_pairing_link_says_when_only_this_machine_can_open_it(data_dir: Path) -> None:
    app = create_app(Settings(data_dir=data_dir))
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        code = client.post("/api/pairing-codes", json={"role": "runner"}, headers=td_headers(data_dir, "alice"))
        assert code.status_code == 201, code.text
        body = code.json()
    assert body["link"] == f"http://127.0.0.1:8000/runner#pair={body['code']}"
    assert "--host 0.0.0.0" in body["link_note"]
    # And as a message, for the console to say in the event's language.
    assert body["link_note_message"] == {"key": "error.link.loopback", "params": {"host": "127.0.0.1"}}
    assert Message.from_dict(body["link_note_message"]).text() == body["link_note"]


def test_the_console_pairing_link_uses_the_announced_name(data_dir: Path) -> None:
    app = create_app(Settings(data_dir=data_dir, host="0.0.0.0", mdns_name=""))  # announces nothing itself

    class Announced:  # an advertiser whose name is announced
        advertisement = Advertisement("hall.local", ("10.0.0.5",), 8000, False, "hall._http._tcp.local.", "hall.local")

        def close(self) -> None:
            pass

    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        client.app_state["serving"].resources.mdns = Announced()
        code = client.post("/api/pairing-codes", json={"role": "kiosk"}, headers=td_headers(data_dir, "alice"))
    body = code.json()
    assert body["link"] == f"http://hall.local:8000/kiosk#pair={body['code']}"
    assert body["link_note"] is None


def test_device_pair_at_the_server_links_to_the_mdns_name_and_the_ip(data_dir: Path) -> None:
    def pair(*flags: str) -> Result:
        args = ["device", "pair", "--role", "runner", "--data-dir", str(data_dir), *flags]
        return CliRunner().invoke(main, args, catch_exceptions=False)

    on_the_lan = pair("--host", "0.0.0.0", "--port", "8080")
    code = re.search(r"Pairing code: (\S+)", on_the_lan.stdout).group(1)  # type: ignore[union-attr]
    assert f"Link: http://wordjudge.local:8080/runner#pair={code}" in on_the_lan.stdout
    if lan_addresses("0.0.0.0"):
        by_ip = f"http://{lan_addresses('0.0.0.0')[0]}:8080/runner#pair={code}"
        assert f"Or, for a device that cannot open wordjudge.local: {by_ip}" in on_the_lan.stdout
    off = pair("--host", "10.9.8.7", "--mdns-name", "")
    assert "Link: http://10.9.8.7:8000/runner#pair=" in off.stdout
    assert "wordjudge.local" not in off.stdout
    local = pair()
    assert "Link: http://127.0.0.1:8000/runner#pair=" in local.stdout
    assert "Note: Only this machine can open this link" in local.stderr


def test_https_is_announced_as_https() -> None:
    assert mdns.service_type(tls=False) == "_http._tcp.local."
    assert mdns.service_type(tls=True) == "_https._tcp.local."


# -- two hosts on one LAN: network namespaces joined by a veth pair --------------------------------


@dataclass(frozen=True)
class Lan:
    """Two network namespaces, ``a`` and ``b``, on one link, with their addresses."""

    a: str
    b: str
    a_ip: str
    b_ip: str

    def run(self, namespace: str, *command: str) -> list[str]:
        return ["ip", "netns", "exec", namespace, *command]


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)


@pytest.fixture
def lan() -> Iterator[Lan]:
    if shutil.which("ip") is None:
        pytest.skip("iproute2's ip is not installed: the live mDNS tests make network namespaces with it")
    tag = f"{os.getpid() % 100_000}{uuid.uuid4().hex[:3]}"
    a, b = f"wj{tag}a", f"wj{tag}b"
    subnet = f"10.{200 + os.getpid() % 50}.{int(tag[-3:], 16) % 250}"
    made = _ip("netns", "add", a)
    if made.returncode != 0:
        pytest.skip(f"cannot make a network namespace ({made.stderr.strip()}): the live mDNS tests need root")
    try:
        _ip("netns", "add", b).check_returncode()
        _ip("link", "add", f"{a}v", "type", "veth", "peer", "name", f"{b}v").check_returncode()
        for namespace, address in ((a, f"{subnet}.1"), (b, f"{subnet}.2")):
            _ip("link", "set", f"{namespace}v", "netns", namespace).check_returncode()
            _ip("-n", namespace, "addr", "add", f"{address}/24", "dev", f"{namespace}v").check_returncode()
            _ip("-n", namespace, "link", "set", "lo", "up").check_returncode()
            _ip("-n", namespace, "link", "set", f"{namespace}v", "up").check_returncode()
        yield Lan(a, b, f"{subnet}.1", f"{subnet}.2")
    finally:
        _ip("netns", "del", a)  # takes the veth pair with it
        _ip("netns", "del", b)


class Server:
    """``wordjudge serve`` running in a namespace, its output collected line by line."""

    def __init__(self, lan: Lan, namespace: str, data_dir: Path, *flags: str) -> None:
        script = str(Path(sys.executable).with_name("wordjudge"))
        env = {**os.environ, "WORDJUDGE_DATA_DIR": str(data_dir), "WORDJUDGE_HOST": "0.0.0.0"}
        env.pop("WORDJUDGE_MDNS_NAME", None)
        self.process = subprocess.Popen(
            lan.run(namespace, script, "serve", *flags),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, pattern: str, seconds: float = 30) -> re.Match[str]:
        deadline = time.monotonic() + seconds
        while True:
            found = re.search(pattern, self.output())
            if found:
                return found
            assert self.process.poll() is None, f"the server stopped:\n{self.output()}"
            assert time.monotonic() < deadline, f"no {pattern!r} in {seconds} s:\n{self.output()}"
            time.sleep(0.1)

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.reader.join(10)
        assert self.process.stdout is not None
        self.process.stdout.close()
        return self.output()


# Run inside a namespace: resolve a .local name (and a service) with python-zeroconf, as a device would,
# and optionally ask the server for a pairing code (as the TD's console does).
_PROBE = """
import json, sys, time
import httpx2 as httpx
from zeroconf import AddressResolver, Zeroconf
args = json.loads(sys.argv[1])
out = {}
if "pair" in args:
    with httpx.Client(base_url=args["pair"]["base"], trust_env=False, timeout=10) as http:
        out["pairing"] = http.post("/api/pairing-codes", json={"role": "runner"}, headers=args["pair"]["headers"]).json()
zc = Zeroconf()
try:
    deadline = time.monotonic() + args["seconds"]
    out["addresses"] = []
    while time.monotonic() < deadline:
        resolver = AddressResolver(args["hostname"] + ".")
        if resolver.request(zc, 500):
            out["addresses"] = sorted(resolver.parsed_addresses())
            break
    if "service" in args and out["addresses"]:
        info = zc.get_service_info(args["service"][0], args["service"][1], 3000)
        out["service"] = info and {"server": info.server, "port": info.port, "addresses": info.parsed_addresses()}
        port = info.port if info else 0
        with httpx.Client(trust_env=False, timeout=5) as http:
            out["health"] = http.get(f"http://{out['addresses'][0]}:{port}/api/health").json()["ok"]
finally:
    zc.close()
print(json.dumps(out))
"""


def _probe(lan: Lan, namespace: str, **args: object) -> dict[str, object]:
    done = subprocess.run(
        lan.run(namespace, sys.executable, "-c", _PROBE, json.dumps(args)),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.live
@pytest.mark.timeout(120)
@pytest.mark.sqlite_only(
    "the server runs in a network namespace, where the test's PostgreSQL on loopback is not reachable"
)
def test_a_device_on_the_lan_finds_the_server_as_wordjudge_local(lan: Lan, data_dir: Path) -> None:
    td = td_headers(data_dir, "alice")
    server = Server(lan, lan.a, data_dir, "--port", "8000")
    try:
        server.wait_for(r"mDNS: this server is http://wordjudge\.local:8000 \(" + re.escape(lan.a_ip) + r"\)")
        seen = _probe(
            lan,
            lan.b,
            hostname="wordjudge.local",
            seconds=10,
            service=["_http._tcp.local.", "wordjudge._http._tcp.local."],
        )
        assert seen["addresses"] == [lan.a_ip]
        assert seen["service"] == {"server": "wordjudge.local.", "port": 8000, "addresses": [lan.a_ip]}
        assert seen["health"] is True
        # The TD's console opened on the server itself, at 127.0.0.1: the QR code still points where a phone can go.
        at_the_server = _probe(
            lan, lan.a, hostname="wordjudge.local", seconds=5, pair={"base": "http://127.0.0.1:8000", "headers": td}
        )
        pairing = at_the_server["pairing"]
        assert isinstance(pairing, dict)
        assert pairing["link"] == f"http://wordjudge.local:8000/runner#pair={pairing['code']}"
        assert pairing["link_note"] is None
    finally:
        output = server.stop()
    assert "Traceback" not in output
    # Stopped with the server: its goodbye packets withdrew the name.
    assert _probe(lan, lan.b, hostname="wordjudge.local", seconds=3)["addresses"] == []


@pytest.mark.live
@pytest.mark.timeout(120)
@pytest.mark.sqlite_only(
    "the servers run in network namespaces, where the test's PostgreSQL on loopback is not reachable"
)
def test_a_name_taken_on_the_lan_gives_a_warning_and_the_next_name(lan: Lan, data_dir: Path, tmp_path: Path) -> None:
    other_data = tmp_path / "other"
    shutil.copytree(data_dir, other_data)
    first = Server(lan, lan.a, data_dir, "--port", "8000")
    second = None
    try:
        first.wait_for(r"mDNS: this server is http://wordjudge\.local:8000")
        second = Server(lan, lan.b, other_data, "--port", "8000", "--mdns-name", "wordjudge")
        second.wait_for(r"WARNING.*wordjudge\.local is already taken on this network \(by " + re.escape(lan.a_ip))
        second.wait_for(r"WARNING.*wordjudge\.local was taken, so this server is http://wordjudge-2\.local:8000")
        assert _probe(lan, lan.a, hostname="wordjudge-2.local", seconds=10)["addresses"] == [lan.b_ip]
        assert _probe(lan, lan.b, hostname="wordjudge.local", seconds=10)["addresses"] == [lan.a_ip]
        assert second.process.poll() is None  # still serving
    finally:
        outputs = [first.stop(), second.stop() if second else ""]
    assert all("Traceback" not in output for output in outputs)


def test_a_failure_to_announce_is_a_warning_never_a_crash(caplog: pytest.LogCaptureFixture) -> None:
    advertiser = Advertiser("wordjudge", "0.0.0.0", 8000)

    def refused() -> None:
        raise mdns.MdnsError("wordjudge.local to wordjudge-9.local are all taken on this network")

    advertiser.start = refused  # type: ignore[method-assign]
    with caplog.at_level("WARNING", logger="wordjudge.service.mdns"):
        advertiser.start_in_background()
        advertiser.close()
    assert "not announcing wordjudge.local: wordjudge.local to wordjudge-9.local are all taken" in caplog.text
    assert "devices need the IP address" in caplog.text
    assert advertiser.advertisement is None
