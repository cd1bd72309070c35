"""Replay one consumer group's membership history under each strategy (pure Python; no JVM).

(Over 450 lines: the snapshots' checks and the replay that relies on them read best together.)

The Spark job calls :func:`spark_udfs.frames.replay_frame` once per group
(``groupBy("group_id").applyInPandas``), which calls :func:`replay_group`; tests and the
plain-Python benchmark call :func:`replay_group` directly. Both give the rows of the evaluation
output (``spark_udfs.schemas.OUTPUT_COLUMNS``; docs/evaluation.md defines each column).

A group's rows are its snapshots: all membership rows with one ``snapshot_ts``. Snapshots
are replayed in time order. Each strategy carries its own last assignment and generation
from one snapshot to the next and rebalances under its own protocol (its preferred one:
EAGER for range, roundrobin and sticky; COOPERATIVE for cooperative-sticky) through
:func:`assignors.rebalance.rebalance`, the engine the simulator uses too. KIP-848's server
assignors ``uniform`` and ``consumer-range`` (protocol CONSUMER) step by one target computation
from the previous target, :func:`assignors.consumer_group.rebalance_target`. A member's identity
is its ``group_instance_id`` when set, else its ``member_id``; a snapshot with the same
identities, subscriptions, racks and partition counts as the one before does not rebalance.
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assignors import (
    Assignment,
    AssignorError,
    Cluster,
    ConsumerPartitionAssignor,
    RebalanceProtocol,
    Subscription,
    assignor_names,
    get_assignor,
)
from assignors.consumer_group import (
    CONSUMER_PROTOCOL,
    ServerAssignor,
    TargetRebalance,
    rebalance_target,
    server_assignor,
)
from assignors.consumer_group import STRATEGIES as SERVER_STRATEGIES
from assignors.metrics import (
    balance,
    check_assignment,
    movement,
    pause_partition_seconds,
    weighted_load,
)
from assignors.rebalance import RebalanceResult, preferred_protocol, rebalance
from spark_udfs.costs import DEFAULT_TIMING, PauseTiming, WeightHistory, is_missing
from spark_udfs.schemas import OUTPUT_COLUMNS

if TYPE_CHECKING:
    import datetime as dt

    from assignors import TopicPartition

logger = logging.getLogger(__name__)

__all__ = [
    "ALL_STRATEGIES",
    "STRATEGIES",
    "GroupDataError",
    "MemberRow",
    "Row",
    "TopicHistory",
    "replay_group",
    "strategy_assignor",
]

STRATEGIES: tuple[str, ...] = assignor_names()
"""The classic strategies: the default of :func:`replay_group` and ``evaluate_history``."""
ALL_STRATEGIES: tuple[str, ...] = (*STRATEGIES, *SERVER_STRATEGIES)
"""The classic four, then KIP-848's server assignors ``uniform`` and ``consumer-range`` (protocol CONSUMER)."""


def strategy_assignor(name: str) -> ConsumerPartitionAssignor:
    """A fresh assignor for any strategy of :data:`ALL_STRATEGIES`.

    Raises:
        UnknownAssignorError: not a strategy name.
    """
    return server_assignor(name) if name in SERVER_STRATEGIES else get_assignor(name)


_WEIGHTED = ("weighted_max_load", "weighted_min_load", "weighted_spread", "weighted_max_mean_ratio")

Row = dict[str, Any]


class GroupDataError(AssignorError, ValueError):
    """A group's input cannot be replayed; the message says what and where."""


@dataclass(frozen=True, slots=True)
class MemberRow:
    """One membership row of a group."""

    snapshot_ts: dt.datetime | None
    member_id: str | None
    topics: tuple[str, ...] | None
    group_instance_id: str | None = None
    rack_id: str | None = None


