"""The evaluation's KIP-848 strategies uniform and consumer-range in the pure replay: by hand, and as direct calls."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import (
    Assignment,
    Cluster,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
    UnknownAssignorError,
    parse_topic_partition,
)
from assignors.consumer_group import RangeAssignor, UniformAssignor, replay_step
from assignors.metrics import PauseModel, movement
from spark_udfs import MemberRow, TopicHistory, replay_group
from spark_udfs.replay import ALL_STRATEGIES, STRATEGIES, strategy_assignor

MINUTES = [dt.datetime(2026, 1, 1, 12, m) for m in range(6)]  # noqa: DTZ001 - Spark timestamps are naive
at = MINUTES.__getitem__


FIELDS = (
    "protocol",
    "generation",
    "rebalanced",
    "moved",
    "orphaned",
    "revoked",
    "rounds",
    "min_load",
    "max_load",
    "pause_partition_seconds",
)
# a and b split t (6); c joins; b leaves; t grows to 8 at minute 3.
HISTORY = [
    *(MemberRow(at(0), m, ("t",)) for m in "ab"),
    *(MemberRow(at(1), m, ("t",)) for m in "abc"),
    *(MemberRow(at(2), m, ("t",)) for m in "ac"),
    *(MemberRow(at(3), m, ("t",)) for m in "ac"),
    *(MemberRow(at(4), m, ("t",)) for m in "ac"),
]
TOPICS = TopicHistory([("t", 6, None), ("t", 8, at(3))])
FIVE = PauseModel(
    consumer_heartbeat_seconds=5.0, consumer_move_heartbeats=1.0, consumer_orphan_heartbeats=0.5, fetch_seconds=0.0
)
"""A KIP-848 move waits one 5 s heartbeat, a departed member's partition half of one; no fetch."""


def test_histories_by_hand() -> None:
    """Kafka's rules, worked by hand on one history (:data:`FIVE`: a move 5 s, an orphaned partition 2.5 s).

    uniform (the homogeneous builder):

    - a, b: a t-0..2, b t-3..5.
    - c joins: quotas 2/2/2; a keeps t-0, t-1, b keeps t-3, t-4; c takes t-2 and t-5: 2 moved,
      2 revoked, 2 heartbeat rounds (the revokers ack, then c takes them), pause 2 x 5 s.
    - b leaves: t-3, t-4 are orphaned; a takes t-3, c t-4; nothing revoked: 1 round; pause 2 x 2.5 s.
    - t grows to 8: quotas 4/4; the new t-6 and t-7 go one each; nothing moves.
    - nothing changes: no rebalance.

    consumer-range recomputes contiguous ranges every time:

    - c joins: a t-0, t-1; b t-2, t-3; c t-4, t-5: t-2 goes a -> b, t-4 and t-5 b -> c: 3 moved and revoked.
    - b leaves: a t-0..2, c t-3..5: the orphaned t-2 and t-3 are taken; nothing revoked; pause 2 x 2.5 s.
    - t grows to 8: a t-0..3, c t-4..7: t-3 goes c -> a: 1 moved, 2 rounds, pause 5 s.
    """
    rows, detail = replay_group("g", HISTORY, TOPICS, ["uniform", "consumer-range"], detail=True, timing=FIVE)
    expected = {
        "uniform": [
            ("CONSUMER", 1, True, 0, 0, 0, 1, 3, 3, 0.0),
            ("CONSUMER", 2, True, 2, 0, 2, 2, 2, 2, 10.0),
            ("CONSUMER", 3, True, 0, 2, 0, 1, 3, 3, 5.0),
            ("CONSUMER", 4, True, 0, 0, 0, 1, 4, 4, 0.0),
            ("CONSUMER", 4, False, 0, 0, 0, 0, 4, 4, 0.0),
        ],
        "consumer-range": [
            ("CONSUMER", 1, True, 0, 0, 0, 1, 3, 3, 0.0),
            ("CONSUMER", 2, True, 3, 0, 3, 2, 2, 2, 15.0),
            ("CONSUMER", 3, True, 0, 2, 0, 1, 3, 3, 5.0),
            ("CONSUMER", 4, True, 1, 0, 1, 2, 4, 4, 5.0),
            ("CONSUMER", 4, False, 0, 0, 0, 0, 4, 4, 0.0),
        ],
    }
    got = {name: [tuple(r[f] for f in FIELDS) for r in rows if r["strategy"] == name] for name in expected}
    assert got == expected
    assert all(r["valid"] and r["error"] is None for r in rows)
    final = {d["member"]: d["partitions"] for d in detail if d["snapshot_ts"] == at(3) and d["strategy"] == "uniform"}
    assert final == {"a": ["t-0", "t-1", "t-3", "t-6"], "c": ["t-2", "t-4", "t-5", "t-7"]}


