"""Finding the server as ``<name>.local`` on the hall's network: multicast DNS and DNS-SD.

A server that listens on a LAN address announces, with python-zeroconf, an address record
``<name>.local`` (A, and AAAA when it listens on IPv6 too) for the machine's LAN addresses,
and an ``_http._tcp`` service (``_https._tcp`` under TLS) pointing at it, so that kiosks and
phones whose system resolves ``.local`` names (RFC 6762) can open ``http://wordjudge.local:8000``.

A name another machine already answers for is never taken over: the advertiser tries
``<name>-2``, ``<name>-3``... and logs a warning naming the name it got. Nothing here imports
the web framework or the command line; :class:`Advertiser` is started and stopped by the
server's lifespan.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import ifaddr

if TYPE_CHECKING:  # zeroconf is imported when a server starts announcing, not by every command
    from zeroconf import Zeroconf

from wordjudge import __version__

log = logging.getLogger(__name__)

DEFAULT_NAME = "wordjudge"
# One DNS label, with room for the "-N" of a fallback name.
NAME_PATTERN = r"^([A-Za-z0-9]([A-Za-z0-9-]{0,58}[A-Za-z0-9])?)?$"
MAX_FALLBACKS = 9  # name, name-2 ... name-9
PROBE_SECONDS = 1.0  # how long to wait for another machine to answer for a name before taking it

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


class MdnsError(Exception):
    """The name could not be advertised (no free name, or the network refused multicast)."""


@dataclass(frozen=True)
class Advertisement:
    """What the server announces: its ``.local`` host name, addresses, port and service."""

    hostname: str  # e.g. "wordjudge.local"
    addresses: tuple[str, ...]
    port: int
    tls: bool
    service: str  # e.g. "wordjudge._http._tcp.local."
    requested: str  # the name asked for; differs from the hostname's when it was taken

    @property
    def url(self) -> str:
        """The base address devices open, e.g. ``http://wordjudge.local:8000``."""
        return f"{'https' if self.tls else 'http'}://{self.hostname}:{self.port}"