class TopicHistory:
    """Partition counts over time: a snapshot at ``ts`` uses, per topic, the latest row with ``valid_from <= ts``.

    A row without ``valid_from`` holds from the beginning of time.
    """

    def __init__(
        self,
        rows: Iterable[tuple[str | None, int | None, dt.datetime | None]],
        *,
        invalid: Mapping[str, str] | None = None,
    ) -> None:
        # A topic whose row holds a value that is not valid (a typo in a CSV): the message naming it is every
        # subscribing group's error, whatever the time (spark_udfs.validation).
        self.invalid: dict[str, str] = dict(invalid or {})
        by_topic: dict[str, dict[tuple[int, Any], set[int | None]]] = {}
        for topic, partitions, valid_from in rows:
            if topic is None:
                continue
            # (0, -) sorts before any (1, time): rows without valid_from come first.
            when = (0, 0) if valid_from is None else (1, valid_from)
            by_topic.setdefault(topic, {}).setdefault(when, set()).add(partitions)
        self._times: dict[str, list[tuple[int, Any]]] = {}
        self._counts: dict[str, list[int | None]] = {}
        # Rows with one topic and valid_from but different counts: which one holds would depend on
        # Spark's row order, so a snapshot they apply to is an input error (see clash_at).
        self._clashes: dict[str, dict[int, list[int | None]]] = {}
        for topic, entries in by_topic.items():
            times = sorted(entries)
            self._times[topic] = times
            self._counts[topic] = [min(entries[t], key=_count_order) for t in times]
            clashes = {i: sorted(entries[t], key=_count_order) for i, t in enumerate(times) if len(entries[t]) > 1}
            if clashes:
                self._clashes[topic] = clashes

    def clash_at(self, topic: str, ts: dt.datetime) -> list[int | None] | None:
        """The different counts of the rows that apply to ``topic`` at ``ts``, when there are several, else None."""
        clashes = self._clashes.get(topic)
        if clashes is None:
            return None
        return clashes.get(bisect_right(self._times[topic], (1, ts)) - 1)

    def count_at(self, topic: str, ts: dt.datetime) -> tuple[bool, int | None]:
        """``(known, count)`` of ``topic`` at ``ts``; ``known`` is False when no row applies yet."""
        times = self._times.get(topic)
        if times is None:
            return False, None
        index = bisect_right(times, (1, ts))
        if index == 0:
            return False, None
        return True, self._counts[topic][index - 1]


def _count_order(count: int | None) -> tuple[bool, int]:
    return (count is None, count or 0)


@dataclass(slots=True)
class _Snapshot:
    ts: dt.datetime
    members: dict[str, tuple[str, Subscription]]  # identity -> (member_id, subscription)
    counts: dict[str, int]
    key: tuple[Any, ...]
    # Built once by the first strategy that rebalances here (the same for every strategy):
    identities: dict[str, str] | None = None  # member_id -> identity
    subscriptions: dict[str, Subscription] | None = None  # member_id -> subscription
    by_identity: dict[str, Subscription] | None = None  # identity -> subscription

    def members_by_id(self) -> tuple[dict[str, str], dict[str, Subscription], dict[str, Subscription]]:
        """``(member_id -> identity, member_id -> subscription, identity -> subscription)``, built once."""
        if self.identities is None or self.subscriptions is None or self.by_identity is None:
            self.identities = {member_id: identity for identity, (member_id, _) in self.members.items()}
            self.subscriptions = dict(self.members.values())
            self.by_identity = {identity: s for identity, (_, s) in self.members.items()}
        return self.identities, self.subscriptions, self.by_identity


