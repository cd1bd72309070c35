"""The KIP-848 uniform assignor against Kafka's own ``UniformAssignor``.

Kafka iterates members and topic ids in ``HashMap``/``HashSet`` order, which hangs on random member ids and topic
Uuids; ours goes in member-id and topic-name order. So: Java runs on the group and on relabelled copies of it
(other member ids, other topic ids, mapped back). Where every run gives the same target, the result does not
depend on that order and ours must equal it exactly; otherwise ours must be at least as balanced as Kafka's and,
equally balanced, move no more partitions off their previous target.

Kafka 4.1 and later keep a member's extra partition (KAFKA-18688): ``stable_extras=True``; Kafka 3.9 and 4.0 do
not: ``stable_extras=False``, checked against the 4.0.x jar.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import pytest
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st

from assignors import Assignment, Cluster, Subscription, TopicPartition
from assignors.consumer_group import UniformAssignor
from assignors.testing import Group
from helpers.java_oracle import JavaOracle, side_by_side
from helpers.oracle_groups import EXAMPLES, server_groups

Result = Mapping[str, Assignment]
KAFKA_18688 = (4, 1)


def _salted_ids(group: Group, salt: int) -> dict[str, tuple[int, int]]:
    topics = set(group.cluster.partitions_per_topic)
    for s in group.subscriptions.values():
        topics.update(s.topics)
        topics.update(tp.topic for tp in s.owned_partitions)
    ids = {}
    for topic in topics:
        digest = hashlib.sha256(f"{salt}/{topic}".encode()).digest()
        ids[topic] = (int.from_bytes(digest[:8], "big", signed=True), int.from_bytes(digest[8:16], "big", signed=True))
    return ids


def java_runs(oracle: JavaOracle, group: Group, salts: list[int]) -> list[dict[str, frozenset[TopicPartition]]]:
    """Kafka's target on the group, then on each relabelled copy, mapped back.

    A copy renames every member to a random id (so both their HashMap order and their sorted order change) and
    gives every topic another Uuid.
    """
    runs = []
    for salt in [0, *salts]:
        names = {
            member: member if salt == 0 else hashlib.sha256(f"{salt}/{member}".encode()).hexdigest()[:12]
            for member in group.subscriptions
        }
        back = {name: member for member, name in names.items()}
        subscriptions = {names[m]: s for m, s in group.subscriptions.items()}
        result = oracle.server_assign("uniform", group.cluster, subscriptions, topic_ids=_salted_ids(group, salt))
        mapped = {back[name]: frozenset(a.partitions) for name, a in result.items()}
        # The coordinator reads a member the assignor left out as one with an empty target.
        runs.append({member: mapped.get(member, frozenset()) for member in group.subscriptions})
    return runs


def depends_on_java_order(runs: list[dict[str, frozenset[TopicPartition]]]) -> bool:
    """Kafka's target changes with member ids or topic ids alone: its HashMap iteration order decides it."""
    return any(run != runs[0] for run in runs[1:])


def moved(subscriptions: Mapping[str, Subscription], result: Result) -> int:
    previous = {tp: m for m, s in subscriptions.items() for tp in s.owned_partitions}
    return sum(1 for m, a in result.items() for tp in a.partitions if previous.get(tp, m) != m)


def check(oracle: JavaOracle, group: Group, salts: list[int], *, stable_extras: bool, movement: bool = True) -> None:
    ours = UniformAssignor(stable_extras=stable_extras).assign(group.cluster, group.subscriptions)
    runs = java_runs(oracle, group, salts)
    java = {m: Assignment(sorted(p)) for m, p in runs[0].items()}
    report = f"{group}\n{side_by_side(ours, java)}"
    if not depends_on_java_order(runs):
        assert {m: frozenset(a.partitions) for m, a in ours.items()} == runs[0], f"not Kafka's exactly\n{report}"
        return
    ours_squares = sum(len(a.partitions) ** 2 for a in ours.values())
    java_squares = sum(len(a.partitions) ** 2 for a in java.values())
    assert ours_squares <= java_squares, f"less balanced than Kafka's\n{report}"
    if movement and ours_squares == java_squares:
        assert moved(group.subscriptions, ours) <= moved(group.subscriptions, java), f"more movement\n{report}"


def _member(topics: list[str], owned: list[tuple[str, int]] = ()) -> Subscription:  # type: ignore[assignment]
    return Subscription(topics, owned_partitions=[TopicPartition(t, p) for t, p in owned], generation_id=0)


MORE_MOVEMENT = Group(
    Cluster({"t0": 5, "t1": 6, "t2": 7}),
    {
        "c0": _member([]),
        "c1": _member(["t1"]),
        "c2": _member(["t0", "t1", "t2"]),
        "c3": _member(["t1"]),
        "c4": _member(["t0", "t1"], [("t0", 0), ("t0", 1), ("t0", 2), ("t1", 0), ("t1", 1), ("t1", 2), ("t1", 3)]),
        "c5": _member(["t0", "t1", "t2"]),
        "c6": _member(["t0"]),
    },
)
"""Found by this property (Kafka 4.4): c4 held 7 and keeps 3; Kafka's c4 keeps t0-0, t1-0, t1-1, ours keeps only
t1-0, t1-1 and takes the never-assigned t0-4 instead: 6 partitions move against Kafka's 5, at equal balance."""

SALTS = st.lists(st.integers(1, 2**32), min_size=7, max_size=7, unique=True)  # 8 runs: a tie is seen as one


@settings(max_examples=EXAMPLES)
@given(group=server_groups(identical=True), salts=SALTS)
def test_uniform_kafka_where_order_free_else_as_good(oracle: JavaOracle, group: Group, salts: list[int]) -> None:
    stable = oracle.version_tuple >= KAFKA_18688
    check(oracle, group, salts, stable_extras=stable, movement=stable)


@pytest.mark.xfail(
    strict=True,
    reason="heterogeneous uniform: on some groups ours moves more partitions than Kafka's at equal balance (reported)",
)
@settings(max_examples=EXAMPLES, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(group=server_groups(identical=False), salts=SALTS)
@example(group=MORE_MOVEMENT, salts=[1, 2, 3, 4, 5, 6, 7])
def test_uniform_heterogeneous_kafka_where_order_free_else_as_good(
    oracle: JavaOracle, group: Group, salts: list[int]
) -> None:
    check(oracle, group, salts, stable_extras=oracle.version_tuple >= KAFKA_18688)


@settings(max_examples=EXAMPLES)
@given(group=server_groups(identical=True), salts=SALTS)
def test_uniform_before_kafka_18688_against_kafka_4_0(
    legacy_oracle: JavaOracle, group: Group, salts: list[int]
) -> None:
    """Where Kafka's order decides, the old mode moves what that order moves: only balance is compared there."""
    assert legacy_oracle.version_tuple < KAFKA_18688, legacy_oracle.version
    check(legacy_oracle, group, salts, stable_extras=False, movement=False)
