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
from assignors.metrics import (
    DEFAULT_PAUSE_MODEL,
    MEASURED,
    PauseModel,
    balance,
    check_assignment,
    moved_weight,
    movement,
    rebalance_pause,
    weighted_load,
)
from assignors.rebalance import preferred_protocol
from assignors.tables import ACTUAL_STRATEGY, OUTPUT_COLUMNS
from spark_udfs.replay.group_input import MemberRow, TopicHistory
from spark_udfs.replay.timing import PauseTiming, pause_model
from spark_udfs.replay.weights import WeightHistory

__all__ = [
    "HANDOVER_KINDS",
    "MIN_OBSERVATIONS",
    "OBSERVED",
    "ActualRow",
    "actual_rows",
    "derived_model",
    "match_rates",
    "observed_durations",
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
    timing: PauseModel | PauseTiming = DEFAULT_PAUSE_MODEL,
) -> list[Row]:
    """The ``actual`` strategy's evaluation rows of one group, one per recorded snapshot.

    ``weights`` and ``timing`` are the replay's: the weighted columns (null without weights)
    and ``pause_partition_seconds`` are computed exactly as for a replayed strategy. A COOPERATIVE generation's
    pause also prices, as moves, the partitions it withholds (revoked from a member still there, held by nobody,
    of a topic still subscribed): KIP-429 assigns them in the next generation, so the moved count never shows them.
    """
    model = pause_model(timing)
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
            if weights is not None:
                at = weights.at(snapshot.ts, counts)
                row["moved_weight"] = moved_weight(previous.assignment, snapshot.assignment, at)
            row["rounds"] = 2 if protocol != "EAGER" and moves.moved else 1
            survivors = moves.revoked(RebalanceProtocol.EAGER)
            # a COOPERATIVE generation withholds what it revokes (assigned in the next): a hand-over, priced as a move
            handing = _withheld(previous, snapshot, subs) if protocol == "COOPERATIVE" else 0
            row["pause_partition_seconds"] = rebalance_pause(
                protocol,
                model,
                moved=moves.moved + handing,
                survivors_owned=survivors,
                orphaned=moves.orphaned,
                retained_revoking=moves.retained_revoking,
            )
            if not row["rebalanced"]:
                row.update(moved=0, orphaned=0, revoked=0, rounds=0, pause_partition_seconds=0.0)
                if weights is not None:
                    row["moved_weight"] = 0.0
        rows.append(row)
        previous = snapshot
    return rows


def _withheld(previous: _Recorded, snapshot: _Recorded, subscriptions: Mapping[str, Subscription]) -> int:
    """Partitions a member still present gave up that nobody holds now, of topics the group still subscribes to.

    Kafka's cooperative protocol revokes a partition that must move in one generation and assigns it in the next
    (KIP-429): the recorded generation in between holds it nowhere, and that wait is its pause.
    """
    held = {tp for parts in snapshot.assignment.values() for tp in parts}
    if subscriptions:
        topics = {topic for subscription in subscriptions.values() for topic in subscription.topics}
    else:
        topics = {tp.topic for tp in held}
    return sum(
        1
        for member, parts in previous.assignment.items()
        if member in snapshot.assignment
        for tp in parts
        if tp not in held and tp.topic in topics
    )


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
        "moved_weight": 0.0,  # the first snapshot's; later ones weigh what moved
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


# -- the timing the cluster's records show (--actual) ----------------------------------------------------------------
MIN_OBSERVATIONS = 5
"""A parameter is derived from the cluster's records only from at least this many observations."""

OBSERVED: dict[str, tuple[str, str, str]] = {
    "eager_rebalance": (
        "eager_heartbeats",
        "EAGER rebalances",
        "from the membership snapshot that shows a change to the EAGER generation that completes it",
    ),
    "cooperative_orphan": (
        "cooperative_orphan_heartbeats",
        "COOPERATIVE rebalances",
        "from the membership snapshot that shows a member gone to the COOPERATIVE generation that completes it",
    ),
    "cooperative_move": (
        "cooperative_heartbeats",
        "cooperative hand-overs",
        "from the generation that revoked a partition to the next one, which assigned it to another member",
    ),
}
"""What each kind of observation measures: (the model's factor it sets, what is counted, how it is measured)."""

HANDOVER_KINDS: dict[str, tuple[str, str, str]] = {
    "consumer_move": (
        "consumer_move_heartbeats",
        "KIP-848 hand-overs",
        (
            "from the record that put a partition in its member's pending revocation to the record of the member "
            "that got it (ConsumerGroupCurrentMemberAssignment, the handovers table)"
        ),
    ),
    "consumer_orphan": (
        "consumer_orphan_heartbeats",
        "KIP-848 orphaned partitions",
        "from the record of its member leaving to the record of the member that got it (the handovers table)",
    ),
}
"""The kinds of the ``handovers`` table (``assignors collect`` from KIP-848's records), as :data:`OBSERVED`'s."""

_NOT_DERIVABLE_FIELDS = ("consumer_move_heartbeats", "consumer_orphan_heartbeats")
_NOT_DERIVABLE_WHY = (
    "KIP-848 hand-overs: no handovers table was given (assignors collect writes it beside actual from the "
    "ConsumerGroupCurrentMemberAssignment records of __consumer_offsets; the Admin route cannot see them)"
)


