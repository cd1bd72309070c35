"""Load beyond partition counts: per-topic spread, weighted load and the pause cost of a rebalance.

:mod:`assignors.metrics` re-exports everything here; import it from there.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from operator import itemgetter
from typing import TypeAlias

from assignors._core.errors import AssignorError
from assignors._core.model import Assignment, MemberId, RebalanceProtocol, Subscription, TopicPartition

__all__ = [
    "DEFAULT_HEARTBEAT_SECONDS",
    "DEFAULT_REBALANCE_SECONDS",
    "InvalidWeightError",
    "PauseProtocol",
    "WeightedLoad",
    "Weights",
    "pause_partition_seconds",
    "topic_spreads",
    "weighted_load",
]

Weights: TypeAlias = Mapping[tuple[str, int | None], float]
"""Weight per partition: ``(topic, partition)``, or ``(topic, None)`` for every partition of the topic."""

DEFAULT_REBALANCE_SECONDS = 5.0
"""How long one rebalance round stops a group by default (join plus sync)."""
DEFAULT_HEARTBEAT_SECONDS = 5.0
"""KIP-848's default ``group.consumer.heartbeat.interval.ms`` (5,000 ms), in seconds."""

_topic_of = itemgetter(0)


class InvalidWeightError(AssignorError, ValueError):
    """A weight, or a pause-cost duration, is not a finite number >= 0; the message names the key or field."""


def _partitions(value: Assignment | Iterable[TopicPartition]) -> Iterable[TopicPartition]:
    return value.partitions if isinstance(value, Assignment) else value


def topic_spreads(
    assignment: Mapping[MemberId, Assignment | Iterable[TopicPartition]],
    subscriptions: Mapping[MemberId, Subscription | Collection[str]] | None = None,
) -> dict[str, int]:
    """Per topic, ``max - min`` of its subscribers' counts of that topic's partitions.

    The subscribers of topic ``t`` are the members whose subscription lists ``t``
    (``subscriptions`` maps a member to a :class:`~assignors.Subscription` or its topic
    names); a subscriber holding nothing of ``t`` counts 0. Without ``subscriptions``
    every member of ``assignment`` counts as a subscriber of every topic assigned to
    anyone (right for identical subscriptions). Topics are every subscribed or assigned
    topic; the result is sorted by topic name.

    >>> from assignors import TopicPartition as TP
    >>> topic_spreads({"a": [TP("o", 0), TP("o", 1), TP("p", 0)], "b": [TP("p", 1)], "c": []})
    {'o': 2, 'p': 1}
    >>> topic_spreads({"a": [TP("o", 0), TP("o", 1)], "b": [TP("p", 0)]}, {"a": ["o"], "b": ["p"]})
    {'o': 0, 'p': 0}
    """
    counts = {member: Counter(map(_topic_of, _partitions(value))) for member, value in assignment.items()}
    subscribers: dict[str, set[MemberId]] = {}
    if subscriptions is None:
        everyone = set(counts)
        for per_member in counts.values():
            for topic in per_member:
                subscribers[topic] = everyone
    else:
        for member, subscription in subscriptions.items():
            names = subscription.topics if isinstance(subscription, Subscription) else subscription
            for topic in names:
                subscribers.setdefault(topic, set()).add(member)
        for member, per_member in counts.items():  # a holder that does not subscribe still holds what it holds
            for topic in per_member:
                subscribers.setdefault(topic, set()).add(member)
    spreads: dict[str, int] = {}
    for topic in sorted(subscribers):
        held = [counts[member][topic] if member in counts else 0 for member in subscribers[topic]]
        spreads[topic] = max(held) - min(held)
    return spreads


@dataclass(frozen=True, slots=True)
class WeightedLoad:
    """Load as the sum of the weights of each member's partitions.

    Attributes:
        members: number of members (empty ones included).
        total: sum of every member's load.
        max_load: the heaviest member's load (0.0 with no members).
        min_load: the lightest member's load.
        spread: ``max_load - min_load``.
        max_mean_ratio: ``max_load / (total / members)``: 1.0 is perfectly even, 2.0 means the
            heaviest member carries twice the average; 1.0 when ``total`` is 0 or there are no
            members (everyone carries the same nothing).
    """

    members: int
    total: float
    max_load: float
    min_load: float
    spread: float
    max_mean_ratio: float


def _check_weight(key: tuple[str, int | None], weight: float) -> float:
    value = float(weight)
    if not math.isfinite(value) or value < 0:
        topic, partition = key
        where = f"topic {topic!r}" + ("" if partition is None else f" partition {partition}")
        msg = f"weight of {where} is {weight!r}; a weight must be a finite number >= 0"
        raise InvalidWeightError(msg)
    return value


