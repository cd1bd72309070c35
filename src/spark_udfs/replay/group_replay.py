"""Replay one consumer group's membership history under each strategy (pure Python; a JVM only for Kafka's own Java
assignors, :data:`JAVA_STRATEGIES`).

The Spark job calls :func:`spark_udfs.replay.frames.replay_frame` once per group
(``groupBy("group_id").applyInPandas``), which calls :func:`replay_group`; tests and the
plain-Python benchmark call :func:`replay_group` directly. Both give the rows of the evaluation
output (``spark_udfs.tables.schemas.OUTPUT_COLUMNS``; docs/evaluation.md defines each column).

A group's rows are its snapshots: all membership rows with one ``snapshot_ts``
(:mod:`spark_udfs.replay.group_input` groups and checks them). Snapshots are replayed in time
order. Each strategy carries its own last assignment and generation from one snapshot to
the next and rebalances under its own protocol (its preferred one: EAGER for range,
roundrobin and sticky; COOPERATIVE for cooperative-sticky) through
:func:`assignors.rebalance.rebalance`, the engine the simulator uses too. KIP-848's server
assignors ``uniform`` and ``consumer-range`` (protocol CONSUMER) step by one target computation
from the previous target, :func:`assignors.consumer_group.rebalance_target`. A member's identity
is its ``group_instance_id`` when set, else its ``member_id``; a snapshot with the same
identities, subscriptions, racks and partition counts as the one before does not rebalance.
``weighted-sticky`` (:data:`WEIGHTED_STRATEGIES`, only with a weights table) rebalances as
``cooperative-sticky`` does, built at each rebalance from the weights in force at its snapshot
(:meth:`spark_udfs.replay.weights.WeightHistory.assignor_at`): the loads its members would report.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assignors import (
    WEIGHTED_STICKY_ASSIGNOR_NAME,
    Assignment,
    AssignorError,
    Cluster,
    ConfigurationError,
    ConsumerPartitionAssignor,
    RebalanceProtocol,
    assignor_names,
    get_assignor,
)
from assignors.consumer_group import (
    CONSUMER_PROTOCOL,
    CoordinatorTable,
    ServerAssignor,
    TargetRebalance,
    rebalance_target,
    server_assignor,
)
from assignors.consumer_group import STRATEGIES as SERVER_STRATEGIES
from assignors.kafka_java import DIFFERENT_FROM_OURS, java_assignor
from assignors.metrics import (
    DEFAULT_PAUSE_MODEL,
    PartitionWeights,
    PauseModel,
    balance,
    check_assignment,
    movement,
    rebalance_pause,
    rejoined_partitions,
)
from assignors.rebalance import RebalanceResult, preferred_protocol, rebalance
from assignors.tables import OUTPUT_COLUMNS
from spark_udfs.replay.group_input import (
    GroupDataError,
    MemberRow,
    Snapshot,
    TopicHistory,
    check_group_id,
    group_snapshots,
)
from spark_udfs.replay.timing import PauseTiming, pause_model
from spark_udfs.replay.values import is_missing
from spark_udfs.replay.weights import WeightHistory

if TYPE_CHECKING:
    from assignors import TopicPartition

logger = logging.getLogger(__name__)

__all__ = [
    "ALL_STRATEGIES",
    "JAVA_STRATEGIES",
    "STRATEGIES",
    "WEIGHTED_STRATEGIES",
    "GroupDataError",
    "MemberRow",
    "Row",
    "TopicHistory",
    "check_weighted",
    "default_strategies",
    "replay_group",
    "strategy_assignor",
]

STRATEGIES: tuple[str, ...] = assignor_names()
"""The classic strategies: the default of :func:`replay_group` and ``evaluate_history``."""
ALL_STRATEGIES: tuple[str, ...] = (*STRATEGIES, *SERVER_STRATEGIES)
"""The classic four, then KIP-848's server assignors ``uniform`` and ``consumer-range`` (protocol CONSUMER)."""
WEIGHTED_STRATEGIES: tuple[str, ...] = (WEIGHTED_STICKY_ASSIGNOR_NAME,)
"""Replayed only with a weights table, which stands for the loads the members would report: ``weighted-sticky``."""
JAVA_PREFIX = "java-"
JAVA_STRATEGIES: tuple[str, ...] = tuple(JAVA_PREFIX + name for name in DIFFERENT_FROM_OURS)
"""Kafka's own Java ``StickyAssignor`` and ``CooperativeStickyAssignor``, replayed only with Kafka's jars
(``--kafka-jars``): what a group of Java consumers runs, beside this project's ``sticky`` and
``cooperative-sticky`` (range and roundrobin are Kafka's to the partition, so they need no such twin)."""


