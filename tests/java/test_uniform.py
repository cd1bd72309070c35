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
from hypothesis import example, given, settings
from hypothesis import strategies as st

from assignors import Assignment, Cluster, Subscription, TopicPartition
from assignors.consumer_group import UniformAssignor
from assignors.testing import Group, validity_problems
from helpers.java_oracle import JavaError, JavaOracle, side_by_side
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


def java_runs(
    oracle: JavaOracle, group: Group, salts: list[int], *, original: bool = True
) -> list[dict[str, frozenset[TopicPartition]]]:
    """Kafka's target on the group (unless not ``original``), then on each relabelled copy, mapped back.

    A copy renames every member to a random id (so both their HashMap order and their sorted order change) and
    gives every topic another Uuid.
    """
    runs = []
    for salt in [0, *salts] if original else salts:
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


def kafka_churns_a_member(group: Group, java: Mapping[str, frozenset[TopicPartition]]) -> bool:
    """Kafka's target takes a partition of a topic from a member and gives that member another of the same topic.

    ``UniformHeterogeneousAssignmentBuilder`` fills the unassigned partitions before it balances, so a member can
    get a fresh partition of a topic in the fill and lose one of its own of that topic in ``balanceTopics``.
    Ours gives the member its own back (``_restore`` in assignors.consumer_group._heterogeneous): the same loads,
    fewer moves (docs/java-parity.md). Where Kafka's order decides, the usual comparison covers it.
    """
    previous = {tp: m for m, s in group.subscriptions.items() for tp in s.owned_partitions}
    for member, partitions in java.items():
        lost = {tp.topic for tp, owner in previous.items() if owner == member and tp not in partitions}
        if any(tp.topic in lost and previous.get(tp) != member for tp in partitions):
            return True
    return False


MORE_SALTS = [2**32 + k for k in range(1, 25)]
"""Relabellings tried before calling a difference from an order-free Kafka target a failure: 8 runs that agree
can still hang on one coin flip of Kafka's order (1 in 128); 32 leave 1 in 2^31."""


def kafka_mismatches_a_movement_record(error: JavaError) -> bool:
    """Kafka 3.9's heterogeneous builder throws ``PartitionAssignorException: Mismatch in partition movement
    record with respect to partition ownership during a rebalance`` (its ``PartitionMovements`` bookkeeping, which
    Kafka 4.0 replaced with ``MemberAssignmentBalancer``) on some groups with previous targets
    (docs/java-parity.md). Ours assigns them."""
    return error.java_class.endswith("PartitionAssignorException") and "Mismatch in partition movement" in str(error)


def squares(result: Mapping[str, Assignment] | Mapping[str, frozenset[TopicPartition]]) -> int:
    """The sum of the squared member loads: lower is more even."""
    return sum(len(a.partitions if isinstance(a, Assignment) else a) ** 2 for a in result.values())


def check(oracle: JavaOracle, group: Group, salts: list[int], *, stable_extras: bool, movement: bool = True) -> None:
    ours = UniformAssignor(stable_extras=stable_extras).assign(group.cluster, group.subscriptions)
    try:
        runs = java_runs(oracle, group, salts)
    except JavaError as error:
        if not kafka_mismatches_a_movement_record(error):
            raise
        assert not validity_problems(group.cluster, group.subscriptions, ours), group
        return
    java = {m: Assignment(sorted(p)) for m, p in runs[0].items()}
    report = f"{group}\n{side_by_side(ours, java)}"
    exact = {m: frozenset(a.partitions) for m, a in ours.items()} == runs[0]
    if not exact and squares(ours) < min(map(squares, runs)):
        return  # more even than any of Kafka's: the chains Kafka's passes over one topic at a time cannot find
    if not depends_on_java_order(runs) and not exact:
        runs += java_runs(oracle, group, MORE_SALTS, original=False)
    if not depends_on_java_order(runs):
        if not exact and kafka_churns_a_member(group, runs[0]):
            assert sorted(map(len, (a.partitions for a in ours.values()))) == sorted(map(len, runs[0].values())), (
                f"not Kafka's loads\n{report}"
            )
            assert moved(group.subscriptions, ours) < moved(group.subscriptions, java), f"no fewer moves\n{report}"
            return
        assert exact, f"not Kafka's exactly (in {len(runs)} relabelled runs)\n{report}"
        return
    ours_squares, java_squares = squares(ours), squares(java)
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
"""Found by this property (Kafka 4.4): c4 held 7 and keeps 3; Kafka's c4 keeps t0-0, t1-0, t1-1. Ours, a
transcription of Kafka's balancing, kept only t1-0, t1-1 and took the never-assigned t0-4 instead (as Kafka itself
does under other member and topic ids): 5 moves against Kafka's 4. Ours now gives a member back what it lost for
what it gained of the same topic (``_restore`` in assignors.consumer_group._heterogeneous)."""