def _snapshots(rows: Sequence[MemberRow], history: TopicHistory) -> list[_Snapshot]:
    """Group rows into snapshots in time order, checking everything the replay relies on.

    Raises:
        GroupDataError: naming the snapshot, member or topic at fault.
    """
    by_ts: dict[Any, list[MemberRow]] = {}
    for index, row in enumerate(rows):
        if is_missing(row.snapshot_ts):
            msg = f"row {index}: snapshot_ts is null (member_id={row.member_id!r})"
            raise GroupDataError(msg)
        by_ts.setdefault(row.snapshot_ts, []).append(row)
    snapshots: list[_Snapshot] = []
    last_counts: dict[str, int] = {}
    for ts in sorted(by_ts):
        members: dict[str, tuple[str, Subscription]] = {}
        seen_ids: set[str] = set()
        counts: dict[str, int] = {}
        for row in by_ts[ts]:
            identity, member_id, subscription = _member(row, ts, members, seen_ids)
            seen_ids.add(member_id)
            for topic in subscription.topics:
                if topic not in counts:
                    counts[topic] = _count(history, topic, ts, member_id, last_counts)
            members[identity] = (member_id, subscription)
        last_counts.update(counts)
        key = (
            tuple(sorted((i, s.topics, s.rack_id) for i, (_, s) in members.items())),
            tuple(sorted(counts.items())),
        )
        snapshots.append(_Snapshot(ts, members, counts, key))
    return snapshots


def _member(
    row: MemberRow, ts: Any, members: Mapping[str, object], seen_ids: set[str]
) -> tuple[str, str, Subscription]:
    """A member row's identity, member id and subscription, checked."""
    member_id = row.member_id
    if is_missing(member_id) or not isinstance(member_id, str) or not member_id:
        msg = f"snapshot {ts}: a member row has a null or empty member_id"
        raise GroupDataError(msg)
    instance = None if is_missing(row.group_instance_id) else row.group_instance_id
    if instance == "":
        msg = f"snapshot {ts}: member {member_id!r} has an empty group_instance_id"
        raise GroupDataError(msg)
    identity = instance if instance is not None else member_id
    if member_id in seen_ids:
        msg = f"snapshot {ts}: member {member_id!r} appears twice"
        raise GroupDataError(msg)
    if identity in members:
        msg = f"snapshot {ts}: group_instance_id {identity!r} is used by two members"
        raise GroupDataError(msg)
    topics = () if row.topics is None else tuple(row.topics)
    for topic in topics:
        if is_missing(topic) or not isinstance(topic, str) or not topic:
            msg = f"snapshot {ts}: member {member_id!r} subscribes to a null or empty topic name"
            raise GroupDataError(msg)
    rack = None if is_missing(row.rack_id) or row.rack_id == "" else row.rack_id
    return identity, member_id, Subscription(topics, group_instance_id=instance, rack_id=rack)


def _count(history: TopicHistory, topic: str, ts: Any, member_id: str, last: Mapping[str, int]) -> int:
    invalid = history.invalid.get(topic)
    if invalid is not None:
        msg = f"member {member_id!r} subscribes to topic {topic!r}, whose row is not valid: {invalid}"
        raise GroupDataError(msg)
    known, count = history.count_at(topic, ts)
    if not known:
        msg = f"snapshot {ts}: member {member_id!r} subscribes to topic {topic!r}, which has no partition count then"
        raise GroupDataError(msg)
    if count is None or is_missing(count):
        msg = f"snapshot {ts}: topic {topic!r} has a null partition count"
        raise GroupDataError(msg)
    clash = history.clash_at(topic, ts)
    if clash is not None:
        counts = ", ".join("null" if c is None else str(c) for c in clash)
        msg = f"snapshot {ts}: topic {topic!r} has rows with one valid_from and different partition counts ({counts})"
        raise GroupDataError(msg)
    count = int(count)
    if count <= 0:
        msg = f"snapshot {ts}: topic {topic!r} has {count} partitions; a count must be positive"
        raise GroupDataError(msg)
    previous = last.get(topic)
    if previous is not None and count < previous:
        msg = f"snapshot {ts}: topic {topic!r} shrinks from {previous} to {count} partitions"
        raise GroupDataError(msg)
    return count


@dataclass(slots=True)
class _StrategyState:
    name: str
    protocol: RebalanceProtocol  # CONSUMER counts revoked as COOPERATIVE does
    label: str  # the output's protocol: EAGER, COOPERATIVE or CONSUMER
    generation: int = -1
    assignment: dict[str, tuple[TopicPartition, ...]] | None = None  # identity -> partitions
    received: dict[str, Assignment] | None = None  # identity -> the Assignment those partitions came in
    row: Row | None = None