def default_strategies(*, weighted: bool, java: bool = False) -> tuple[str, ...]:
    """What the evaluation replays unless told: :data:`ALL_STRATEGIES`; with weights :data:`WEIGHTED_STRATEGIES`,
    with Kafka's jars :data:`JAVA_STRATEGIES` too."""
    return (
        *ALL_STRATEGIES,
        *(WEIGHTED_STRATEGIES if weighted else ()),
        *(JAVA_STRATEGIES if java else ()),
    )


def check_weighted(strategies: Sequence[str], *, weighted: bool) -> None:
    """Raise ConfigurationError when a strategy of :data:`WEIGHTED_STRATEGIES` is asked for without weights."""
    if weighted:
        return
    for name in strategies:
        if name in WEIGHTED_STRATEGIES:
            msg = (
                f"strategy {name!r} needs a weights table (--weights): it balances the partitions' weights, "
                "which the table stands for"
            )
            raise ConfigurationError(msg)


def strategy_assignor(
    name: str, *, kafka_version: str | None = None, kafka_jars: Sequence[str] | None = None
) -> ConsumerPartitionAssignor:
    """A fresh assignor for any strategy of :data:`ALL_STRATEGIES`, :data:`WEIGHTED_STRATEGIES` (without weights)
    or :data:`JAVA_STRATEGIES`.

    ``uniform`` and ``consumer-range`` are Kafka's broker assignors as the broker of ``kafka_version`` runs them
    (default :data:`assignors.consumer_group.KAFKA_VERSION`, the project's pinned Kafka); the client-side
    strategies do not depend on the broker's version. ``java-sticky`` and ``java-cooperative-sticky`` are Kafka's
    own Java classes on the jars ``kafka_jars`` (:func:`assignors.kafka_java.java_assignor`).

    Raises:
        UnknownAssignorError: not a strategy name.
        ConfigurationError: ``kafka_version`` is not a version number, or one the server strategy is not
            modelled for; a Java strategy without ``kafka_jars``, or jars without Kafka's clients.
    """
    if name in SERVER_STRATEGIES:
        return server_assignor(name, kafka_version=kafka_version)
    if name in JAVA_STRATEGIES:
        if not kafka_jars:
            msg = f"strategy {name!r} needs Kafka's jars (--kafka-jars): it runs Kafka's own Java class"
            raise ConfigurationError(msg)
        return java_assignor(name.removeprefix(JAVA_PREFIX), kafka_jars)
    return get_assignor(name)


_WEIGHTED = ("weighted_max_load", "weighted_min_load", "weighted_spread", "weighted_max_mean_ratio")

Row = dict[str, Any]


@dataclass(slots=True)
class _StrategyState:
    name: str
    protocol: RebalanceProtocol  # CONSUMER counts revoked as COOPERATIVE does
    label: str  # the output's protocol: EAGER, COOPERATIVE or CONSUMER
    generation: int = -1
    assignment: dict[str, tuple[TopicPartition, ...]] | None = None  # identity -> partitions
    received: dict[str, Assignment] | None = None  # identity -> the Assignment those partitions came in
    row: Row | None = None
    topics: dict[str, tuple[str, ...]] | None = None  # identity -> its subscription at the last rebalance
    weighted: tuple[PartitionWeights, object, Row] | None = None  # the last weighted columns: weights, assignment
    coordinator: CoordinatorTable = field(default_factory=CoordinatorTable)  # a server assignor's group state


