"""Level 2 of the sticky objective: as balanced as possible, with mixed subscriptions too.

The member loads of sticky's (and cooperative-sticky's settled) result have the smallest
sum of squares any valid assignment reaches (checked against an independent MILP in
tests/helpers/sticky_oracle.py); Kafka's local ``isBalanced`` test follows from it. Kafka's own
unequal-subscription tests pinned, where Kafka asserts 4/4/4.
"""

from __future__ import annotations

from hypothesis import given

from assignors import Assignment, Cluster, CooperativeStickyAssignor, StickyAssignor, Subscription, TopicPartition
from assignors.testing import Group, balance_problems, groups, load_squares, owning, settle, sticky_score
from helpers.sticky_oracle import fewest_squares, solve

TP = TopicPartition
THREE = Cluster({"topic": 4, "topic2": 4, "topic3": 4})
ALL = ["topic", "topic2", "topic3"]


def _show(result: dict[str, Assignment]) -> dict[str, list[str]]:
    return {m: [str(tp) for tp in a.partitions] for m, a in sorted(result.items())}


def _owning(topics: list[str], partitions: tuple[TP, ...], generation: int) -> Subscription:
    return Subscription(topics, owned_partitions=partitions, generation_id=generation)


def test_kafka_multiple_generations_2_with_unequal_subscriptions_is_four_each() -> None:
    """``StickyAssignorTest.testAssignmentWithMultipleGenerations2`` (isAllSubscriptionsEqual false).

    consumer1 on ``topic``, consumer2 on all three, consumer3 on ``topic`` and ``topic2``:
    each gets one whole topic (Kafka: 4/4/4; before, ours was 5/4/3). consumer2 then alone
    takes all 12, keeping its own; in the third step consumer2 claims all 12 in generation
    2 against generation-1 claims of the others, and the result is 4/4/4 again.
    """
    subs = {"consumer1": Subscription(["topic"]), "consumer2": Subscription(ALL), "consumer3": Subscription(ALL[:2])}
    first = StickyAssignor().assign(THREE, subs)
    assert _show(first) == {
        "consumer1": ["topic-0", "topic-1", "topic-2", "topic-3"],
        "consumer2": ["topic3-0", "topic3-1", "topic3-2", "topic3-3"],
        "consumer3": ["topic2-0", "topic2-1", "topic2-2", "topic2-3"],
    }
    second = StickyAssignor().assign(THREE, {"consumer2": _owning(ALL, first["consumer2"].partitions, 1)})
    assert len(second["consumer2"].partitions) == 12
    assert set(first["consumer2"].partitions) <= set(second["consumer2"].partitions)
    third_subs = {
        "consumer1": _owning(["topic"], first["consumer1"].partitions, 1),
        "consumer2": _owning(ALL, second["consumer2"].partitions, 2),
        "consumer3": _owning(ALL[:2], first["consumer3"].partitions, 1),
    }
    third = StickyAssignor().assign(THREE, third_subs)
    assert sorted(len(a.partitions) for a in third.values()) == [4, 4, 4]
    assert _show(third) == {  # consumer1 and consumer3 get back what they had, in the order they receive it
        "consumer1": ["topic-3", "topic-2", "topic-1", "topic-0"],
        "consumer2": ["topic3-0", "topic3-1", "topic3-2", "topic3-3"],
        "consumer3": ["topic2-3", "topic2-2", "topic2-1", "topic2-0"],
    }
    # consumer2 owns all 12 in generation 2: 8 must move to reach 4/4/4, as in Kafka.
    assert sticky_score(THREE, third_subs, {m: a.partitions for m, a in third.items()}).moved == 8


def test_kafka_conflicting_previous_generations_with_unequal_subscriptions_is_four_each() -> None:
    """``AbstractStickyAssignorTest.testAssignmentWithConflictingPreviousGenerations`` (unequal subscriptions).

    consumer1 (``topic``) claims all of ``topic`` in generation 1; consumer2 (``topic``,
    ``topic2``) claims ``topic-0``, ``topic-1`` and all of ``topic2`` in generation 2;
    consumer3 (all) ``topic-2``, ``topic-3`` and all of ``topic3`` in generation 2. Kafka
    asserts 4/4/4, with consumer2's and consumer3's results within their claims.
    """
    t, t2, t3 = ([TP(name, p) for p in range(4)] for name in ALL)
    subs = {
        "consumer1": _owning(["topic"], tuple(t), 1),
        "consumer2": _owning(ALL[:2], (t[0], t[1], *t2), 2),
        "consumer3": _owning(ALL, (t[2], t[3], *t3), 2),
    }
    for make in (StickyAssignor, CooperativeStickyAssignor):
        result, _ = settle(make, THREE, subs, 3)
        assert sorted(len(a.partitions) for a in result.values()) == [4, 4, 4]
        assert set(result["consumer2"].partitions) <= set(subs["consumer2"].owned_partitions)
        assert set(result["consumer3"].partitions) <= set(subs["consumer3"].owned_partitions)
    assert _show(StickyAssignor().assign(THREE, subs)) == {  # consumer1's claim lost to generation 2: all new to it
        "consumer1": ["topic-1", "topic-3", "topic-0", "topic-2"],
        "consumer2": ["topic2-0", "topic2-1", "topic2-2", "topic2-3"],
        "consumer3": ["topic3-0", "topic3-1", "topic3-2", "topic3-3"],
    }