def replay_group(  # noqa: PLR0913 - the replay's options
    group_id: str | None,
    rows: Sequence[MemberRow],
    history: TopicHistory,
    strategies: Sequence[str] = STRATEGIES,
    *,
    detail: bool = False,
    weights: WeightHistory | None = None,
    timing: PauseTiming = DEFAULT_TIMING,
    input_error: str | None = None,
) -> tuple[list[Row], list[Row]]:
    """Replay one group; returns its output rows and (with ``detail``) its per-member rows.

    Without ``weights`` the weighted columns are null. Bad input never raises: the group's
    rows carry ``error`` (one row per snapshot and strategy, metrics empty) and no detail.
    ``input_error`` is a fault found in the group's rows before (a value that did not parse):
    the group is not replayed and its rows carry it.
    """
    if input_error is not None:
        return _error_rows(group_id, rows, strategies, input_error), []
    try:
        group = _check_group_id(group_id)
        snapshots = _snapshots(rows, history)
        output: list[Row] = []
        members_out: list[Row] = []
        for name in strategies:
            rows_out, detail_out = _replay_strategy(group, snapshots, name, _Options(detail, weights, timing))
            output.extend(rows_out)
            members_out.extend(detail_out)
    except (GroupDataError, AssignorError) as error:
        return _error_rows(group_id, rows, strategies, str(error)), []
    except Exception as error:  # one group must never kill the job (logged with its traceback)
        logger.warning("group %r: internal error while replaying; its rows carry the error", group_id, exc_info=True)
        return _error_rows(group_id, rows, strategies, f"internal error: {type(error).__name__}: {error}"), []
    return output, members_out


def _check_group_id(group_id: str | None) -> str:
    if group_id is None or is_missing(group_id) or group_id == "":
        msg = "group_id is null or empty"
        raise GroupDataError(msg)
    return group_id


@dataclass(frozen=True, slots=True)
class _Options:
    detail: bool
    weights: WeightHistory | None
    timing: PauseTiming


def _weighted(snapshot: _Snapshot, assignment: Mapping[str, Sequence[TopicPartition]], options: _Options) -> Row:
    """The weighted columns of ``assignment`` at ``snapshot`` (null without weights)."""
    if options.weights is None:
        return dict.fromkeys(_WEIGHTED)
    load = weighted_load(assignment, options.weights.at(snapshot.ts, snapshot.counts))
    return {
        "weighted_max_load": load.max_load,
        "weighted_min_load": load.min_load,
        "weighted_spread": load.spread,
        "weighted_max_mean_ratio": load.max_mean_ratio,
    }


def _replay_strategy(
    group_id: str, snapshots: Sequence[_Snapshot], name: str, options: _Options
) -> tuple[list[Row], list[Row]]:
    detail = options.detail
    assignor = strategy_assignor(name)
    if isinstance(assignor, ServerAssignor):
        state = _StrategyState(name, RebalanceProtocol.COOPERATIVE, CONSUMER_PROTOCOL)
    else:
        state = _StrategyState(name, preferred_protocol(assignor), preferred_protocol(assignor).name)
    output: list[Row] = []
    members_out: list[Row] = []
    previous_key: tuple[Any, ...] | None = None
    cluster: Cluster | None = None
    for snapshot in snapshots:
        if snapshot.key == previous_key and state.row is not None and state.assignment is not None:
            carried = {**state.row, "snapshot_ts": snapshot.ts, "rebalanced": False}
            carried.update(moved=0, orphaned=0, revoked=0, rounds=0, assign_ms=0.0, pause_partition_seconds=0.0)
            if options.weights is not None:  # weights change over time even when the group does not
                carried.update(_weighted(snapshot, state.assignment, options))
            output.append(carried)
        else:
            if cluster is None or cluster.partitions_per_topic != snapshot.counts:
                cluster = Cluster(snapshot.counts)
            output.append(_rebalance_row(group_id, snapshot, state, assignor, cluster, options))
        previous_key = snapshot.key
        if detail and state.assignment is not None:
            members_out.extend(
                {
                    "group_id": group_id,
                    "snapshot_ts": snapshot.ts,
                    "strategy": name,
                    "member": snapshot.members[identity][0],
                    "partitions": [str(tp) for tp in state.assignment[identity]],
                }
                for identity in sorted(snapshot.members)
            )
    return output, members_out