def replay_group(  # noqa: PLR0913 - the replay's options
    group_id: str | None,
    rows: Sequence[MemberRow],
    history: TopicHistory,
    strategies: Sequence[str] = STRATEGIES,
    *,
    detail: bool = False,
    weights: WeightHistory | None = None,
    timing: PauseModel | PauseTiming = DEFAULT_PAUSE_MODEL,
    input_error: str | None = None,
    kafka_version: str | None = None,
    kafka_jars: Sequence[str] | None = None,
) -> tuple[list[Row], list[Row]]:
    """Replay one group; returns its output rows and (with ``detail``) its per-member rows.

    ``pause_partition_seconds`` is :func:`assignors.metrics.rebalance_pause` under ``timing`` (a
    :class:`~assignors.metrics.PauseModel`; a :class:`~spark_udfs.replay.timing.PauseTiming` is read as one):
    moved partitions and, per protocol, orphaned ones (a departed member's), every departure priced as a
    LeaveGroup (the membership table does not say which members crashed), and the partitions of members whose
    subscription changed priced as rejoining on their own (``rebalance_pause``'s ``rejoined``, as
    :func:`assignors.metrics.rejoined_partitions` counts them: under EAGER all they owned, under COOPERATIVE what they
    keep; when only a partition count changed, the leader's share). Each snapshot change
    is one rebalance, as the table records it (``make calibrate`` measured a deploy wave both ways: the broker
    sometimes merges its leaves and joins into one rebalance, sometimes not; one per change predicts moved and
    revoked better, docs/calibration.md). ``kafka_version`` is the broker's, for
    ``uniform`` and ``consumer-range`` (:func:`strategy_assignor`). Without ``weights`` the weighted columns are
    null. Bad input never raises: the group's rows carry ``error`` (one row per snapshot and strategy, metrics
    empty) and no detail.
    ``input_error`` is a fault found in the group's rows before (a value that did not parse):
    the group is not replayed and its rows carry it.

    Raises:
        ConfigurationError: a strategy of :data:`WEIGHTED_STRATEGIES` without ``weights``.
    """
    check_weighted(strategies, weighted=weights is not None)
    if input_error is not None:
        return _error_rows(group_id, rows, strategies, input_error), []
    # The cyclic collector is paused while the group replays, as the assignors pause it while they assign
    # (assignors._core.util.gc_paused): a replay allocates hundreds of thousands of short-lived objects that
    # reference counting frees, and each batch of allocations would trigger a collection walking them.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _replay(group_id, rows, history, strategies, (detail, weights, timing, kafka_version, kafka_jars))
    finally:
        if paused:
            gc.enable()


def _replay(
    group_id: str | None,
    rows: Sequence[MemberRow],
    history: TopicHistory,
    strategies: Sequence[str],
    settings: tuple[bool, WeightHistory | None, PauseModel | PauseTiming, str | None, Sequence[str] | None],
) -> tuple[list[Row], list[Row]]:
    """:func:`replay_group`'s body: every strategy's rows, or the error rows (``settings``: its options)."""
    try:
        group = check_group_id(group_id)
        snapshots = group_snapshots(rows, history)
        output: list[Row] = []
        members_out: list[Row] = []
        options: _Options | None = None
        for name in strategies:
            if options is None:  # read once the input is known good, as the first strategy always read them
                detail, weights, timing, kafka_version, kafka_jars = settings
                jars = tuple(kafka_jars) if kafka_jars else None
                options = _Options(detail, weights, pause_model(timing), kafka_version, jars, _WeightsAt())
            rows_out, detail_out = _replay_strategy(group, snapshots, name, options)
            output.extend(rows_out)
            members_out.extend(detail_out)
    except (GroupDataError, AssignorError) as error:
        return _error_rows(group_id, rows, strategies, str(error)), []
    except Exception as error:  # one group must never kill the job (logged with its traceback)
        logger.warning("group %r: internal error while replaying; its rows carry the error", group_id, exc_info=True)
        return _error_rows(group_id, rows, strategies, f"internal error: {type(error).__name__}: {error}"), []
    return output, members_out


@dataclass(frozen=True, slots=True)
class _Options:
    detail: bool
    weights: WeightHistory | None
    timing: PauseModel
    kafka_version: str | None
    kafka_jars: tuple[str, ...] | None
    weights_at: _WeightsAt  # the weights at each snapshot, read once for every strategy