KAFKA_CHURNS = Group(
    Cluster({"t0": 2, "t1": 0, "t2": 0, "t3": 6}),
    {
        "c0": _member([]),
        "c1": _member(["t0", "t1", "t2", "t3"]),
        "c2": _member(["t0", "t1", "t2", "t3"], [("t0", 0), ("t0", 1), ("t3", 0), ("t3", 1), ("t3", 2)]),
        "c3": _member(["t0"]),
    },
)
"""Found by this property (Kafka 4.4, the same target under 32 relabellings): Kafka's c2 gets the fresh t3-5 in
the fill and then gives up its own t3-2 to c1; ours keeps t3-2 and hands c1 t3-5 (:func:`kafka_churns_a_member`)."""

ALMOST_BALANCED = Group(
    Cluster({"t0": 0, "t1": 7, "t2": 8}),
    {
        **{member: _member([]) for member in ("c0", "c3", "c4")},
        **{member: _member(["t0", "t1", "t2"]) for member in ("c1", "c2")},
        **{member: _member(["t0", "t1"]) for member in ("c5", "c6")},
        "c7": _member(["t2"]),
    },
)
"""Found by this property in a random run (Kafka 4.4): Kafka's passes over one topic at a time leave 3/3/4/3/2
under some member ids (3/3/3/3/3 under the original ones); ours hands a partition along c7 -> c1 -> c5: 3 each."""

EQUAL_BALANCE_MORE_MOVES = Group(
    Cluster({"t0": 4, "t1": 3, "t2": 0, "t3": 4}),
    {
        "c0": _member([]),
        "c1": _member(["t0", "t1", "t2", "t3"], [("t1", 1)]),
        "c2": _member(["t1"], [("t1", 0)]),
        "c3": _member(["t0", "t1"]),
        "c4": _member(["t0"], [("t0", 0), ("t0", 1), ("t0", 2)]),
    },
)
"""Found by this property in a random run (Kafka 4.4, open): the same loads (4/3/2/2), Kafka's target under the
original ids moves 1 (c1's t1-1), ours 2 (c1's t1-1 and c4's t0-2); Kafka's under other ids moves 2 as well."""

SALTS = st.lists(st.integers(1, 2**32), min_size=7, max_size=7, unique=True)  # 8 runs: a tie is seen as one


@settings(max_examples=EXAMPLES)
@given(group=server_groups(identical=True), salts=SALTS)
def test_uniform_kafka_where_order_free_else_as_good(oracle: JavaOracle, group: Group, salts: list[int]) -> None:
    stable = oracle.version_tuple >= KAFKA_18688
    check(oracle, group, salts, stable_extras=stable, movement=stable)


@settings(max_examples=EXAMPLES)
@given(group=server_groups(identical=False), salts=SALTS)
@example(group=MORE_MOVEMENT, salts=[1, 2, 3, 4, 5, 6, 7])
@example(group=KAFKA_CHURNS, salts=[1, 2, 3, 4, 5, 6, 7])
@example(group=ALMOST_BALANCED, salts=[1, 2, 3, 4, 5, 6, 7])
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


@pytest.mark.xfail(
    strict=True,
    reason="open finding (docs/java-parity.md): at equal balance ours can move more than Kafka's order-dependent best",
)
def test_equal_balance_moves_no_more_than_kafka_under_its_original_ids(oracle: JavaOracle) -> None:
    group = EQUAL_BALANCE_MORE_MOVES
    ours = UniformAssignor().assign(group.cluster, group.subscriptions)
    java = {m: Assignment(sorted(p)) for m, p in java_runs(oracle, group, [])[0].items()}
    assert squares(ours) == squares(java)
    assert moved(group.subscriptions, ours) <= moved(group.subscriptions, java), side_by_side(ours, java)
