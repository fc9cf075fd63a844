"""The event file's TOML, written with tomlkit: a new file laid out as a TD writes one (settings, then a
``[[division]]`` table each), and the TD's own file edited in place, so that its comments and layout stay.

This module knows keys, values and tables, not what they mean: :mod:`wordjudge.tournament.event` says what
changed, and reads the result back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import tomlkit
from tomlkit.items import AoT, Table, Whitespace
from tomlkit.toml_document import TOMLDocument


def new_file(header: str, settings: dict[str, Any], key: str, tables: Sequence[dict[str, Any]]) -> str:
    """A new file: the comment ``header``, the ``settings``, then each of ``tables`` as a ``[[key]]`` table."""
    document = tomlkit.document()
    document.add(tomlkit.comment(header))
    for name, value in settings.items():
        document.add(name, value)
    document.add(tomlkit.nl())
    array = tomlkit.aot()
    for entry in tables:
        array.append(_table(entry))
    document.add(key, array)
    return tomlkit.dumps(document)


def _table(entry: dict[str, Any]) -> Table:
    table = tomlkit.table()
    for name, value in entry.items():
        table.add(name, value)
    return table


@dataclass(frozen=True)
class TableEdit:
    """One table of an array of tables as it is to be: the file's table at place ``kept`` with the keys ``changed``
    written (None: a new table), and the table ``whole`` (for a new one, and an array written inline)."""

    kept: int | None
    changed: Sequence[str]
    whole: dict[str, Any]


def edit_file(
    text: str, settings: dict[str, Any], order: Sequence[str], key: str, tables: Sequence[TableEdit] | None
) -> str:
    """The TOML ``text`` with only these changes: each of ``settings`` written where it is (a value None: removed),
    or added after the one before it in ``order`` (the first of ``order`` must be in the file); and unless
    ``tables`` is None, the array of tables ``key`` made of ``tables``. Comments and layout stay, the comment
    after a value rewritten too. Raises :class:`tomlkit.exceptions.TOMLKitError` (or another ``ValueError``)."""
    document = tomlkit.parse(text)
    for name, value in settings.items():
        if value is None:
            document.remove(name)
        elif name in document:
            document[name] = value  # tomlkit keeps the comment after the value
        else:
            # After the setting before it: tomlkit has no public way to insert a key, and Container.add would put
            # it after the tables, inside the last one.
            after = next(k for k in reversed(order[: order.index(name)]) if k in document)
            document._insert_after(after, name, value)
    if tables is not None:
        _edit_tables(document, key, tables)
    return tomlkit.dumps(document)


def _edit_tables(document: TOMLDocument, key: str, tables: Sequence[TableEdit]) -> None:
    """The array of tables ``key`` made of ``tables``: kept tables with their changed keys written, new ones added,
    the others gone."""
    current = document[key]
    if not isinstance(current, AoT):  # an inline array of tables (division = [{...}]): written anew, inline too
        array = tomlkit.array()
        for edit in tables:
            inline = tomlkit.inline_table()
            inline.update(edit.whole)
            array.append(inline)
        document[key] = array
        return
    old = list(current.body)
    edited = []
    for edit in tables:
        if edit.kept is None:
            edited.append(_table(edit.whole))
            continue
        table = old[edit.kept]
        for name in edit.changed:
            table[name] = edit.whole[name]  # tomlkit keeps the comment after the value
        edited.append(table)
    if [id(t) for t in edited] == [id(t) for t in old]:
        return
    # A table added, removed or moved: the array is laid again, each table on lines of its own, a blank line
    # before the next and none after the last (as new_file writes them); a table moved keeps its own lines, not
    # the blank ones of its old place.
    while len(current):
        del current[0]
    for number, table in enumerate(edited, start=1):
        last = number == len(edited)
        body = table.value.body
        while last and table.as_string().endswith("\n\n") and body and isinstance(body[-1][1], Whitespace):
            body.pop()
        for ending in ("\n", "" if last else "\n\n"):
            if ending and not table.as_string().endswith(ending):
                table.add(tomlkit.nl())
        current.append(table)


def kept_places(before: Sequence[str], after: Sequence[str]) -> list[int | None]:
    """For each name of ``after``, the place in ``before`` of the table it keeps (None: a new one): the one of the
    same name whatever its case, else the one at its place if no name keeps that one (a table renamed)."""
    places = {name.casefold(): index for index, name in enumerate(before)}
    by_name = [places.get(name.casefold()) for name in after]
    taken = {index for index in by_name if index is not None}
    kept: list[int | None] = []
    for index, was in enumerate(by_name):
        if was is None and index < len(before) and index not in taken:
            was = index
            taken.add(index)
        kept.append(was)
    return kept
