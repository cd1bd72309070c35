"""Partition weights over time, as the replay reads them for the weighted columns and for ``weighted-sticky``."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from assignors import WeightedStickyAssignor
from assignors.metrics import InvalidWeightError
from spark_udfs.replay.values import is_missing

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Mapping

__all__ = ["WeightHistory"]


class WeightHistory:
    """Partition weights over time (e.g. bytes/s), as :func:`assignors.metrics.weighted_load` reads them.

    Rows are ``(topic, partition, weight, valid_from)``; a null ``partition`` weighs every
    partition of the topic, and a partition's own row wins over its topic's. A snapshot at
    ``ts`` uses, per ``(topic, partition)``, the latest row with ``valid_from <= ts`` (a
    null ``valid_from`` holds from the beginning of time), as the topics table does.

    Raises:
        InvalidWeightError: a null topic, a negative partition, or a weight that is null,
            negative, NaN or infinite, naming the row.
    """

    def __init__(self, rows: Iterable[tuple[str | None, int | None, float | None, dt.datetime | None]]) -> None:
        by_key: dict[tuple[str, int | None], list[tuple[int, Any, float]]] = {}
        for number, (topic, partition, weight, valid_from) in enumerate(rows, start=1):
            where = f"weights row {number} (topic {topic!r}, partition {partition!r})"
            if is_missing(topic) or not topic:
                msg = f"{where}: topic is null or empty"
                raise InvalidWeightError(msg)
            part = None if partition is None or is_missing(partition) else int(partition)
            if part is not None and part < 0:
                msg = f"{where}: partition must be >= 0 or null (every partition)"
                raise InvalidWeightError(msg)
            value = math.nan if weight is None else float(weight)
            if not math.isfinite(value) or value < 0:
                msg = f"{where}: weight is {weight!r}; a weight must be a finite number >= 0"
                raise InvalidWeightError(msg)
            when = None if valid_from is None or is_missing(valid_from) else valid_from
            entry = (0, 0, value) if when is None else (1, when, value)
            by_key.setdefault((str(topic), part), []).append(entry)
        self._by_topic: dict[str, list[tuple[int | None, list[tuple[int, Any]], list[float]]]] = {}
        for (topic, part), entries in sorted(by_key.items(), key=lambda item: (item[0][0], item[0][1] is not None)):
            entries.sort(key=lambda e: (e[0], e[1]))
            times = [(kind, when) for kind, when, _ in entries]
            self._by_topic.setdefault(topic, []).append((part, times, [w for _, _, w in entries]))

    def at(self, ts: dt.datetime, topics: Iterable[str]) -> dict[tuple[str, int | None], float]:
        """The weights of ``topics`` in force at ``ts``, keyed as ``weighted_load`` reads them."""
        result: dict[tuple[str, int | None], float] = {}
        for topic in topics:
            for part, times, values in self._by_topic.get(topic, ()):
                index = bisect_right(times, (1, ts))
                if index:
                    result[topic, part] = values[index - 1]
        return result

    def assignor_at(self, ts: dt.datetime, counts: Mapping[str, int]) -> WeightedStickyAssignor:
        """``weighted-sticky`` weighing each partition of ``counts``' topics as the weighted columns do at ``ts``.

        The table stands for what the members would report at that snapshot. A partition with no
        row (its own or its topic's) weighs 0, as in :func:`assignors.metrics.weighted_load`, not the
        assignor's own default (the mean of its topic's known weights): the assignor balances the very
        loads the evaluation measures.
        """
        weights = self.at(ts, counts)
        for topic in counts:
            weights.setdefault((topic, None), 0.0)
        return WeightedStickyAssignor(weights)
