"""The strategy ``actual`` (what the cluster did, measured like a strategy) and the range/roundrobin self-check."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import Cluster, RangeAssignor, RoundRobinAssignor, Subscription
from assignors.metrics import DEFAULT_PAUSE_MODEL, PauseModel
from spark_udfs.replay import OUTPUT_COLUMNS, MemberRow, TopicHistory
from spark_udfs.replay.actual import ActualRow, actual_rows, match_rates, self_check
from spark_udfs.replay.timing import PauseTiming
from spark_udfs.replay.weights import WeightHistory

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _at(step: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=step)


HISTORY = TopicHistory([("t", 4, None)])
ROUND = PauseModel(
    heartbeat_seconds=3.0,
    consumer_heartbeat_seconds=0.5,
    eager_heartbeats=1.0,
    cooperative_heartbeats=2.0,
    cooperative_orphan_heartbeats=1.0,
    consumer_move_heartbeats=1.0,
    consumer_orphan_heartbeats=1.0,
    fetch_seconds=0.0,
    eager_orphan_heartbeats=1.0,
    cooperative_kept_heartbeats=0.0,
)
"""Round factors: a classic rebalance round is one 3 s heartbeat, a KIP-848 move one 0.5 s heartbeat, no fetch."""


def _members(step: int, ids: list[str]) -> list[MemberRow]:
    return [MemberRow(_at(step), m, ("t",)) for m in ids]


def _actual(step: int, generation: int, protocol: str, assigned: dict[str, list[str]]) -> list[ActualRow]:
    return [ActualRow(_at(step), generation, protocol, m, None, tuple(parts)) for m, parts in assigned.items()]


def test_actual_rows_pinned() -> None:
    """Generation 1: a takes all 4; generation 2: b joins and takes 2 and 3 (range's answer)."""
    members = _members(0, ["a"]) + _members(1, ["a", "b"])
    actual = _actual(0, 1, "range", {"a": ["t-0", "t-1", "t-2", "t-3"]}) + _actual(
        1, 2, "range", {"a": ["t-0", "t-1"], "b": ["t-2", "t-3"]}
    )
    rows = actual_rows("g", members, actual, HISTORY)
    assert all(set(row) == {name for name, _ in OUTPUT_COLUMNS} for row in rows)
    picked = [
        {
            k: row[k]
            for k in (
                "strategy",
                "protocol",
                "generation",
                "rebalanced",
                "members",
                "partitions",
                "assigned",
                "min_load",
                "max_load",
                "load_spread",
                "moved",
                "orphaned",
                "revoked",
                "rounds",
                "valid",
            )
        }
        for row in rows
    ]
    assert picked == [
        {"strategy": "actual", "protocol": "EAGER", "generation": 1, "rebalanced": True, "members": 1,
         "partitions": 4, "assigned": 4, "min_load": 4, "max_load": 4, "load_spread": 0, "moved": 0,
         "orphaned": 0, "revoked": 0, "rounds": 1, "valid": True},
        {"strategy": "actual", "protocol": "EAGER", "generation": 2, "rebalanced": True, "members": 2,
         "partitions": 4, "assigned": 4, "min_load": 2, "max_load": 2, "load_spread": 0, "moved": 2,
         "orphaned": 0, "revoked": 4, "rounds": 1, "valid": True},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("assignor", "protocol", "pause"),
    [
        ("range", "EAGER", 12.0),  # a's 4 partitions stop for one 3 s heartbeat
        ("cooperative-sticky", "COOPERATIVE", 6.0),  # t-3 moves: 1 x 2 heartbeats x 3 s
        ("uniform", "CONSUMER", 0.5),  # t-3 moves: 1 x one heartbeat of 0.5 s
    ],
)
def test_actual_rows_weighted_load_topic_spread_and_pause(assignor: str, protocol: str, pause: float) -> None:
    """Worked by hand: a holds t-0..3, then b joins and takes t-3. t-0 weighs 10, the rest of t 1 each.

    Generation 1: a carries 13: max = min = 13, spread 0, ratio 1. Generation 2: a carries
    10 + 1 + 1 = 12 and b 1: spread 11, max/mean 12 / 6.5 = 24/13; the weight moved is t-3's, 1; t's counts 3
    and 1: topic spread 2. The pause uses the evaluation's model (:data:`ROUND`); without one, the measured model.
    """
    members = _members(0, ["a"]) + _members(1, ["a", "b"])
    actual = _actual(0, 1, assignor, {"a": ["t-0", "t-1", "t-2", "t-3"]}) + _actual(
        1, 2, assignor, {"a": ["t-0", "t-1", "t-2"], "b": ["t-3"]}
    )
    weights = WeightHistory([("t", 0, 10.0, None), ("t", None, 1.0, None)])
    first, second = actual_rows("g", members, actual, HISTORY, weights=weights, timing=ROUND)
    columns = ("protocol", "moved", "topic_spread", "topic_spread_sum", "pause_partition_seconds")
    assert [first[c] for c in columns] == [protocol, 0, 0, 0, 0.0]
    assert [second[c] for c in columns] == [protocol, 1, 2, 2, pause]
    weighted: tuple[str, ...] = ("weighted_max_load", "weighted_min_load", "weighted_spread", "weighted_max_mean_ratio")
    assert [first[c] for c in weighted] == [13.0, 13.0, 0.0, 1.0]
    assert [second[c] for c in weighted[:3]] == [12.0, 1.0, 11.0]
    assert math.isclose(second["weighted_max_mean_ratio"], 24 / 13)
    assert (first["moved_weight"], second["moved_weight"]) == (0.0, 1.0)  # t-3, weighing 1, moved a -> b
    weighted = (*weighted, "moved_weight")
    unweighted = actual_rows("g", members, actual, HISTORY)  # no weights: null, as for a replayed strategy
    assert all(row[c] is None for row in unweighted for c in weighted)
    # the measured model at Kafka's defaults (heartbeat 3 s, KIP-848's 5 s, fetch 0.09 s): EAGER stops a's 4 for
    # 0.12 heartbeats, a cooperative move waits 0.97 heartbeats (and a's 3 kept ones the client's pause in the second
    # round, cooperative_kept_heartbeats), a KIP-848 one 0.65 of the broker's
    m = DEFAULT_PAUSE_MODEL
    measured = {
        "EAGER": 4 * (m.eager_heartbeats * 3 + m.fetch_seconds),
        "COOPERATIVE": m.cooperative_heartbeats * 3 + m.fetch_seconds + 3 * m.cooperative_kept_heartbeats * 3,
        "CONSUMER": m.consumer_move_heartbeats * 5 + m.fetch_seconds,
    }
    assert unweighted[1]["pause_partition_seconds"] == pytest.approx(measured[protocol])
    # the old two durations, as a model: R = 3 s is the classic heartbeat, H = 0.5 s the broker's
    legacy = actual_rows("g", members, actual, HISTORY, timing=PauseTiming(3.0, 0.5))
    old = {**measured, "CONSUMER": m.consumer_move_heartbeats * 0.5 + m.fetch_seconds}
    assert legacy[1]["pause_partition_seconds"] == pytest.approx(old[protocol])


def test_invalid_recorded_assignment_is_flagged() -> None:
    actual = _actual(0, 1, "range", {"a": ["t-0", "t-1"]})  # t-2 and t-3 unassigned
    (row,) = actual_rows("g", _members(0, ["a"]), actual, HISTORY)
    assert row["valid"] is False


def test_self_check_matches_range_and_lists_mismatches() -> None:
    members = _members(0, ["a", "b"]) + _members(1, ["a", "b"])
    actual = _actual(0, 1, "range", {"a": ["t-0", "t-1"], "b": ["t-2", "t-3"]}) + _actual(
        1, 2, "range", {"a": ["t-0", "t-2"], "b": ["t-1", "t-3"]}
    )
    rows = self_check("g", members, actual, HISTORY)
    assert [row["matched"] for row in rows] == [True, False]
    assert rows[1]["mismatches"] == [
        "a: recorded [t-0, t-2], replayed [t-0, t-1]",
        "b: recorded [t-1, t-3], replayed [t-2, t-3]",
    ]
    assert match_rates(rows) == {"g": (1, 2)}
    sticky = _actual(2, 3, "cooperative-sticky", {"a": ["t-0"]})
    assert self_check("g", _members(2, ["a"]), sticky, HISTORY) == []


@given(
    st.lists(st.sampled_from(["m1", "m2", "m3", "m4", "m5"]), min_size=1, max_size=5, unique=True),
    st.integers(1, 12),
    st.sampled_from(["range", "roundrobin"]),
)
def test_self_check_reproduces_what_the_assignor_computed(ids: list[str], count: int, name: str) -> None:
    """A recording made by our own range/roundrobin always matches; its actual row is valid and balanced as computed."""
    assignor = RangeAssignor() if name == "range" else RoundRobinAssignor()
    result = assignor.assign(Cluster({"t": count}), {m: Subscription(["t"]) for m in ids})
    history = TopicHistory([("t", count, None)])
    actual = _actual(0, 1, name, {m: [str(tp) for tp in a.partitions] for m, a in result.items()})
    (check,) = self_check("g", _members(0, ids), actual, history)
    assert check["matched"], check["mismatches"]
    (row,) = actual_rows("g", _members(0, ids), actual, history)
    assert row["valid"] is True
    assert row["assigned"] == count
    assert row["load_spread"] <= 1