def is_loopback_host(host: str) -> bool:
    """Whether a listening address reaches this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def lan_addresses(host: str) -> list[str]:
    """The addresses other machines can reach a server listening on ``host`` at.

    ``0.0.0.0`` gives every non-loopback IPv4 address of the machine; ``::`` those and
    the global and unique-local IPv6 ones (not link-local: a browser cannot open those
    without a zone); one address gives itself; a name is looked up. A loopback ``host``,
    or a name that does not resolve, gives an empty list. The address of the default
    route comes first (the hall's LAN rather than, say, a container bridge), then IPv4.
    """
    if is_loopback_host(host):
        return []
    if host in {"0.0.0.0", "", "::"}:
        wanted = {4, 6} if host == "::" else {4}
        found = [str(address) for address in _machine_addresses() if address.version in wanted]
    else:
        try:
            found = [str(ipaddress.ip_address(host.strip("[]")))]
        except ValueError:
            try:
                found = sorted({str(info[4][0]) for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)})
            except OSError:
                return []
    usable = [a for a in found if _usable(ipaddress.ip_address(a))]
    primary = _default_route_address()
    return sorted(usable, key=lambda a: (a != primary, ipaddress.ip_address(a).version, ipaddress.ip_address(a)))


def _default_route_address() -> str | None:
    """The IPv4 address this machine would send from to the wider network (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: only picks a route
            return str(probe.getsockname()[0])
        except OSError:
            return None


def _machine_addresses() -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    addresses = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            text = ip.ip if isinstance(ip.ip, str) else ip.ip[0]
            addresses.append(ipaddress.ip_address(text.split("%")[0]))
    return addresses


def _usable(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if address.is_loopback or address.is_unspecified or address.is_multicast:
        return False
    return not (address.version == 6 and address.is_link_local)


def candidate_names(name: str) -> list[str]:
    """The names to try, in order: ``name``, then ``name-2`` to ``name-9``.

    Raises :class:`ValueError` if ``name`` is not one DNS label of letters, digits and
    hyphens (at most 60 characters, no hyphen at either end).
    """
    if not name or not re.match(NAME_PATTERN, name):
        raise ValueError(f"{name!r} is not a valid mDNS name: letters, digits and inner hyphens, 1-60 characters")
    base = name.lower()
    return [base, *(f"{base}-{n}" for n in range(2, MAX_FALLBACKS + 1))]


def service_type(tls: bool) -> str:
    """The DNS-SD service type: ``_https._tcp.local.`` under TLS, else ``_http._tcp.local.``."""
    return f"_{'https' if tls else 'http'}._tcp.local."


@dataclass
class Advertiser:
    """Announces this server as ``<name>.local`` while it runs.

    ``host`` and ``port`` are what the server listens on; nothing is announced for a
    loopback ``host``. :meth:`start` (or :meth:`start_in_background`) announces, :meth:`close`
    withdraws the announcement (goodbye packets) and closes the sockets.
    """

    name: str
    host: str
    port: int
    tls: bool = False
    probe_seconds: float = PROBE_SECONDS
    _zeroconf: Zeroconf | None = field(default=None, init=False, repr=False)
    _advertisement: Advertisement | None = field(default=None, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _closed: bool = field(default=False, init=False, repr=False)

    @property
    def advertisement(self) -> Advertisement | None:
        """What is announced now; None before :meth:`start` succeeds, when off, or after :meth:`close`."""
        return self._advertisement

    def start(self) -> Advertisement | None:
        """Announce ``<name>.local`` and the service, blocking for a few seconds (probing, then announcing).

        Returns the advertisement, or None when there is nothing to announce (a loopback
        ``host``, or no LAN address yet). A name some other machine answers for is skipped
        with a warning, for the next of :func:`candidate_names`. Raises :class:`MdnsError`
        when every candidate is taken or the network refuses multicast, and
        :class:`ValueError` for an invalid name.
        """
        import zeroconf

        names = candidate_names(self.name)
        addresses = lan_addresses(self.host)
        if not addresses:
            if not is_loopback_host(self.host):
                log.warning("mDNS: no LAN address to announce for %s yet; devices need the IP address", self.host)
            return None
        with self._lock:
            if self._closed:
                return None
            try:
                zc = self._zeroconf = self._open_zeroconf(addresses)
            except OSError as exc:
                raise MdnsError(f"cannot open the mDNS sockets: {exc}") from exc
        for candidate in names:
            hostname = f"{candidate}.local"
            owner = self._owner_of(zc, hostname)
            if owner:
                log.warning(
                    "mDNS: %s is already taken on this network (by %s); trying another name", hostname, ", ".join(owner)
                )
                continue
            info = zeroconf.ServiceInfo(
                service_type(self.tls),
                f"{candidate}.{service_type(self.tls)}",
                port=self.port,
                properties={"path": "/", "version": __version__},
                server=f"{hostname}.",
                parsed_addresses=addresses,
            )
            try:
                zc.register_service(info, allow_name_change=False)
            except zeroconf.NonUniqueNameException:
                log.warning("mDNS: the service %s is already taken on this network; trying another name", info.name)
                continue
            except OSError as exc:
                raise MdnsError(f"cannot announce {hostname}: {exc}") from exc
            advertisement = Advertisement(
                hostname, tuple(addresses), self.port, self.tls, info.name, requested=f"{names[0]}.local"
            )
            with self._lock:
                if self._closed:  # closed meanwhile: closing the sockets withdrew it
                    return None
                self._advertisement = advertisement
            if candidate != names[0]:
                log.warning("mDNS: %s.local was taken, so this server is %s", names[0], advertisement.url)
            else:
                log.info("mDNS: this server is %s (%s)", advertisement.url, ", ".join(addresses))
            return advertisement
        raise MdnsError(f"{names[0]}.local to {names[-1]}.local are all taken on this network")

    def start_in_background(self) -> None:
        """Run :meth:`start` in a thread, so the server answers at once; failures are logged as warnings."""

        def run() -> None:
            try:
                self.start()
            except (MdnsError, ValueError) as exc:
                log.warning("mDNS: not announcing %s.local: %s; devices need the IP address", self.name, exc)
            except Exception:  # never let discovery take the server down
                if not self._closed:  # closing while announcing interrupts the announcement: not a fault
                    log.exception("mDNS: announcing %s.local failed; devices need the IP address", self.name)

        self._thread = threading.Thread(target=run, name="wordjudge-mdns", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Withdraw the announcement and close the sockets (waits up to ``timeout`` for a start under way).

        Safe to call more than once, and before or without :meth:`start`.
        """
        with self._lock:
            self._closed = True
            zc, self._zeroconf = self._zeroconf, None
            self._advertisement = None
        if zc is not None:
            try:
                zc.close()  # sends goodbye packets for what it registered, then closes
            except Exception:
                log.exception("mDNS: closing failed")
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _open_zeroconf(self, addresses: list[str]) -> Zeroconf:
        from zeroconf import InterfaceChoice, IPVersion, Zeroconf

        if self.host in {"0.0.0.0", ""}:
            return Zeroconf(interfaces=InterfaceChoice.All, ip_version=IPVersion.V4Only)
        if self.host == "::":
            return Zeroconf(interfaces=InterfaceChoice.All, ip_version=IPVersion.All)
        return Zeroconf(interfaces=list(addresses))

    def _owner_of(self, zc: Zeroconf, hostname: str) -> list[str]:
        """The addresses another machine answers ``hostname`` with (empty if nobody, or only this machine, does)."""
        from zeroconf import AddressResolver  # type: ignore[attr-defined]  # exported, but not in __all__

        resolver = AddressResolver(f"{hostname}.")
        if not resolver.request(zc, self.probe_seconds * 1000):
            return []
        answered = set(resolver.parsed_addresses())
        if answered <= {str(address) for address in _machine_addresses()}:
            # This machine already answers for it (e.g. avahi, when the machine's own name is the same).
            log.info("mDNS: %s already points at this machine (%s)", hostname, ", ".join(sorted(answered)))
            return []
        return sorted(answered)
