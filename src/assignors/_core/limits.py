"""The size ceiling of one group: how many partitions and members ``assign`` takes before refusing.

Every partition count up to Kafka's INT32 is legal, so one typo (``1000000000`` for ``1000``) would
otherwise make an assignor build a billion partitions for a minute and die with ``MemoryError``.
The ceiling is checked on the counts alone, before anything is allocated, and far above what a
Kafka cluster runs (a broker is advised to hold a few thousand partitions; a cluster, a few
hundred thousand), so the library's benchmarks (a million partitions, two thousand members) are
well inside it.

The ceiling in force, first found wins: :func:`set_size_limits` (this process), the environment
variables ``ASSIGNORS_MAX_PARTITIONS`` and ``ASSIGNORS_MAX_MEMBERS`` (read at each call, so a
Spark worker gets them through ``spark.executorEnv.*``), then :data:`DEFAULT_MAX_PARTITIONS` and
:data:`DEFAULT_MAX_MEMBERS`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from assignors._core.errors import ConfigurationError, GroupTooLargeError

__all__ = [
    "DEFAULT_MAX_MEMBERS",
    "DEFAULT_MAX_PARTITIONS",
    "MAX_MEMBERS_ENV",
    "MAX_PARTITIONS_ENV",
    "SizeLimits",
    "check_group_size",
    "set_size_limits",
    "size_limits",
]

DEFAULT_MAX_PARTITIONS = 10_000_000
"""Partitions of the subscribed topics of one group, summed: ten million by default."""
DEFAULT_MAX_MEMBERS = 1_000_000
"""Members of one group: a million by default."""
MAX_PARTITIONS_ENV = "ASSIGNORS_MAX_PARTITIONS"
MAX_MEMBERS_ENV = "ASSIGNORS_MAX_MEMBERS"


@dataclass(frozen=True, slots=True)
class SizeLimits:
    """The ceiling in force: at most ``max_partitions`` partitions and ``max_members`` members per group."""

    max_partitions: int
    max_members: int


_override: dict[str, int] = {}


def _positive(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        msg = f"{name} must be a positive integer, got {value!r}"
        raise ConfigurationError(msg)
    return value


def set_size_limits(*, max_partitions: int | None = None, max_members: int | None = None) -> SizeLimits:
    """Set this process's ceiling (None: back to the environment variable, else the default); returns it.

    Raises:
        ConfigurationError: a limit that is not a positive integer.
    """
    for key, value in (("max_partitions", max_partitions), ("max_members", max_members)):
        if value is None:
            _override.pop(key, None)
        else:
            _override[key] = _positive(value, key)
    return size_limits()


def _from_env(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    known = _parsed.get((name, raw))
    if known is not None:
        return known
    text = raw.strip().replace("_", "")
    if not text:
        return default
    if not text.isdigit() or int(text) <= 0:
        msg = f"environment variable {name}={raw!r}: expected a positive integer"
        raise ConfigurationError(msg)
    value = _parsed[name, raw] = int(text)
    return value


_parsed: dict[tuple[str, str], int] = {}
"""The environment's values parsed so far, by variable and text: every ``assign`` reads both variables."""


def size_limits() -> SizeLimits:
    """The ceiling in force (see the module's documentation for where it comes from).

    Raises:
        ConfigurationError: an environment variable that is set but not a positive integer.
    """
    return SizeLimits(
        _override.get("max_partitions") or _from_env(MAX_PARTITIONS_ENV, DEFAULT_MAX_PARTITIONS),
        _override.get("max_members") or _from_env(MAX_MEMBERS_ENV, DEFAULT_MAX_MEMBERS),
    )


def check_group_size(partitions: int, members: int) -> None:
    """Refuse a group above the ceiling, before anything is allocated for it.

    Raises:
        GroupTooLargeError: naming the figure, the ceiling and how to raise it.
    """
    max_partitions = _override.get("max_partitions") or _from_env(MAX_PARTITIONS_ENV, DEFAULT_MAX_PARTITIONS)
    max_members = _override.get("max_members") or _from_env(MAX_MEMBERS_ENV, DEFAULT_MAX_MEMBERS)
    if partitions <= max_partitions and members <= max_members:  # every assign: no more than two reads
        return
    for what, count, limit, env, keyword in (
        ("partitions", partitions, max_partitions, MAX_PARTITIONS_ENV, "max_partitions"),
        ("members", members, max_members, MAX_MEMBERS_ENV, "max_members"),
    ):
        if count > limit:
            msg = (
                f"the group has {count:,} {what}, more than the ceiling of {limit:,}; if that is not a typo, "
                f"raise it with the environment variable {env} or assignors.set_size_limits({keyword}=...)"
            )
            raise GroupTooLargeError(msg, what=what, count=count, limit=limit)