def weighted_load(
    assignment: Mapping[MemberId, Assignment | Iterable[TopicPartition]], weights: Weights, *, default: float = 0.0
) -> WeightedLoad:
    """Measure an assignment with a weight per partition (e.g. bytes/s from your metrics).

    Sums are exact (``math.fsum``), so the figures do not depend on the order of members or
    partitions. A partition ``t-p`` weighs ``weights[("t", p)]`` when present, else ``weights[("t", None)]``
    (the topic's weight, for each of its partitions), else ``default``. A member's load is the
    sum of its partitions' weights.

    Raises:
        InvalidWeightError: a weight (or ``default``) that is negative, NaN or infinite, naming
            its topic and partition.

    >>> from assignors import TopicPartition as TP
    >>> a = {"x": [TP("hot", 0), TP("cold", 0)], "y": [TP("cold", 1), TP("cold", 2)]}
    >>> weighted_load(a, {("hot", None): 10.0, ("cold", None): 1.0, ("cold", 2): 3.0})
    WeightedLoad(members=2, total=15.0, max_load=11.0, min_load=4.0, spread=7.0, max_mean_ratio=1.4666666666666666)
    """
    fallback = _check_weight(("(default)", None), default)
    for key, value in weights.items():
        _check_weight(key, value)
    loads: list[float] = []
    for partitions in assignment.values():
        parts: list[float] = []
        for tp in _partitions(partitions):
            weight = weights.get((tp[0], tp[1]))
            parts.append(weights.get((tp[0], None), fallback) if weight is None else weight)
        loads.append(math.fsum(parts))  # exact sums: independent of the order of members and partitions
    if not loads:
        return WeightedLoad(0, 0.0, 0.0, 0.0, 0.0, 1.0)
    total = math.fsum(loads)
    high, low = max(loads), min(loads)
    ratio = high * len(loads) / total if total > 0 else 1.0
    return WeightedLoad(len(loads), total, high, low, high - low, ratio)


class PauseProtocol(Enum):
    """How a group rebalances, for :func:`pause_partition_seconds`: the two classic protocols and KIP-848's."""

    EAGER = "EAGER"
    COOPERATIVE = "COOPERATIVE"
    CONSUMER = "CONSUMER"


def _pause_protocol(protocol: RebalanceProtocol | PauseProtocol | str) -> PauseProtocol:
    if isinstance(protocol, PauseProtocol):
        return protocol
    name = protocol.name if isinstance(protocol, RebalanceProtocol) else str(protocol).upper()
    try:
        return PauseProtocol[name]
    except KeyError:
        msg = f"protocol {protocol!r} is not one of EAGER, COOPERATIVE, CONSUMER"
        raise InvalidWeightError(msg) from None


def _check_seconds(field: str, value: float) -> float:
    seconds = float(value)
    if not math.isfinite(seconds) or seconds < 0:
        msg = f"{field} is {value!r}; it must be a finite number of seconds >= 0"
        raise InvalidWeightError(msg)
    return seconds


def pause_partition_seconds(
    protocol: RebalanceProtocol | PauseProtocol | str,
    *,
    moved: int,
    survivors_owned: int,
    rebalance_seconds: float = DEFAULT_REBALANCE_SECONDS,
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
) -> float:
    """Partition-seconds not consumed because of one rebalance, comparable across protocols.

    With ``R = rebalance_seconds`` (one join-and-sync round) and ``H = heartbeat_seconds``:

    - EAGER: every partition the surviving members owned before stops for the whole
      rebalance: ``survivors_owned * R`` (``survivors_owned`` is ``Movement.revoked(EAGER)``:
      moved + retained + released).
    - COOPERATIVE (KIP-429): only the partitions that change owner stop, for the two rounds
      a cooperative rebalance that moves anything takes: ``moved * 2 * R``.
    - CONSUMER (KIP-848): a moved partition waits about one heartbeat for its old owner to
      release it: ``moved * H``.

    Partitions whose owner left (orphaned) are not counted: they wait for the departure to
    be noticed under every protocol alike, so they do not tell strategies apart.

    Raises:
        InvalidWeightError: an unknown protocol, a negative count or a duration that is
            negative, NaN or infinite, naming the field.

    >>> pause_partition_seconds("EAGER", moved=3, survivors_owned=12)
    60.0
    >>> pause_partition_seconds("COOPERATIVE", moved=3, survivors_owned=12)
    30.0
    >>> pause_partition_seconds("CONSUMER", moved=3, survivors_owned=12, heartbeat_seconds=3)
    9.0
    """
    kind = _pause_protocol(protocol)
    rebalance = _check_seconds("rebalance_seconds", rebalance_seconds)
    heartbeat = _check_seconds("heartbeat_seconds", heartbeat_seconds)
    for field, count in (("moved", moved), ("survivors_owned", survivors_owned)):
        if count < 0:
            msg = f"{field} is {count}; a partition count must be >= 0"
            raise InvalidWeightError(msg)
    if kind is PauseProtocol.EAGER:
        return survivors_owned * rebalance
    if kind is PauseProtocol.COOPERATIVE:
        return moved * 2 * rebalance
    return moved * heartbeat
