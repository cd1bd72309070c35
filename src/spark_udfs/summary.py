"""What the report shows, as plain data (no Spark): the summary's types, member events, the text form."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from spark_udfs.ranking import DEFAULT_RANK_BY, StrategySummary

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "DISTRIBUTIONS",
    "MAX_POINTS",
    "PERCENTS",
    "DrillDown",
    "GroupFigures",
    "Quantiles",
    "Summary",
    "TimePoint",
    "member_events",
    "render_text",
]

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

    @property
    def weighted(self) -> bool:
        return any(s.weighted for s in self.strategies)


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


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 or value == int(value) else f"{value:,.2f}"  # noqa: PLR2004


def render_text(summary: Summary) -> str:
    """A short plain-text summary for the terminal: the ranking and the figures of its score."""
    lines = [
        f"{summary.groups} groups, {summary.snapshots} snapshots, {len(summary.error_groups)} groups with input errors",
        f"ranked by {', then '.join(summary.rank_by)} (lower is better)",
        "",
        (
            f"{'rank':<5}{'strategy':<20}{'pause p-s':>14}{'imbalance':>11}{'moved':>9}{'revoked':>9}"
            f"{'topic spread':>13}{'invalid':>8}"
        ),
    ]
    for position, s in enumerate(summary.strategies, 1):
        lines.append(
            f"{position:<5}{s.strategy:<20}{_number(s.pause):>14}{s.imbalance:>11.2f}{s.moved:>9}{s.revoked:>9}"
            f"{s.topic_spread:>13}{s.invalid:>8}"
        )
    return "\n".join(lines)
