"""One validator for the JSON documents the ``assignors`` command reads.

Simulator scenarios (``assignors simulate``) and group snapshots (``assignors assign``) share it,
so every document error reads the same way: a :class:`~assignors.ScenarioError` whose message
starts with the JSON path of the offending value (``events[2].topics: expected an array, got
string``) and whose ``path`` attribute holds that path.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NoReturn

from assignors._core.errors import ScenarioError
from assignors._core.model import INT32_MAX, is_partition_count

if TYPE_CHECKING:
    from collections.abc import Collection

__all__ = [
    "as_list",
    "as_object",
    "check_fields",
    "fail",
    "json_type",
    "name",
    "names",
    "number",
    "optional_name",
    "partition_count",
]


def fail(path: str, problem: str) -> NoReturn:
    """Raise the document error for ``path``."""
    msg = f"{path}: {problem}"
    raise ScenarioError(msg, path=path)


_JSON_TYPES = ((bool, "boolean"), (int | float, "number"), (str, "string"), (list, "array"), (dict, "object"))


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type: object, array, string, number, boolean or null."""
    if value is None:
        return "null"
    return next((label for kind, label in _JSON_TYPES if isinstance(value, kind)), type(value).__name__)


def as_object(value: object, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        fail(path, f"expected an object, got {json_type(value)}")
    return value


def as_list(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        fail(path, f"expected an array, got {json_type(value)}")
    return value


def check_fields(value: dict[str, Any], path: str, *, allowed: Collection[str], required: Collection[str] = ()) -> None:
    """Every key of ``value`` is allowed and every required key is there."""
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        fail(path, f"unknown field(s) {unknown}; expected {sorted(allowed)}")
    for key in required:
        if key not in value:
            fail(path, f"missing field {key!r}")


def name(value: object, path: str) -> str:
    """A non-empty string: a member, topic or assignor name."""
    if not isinstance(value, str) or not value:
        fail(path, f"expected a non-empty string, got {value!r}")
    return value


def names(value: object, path: str) -> tuple[str, ...]:
    return tuple(name(item, f"{path}[{index}]") for index, item in enumerate(as_list(value, path)))


def optional_name(value: object, path: str) -> str | None:
    return None if value is None else name(value, path)


def number(value: object, path: str, *, minimum: float = 0.0) -> float:
    """A finite number >= ``minimum`` (booleans are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < minimum:
        fail(path, f"expected a number >= {minimum:g}, got {value!r}")
    return float(value)


def partition_count(value: object, path: str) -> int:
    """A partition count: an integer in Kafka's INT32 range."""
    if not is_partition_count(value):
        fail(path, f"expected a partition count (an integer in 0..{INT32_MAX}), got {value!r}")
    return value
