"""What the report shows, as plain data (no Spark): the summary's types, member events, the text form."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from spark_udfs.ranking import DEFAULT_RANK_BY, StrategySummary

ACTUAL = "actual"
"""The strategy name of the cluster's recorded assignments (``spark_udfs.actual.ACTUAL_STRATEGY``)."""

if TYPE_CHECKING:
    from collections.abc import Sequence

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
    "headline",
    "member_events",
    "recommended",
    "render_text",
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
    "uniform": _CONSUMER_PROTOCOL_STEPS.format(setting="uniform (the broker's default)"),
    "consumer-range": _CONSUMER_PROTOCOL_STEPS.format(setting="range (this report's consumer-range)"),
}
"""What adopting each strategy takes, in the clients' and brokers' settings."""


def adoption(strategy: str) -> str | None:
    """What adopting ``strategy`` takes (None for ``actual`` or an unknown name)."""
    text = ADOPTION.get(strategy)
    return None if text is None else f"Adopting {strategy} takes {text}."


def recommended(summary: Summary) -> str | None:
    """The recommended strategy: the best ranked replayed one (never the cluster's own ``actual``)."""
    return next((s.strategy for s in summary.strategies if s.strategy != ACTUAL), None)


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


_FIGURES: dict[str, tuple[str, str]] = {
    "pause": ("pause", "{:,.0f} partition-seconds"),
    "imbalance": ("worst load", "{:.2f}x the mean"),
    "moved": ("partitions moved", "{:,.0f}"),
    "revoked": ("partitions revoked", "{:,.0f}"),
    "orphaned": ("partitions orphaned", "{:,.0f}"),
    "topic_spread": ("worst per-topic spread", "{:,.0f} partitions"),
    "load_spread": ("worst load spread", "{:,.0f} partitions"),
    "rounds": ("rebalance rounds", "{:,.0f}"),
    "invalid": ("invalid assignments", "{:,.0f}"),
    "assign_ms": ("time in the assignor", "{:,.0f} ms"),
}
"""How the headline words each figure of the score: (label, value format)."""


def _value(strategy: StrategySummary, key: str) -> str:
    return _FIGURES[key][1].format(float(getattr(strategy, key)))


def _figures(strategy: StrategySummary, keys: Sequence[str]) -> str:
    return ", ".join(f"{_FIGURES[key][0]} {_value(strategy, key)}" for key in keys)


def _why(best: StrategySummary, second: StrategySummary, keys: Sequence[str]) -> str:
    """The first figure of the score on which ``best`` beats ``second``, and those (later) where it is behind."""
    decisive = next((k for k in keys if float(getattr(best, k)) != float(getattr(second, k))), None)
    if decisive is None:
        return f"it ties with the runner-up {second.strategy} on every figure of the score and wins by name"
    ours, theirs = float(getattr(best, decisive)), float(getattr(second, decisive))
    factor = f", {theirs / ours:.1f}x less" if ours > 0 and theirs / ours >= 1.1 else ""  # noqa: PLR2004
    behind = [k for k in keys if float(getattr(best, k)) > float(getattr(second, k))]
    trade = (
        "; it is behind on "
        + " and ".join(f"{_FIGURES[k][0]} ({_value(best, k)} against {_value(second, k)})" for k in behind)
        if behind
        else ""
    )
    return (
        f"it has the lowest {_FIGURES[decisive][0]}: {_value(best, decisive)} against {_value(second, decisive)} "
        f"for the runner-up {second.strategy} ({second.protocol}){factor}{trade}"
    )


def headline(summary: Summary) -> str | None:
    """The report's answer in the figures of the score: which strategy, and why.

    With recorded assignments: "Your cluster did X; STRATEGY would have done Z" (the best
    ranked replayed strategy). Otherwise: the strategy that ranks first, and the figure of
    the score that puts it ahead of the runner-up. None when nothing was evaluated.
    """
    keys = summary.rank_by
    replayed = [s for s in summary.strategies if s.strategy != ACTUAL]
    recorded = next((s for s in summary.strategies if s.strategy == ACTUAL), None)
    if not replayed:
        return None
    best = replayed[0]
    if recorded is not None:
        return (
            f"Your cluster did {_figures(recorded, keys)} ({recorded.protocol}); "
            f"{best.strategy} ({best.protocol}) would have done {_figures(best, keys)}."
        )
    text = f"Recommended: {best.strategy} ({best.protocol})."
    if len(replayed) > 1:
        second = replayed[1]
        text += f" Ranked by {', then '.join(keys)}, {_why(best, second, keys)}."
        if any(float(getattr(best, k)) != float(getattr(second, k)) for k in keys):
            return text  # it names the figures that decide and those where it is behind; the rest are equal
    return f"{text} Its figures: {_figures(best, keys)}."


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 or value == int(value) else f"{value:,.2f}"  # noqa: PLR2004


def render_text(summary: Summary) -> str:
    """A short plain-text summary for the terminal: the ranking and the figures of its score."""
    answer = headline(summary)
    best = recommended(summary)
    adopt = adoption(best) if best is not None else None
    lines = [
        *([answer, ""] if answer else []),
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
    if adopt:
        lines += ["", adopt]
    if summary.worst_balanced:
        counts = ", ".join(
            f"{name} {count}" for name, count in sorted(summary.worst_balanced.items(), key=lambda i: (-i[1], i[0]))
        )
        lines += [
            "",
            (
                f"worst balanced: of {summary.balance_group_count} groups where the strategies' balance differs, "
                f"the strategy that leaves each worst balanced: {counts}"
            ),
        ]
    if summary.error_groups:
        shown = summary.error_groups[:SHOWN_ERROR_GROUPS]
        more = len(summary.error_groups) - len(shown)
        lines += ["", f"groups with input errors ({len(summary.error_groups)}; first error of each):"]
        lines += [f"  {'(null group_id)' if group is None else group}: {error}" for group, error in shown]
        if more:
            lines.append(f"  ... and {more} more (every group's error is in the report and the evaluation)")
    if summary.self_check:
        matched = sum(g.matched for g in summary.self_check)
        checked = sum(g.checked for g in summary.self_check)
        lines += ["", f"self-check: {matched} of {checked} recorded range/roundrobin snapshots reproduced"]
        lines += [
            f"  {g.group_id}: {g.matched}/{g.checked} ({g.rate:.0%})"
            for g in summary.self_check
            if g.matched < g.checked
        ]
    return "\n".join(lines)
