"""What the report shows, as plain data (no Spark): the summary's types, member events, the text form."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assignors.tables import ACTUAL_STRATEGY
from spark_udfs.report.ranking import DEFAULT_RANK_BY, StrategySummary

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spark_udfs.replay.timing import TimingParameter

__all__ = [
    "ADOPTION",
    "DISTRIBUTIONS",
    "MAX_POINTS",
    "PERCENTS",
    "SHOWN_ERROR_GROUPS",
    "DrillDown",
    "GroupBalance",
    "GroupFigures",
    "Quantiles",
    "SelfCheckGroup",
    "Summary",
    "TimePoint",
    "adoption",
    "member_events",
    "recommended",
]

SHOWN_ERROR_GROUPS = 10
"""The terminal summary names at most this many groups with input errors."""
MAX_POINTS = 400
"""The timeline has at most this many points per strategy: snapshots are bucketed in time beyond it."""
PERCENTS = tuple(p / 100 for p in range(101))
DISTRIBUTIONS: dict[str, tuple[str, str]] = {
    "moved": ("per rebalance", "partitions moved between live members"),
    "revoked": ("per rebalance", "partitions revoked from live members"),
    "pause_partition_seconds": ("per rebalance", "partition-seconds not consumed"),
    "load_spread": ("per snapshot", "max - min partitions per member"),
    "topic_spread": ("per snapshot", "worst topic's max - min partitions per subscriber"),
    "imbalance": ("per snapshot", "max/mean load ratio"),
}
"""Measures whose distribution the report shows: (over what, unit)."""


@dataclass(frozen=True, slots=True)
class Quantiles:
    """A measure's distribution for one strategy: ``cdf[i]`` is the value at or below which ``i`` % fall.

    Quantiles come from Spark's ``percentile_approx`` (exact up to 10,000 values per strategy).
    """

    count: int
    cdf: tuple[float, ...]

    @property
    def p50(self) -> float:
        return self.cdf[50]

    @property
    def p95(self) -> float:
        return self.cdf[95]

    @property
    def max(self) -> float:
        return self.cdf[100]


@dataclass(frozen=True, slots=True)
class TimePoint:
    """All groups of one strategy at one time bucket."""

    ts: dt.datetime
    moved: int
    revoked: int
    pause: float
    load_spread: float  # mean over the snapshots
    topic_spread: int  # worst
    imbalance: float  # mean


@dataclass(frozen=True, slots=True)
class GroupFigures:
    """One group under one strategy: its totals and worst figures."""

    group_id: str
    strategy: str
    rebalances: int
    pause: float
    worst_pause: float
    worst_moved: int
    worst_revoked: int
    worst_load_spread: int
    worst_topic_spread: int
    worst_imbalance: float


@dataclass(frozen=True, slots=True)
class GroupBalance:
    """One group's balance across the strategies: the one that leaves it worst balanced, and the best.

    ``worst_imbalance`` and ``best_imbalance`` are the group's worst max/mean load ratio (over its
    snapshots) under ``worst_strategy`` and ``best_strategy``; ties go to the strategy name.
    """

    group_id: str
    worst_strategy: str
    worst_imbalance: float
    best_strategy: str
    best_imbalance: float


@dataclass(frozen=True, slots=True)
class DrillDown:
    """One group with a high pause cost: who came and went, and what each strategy did.

    ``members`` maps a member identity (``group_instance_id``, else ``member_id``) to its
    ``(ts, event)`` list, events being ``present``, ``join``, ``leave`` or ``restart`` (a
    static member back with a new member id); ``rebalances`` maps a strategy to its
    ``(ts, moved, revoked, pause)`` per rebalance.
    """

    group_id: str
    pause: float
    members: dict[str, list[tuple[dt.datetime, str]]]
    rebalances: dict[str, list[tuple[dt.datetime, int, int, float]]]
    strategy: str = ""
    """The strategy ``pause`` is measured under (the recommended one, or the cluster's own ``actual``)."""


@dataclass(frozen=True, slots=True)
class SelfCheckGroup:
    """One group's self-check: recorded range/roundrobin snapshots our assignor reproduced.

    ``mismatches`` holds ``(snapshot_ts, generation, assignor, what differs)``, at most a
    few per group (``shown_mismatches`` of ``checked - matched`` snapshots).
    """

    group_id: str
    matched: int
    checked: int
    mismatches: list[tuple[dt.datetime | None, int | None, str | None, str]] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.matched / self.checked if self.checked else 1.0


@dataclass(frozen=True)
class Summary:
    """What the report shows, collected from the evaluation output (small)."""

    groups: int
    snapshots: int
    error_groups: list[tuple[str | None, str]]
    strategies: list[StrategySummary]  # ranked by rank_by
    rank_by: tuple[str, ...] = DEFAULT_RANK_BY
    timeline: dict[str, list[TimePoint]] = field(default_factory=dict)
    distributions: dict[str, dict[str, Quantiles]] = field(default_factory=dict)  # strategy -> measure -> ...
    group_table: list[GroupFigures] = field(default_factory=list)
    group_count: int = 0  # groups x strategies in the table before the limit
    drilldown: list[DrillDown] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. the pause model's durations
    self_check: list[SelfCheckGroup] = field(default_factory=list)  # with recorded assignments only
    balance_by_group: list[GroupBalance] = field(default_factory=list)  # where the choice matters most first
    balance_group_count: int = 0  # groups whose worst imbalance differs between strategies
    worst_balanced: dict[str, int] = field(default_factory=dict)  # strategy -> groups it leaves worst balanced
    weights_given: bool | None = None  # None: unknown (a summary built by hand)
    parameters: list[TimingParameter] = field(default_factory=list)  # the pause model's, and the Kafka version
    timing_notes: list[str] = field(default_factory=list)  # what --actual's records allowed to derive
    caveats: list[str] = field(default_factory=list)  # what the ranking rests on, shown under the headline

    @property
    def weighted(self) -> bool:
        return any(s.weighted for s in self.strategies)


_CONSUMER_PROTOCOL_STEPS = (
    "the consumer rebalance protocol (KIP-848): brokers on Apache Kafka 4.0 or later (where it is enabled by "
    "default; group.coordinator.rebalance.protocols must include consumer), consumers on clients that implement "
    "KIP-848 (the Java client 4.0 or later), and on every consumer group.protocol=consumer and "
    "group.remote.assignor={setting} (partition.assignment.strategy, session.timeout.ms and "
    "heartbeat.interval.ms no longer apply: the broker's group.consumer.* settings do). A classic group with "
    "members converts online as its consumers are restarted with the new settings; an empty group converts "
    "at once"
)
ADOPTION: dict[str, str] = {
    "range": (
        "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor on every consumer "
        "(classic protocol, EAGER: every rebalance stops the whole group); from another eager assignor, one "
        "rolling restart"
    ),
    "roundrobin": (
        "partition.assignment.strategy=org.apache.kafka.clients.consumer.RoundRobinAssignor on every consumer "
        "(classic protocol, EAGER: every rebalance stops the whole group); from another eager assignor, one "
        "rolling restart"
    ),
    "sticky": (
        "partition.assignment.strategy=org.apache.kafka.clients.consumer.StickyAssignor on every consumer "
        "(classic protocol, EAGER: every rebalance stops the whole group); from another eager assignor, one "
        "rolling restart"
    ),
    "cooperative-sticky": (
        "partition.assignment.strategy=org.apache.kafka.clients.consumer.CooperativeStickyAssignor on every "
        "consumer (classic protocol, COOPERATIVE, KIP-429; clients 2.4 or later). From an eager assignor it "
        "takes two rolling restarts: first list both, the cooperative one first (e.g. "
        "CooperativeStickyAssignor,RangeAssignor: the group stays EAGER while any member lists an eager "
        "assignor), then, once every consumer runs that list, remove the eager assignor"
    ),
    "weighted-sticky": (
        "every consumer of the group on a Python client, kafka-python 3 (pip install 'assignors[kafka-python]') or "
        "aiokafka (assignors[aiokafka]), with this library's adapter as its assignor: "
        "partition_assignment_strategy=[adapter] for adapter = assignors.kafka_python.for_kafka_python("
        '"weighted-sticky") or assignors.aiokafka.for_aiokafka("weighted-sticky"), then adapter.bind(consumer, '
        "window_s=30) so that each member measures the load of its partitions and reports it when it joins (classic "
        "protocol, COOPERATIVE). A group with Java or librdkafka members (confluent-kafka, the Java client, Kafka "
        "Streams) cannot use it: the group's assignor must be one every member offers, and they do not have it. "
        "Changing a running group's assignor takes two rolling restarts, as for any assignor: first every consumer "
        "lists the adapter and then its current assignor (the group keeps the current one while any member lacks "
        "the adapter), then, once every consumer runs that list, only the adapter"
    ),
    "uniform": _CONSUMER_PROTOCOL_STEPS.format(setting="uniform (the broker's default)"),
    "consumer-range": _CONSUMER_PROTOCOL_STEPS.format(setting="range (this report's consumer-range)"),
}
ADOPTION["java-sticky"] = ADOPTION["sticky"] + " (Java consumers then run exactly these rows: Kafka's own class)"
ADOPTION["java-cooperative-sticky"] = (
    ADOPTION["cooperative-sticky"] + " (Java consumers then run exactly these rows: Kafka's own class)"
)
"""What adopting each strategy takes, in the clients' and brokers' settings."""


def adoption(strategy: str) -> str | None:
    """What adopting ``strategy`` takes (None for ``actual`` or an unknown name)."""
    text = ADOPTION.get(strategy)
    return None if text is None else f"Adopting {strategy} takes {text}."


def recommended(summary: Summary) -> str | None:
    """The recommended strategy: the best ranked replayed one (never the cluster's own ``actual``)."""
    return next((s.strategy for s in summary.strategies if s.strategy != ACTUAL_STRATEGY), None)


def member_events(
    rows: Sequence[tuple[str | None, dt.datetime | None, str | None, str | None]],
) -> dict[str, dict[str, list[tuple[dt.datetime, str]]]]:
    """Per group and member identity, what happened at each snapshot: join, present, restart; then leave.

    ``rows`` are ``(group_id, snapshot_ts, member_id, group_instance_id)``. A member present
    at a group's first snapshot "joins" there; an identity missing from a snapshot after
    being present "leaves" at that snapshot; a static member whose member id changed
    "restarts".
    """
    by_group: dict[str, dict[dt.datetime, dict[str, str]]] = {}
    for group, ts, member_id, instance in rows:
        if group is None or ts is None or member_id is None:
            continue
        by_group.setdefault(group, {}).setdefault(ts, {})[instance or member_id] = member_id
    result: dict[str, dict[str, list[tuple[dt.datetime, str]]]] = {}
    for group, snapshots in by_group.items():
        events: dict[str, list[tuple[dt.datetime, str]]] = {}
        previous: dict[str, str] = {}
        for ts in sorted(snapshots):
            current = snapshots[ts]
            for identity in sorted(current):
                if identity not in previous:
                    kind = "join"
                elif previous[identity] != current[identity]:
                    kind = "restart"
                else:
                    kind = "present"
                events.setdefault(identity, []).append((ts, kind))
            for identity in sorted(set(previous) - set(current)):
                events[identity].append((ts, "leave"))
            previous = current
        result[group] = events
    return result