def test_static_member_back_under_a_new_member_id_inherits_its_target() -> None:
    """The identity is the instance id: a restart alone is no rebalance; with c joining, a-2 keeps a-1's target."""
    rows = [
        MemberRow(at(0), "a-1", ("t",), "ia"),
        MemberRow(at(0), "b", ("t",)),
        MemberRow(at(1), "a-2", ("t",), "ia"),
        MemberRow(at(1), "b", ("t",)),
        MemberRow(at(2), "a-3", ("t",), "ia"),
        MemberRow(at(2), "b", ("t",)),
        MemberRow(at(2), "c", ("t",)),
    ]
    out, detail = replay_group("g", rows, TopicHistory([("t", 6, None)]), ["uniform"], detail=True)
    assert [(r["rebalanced"], r["generation"], r["moved"], r["revoked"], r["rounds"]) for r in out] == [
        (True, 1, 0, 0, 1),
        (False, 1, 0, 0, 0),
        (True, 2, 2, 2, 2),
    ]
    owned = {(d["snapshot_ts"].minute, d["member"]): d["partitions"] for d in detail}
    # The coordinator's HashMap puts "b" (bucket 2) before "a-1" (bucket 4): b is dealt first.
    assert owned[0, "a-1"] == owned[1, "a-2"] == ["t-3", "t-4", "t-5"]
    assert (owned[2, "a-3"], owned[2, "b"], owned[2, "c"]) == (["t-3", "t-4"], ["t-0", "t-1"], ["t-2", "t-5"])


def test_uniform_goes_through_topics_in_the_order_of_their_ids() -> None:
    """The topics table's ``topic_id``: with the ids, uniform deals t2 (``Uuid.hashCode`` 1) before t1 (2), as the
    broker's ``HashSet`` of topic ids does; without them, by name. The members go in the coordinator's order (c3 ..
    c7, c0 .. c2), the extras to the last two. A new id for a topic (recreated) is a metadata change."""
    rows = [MemberRow(at(0), f"c{i}", ("t1", "t2")) for i in range(8)]
    rows += [MemberRow(at(1), f"c{i}", ("t1", "t2")) for i in range(8)]
    by_name = TopicHistory([("t1", 5, None), ("t2", 5, None)])
    t1, t2, again = "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAABA"
    by_id = TopicHistory([("t1", 5, None, t1), ("t2", 5, None, t2), ("t2", 5, at(1), again)])

    def targets(history: TopicHistory) -> tuple[list[bool], dict[tuple[int, str], list[str]]]:
        out, detail = replay_group("g", rows, history, ["uniform"], detail=True)
        return [r["rebalanced"] for r in out], {(d["snapshot_ts"].minute, d["member"]): d["partitions"] for d in detail}

    rebalanced, named = targets(by_name)
    assert rebalanced == [True, False]
    assert [named[0, m] for m in ("c3", "c7", "c0", "c1", "c2")] == [
        ["t1-0"],
        ["t1-4"],
        ["t2-0"],
        ["t2-1", "t2-2"],
        ["t2-3", "t2-4"],
    ]
    rebalanced, ided = targets(by_id)
    assert rebalanced == [True, True]
    swapped = {"t1": "t2", "t2": "t1"}
    for (minute, member), partitions in named.items():
        if minute == 0:
            assert ided[0, member] == [swapped[p[:2]] + p[2:] for p in partitions], member


def test_a_topic_id_that_is_no_kafka_id_is_the_subscribing_groups_error() -> None:
    history = TopicHistory([("t", 6, None, "not-an-id"), ("u", 1, None)])
    rows, _ = replay_group("g", [MemberRow(at(0), "a", ("t",))], history, ["uniform"])
    assert "topic_id 'not-an-id' is not a Kafka topic id" in rows[0]["error"]
    fine, _ = replay_group("g", [MemberRow(at(0), "a", ("u",))], history, ["uniform"])
    assert fine[0]["error"] is None


def test_strategy_names() -> None:
    assert (*STRATEGIES, "uniform", "consumer-range") == ALL_STRATEGIES
    assert isinstance(strategy_assignor("uniform"), UniformAssignor)
    assert isinstance(strategy_assignor("consumer-range"), RangeAssignor)
    with pytest.raises(UnknownAssignorError, match="'nope'"):
        strategy_assignor("nope")


def test_bad_group_gives_error_rows_for_the_server_strategies_too() -> None:
    rows, _ = replay_group("g", [MemberRow(at(0), "a", ("missing",))], TOPICS, ["uniform", "consumer-range"])
    assert [(r["strategy"], "no partition count" in r["error"]) for r in rows] == [
        ("uniform", True),
        ("consumer-range", True),
    ]


# --- the replay equals direct calls of the assignors, snapshot by snapshot -------------------

# s0 and s1 are static (their instance id is the identity) and come back under a new member id at every
# snapshot, as a rolling restart does; d0..d2 are dynamic.
IDENTITIES = ["s0", "s1", "d0", "d1", "d2"]
COUNTS = {"t0": 5, "t1": 3}


# (snapshot, identity, member id, topics, instance id)
Plain = tuple[int, str, str, tuple[str, ...], str | None]