class _WeightsAt:
    """The weights in force at each snapshot of one group (:class:`~assignors.metrics.PartitionWeights` of
    ``WeightHistory.at(ts, counts)``), built once for every strategy; consecutive snapshots with the same weights
    and partition counts share one."""

    __slots__ = ("_by_ts", "_last", "_last_key")

    def __init__(self) -> None:
        self._by_ts: dict[Any, PartitionWeights] = {}
        self._last: PartitionWeights | None = None
        self._last_key: tuple[dict[tuple[str, int | None], float], dict[str, int]] | None = None

    def get(self, snapshot: Snapshot, weights: WeightHistory) -> PartitionWeights:
        found = self._by_ts.get(snapshot.ts)
        if found is None:
            key = (weights.at(snapshot.ts, snapshot.counts), snapshot.counts)
            same = self._last is not None and self._last_key == key
            found = self._last if same and self._last is not None else PartitionWeights(*key)
            self._last, self._last_key = found, key
            self._by_ts[snapshot.ts] = found
        return found


def _weighted(
    snapshot: Snapshot, assignment: Mapping[str, Sequence[TopicPartition]], options: _Options, state: _StrategyState
) -> Row:
    """The weighted columns of ``assignment`` at ``snapshot`` (null without weights).

    :func:`~assignors.metrics.weighted_load` of ``assignment`` under the weights in force at ``snapshot``; the same
    assignment under the same weights (a snapshot that does not rebalance, while the weights hold) gives the same
    columns again without measuring.
    """
    if options.weights is None:
        return dict.fromkeys(_WEIGHTED)
    weights = options.weights_at.get(snapshot, options.weights)
    last = state.weighted
    if last is not None and last[0] is weights and last[1] is assignment:
        return dict(last[2])
    load = weights.load(assignment)
    row = {
        "weighted_max_load": load.max_load,
        "weighted_min_load": load.min_load,
        "weighted_spread": load.spread,
        "weighted_max_mean_ratio": load.max_mean_ratio,
    }
    state.weighted = (weights, assignment, row)
    return dict(row)


def _replay_strategy(
    group_id: str, snapshots: Sequence[Snapshot], name: str, options: _Options
) -> tuple[list[Row], list[Row]]:
    detail = options.detail
    assignor = strategy_assignor(name, kafka_version=options.kafka_version, kafka_jars=options.kafka_jars)
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
                carried.update(_weighted(snapshot, state.assignment, options, state), moved_weight=0.0)
            if state.label == CONSUMER_PROTOCOL:  # a static member back under a new member id replaced the old one
                state.coordinator.update(member_id for member_id, _ in snapshot.members.values())
            output.append(carried)
        else:
            if (
                cluster is None
                or cluster.partitions_per_topic != snapshot.counts
                or cluster.topic_ids != snapshot.topic_ids
            ):
                cluster = Cluster(snapshot.counts, topic_ids=snapshot.topic_ids)
            if name in WEIGHTED_STRATEGIES and options.weights is not None:  # the loads reported at this snapshot
                assignor = options.weights.assignor_at(snapshot.ts, snapshot.counts)
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
    group_id: str, snapshot: Snapshot, state: _StrategyState, assignor: Any, cluster: Cluster, options: _Options
) -> Row:
    identities, subscriptions, by_identity = snapshot.members_by_id()
    before = state.assignment or {}
    result: TargetRebalance | RebalanceResult
    if isinstance(assignor, ServerAssignor):
        owned = {member_id: before.get(identity, ()) for member_id, identity in identities.items()}
        result = rebalance_target(
            assignor, cluster, subscriptions, owned, generation=state.generation, coordinator=state.coordinator
        )
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
    survivors_owned = moves.revoked(RebalanceProtocol.EAGER)
    topics_now = {identity: tuple(subscription.topics) for identity, subscription in by_identity.items()}
    # the members whose subscription changed rejoin on their own (or the leader, when a partition count changed)
    rejoined = rejoined_partitions(state.label, before, after, state.topics or {}, topics_now)
    state.topics = topics_now
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
        **_weighted(snapshot, after, options, state),
        "moved_weight": None
        if options.weights is None
        else (options.weights_at.get(snapshot, options.weights).moved(before, after) if moves.moved else 0.0),
        "pause_partition_seconds": 0.0
        if first
        else rebalance_pause(
            state.label,
            options.timing,
            moved=moves.moved,
            survivors_owned=survivors_owned,
            orphaned=moves.orphaned,
            rejoined=min(rejoined, survivors_owned),
            retained_revoking=moves.retained_revoking,
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
