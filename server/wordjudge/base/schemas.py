"""wordjudge's own JSON files (lexicon manifests, profile definitions) read strictly, by the schema of the
dataclass each one is: pydantic checks every field's JSON type, so a word count of ``"12"`` or ``true``,
or a list where a word list belongs, is refused by name instead of slipping through.
"""

from __future__ import annotations

import functools
import json
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

T = TypeVar("T")


@functools.cache
def _adapter(cls: type[Any]) -> TypeAdapter[Any]:
    return TypeAdapter(cls)


def strict_json(cls: type[T], data: dict[str, Any]) -> T:
    """``data`` (a parsed JSON object) as a ``cls``, each field of its exact JSON type; keys ``cls`` does not
    know are ignored. Raises :class:`ValueError` naming the first field at fault."""
    try:
        # JSON mode: arrays are read as the tuples the dataclasses hold, and nothing else is coerced.
        adapter = _adapter(cls)  # type: ignore[arg-type]  # a class is hashable; type[T] does not say so
        value: T = adapter.validate_json(json.dumps(data), strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"{'.'.join(str(part) for part in first['loc'])}: {first['msg']}") from None
    return value