@st.composite
def histories(draw: st.DrawFn) -> list[Plain]:
    rows: list[Plain] = []
    for step in range(draw(st.integers(1, 5))):
        present = sorted(draw(st.sets(st.sampled_from(IDENTITIES), min_size=1)))
        topics = [draw(st.sampled_from([("t0",), ("t1",), ("t0", "t1")])) for _ in present]
        rows.extend(
            (step, who, f"{who}-{step}", t, who) if who.startswith("s") else (step, who, who, t, None)
            for who, t in zip(present, topics, strict=True)
        )
    return rows


def _direct(name: str, rows: list[Plain]) -> list[dict[str, Any]]:
    """Per snapshot and identity: the assignor run on the previous target (Kafka's coordinator), and the counts."""
    make = UniformAssignor if name == "uniform" else RangeAssignor
    cluster = Cluster(COUNTS)
    target: dict[str, tuple[TopicPartition, ...]] = {}  # by identity
    previous_key: object = None
    expected: list[dict[str, Any]] = []
    for step in sorted({r[0] for r in rows}):
        now = {who: (member, topics, instance) for at_step, who, member, topics, instance in rows if at_step == step}
        key = sorted((who, topics) for who, (_, topics, _) in now.items())
        if key == previous_key:  # a static member back under a new member id changes nothing
            expected.append({"target": target, "rebalanced": False, "moved": 0, "revoked": 0, "rounds": 0})
            continue
        subs = {
            member: Subscription(topics, owned_partitions=target.get(who, ()), group_instance_id=instance)
            for who, (member, topics, instance) in now.items()
        }
        by_member = make().assign(cluster, subs)
        result = {who: by_member[member].partitions for who, (member, _, _) in now.items()}
        first = previous_key is None
        moves = movement(target, result, members_after=result.keys())
        revoked = 0 if first else moves.revoked(RebalanceProtocol.COOPERATIVE)
        # Reconciliation (1 heartbeat round when nobody revokes, else at most 2) is replay_step's.
        previous = {member: Assignment(target.get(who, ())) for who, (member, _, _) in now.items()}
        rounds = replay_step(previous, cluster, subs, assignor=name).heartbeats
        assert rounds == 1 if not revoked else rounds in {1, 2}
        moved = 0 if first else moves.moved
        expected.append({"target": result, "rebalanced": True, "moved": moved, "revoked": revoked, "rounds": rounds})
        target, previous_key = result, key
    return expected


@pytest.mark.parametrize("name", ["uniform", "consumer-range"])
@given(rows=histories())
def test_replay_equals_direct_calls(name: str, rows: list[Plain]) -> None:
    """Each snapshot change is one assignor run from the previous target; moved/revoked/rounds follow."""
    history = TopicHistory([(t, c, None) for t, c in COUNTS.items()])
    members = [MemberRow(at(step), member, topics, instance) for step, _, member, topics, instance in rows]
    out, detail = replay_group("g", members, history, [name], detail=True, timing=FIVE)
    identities = {member: who for _, who, member, _, _ in rows}
    expected = _direct(name, rows)
    assert len(out) == len(expected)
    for row, want in zip(out, expected, strict=True):
        got = {
            identities[d["member"]]: tuple(sorted(parse_topic_partition(p) for p in d["partitions"]))
            for d in detail
            if d["snapshot_ts"] == row["snapshot_ts"]
        }
        assert got == {m: tuple(sorted(p)) for m, p in want["target"].items()}
        fields = ("rebalanced", "moved", "revoked", "rounds")
        assert tuple(row[f] for f in fields) == tuple(want[f] for f in fields)
        assert row["protocol"] == "CONSUMER"
        assert row["valid"]
        assert row["pause_partition_seconds"] == row["moved"] * 5.0 + row["orphaned"] * 2.5


def test_a_static_member_back_under_a_new_id_takes_its_place_in_the_coordinators_table() -> None:
    """Static member "s" comes back as "q" (no rebalance: it keeps its partitions), then "b" joins. The coordinator
    replaced "x" by "q" in its table of members when "q" came back, so at b's join it holds "a" and "q" ("q" added
    last: in the slot the two share, the table iterates it first) and puts "b" after them; "a" and "q" share a bucket
    of memberSpecs, so "q" comes before "a", and Kafka's target is a: t-0, b: t-1, q: t-2 and t-3 (with "q" put
    after "a", as a member joining with "b", it would be a: t-0 and t-1, b: t-3, q: t-2)."""
    steps = [[("a", None), ("x", "s")], [("a", None), ("q", "s")], [("a", None), ("q", "s"), ("b", None)]]
    rows = [
        MemberRow(MINUTES[i], member_id, ("t",), instance, None)
        for i, members in enumerate(steps)
        for member_id, instance in members
    ]
    _, members = replay_group("g", rows, TopicHistory([("t", 4, None)]), ("uniform",), detail=True)
    last = {row["member"]: row["partitions"] for row in members if row["snapshot_ts"] == MINUTES[2]}
    assert last == {"a": ["t-0"], "b": ["t-1"], "q": ["t-2", "t-3"]}
