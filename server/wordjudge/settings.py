"""The one settings object of wordjudge.

Every setting is read, in order of precedence, from a command-line flag, from its
environment twin ``WORDJUDGE_<NAME>`` (e.g. ``WORDJUDGE_DATA_DIR``), or from its
default. The command-line flags are generated from the fields below, so a flag
and its environment variable can never drift apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .errors import InvalidInput
from .lexicon import check_name

ENV_PREFIX = "WORDJUDGE_"


class Settings(BaseSettings):
    """wordjudge's settings; see each field's description."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", frozen=True)

    data_dir: Path = Field(
        default=Path("wordjudge-data"),
        description="Folder for compiled lexicons, profiles and the audit log (created if missing).",
    )
    host: str = Field(default="127.0.0.1", description="Address to listen on (0.0.0.0 for every interface).")
    port: int = Field(default=8000, ge=1, le=65535, description="TCP port to listen on.")
    lexicons: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Lexicons or profiles to serve, by name (comma-separated in the environment). "
        "None given: the built-in DEMO list.",
    )
    log_level: Literal["critical", "error", "warning", "info", "debug"] = Field(
        default="info", description="How much the server logs."
    )

    @field_validator("lexicons", mode="before")
    @classmethod
    def _split_names(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [name.strip() for name in value.split(",") if name.strip()]
        return value

    @field_validator("lexicons")
    @classmethod
    def _check_names(cls, value: list[str]) -> list[str]:
        for name in value:
            try:
                check_name(name)
            except InvalidInput as exc:
                raise ValueError(exc.message) from None
        return list(dict.fromkeys(value))  # served once each, in the order given


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
            field = str(error["loc"][0]) if error["loc"] else "?"
            problems.append(f"{field} ({env_name(field)}): {error['msg']}")
        raise InvalidInput("invalid settings: " + "; ".join(problems), details=problems) from None
