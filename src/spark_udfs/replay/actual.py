"""What the cluster actually did, measured like a strategy, and whether our replay reproduces it (pure Python).

Input, per group: its ``membership`` rows and its ``actual`` rows (what ``assignors collect``
writes: the assignment each member received at each recorded snapshot, and the assignor the
cluster used), plus the topics history. Output:

- :func:`actual_rows`: rows of the evaluation output (``spark_udfs.replay.OUTPUT_COLUMNS``)
  for the strategy ``actual``, with the same metrics as the replayed strategies: load
  balance, moved/orphaned/revoked against the previous recorded snapshot, validity.
- :func:`self_check`: for snapshots whose recorded assignor is ``range`` or ``roundrobin``
  (stateless, so the snapshot alone determines the result), the assignment our assignor
  computes for the same membership and counts, compared member by member with the recorded
  one. A mismatch means the membership, the partition counts or the assignor differ from
  what the tables say (for example rack-aware Range with partition racks we do not have).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assignors import (
    RANGE_ASSIGNOR_NAME,
    ROUNDROBIN_ASSIGNOR_NAME,
    AssignorError,
    Cluster,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
    assignor_names,
    get_assignor,
)
from assignors import parse_topic_partition as parse_tp
from assignors.consumer_group import STRATEGIES as SERVER_STRATEGIES
from assignors.metrics import balance, check_assignment, movement, pause_partition_seconds, weighted_load
from assignors.rebalance import preferred_protocol
from assignors.tables import ACTUAL_STRATEGY, OUTPUT_COLUMNS
from spark_udfs.replay.group_input import MemberRow, TopicHistory
from spark_udfs.replay.timing import DEFAULT_TIMING, PauseTiming
from spark_udfs.replay.weights import WeightHistory

__all__ = [
    "ActualRow",
    "actual_rows",
    "match_rates",
    "self_check",
]

_CHECKED = (RANGE_ASSIGNOR_NAME, ROUNDROBIN_ASSIGNOR_NAME)  # deterministic: the cluster's must equal ours
_COOPERATIVE = frozenset(
    n for n in assignor_names() if preferred_protocol(get_assignor(n)) is RebalanceProtocol.COOPERATIVE
)
_CONSUMER = frozenset(SERVER_STRATEGIES)  # KIP-848 server-side assignors, as collect names them

Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ActualRow:
    """One row of the ``actual`` table."""

    snapshot_ts: dt.datetime
    generation: int | None
    protocol: str | None
    member_id: str
    group_instance_id: str | None
    assigned: tuple[str, ...]


@dataclass(slots=True)
class _Recorded:
    ts: dt.datetime
    generation: int | None
    assignor: str | None
    assignment: dict[str, tuple[TopicPartition, ...]]  # identity -> partitions
    member_ids: dict[str, str]  # identity -> member id


def _identity(member_id: str, instance: str | None) -> str:
    return instance or member_id


def _recorded(actual: Sequence[ActualRow]) -> list[_Recorded]:
    by_ts: dict[dt.datetime, _Recorded] = {}
    for row in actual:
        snapshot = by_ts.setdefault(row.snapshot_ts, _Recorded(row.snapshot_ts, row.generation, row.protocol, {}, {}))
        identity = _identity(row.member_id, row.group_instance_id)
        snapshot.assignment[identity] = tuple(sorted(parse_tp(text) for text in row.assigned))
        snapshot.member_ids[identity] = row.member_id
    return [by_ts[ts] for ts in sorted(by_ts)]


def _subscriptions(members: Sequence[MemberRow]) -> dict[dt.datetime, dict[str, Subscription]]:
    result: dict[dt.datetime, dict[str, Subscription]] = {}
    for row in members:
        if row.snapshot_ts is None or row.member_id is None:
            continue
        result.setdefault(row.snapshot_ts, {})[row.member_id] = Subscription(
            row.topics or (), group_instance_id=row.group_instance_id, rack_id=row.rack_id
        )
    return result


def _counts(subscriptions: Mapping[str, Subscription], history: TopicHistory, ts: dt.datetime) -> dict[str, int]:
    counts: dict[str, int] = {}
    for subscription in subscriptions.values():
        for topic in subscription.topics:
            known, count = history.count_at(topic, ts)
            if known and count is not None:
                counts[topic] = count
    return counts


def _protocol(assignor: str | None) -> str:
    if assignor in _CONSUMER:
        return "CONSUMER"
    return (RebalanceProtocol.COOPERATIVE if assignor in _COOPERATIVE else RebalanceProtocol.EAGER).name


def actual_rows(  # noqa: PLR0913 - the evaluation's options
    group_id: str,
    members: Sequence[MemberRow],
    actual: Sequence[ActualRow],
    history: TopicHistory,
    *,
    weights: WeightHistory | None = None,
    timing: PauseTiming = DEFAULT_TIMING,
) -> list[Row]:
    """The ``actual`` strategy's evaluation rows of one group, one per recorded snapshot.

    ``weights`` and ``timing`` are the replay's: the weighted columns (null without weights)
    and ``pause_partition_seconds`` are computed exactly as for a replayed strategy.
    """
    subscriptions = _subscriptions(members)
    empty = dict.fromkeys(name for name, _ in OUTPUT_COLUMNS)
    rows: list[Row] = []
    previous: _Recorded | None = None
    for snapshot in _recorded(actual):
        protocol = _protocol(snapshot.assignor)
        subs = subscriptions.get(snapshot.ts, {})
        counts = _counts(subs, history, snapshot.ts)
        loads = balance(snapshot.assignment)
        row: Row = {
            **empty,
            "group_id": group_id,
            "snapshot_ts": snapshot.ts,
            "strategy": ACTUAL_STRATEGY,
            "protocol": protocol,
            "generation": snapshot.generation,
            "rebalanced": previous is None or previous.generation != snapshot.generation,
            "members": loads.members,
            "partitions": sum(counts.values()),
            "assigned": loads.partitions,
            "min_load": loads.min_load,
            "max_load": loads.max_load,
            "load_spread": loads.spread,
            "load_stddev": loads.stddev,
            "moved": 0,
            "orphaned": 0,
            "revoked": 0,
            "rounds": 1,
            "valid": _valid(snapshot, subs, counts),
            "error": None,
            "topic_spread": loads.topic_spread,
            "topic_spread_sum": loads.topic_spread_sum,
            "pause_partition_seconds": 0.0,
            **_weighted(snapshot.assignment, weights, snapshot.ts, counts),
        }
        if previous is not None:
            moves = movement(previous.assignment, snapshot.assignment, members_after=snapshot.assignment.keys())
            revoked_under = RebalanceProtocol.EAGER if protocol == "EAGER" else RebalanceProtocol.COOPERATIVE
            row.update(moved=moves.moved, orphaned=moves.orphaned, revoked=moves.revoked(revoked_under))
            row["rounds"] = 2 if protocol != "EAGER" and moves.moved else 1
            survivors = moves.revoked(RebalanceProtocol.EAGER)
            row["pause_partition_seconds"] = pause_partition_seconds(
                protocol,
                moved=moves.moved,
                survivors_owned=survivors,
                rebalance_seconds=timing.rebalance_seconds,
                heartbeat_seconds=timing.heartbeat_seconds,
            )
            if not row["rebalanced"]:
                row.update(moved=0, orphaned=0, revoked=0, rounds=0, pause_partition_seconds=0.0)
        rows.append(row)
        previous = snapshot
    return rows


def _weighted(
    assignment: Mapping[str, Sequence[TopicPartition]],
    weights: WeightHistory | None,
    ts: dt.datetime,
    counts: Mapping[str, int],
) -> Row:
    """The weighted load columns, as the replay computes them (null without weights)."""
    if weights is None:
        return {}
    load = weighted_load(assignment, weights.at(ts, counts))
    return {
        "weighted_max_load": load.max_load,
        "weighted_min_load": load.min_load,
        "weighted_spread": load.spread,
        "weighted_max_mean_ratio": load.max_mean_ratio,
    }


def _valid(snapshot: _Recorded, subscriptions: Mapping[str, Subscription], counts: dict[str, int]) -> bool | None:
    """Whether the recorded assignment is valid for the membership and counts (None without membership)."""
    if not subscriptions:
        return None
    by_member = {snapshot.member_ids.get(i, i): partitions for i, partitions in snapshot.assignment.items()}
    try:
        return not check_assignment(Cluster(counts), subscriptions, by_member)
    except AssignorError:
        return False


def self_check(
    group_id: str, members: Sequence[MemberRow], actual: Sequence[ActualRow], history: TopicHistory
) -> list[Row]:
    """For each snapshot recorded with ``range`` or ``roundrobin``: does our assignor give the same assignment?"""
    subscriptions = _subscriptions(members)
    rows: list[Row] = []
    for snapshot in _recorded(actual):
        if snapshot.assignor not in _CHECKED:
            continue
        subs = subscriptions.get(snapshot.ts, {})
        recorded = {snapshot.member_ids.get(i, i): parts for i, parts in snapshot.assignment.items()}
        mismatches: list[str] = []
        try:
            replayed = get_assignor(snapshot.assignor).assign(Cluster(_counts(subs, history, snapshot.ts)), subs)
        except AssignorError as error:
            mismatches.append(f"replay failed: {error}")
            replayed = {}
        for member in sorted(set(recorded) | set(replayed) if not mismatches else ()):
            ours = tuple(sorted(replayed[member].partitions)) if member in replayed else ()
            theirs = recorded.get(member, ())
            if ours != theirs:
                mismatches.append(
                    f"{member}: recorded [{', '.join(map(str, theirs))}], replayed [{', '.join(map(str, ours))}]"
                )
        rows.append(
            {
                "group_id": group_id,
                "snapshot_ts": snapshot.ts,
                "assignor": snapshot.assignor,
                "generation": snapshot.generation,
                "matched": not mismatches,
                "mismatches": mismatches,
            }
        )
    return rows


def match_rates(rows: Sequence[Row]) -> dict[str, tuple[int, int]]:
    """Per group: (snapshots reproduced, snapshots checked), from :func:`self_check` rows."""
    rates: dict[str, tuple[int, int]] = {}
    for row in rows:
        matched, checked = rates.get(row["group_id"], (0, 0))
        rates[row["group_id"]] = (matched + bool(row["matched"]), checked + 1)
    return dict(sorted(rates.items()))
