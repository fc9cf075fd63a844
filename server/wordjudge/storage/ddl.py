"""Tables and indexes described once, written as each backend's DDL by its :class:`~.dialect.Dialect`.

A :class:`Table` or an :class:`Index` says what the stores need (columns, their kinds, keys, constraints); the
dialect says how its backend spells it (a row's id, a generated column, a comparison in any case, a table
without a rowid). Only what really differs is written per dialect, side by side in the description: an
expression that reads a column from a record's body, a constraint one backend alone has.

The text rendered is the text shipped migrations created (a SQLite file keeps it, and the chain check compares
it, whitespace folded): ``tests/test_dialect.py`` pins it. Never change what a shipped description renders:
add a migration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar

# The backends wordjudge keeps its state in, each spelt by its :class:`~.dialect.Dialect`.
Backend = Literal["sqlite", "postgresql"]

# A column's kind: TEXT and INTEGER, the same on both; ROW_ID, a row's id or a reference to one (BIGINT in
# PostgreSQL); NEW_ROW_ID, a row's id the database numbers (an identity column in PostgreSQL).
Kind = Literal["TEXT", "INTEGER", "ROW_ID", "NEW_ROW_ID"]
T = TypeVar("T")


class DdlWords(Protocol):
    """How a backend writes DDL: what a description asks of its dialect's words (:class:`~.dialect.SqlText`)."""

    def column_type(self, kind: Kind) -> str: ...
    def generated(self, expression: str) -> str: ...
    def table_options(self, *, without_rowid: bool) -> str: ...
    def nocase(self, column: str) -> str: ...


class DdlDialect(Protocol):
    """What a description is written for: a backend's name and its words (:class:`~.dialect.Dialect` is one).
    Described here, not imported, so that the descriptions sit below the dialects that render them."""

    @property
    def name(self) -> Backend: ...
    @property
    def text(self) -> DdlWords: ...
    def part(self, described: Mapping[Backend, T], default: T) -> T: ...


@dataclass(frozen=True)
class Column:
    """A column: ``name``, ``kind``, ``rest`` (its constraints, the same on both), and ``reads`` (per backend,
    the expression of the record's body it is read from: a generated column in SQLite, one a trigger fills in
    PostgreSQL)."""

    name: str
    kind: Kind
    rest: str = ""
    reads: Mapping[Backend, str] = field(default_factory=dict)

    def sql(self, dialect: DdlDialect) -> str:
        rest = f" {self.rest}" if self.rest else ""
        reads = dialect.text.generated(dialect.part(self.reads, "")) if self.reads else ""
        return f"{self.name} {dialect.text.column_type(self.kind)}{rest}{reads}"


@dataclass(frozen=True)
class Table:
    """A table: its ``columns``, then its table constraints (``constraints``, and those of one backend alone,
    ``only``). ``without_rowid``: SQLite stores it by its primary key (PostgreSQL has no rowid to drop).
    ``one_line``: written on one line (as a shipped migration wrote it: SQLite keeps the text)."""

    name: str
    columns: tuple[Column, ...]
    constraints: tuple[str, ...] = ()
    only: Mapping[Backend, tuple[str, ...]] = field(default_factory=dict)
    without_rowid: bool = False
    one_line: bool = False

    def create(self, dialect: DdlDialect) -> str:
        parts = [column.sql(dialect) for column in self.columns]
        parts += [*self.constraints, *dialect.part(self.only, ())]
        options = dialect.text.table_options(without_rowid=self.without_rowid)
        if self.one_line:
            return f"CREATE TABLE {self.name} ({', '.join(parts)}){options}"
        inner = ",\n    ".join(parts)
        return f"CREATE TABLE {self.name} (\n    {inner}\n){options}"


@dataclass(frozen=True)
class Index:
    """An index of ``table`` on ``columns`` (SQL, each the same on both, but those ``nocase`` compares in any
    case), ``unique`` or not, partial if ``where``."""

    name: str
    table: str
    columns: tuple[str, ...]
    unique: bool = False
    where: str = ""
    nocase: tuple[str, ...] = ()

    def create(self, dialect: DdlDialect) -> str:
        columns = ", ".join(dialect.text.nocase(c) if c in self.nocase else c for c in self.columns)
        where = f" WHERE {self.where}" if self.where else ""
        return f"CREATE {'UNIQUE ' if self.unique else ''}INDEX {self.name} ON {self.table} ({columns}){where}"
