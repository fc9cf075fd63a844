"""Command-line flags generated from the settings, so each flag has its environment twin."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, get_args

import click

from wordjudge.base.errors import LANGUAGES, WordjudgeError
from wordjudge.base.logs import LogFormat, LogLevel
from wordjudge.service.settings import Settings, env_name

F = TypeVar("F", bound=Callable[..., Any])

# How each setting appears on the command line: its flag and click's options for it.
SETTING_FLAGS: dict[str, tuple[str, dict[str, Any]]] = {
    "data_dir": ("--data-dir", {"type": click.Path(path_type=Path, file_okay=False)}),
    "database": ("--database", {"metavar": "postgresql://USER@HOST:PORT/DB"}),
    "processes": ("--processes", {"type": int}),
    "host": ("--host", {}),
    "port": ("--port", {"type": int}),
    "log_level": ("--log-level", {"type": click.Choice(get_args(LogLevel))}),
    "log_format": ("--log-format", {"type": click.Choice(get_args(LogFormat))}),
    "https": ("--https", {"type": click.Choice(["auto", "on", "off"])}),
    "certfile": ("--certfile", {"type": click.Path(path_type=Path, dir_okay=False)}),
    "keyfile": ("--keyfile", {"type": click.Path(path_type=Path, dir_okay=False)}),
    "public_url": ("--public-url", {}),
    "peers": ("--peers", {"metavar": "URL[,URL...]"}),
    "mdns_name": ("--mdns-name", {}),
    "max_connections_per_client": ("--max-connections-per-client", {"type": int}),
    "max_requests_per_client": ("--max-requests-per-client", {"type": int}),
    "trusted_proxies": ("--trusted-proxies", {}),
    "language": ("--language", {"type": click.Choice(LANGUAGES)}),
}


def setting_options(*fields: str) -> Callable[[F], F]:
    """Add the command-line flags of these settings to a command, each naming its environment twin."""

    def decorate(command: F) -> F:
        for field in reversed(fields):
            flag, extra = SETTING_FLAGS[field]
            info = Settings.model_fields[field]
            default = "none" if info.default_factory else info.default
            help_text = f"{info.description} [env: {env_name(field)}; default: {default}]"
            command = click.option(flag, field, default=None, help=help_text, **extra)(command)
        return command

    return decorate


@contextmanager
def told(url: str) -> Iterator[None]:
    """A command's refusals (:class:`WordjudgeError`) and the failures of the PostgreSQL database ``url`` as its
    error message, the database named without its password."""
    from wordjudge.storage.postgres import (  # not at import: psycopg only for commands that use it
        DatabaseError,
        describe,
        shown,
    )

    try:
        yield
    except WordjudgeError as exc:
        raise click.ClickException(exc.message) from None
    except DatabaseError as exc:
        raise click.ClickException(f"{shown(url)}: {describe(exc)}") from None
