"""Where a partition's weight comes from: the user's weights, the members' reports, or the default.

Per partition, the first that has one: the weights given to the assignor (a mapping by
``TopicPartition``, or ``(topic, None)`` for each partition of a topic; or a callable, which may
return None to pass), the load its member reported in its subscription (the report of the highest
generation; a tie goes to the larger load), else the default: the mean known weight of its topic,
else the mean of every known weight, else 1.0. A partition nobody has measured yet is so assumed
to be an average one of its topic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from assignors._core.load import InvalidWeightError
from assignors._core.model import TopicPartition

if TYPE_CHECKING:
    from collections.abc import Iterable

    from assignors._core.model import Topic

__all__ = ["DEFAULT_WEIGHT", "PartitionWeights", "check_weight", "checked_mapping", "merge_reports", "resolve_weights"]

PartitionWeights: TypeAlias = (
    Mapping[TopicPartition, float] | Mapping[tuple[str, int | None], float] | Callable[[TopicPartition], float | None]
)
"""A weight per partition: a mapping (``(topic, None)`` covers a whole topic) or a callable (None: no weight)."""

DEFAULT_WEIGHT = 1.0
"""The weight of every partition when nothing is known about any (all equal: the sticky assignment)."""


def check_weight(where: object, value: object) -> float:
    """``value`` as a float, or InvalidWeightError naming ``where`` (a partition, a topic, a field)."""
    try:
        number = float(value)  # type: ignore[arg-type] # checked: a TypeError is the error below
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or number < 0:
        name = str(where) if isinstance(where, (TopicPartition, str)) else repr(where)
        msg = f"weight of partition {name} is {value!r}; a weight must be a finite number >= 0"
        raise InvalidWeightError(msg)
    return number


def checked_mapping(weights: Mapping[Any, Any]) -> dict[tuple[str, int | None], float]:
    """A user's weight mapping, checked once: keys ``TopicPartition``/``(topic, partition)``/``(topic, None)``."""
    checked: dict[tuple[str, int | None], float] = {}
    for key, value in weights.items():
        if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) and key[0]):  # noqa: PLR2004
            msg = f"weights key {key!r} must be a TopicPartition, (topic, partition) or (topic, None)"
            raise InvalidWeightError(msg)
        topic, number = key
        if number is not None and (not isinstance(number, int) or isinstance(number, bool) or number < 0):
            msg = f"weights key {key!r}: the partition must be an int >= 0 or None (the whole topic)"
            raise InvalidWeightError(msg)
        where = f"{topic}-{number}" if number is not None else f"{topic} (every partition)"
        checked[topic, number] = check_weight(where, value)
    return checked


def resolve_weights(
    partitions_per_topic: Mapping[Topic, int],
    given: dict[tuple[str, int | None], float] | Callable[[TopicPartition], float | None] | None,
    reported: Mapping[TopicPartition, float],
) -> list[float]:
    """One weight per partition, topic by topic in ``partitions_per_topic``'s order (module docstring).

    Raises:
        InvalidWeightError: the callable returned something that is not a finite number >= 0, naming
            the partition.
    """
    known: list[float | None] = []
    per_topic: list[tuple[int, int]] = []  # where each topic's entries start, and how many are known
    for topic, count in partitions_per_topic.items():
        start = len(known)
        values = _given(topic, count, given)
        if reported:
            get = reported.get
            values = [get((topic, p)) if value is None else value for p, value in enumerate(values)]  # type: ignore[call-overload] # a TopicPartition is a (topic, partition) tuple
        known += values
        per_topic.append((start, count))
    if None not in known:
        return known  # type: ignore[return-value] # no None left
    values_known = [value for value in known if value is not None]
    overall = math.fsum(values_known) / len(values_known) if values_known else DEFAULT_WEIGHT
    for start, count in per_topic:
        chunk = known[start : start + count]
        if None in chunk:
            present = [value for value in chunk if value is not None]
            fill = math.fsum(present) / len(present) if present else overall
            known[start : start + count] = [fill if value is None else value for value in chunk]
    return known  # type: ignore[return-value] # every None filled


def _given(
    topic: Topic,
    count: int,
    given: dict[tuple[str, int | None], float] | Callable[[TopicPartition], float | None] | None,
) -> list[float | None]:
    if given is None:
        return [None] * count
    if isinstance(given, dict):
        whole = given.get((topic, None))
        get = given.get
        return [get((topic, p), whole) for p in range(count)]
    values: list[float | None] = []
    for number in range(count):
        tp = TopicPartition(topic, number)
        value = given(tp)
        values.append(None if value is None else check_weight(tp, value))
    return values


def merge_reports(
    reports: Iterable[tuple[int, Iterable[tuple[TopicPartition, float | None]]]],
) -> dict[TopicPartition, float]:
    """The members' reports, ``(generation, loads)`` each: per partition the highest generation's measured load
    (a tie goes to the larger load, whatever the order of the reports)."""
    best: dict[TopicPartition, tuple[int, float]] = {}
    for generation, loads in reports:
        for tp, load in loads:
            if load is None:
                continue
            current = best.get(tp)
            if current is None or (generation, load) > current:
                best[tp] = (generation, load)
    return {tp: load for tp, (_, load) in best.items()}
