"""The addresses devices open: where a kiosk or phone on the LAN reaches this server, and the pairing
link (with its code) that a QR code carries. Written once for the console's pairing route and the CLI's
``device pair``.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from wordjudge.base.errors import Message
from wordjudge.service.mdns import LOOPBACK_NAMES, Advertisement, Advertiser, is_loopback_host, lan_addresses

if TYPE_CHECKING:
    from wordjudge.model.auth import Role
    from wordjudge.service.settings import Settings


def pairing_link(base_url: str, role: Role, code: str) -> str:
    """The address a device opens from the QR code: the role's page, with the code after '#' (never sent to
    the server, so never in its logs)."""
    return f"{base_url.rstrip('/')}/{role.value}#pair={code}"


def mdns_url(name: str, port: int, *, tls: bool) -> str:
    """The base address of a server announced as ``<name>.local``."""
    return f"{'https' if tls else 'http'}://{name.lower()}.local:{port}"


@dataclass(frozen=True)
class DeviceUrl:
    """Where devices on the LAN open this server (pairing links, QR codes), and why it may not work."""

    url: str  # e.g. "http://wordjudge.local:8000", no trailing slash
    said: Message | None = None  # set when a phone on the LAN may not open ``url`` (a link.* message)

    @property
    def note(self) -> str | None:
        """Why a phone on the LAN may not open ``url``, in English (None: nothing is known against it)."""
        return self.said.text() if self.said else None


def device_url(
    *,
    host: str,
    port: int,
    tls: bool,
    public_url: str | None = None,
    advertisement: Advertisement | None = None,
    seen_at: str | None = None,
) -> DeviceUrl:
    """The base address a kiosk or phone on the LAN opens for a server listening on ``host:port``.

    In order: ``public_url`` (the TD said so); the ``.local`` name being advertised; the
    address the asking browser used (``seen_at``, e.g. ``http://192.168.1.10:8000``) unless it
    is this machine's loopback; a LAN address of the machine when the server listens on one;
    else the loopback address, with a note that only this machine can open it.
    """
    if public_url:
        return DeviceUrl(public_url.rstrip("/"))
    if advertisement is not None:
        return DeviceUrl(advertisement.url)
    scheme = "https" if tls else "http"
    if seen_at:
        seen_host = _url_host(seen_at)
        if seen_host and not is_loopback_host(seen_host):
            return DeviceUrl(seen_at.rstrip("/"))
    addresses = lan_addresses(host)
    if addresses:
        return DeviceUrl(f"{scheme}://{_url_address(addresses[0])}:{port}")
    if is_loopback_host(host):
        where = _url_address(host) if host.lower() not in LOOPBACK_NAMES else host
        return DeviceUrl(f"{scheme}://{where}:{port}", Message("error.link.loopback", host=host))
    return DeviceUrl(f"{scheme}://{_url_address(host)}:{port}", Message("error.link.no_lan_address", host=host))


def _url_host(url: str) -> str:
    match = re.match(r"^[a-z]+://(\[[^\]]+\]|[^:/]+)", url, re.IGNORECASE)
    return match.group(1).strip("[]") if match else ""


def _url_address(host: str) -> str:
    """``host`` as it goes in a URL: IPv6 addresses in brackets."""
    try:
        return f"[{host}]" if ipaddress.ip_address(host.strip("[]")).version == 6 else host
    except ValueError:
        return host


def server_url(settings: Settings, advertiser: Advertiser | None, seen_at: str | None = None) -> DeviceUrl:
    """Where a kiosk or phone on the LAN opens the server running with ``settings`` (announcing with
    ``advertiser``, if any), for pairing links and QR codes: see :func:`device_url`."""
    return device_url(
        host=settings.host,
        port=settings.port,
        tls=settings.tls,
        public_url=settings.public_url,
        advertisement=advertiser.advertisement if advertiser else None,
        seen_at=seen_at,
    )


class PrintedLinks(NamedTuple):
    """The links a pairing code made at the command line is printed with."""

    link: str  # the one to open (and the QR code's)
    by_ip: str | None  # the same by IP address, for a device that cannot resolve NAME.local
    note: str | None  # what the device URL's choice warns of (see DeviceUrl.note)


def printed_pairing_links(settings: Settings, role: Role, code: str) -> PrintedLinks:
    """The links for a pairing code made at the command line, for the server ``settings`` describe (it may not
    be running): to --public-url if set; else to NAME.local (--mdns-name) when the server listens on a LAN
    address, with the link by IP address beside it; else to --host and --port."""
    base = device_url(host=settings.host, port=settings.port, tls=settings.tls, public_url=settings.public_url)
    link = pairing_link(base.url, role, code)
    if settings.public_url or not settings.mdns_name or is_loopback_host(settings.host):
        return PrintedLinks(link, None, base.note)
    # The server announces this name (unless another machine has it: its log then names the one it got).
    named = mdns_url(settings.mdns_name, settings.port, tls=settings.tls)
    return PrintedLinks(pairing_link(named, role, code), link, base.note)