def observed_durations(group_id: str, members: Sequence[MemberRow], actual: Sequence[ActualRow]) -> list[Row]:
    """The durations one group's records show, in seconds: ``{"group_id", "kind", "seconds"}`` rows (:data:`OBSERVED`).

    - ``cooperative_move``: a COOPERATIVE group's partition missing from generation N (its owner, still there,
      revoked it) and held by another member at N + 1 waited at least the time between the two generations.
    - ``eager_rebalance`` and ``cooperative_orphan``: when the membership table shows the members of a new
      generation before the generation completes (a membership table of its own, e.g. from monitoring), the
      time between the two is that rebalance's length. Tables that ``assignors collect`` wrote from
      ``__consumer_offsets`` share their times (the generation's record is both), so they give none.
    """
    recorded = _recorded(actual)
    shown: dict[dt.datetime, frozenset[str]] = {}  # membership snapshot time -> its identities
    for row in members:
        if row.member_id and row.snapshot_ts is not None:
            identity = _identity(row.member_id, row.group_instance_id)
            shown[row.snapshot_ts] = shown.get(row.snapshot_ts, frozenset()) | {identity}
    times = sorted(shown)
    rows: list[Row] = []
    for before, current, after in zip([None, *recorded[:-1]], recorded, [*recorded[1:], None], strict=True):
        if before is None or before.generation == current.generation:
            continue
        protocol = _protocol(current.assignor)
        kind = _rebalance_kind(protocol, before, current)
        if kind is not None:
            identities = frozenset(current.assignment)
            first = next((ts for ts in times if before.ts < ts <= current.ts and shown[ts] == identities), current.ts)
            seconds = (current.ts - first).total_seconds()
            if seconds > 0:
                rows.append({"group_id": group_id, "kind": kind, "seconds": seconds})
        if protocol == "COOPERATIVE" and after is not None and after.generation != current.generation:
            gap = (after.ts - current.ts).total_seconds()
            moves = _handed_over(before, current, after)
            rows.extend({"group_id": group_id, "kind": "cooperative_move", "seconds": gap} for _ in range(moves))
    return rows


def _rebalance_kind(protocol: str, before: _Recorded, current: _Recorded) -> str | None:
    """Which rebalance length a new generation observes: any membership change (EAGER), a departure (COOPERATIVE)."""
    now, then = frozenset(current.assignment), frozenset(before.assignment)
    if protocol == "EAGER" and now != then:
        return "eager_rebalance"
    if protocol == "COOPERATIVE" and now < then:
        return "cooperative_orphan"
    return None


def _handed_over(before: _Recorded, current: _Recorded, after: _Recorded) -> int:
    """Partitions a member still present at ``current`` gave up there and another member holds at ``after``."""
    owner = {tp: who for who, parts in before.assignment.items() for tp in parts}
    held = {tp for parts in current.assignment.values() for tp in parts}
    return sum(
        1
        for who, parts in after.assignment.items()
        for tp in parts
        if tp not in held and owner.get(tp) not in {None, who} and owner[tp] in current.assignment
    )


def derived_model(
    model: PauseModel, observed: Mapping[str, tuple[int, float | None]], *, handovers: bool = False
) -> tuple[PauseModel, list[str]]:
    """``model`` with the factors the observations allow, and one sentence per factor on what was done.

    ``observed`` maps a kind of :data:`OBSERVED` (and with ``handovers``, a handovers table was given, of
    :data:`HANDOVER_KINDS`) to ``(count, seconds)``, the seconds the median (for :data:`HANDOVER_KINDS`, the
    mean: :func:`spark_udfs.jobs.actual.observe_handovers`). A factor is derived when it has at least
    :data:`MIN_OBSERVATIONS` observations and its source in ``model`` is still :data:`MEASURED` (a value the user
    gave wins): ``(seconds - fetch_seconds) / interval``, at least 0, the interval KIP-848's heartbeat for its
    ``consumer_*`` factors and the classic one for the others, so the model prices such a wait at the value
    observed. Otherwise it is kept, and the sentence says why.
    """
    notes: list[str] = []
    kinds = {**OBSERVED, **HANDOVER_KINDS} if handovers else OBSERVED
    for kind, (field, counted, how) in kinds.items():
        count, median = observed.get(kind, (0, None))
        label = f"{count} {counted}" if count != 1 else f"1 {counted.removesuffix('s')}"
        if count < MIN_OBSERVATIONS or median is None:
            notes.append(
                f"{field} kept ({model.source(field)}): the cluster's records show {label} ({how}); "
                f"at least {MIN_OBSERVATIONS} are needed"
            )
            continue
        if model.source(field) != MEASURED:
            notes.append(f"{field} kept ({model.source(field)}): given, so not derived from {label}")
            continue
        interval = "consumer_heartbeat_seconds" if field.startswith("consumer_") else "heartbeat_seconds"
        if getattr(model, interval) <= 0:
            notes.append(f"{field} kept ({model.source(field)}): {interval} is 0, no factor of it is derived")
            continue
        factor = max(median - model.fetch_seconds, 0.0) / getattr(model, interval)
        statistic = "mean" if kind in HANDOVER_KINDS else "median"
        source = f"the cluster's records ({label}, {statistic} {median:g} s)"
        model = model.with_settings(source, **{field: factor})
        notes.append(f"{field} = {factor:g} from {source}: {how}")
    if not handovers:
        notes.extend(
            f"{field} kept ({model.source(field)}): not derivable from {_NOT_DERIVABLE_WHY}"
            for field in _NOT_DERIVABLE_FIELDS
        )
    return model, notes