def _rebalance_row(  # noqa: PLR0913, PLR0917 - one rebalance's inputs
    group_id: str, snapshot: _Snapshot, state: _StrategyState, assignor: Any, cluster: Cluster, options: _Options
) -> Row:
    identities, subscriptions, by_identity = snapshot.members_by_id()
    before = state.assignment or {}
    result: TargetRebalance | RebalanceResult
    if isinstance(assignor, ServerAssignor):
        owned = {member_id: before.get(identity, ()) for member_id, identity in identities.items()}
        result = rebalance_target(assignor, cluster, subscriptions, owned, generation=state.generation)
        rounds = result.heartbeats
    else:
        # the Assignments the members received last time: rebalance() need not check them again
        received = state.received or {}
        held = {member_id: received.get(identity, ()) for member_id, identity in identities.items()}
        generation, protocol = state.generation, state.protocol
        result = rebalance(assignor, cluster, subscriptions, held, generation=generation, protocol=protocol)
        rounds = len(result.rounds)
    final = result.assignment
    after = {identity: final[member_id].partitions for member_id, identity in identities.items()}
    moves = movement(before, after, members_after=after.keys())
    loads = balance(after, by_identity)
    valid = not check_assignment(cluster, subscriptions, final)
    first = state.assignment is None
    state.received = {identity: final[member_id] for member_id, identity in identities.items()}
    state.assignment = after
    state.generation = result.generation
    row: Row = {
        "group_id": group_id,
        "snapshot_ts": snapshot.ts,
        "strategy": state.name,
        "protocol": state.label,
        "generation": result.generation,
        "rebalanced": True,
        "members": loads.members,
        "partitions": sum(snapshot.counts.values()),
        "assigned": loads.partitions,
        "min_load": loads.min_load,
        "max_load": loads.max_load,
        "load_spread": loads.spread,
        "load_stddev": loads.stddev,
        "moved": 0 if first else moves.moved,
        "orphaned": 0 if first else moves.orphaned,
        "revoked": 0 if first else moves.revoked(state.protocol),
        "rounds": rounds,
        "valid": valid,
        "error": None,
        "assign_ms": result.assign_seconds * 1000.0,
        "topic_spread": loads.topic_spread,
        "topic_spread_sum": loads.topic_spread_sum,
        **_weighted(snapshot, after, options),
        "pause_partition_seconds": 0.0
        if first
        else pause_partition_seconds(
            state.label,
            moved=moves.moved,
            survivors_owned=moves.revoked(RebalanceProtocol.EAGER),
            rebalance_seconds=options.timing.rebalance_seconds,
            heartbeat_seconds=options.timing.heartbeat_seconds,
        ),
    }
    state.row = row
    return row


def _error_rows(group_id: str | None, rows: Sequence[MemberRow], strategies: Sequence[str], message: str) -> list[Row]:
    """One row per snapshot and strategy, metrics empty, ``error`` set: no input snapshot is lost."""
    stamps: list[Any] = []
    seen: set[Any] = set()
    has_null = False
    for row in rows:
        if is_missing(row.snapshot_ts):
            has_null = True
        elif row.snapshot_ts not in seen:
            seen.add(row.snapshot_ts)
            stamps.append(row.snapshot_ts)
    ordered: list[Any] = sorted(stamps) + ([None] if has_null or not stamps else [])
    empty = dict.fromkeys(name for name, _ in OUTPUT_COLUMNS)
    return [
        {
            **empty,
            "group_id": None if group_id is None or is_missing(group_id) else group_id,
            "snapshot_ts": ts,
            "strategy": name,
            "error": message,
        }
        for name in strategies
        for ts in ordered
    ]