def test_a_chain_of_three_evens_loads_the_sticky_condition_accepts() -> None:
    """5/4/3 passes Kafka's isBalanced (no single move helps) yet 4/4/4 is reachable by a chain.

    a (on x) holds 3, b (on x, y) 4, c (on y, z) 5: c gives a ``y`` to b, b an ``x`` to a.
    """
    cluster = Cluster({"x": 4, "y": 4, "z": 4})
    uneven = {
        "a": [TP("x", 0), TP("x", 1), TP("x", 2)],
        "b": [TP("x", 3), TP("y", 0), TP("y", 1), TP("y", 2)],
        "c": [TP("y", 3), *(TP("z", p) for p in range(4))],
    }
    topics = {"a": ["x"], "b": ["x", "y"], "c": ["y", "z"]}
    subs = {m: _owning(topics[m], tuple(p), 1) for m, p in uneven.items()}
    assert balance_problems(subs, {m: Assignment(p) for m, p in uneven.items()}) == []  # Kafka's test passes
    result = StickyAssignor().assign(cluster, subs)
    assert [len(result[m].partitions) for m in "abc"] == [4, 4, 4]
    assert sticky_score(cluster, subs, {m: a.partitions for m, a in result.items()}).moved == 2


def _settled_squares(make: type[StickyAssignor | CooperativeStickyAssignor], group: Group) -> tuple[int, int]:
    generation = max((s.generation_id for s in group.subscriptions.values()), default=0) + 1
    result, _ = settle(make, group.cluster, group.subscriptions, generation)
    return load_squares({m: a.partitions for m, a in result.items()}), generation


@given(group=groups(identical=False, owned=True, max_members=6, max_partitions=10))
def test_mixed_groups_reach_the_fewest_squared_loads(group: Group) -> None:
    """Mixed subscriptions, any claims and racks: both assignors' settled loads have the fewest squares (oracle)."""
    best = fewest_squares(group.cluster, group.subscriptions)
    for make in (StickyAssignor, CooperativeStickyAssignor):
        assert _settled_squares(make, group)[0] == best


@given(group=groups(identical=False, max_members=6, max_partitions=10))
def test_members_with_equal_subscriptions_differ_by_at_most_one(group: Group) -> None:
    """Members with equal subscriptions are interchangeable: their loads differ by at most one."""
    result = StickyAssignor().assign(group.cluster, group.subscriptions)
    loads: dict[frozenset[str], list[int]] = {}
    for member, subscription in group.subscriptions.items():
        loads.setdefault(frozenset(subscription.topics), []).append(len(result[member].partitions))
    for same in loads.values():
        assert max(same) - min(same) <= 1


@given(group=groups(identical=False, owned=True, max_members=5, max_partitions=8))
def test_mixed_groups_are_exact_at_levels_two_to_four(group: Group) -> None:
    """Against the oracle's full lexicographic optimum: equal squared loads, partitions moved and mismatches."""
    subs = {m: owning(s, tuple(sorted(set(s.owned_partitions))), 1) for m, s in group.subscriptions.items()}
    best = solve(group.cluster, subs)
    result = StickyAssignor().assign(group.cluster, subs)
    ours = {m: a.partitions for m, a in result.items()}
    theirs, mine = sticky_score(group.cluster, subs, best), sticky_score(group.cluster, subs, ours)
    assert (load_squares(ours), mine.moved, mine.mismatched) == (load_squares(best), theirs.moved, theirs.mismatched)


def test_chains_even_the_loads_above_the_exact_phase() -> None:
    """The 5/4/3 of Kafka's shape beside a 150-partition topic of a fourth member: 648 > 400 (no exact phase).

    The chains alone (no cycle cancelling) reach 4/4/4 and 150, moving the two partitions
    that the chain consumer2 -> consumer3 -> consumer1 needs, and nothing else.
    """
    cluster = Cluster({"topic": 4, "topic2": 4, "topic3": 4, "topic4": 150})
    owned = {
        "consumer1": (TP("topic", 1), TP("topic", 2), TP("topic", 3)),
        "consumer2": (TP("topic2", 0), *(TP("topic3", p) for p in range(4))),
        "consumer3": (TP("topic", 0), TP("topic2", 1), TP("topic2", 2), TP("topic2", 3)),
        "consumer4": tuple(cluster.partitions("topic4")),
    }
    topics = {"consumer1": ["topic"], "consumer2": ALL, "consumer3": ALL[:2], "consumer4": ["topic4"]}
    subs = {m: _owning(topics[m], owned[m], 1) for m in topics}
    assert balance_problems(subs, {m: Assignment(p) for m, p in owned.items()}) == []  # Kafka's test passes
    result = StickyAssignor().assign(cluster, subs)
    assert {m: len(a.partitions) for m, a in result.items()} == {
        "consumer1": 4,
        "consumer2": 4,
        "consumer3": 4,
        "consumer4": 150,
    }
    assert sticky_score(cluster, subs, {m: a.partitions for m, a in result.items()}).moved == 2
