"""The one settings object of wordjudge.

Every setting is read, in order of precedence, from a command-line flag, from its
environment twin ``WORDJUDGE_<NAME>`` (e.g. ``WORDJUDGE_DATA_DIR``), or from its
default. The command-line flags are generated from the fields below, so a flag
and its environment variable can never drift apart.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from wordjudge.base.errors import InvalidInput, Language
from wordjudge.base.logs import LogFormat, LogLevel
from wordjudge.service.mdns import NAME_PATTERN

if TYPE_CHECKING:
    from wordjudge.storage.dialect import StateLocation

ENV_PREFIX = "WORDJUDGE_"


class Settings(BaseSettings):
    """wordjudge's settings; see each field's description."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", frozen=True)

    data_dir: Path = Field(
        default=Path("wordjudge-data"),
        description="Folder for compiled lexicons, profiles, the event file (event.toml) and the audit log.",
    )
    database: str | None = Field(
        default=None,
        description="A PostgreSQL database for the audit log, devices, pairing codes, TD accounts and alerts "
        "(postgresql://USER@HOST:PORT/DB; the password from ~/.pgpass or PGPASSWORD); none: audit.sqlite3 and "
        "access.sqlite3 in the data folder. The event file and lexicons stay there.",
    )
    peers: str = Field(
        default="",
        description="The event's other servers, comma-separated (e.g. http://192.168.1.11:8000): a hall of two "
        "machines on one replicated PostgreSQL, the other's database a synchronous standby of this one's (or the "
        "reverse). Needs --database and --public-url. Empty: this server alone.",
    )
    processes: int = Field(
        default=1,
        ge=1,
        le=16,
        description="OS processes serving the event, behind a front such as HAProxy (deploy/processes.md): process "
        "k listens on --port + k; process 0 answers every request, the others the verdict path only. Not with "
        "--peers.",
    )
    host: str = Field(default="127.0.0.1", description="Address to listen on (0.0.0.0 for every interface).")
    port: int = Field(default=8000, ge=1, le=65535, description="TCP port to listen on.")
    log_level: LogLevel = Field(default="info", description="How much the server logs.")
    log_format: LogFormat = Field(
        default="text",
        description="Log lines as text, or as JSON objects one a line (time, level, logger, message, fields).",
    )
    https: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="Serve HTTPS: auto, with the hall's certificate when the data folder holds one (tls/server.pem, "
        "made by wordjudge hall cert) or --certfile; on, the same but refuse to start without one; off, plain HTTP "
        "(a single-machine demo: whatever answers at the server's address gets its pages).",
    )
    certfile: Path | None = Field(
        default=None,
        description="TLS certificate (PEM) to serve HTTPS with, instead of the data folder's tls/server.pem; needs "
        "keyfile too.",
    )
    keyfile: Path | None = Field(default=None, description="The TLS certificate's private key (PEM).")
    public_url: str | None = Field(
        default=None,
        description="How devices reach this server, e.g. http://wordjudge.local:8000 (for pairing QR codes).",
    )
    mdns_name: str = Field(
        default="wordjudge",
        description="Announce the server on the LAN as NAME.local over mDNS (when not on 127.0.0.1); empty: off.",
    )
    max_connections_per_client: int = Field(
        default=64,
        ge=1,
        le=100_000,
        description="Connections one client address may hold open at once; more are closed at once "
        "(a browser opens up to 6 to one server).",
    )
    max_requests_per_client: int = Field(
        default=50,
        ge=0,
        le=1_000_000,
        description="Requests one client address (an IPv6 client by its /64) may begin a second, in bursts of ten "
        "seconds' worth; more get 429 and their connection is closed; 0: no limit. A console polls a few a "
        "second at most, a page loads in about 30.",
    )
    language: Language | None = Field(
        default=None,
        description="The language of the command line's verdict lines (en, fr; qps-ploc: a pseudo-language for "
        "testing); none: the event's (event.toml).",
    )
    trusted_proxies: str = Field(
        default="",
        description="Addresses or networks of reverse proxies in front of the server, comma-separated (e.g. "
        "127.0.0.1): their X-Forwarded-For names the client. Empty: no proxy, a client is the address it "
        "connects from.",
    )

    @property
    def location(self) -> StateLocation:
        """Where the event's state lives: the data folder's files, or the PostgreSQL database ``database`` names."""
        from wordjudge.storage.dialect import StateLocation  # here: psycopg loads only where a database is named

        return StateLocation(self.data_dir, self.database)

    @property
    def hall_database(self) -> str:
        """The database that keeps the hall's record (its epochs, the hall's event file): ``database``, which a
        server with peers has (:meth:`_hall`), as has one that read an epoch, since it read it there."""
        assert self.database is not None, "the hall's record is asked of a server whose state is in its folder"
        return self.database

    @field_validator("database")
    @classmethod
    def _database(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        from wordjudge.storage.postgres import check_url  # here: psycopg loads only where a database is named

        try:
            return check_url(value)
        except InvalidInput as exc:
            raise ValueError(exc.message) from None

    @field_validator("mdns_name")
    @classmethod
    def _mdns_name(cls, value: str) -> str:
        if not re.match(NAME_PATTERN, value):
            raise ValueError(
                f"{value!r} is not a name for the LAN: letters, digits and hyphens (not first or last), at most "
                "60, such as wordjudge or hall-b; empty turns the announcement off"
            )
        return value

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        from wordjudge.hall.peers import check_server_url

        return None if value is None else check_server_url(value)

    @field_validator("peers")
    @classmethod
    def _peers(cls, value: str) -> str:
        from wordjudge.hall.peers import parse_peers

        return ",".join(parse_peers(value))

    @model_validator(mode="after")
    def _hall(self) -> Settings:
        if self.peers and (self.database is None or not self.public_url):
            raise ValueError(
                "peers: a hall of servers needs --database (this machine's PostgreSQL) and --public-url (how "
                "devices reach this server): give both, or leave --peers out"
            )
        if self.peers and self.processes > 1:
            raise ValueError(
                "processes: a hall server (--peers) runs in one process: its standby watch and takeover are one "
                "process's; leave --processes out, or --peers"
            )
        if self.processes > 1 and not self.public_url:
            raise ValueError(
                "processes: devices reach an event served by several processes through its front: give "
                "--public-url (the front's address, e.g. http://192.168.1.10:8000)"
            )
        if self.processes > 1 and self.certfile is not None:
            raise ValueError(
                "processes: the processes listen behind their front, which serves plain HTTP in this release "
                "(deploy/processes.md): leave --certfile and --keyfile out (with the hall's certificate in the data "
                "folder's tls/, give --https off), or leave --processes out"
            )
        if self.certfile is not None and self.public_url and self.public_url.startswith("http://"):
            raise ValueError(
                f"public_url: this server serves HTTPS (its certificate {self.certfile}), so devices reach it at "
                f"https://, not {self.public_url}"
            )
        if self.port + self.processes - 1 > 65535:
            raise ValueError(f"processes: {self.processes} processes from port {self.port} go past port 65535")
        if self.public_url and self.public_url.rstrip("/") in self.peer_urls:
            raise ValueError(f"peers: {self.public_url} is this server (--public-url), not one of its peers")
        return self

    @model_validator(mode="before")
    @classmethod
    def _hall_certificate(cls, data: Any) -> Any:
        """With ``https`` auto or on and no certfile given, serve the data folder's own server certificate
        (``tls/server.pem`` and ``tls/server.key``) if it holds one; ``on`` without one, or ``off`` with a certfile,
        is refused. The certificate itself is checked when the server starts (:mod:`wordjudge.service.https`)."""
        if not isinstance(data, dict):
            return data
        mode = str(data.get("https") or "auto")
        given = data.get("certfile") is not None or data.get("keyfile") is not None
        if mode == "off":
            if given:
                raise ValueError(
                    "https: off serves plain HTTP, yet --certfile and --keyfile are given: leave them out (or --https)"
                )
            return data
        if given:
            return data
        from wordjudge.hall.certs import HallFiles  # here: cryptography loads only where settings are read

        files = HallFiles.of(Path(data.get("data_dir") or cls.model_fields["data_dir"].default))
        if files.serves:
            return {**data, "certfile": files.cert, "keyfile": files.key}
        if mode == "on":
            raise ValueError(
                f"https: on, but {files.folder} holds no server certificate: make the hall's certificate with "
                "wordjudge hall cert (or give --certfile and --keyfile)"
            )
        return data

    @model_validator(mode="after")
    def _tls_pair(self) -> Settings:
        if (self.certfile is None) != (self.keyfile is None):
            raise ValueError("certfile and keyfile go together: give both for HTTPS, or neither")
        for path in (self.certfile, self.keyfile):
            if path is not None and not path.is_file():
                raise ValueError(f"{path} is not a file")
        return self

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, value: str) -> str:
        for item in filter(None, (part.strip() for part in value.split(","))):
            try:
                ipaddress.ip_network(item)
            except ValueError:
                raise ValueError(
                    f"{item!r} is not an IP address or network (such as 127.0.0.1 or 10.0.0.0/24)"
                ) from None
        return value

    @property
    def tls(self) -> bool:
        return self.certfile is not None

    @property
    def peer_urls(self) -> tuple[str, ...]:
        """The peers (the event's other servers) one by one."""
        return tuple(filter(None, self.peers.split(",")))

    @property
    def proxy_networks(self) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
        """The trusted proxies as networks (an address is a network of one)."""
        return [ipaddress.ip_network(part.strip()) for part in self.trusted_proxies.split(",") if part.strip()]


def env_name(field: str) -> str:
    """The environment twin of a setting, e.g. ``WORDJUDGE_DATA_DIR``."""
    return ENV_PREFIX + field.upper()


def load_settings(**overrides: Any) -> Settings:
    """Build the settings from ``overrides`` (e.g. command-line flags), the environment and defaults.

    Overrides that are None (a flag not given) are left to the environment.
    Raises :class:`InvalidInput` naming each bad setting and its environment twin.
    """
    given = {key: value for key, value in overrides.items() if value is not None and value != ()}
    try:
        return Settings(**given)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            if error["loc"]:
                field = str(error["loc"][0])
                problems.append(f"{field} ({env_name(field)}): {str(error['msg']).removeprefix('Value error, ')}")
            else:
                problems.append(str(error["msg"]).removeprefix("Value error, "))
        raise InvalidInput("error.settings.invalid", problems="; ".join(problems), details=problems) from None
