"""KIP-848's server-side assignors: Kafka's unit-test examples pinned, and their invariants as properties."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import Assignment, Cluster, InvalidSubscriptionError, Subscription, TopicPartition
from assignors.consumer_group import (
    KAFKA_VERSION,
    MAX_ITERATION_COUNT,
    EvenUniformAssignor,
    RangeAssignor,
    ServerAssignor,
    UniformAssignor,
    coordinator_member_order,
)
from assignors.testing import (
    Group,
    balance_problems,
    check_assignor,
    fixpoint_problems,
    groups,
    load_squares,
    validity_problems,
)
from helpers.sticky_oracle import fewest_squares

Spec = Mapping[str, tuple[list[str], dict[str, list[int]]]]

# This library iterates topics by name where Kafka uses Java hash order. Kafka's homogeneous tests iterate
# the never-assigned partitions in HashSet order of their topic Uuids, T2, T3, T1, but walk each member's
# previous target in the order the test wrote it (a LinkedHashMap: T1, T2). Each example below names its
# topics so that name order is the order its outcome hinges on: HASH_ORDER, or the names as written.
HASH_ORDER = {"T2": "a-T2", "T3": "b-T3", "T1": "c-T1"}


def group(
    counts: Mapping[str, int], spec: Spec, rename: Mapping[str, str] | None = None
) -> tuple[Cluster, dict[str, Subscription]]:
    name = (lambda t: rename.get(t, t)) if rename else (lambda t: t)
    cluster = Cluster({name(t): n for t, n in counts.items()})
    subscriptions = {
        member: Subscription(
            [name(t) for t in topics],
            owned_partitions=[TopicPartition(name(t), p) for t, ps in owned.items() for p in ps],
        )
        for member, (topics, owned) in spec.items()
    }
    return cluster, subscriptions


def shown(result: Mapping[str, Assignment], rename: Mapping[str, str] | None = None) -> dict[str, dict[str, list[int]]]:
    back = {v: k for k, v in (rename or {}).items()}
    out: dict[str, dict[str, list[int]]] = {}
    for member, assignment in result.items():
        per_topic: dict[str, list[int]] = {}
        for tp in assignment.partitions:
            per_topic.setdefault(back.get(tp.topic, tp.topic), []).append(tp.partition)
        out[member] = per_topic
    return out


# --- homogeneous uniform: Kafka's UniformHomogeneousAssignmentBuilderTest (after KAFKA-18688) and
# OptimizedUniformAssignmentBuilderTest (before it, Kafka 3.8-4.0) ---

T13 = ["T1", "T3"]
T12 = ["T1", "T2"]
Expected = dict[str, dict[str, list[int]]]
HOMOGENEOUS: dict[str, tuple[dict[str, int], Spec, Expected, Expected | None]] = {
    "testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks": (
        {"T1": 3, "T3": 2},
        {"A": (T13, {}), "B": (T13, {})},
        {"A": {"T3": [0, 1]}, "B": {"T1": [0, 1, 2]}},
        {"A": {"T1": [0], "T3": [0, 1]}, "B": {"T1": [1, 2]}},
    ),
    "testFirstAssignmentNumMembersGreaterThanTotalNumPartitions": (
        {"T3": 2},
        {"A": (["T3"], {}), "B": (["T3"], {}), "C": (["T3"], {})},
        {"A": {}, "B": {"T3": [0]}, "C": {"T3": [1]}},
        {"A": {"T3": [0]}, "B": {"T3": [1]}, "C": {}},
    ),
    "testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment": (  # A keeps T1 first
        {"T1": 3, "T2": 3},
        {"A": (T12, {"T1": [0, 1], "T2": [0, 1]}), "B": (T12, {"T1": [2], "T2": [2]})},
        {"A": {"T1": [0, 1], "T2": [0]}, "B": {"T1": [2], "T2": [1, 2]}},
        None,
    ),
    "testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics": (
        {"T1": 6, "T2": 5},
        {"A": (T12, {"T1": [0, 2], "T2": [0]}), "B": (T12, {"T1": [1], "T2": [1, 2]})},
        {"A": {"T1": [0, 2], "T2": [0, 3, 4]}, "B": {"T1": [1, 3, 4, 5], "T2": [1, 2]}},
        {"A": {"T1": [0, 2, 3], "T2": [0, 3, 4]}, "B": {"T1": [1, 4, 5], "T2": [1, 2]}},
    ),
    "testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics": (  # B keeps T1 first
        {"T1": 3, "T2": 3},
        {"A": (T12, {"T1": [0, 2], "T2": [0]}), "B": (T12, {"T1": [1], "T2": [1, 2]}), "C": (T12, {})},
        {"A": {"T1": [0, 2]}, "B": {"T1": [1], "T2": [1]}, "C": {"T2": [0, 2]}},
        None,
    ),
    "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics": (
        {"T1": 3, "T2": 3},
        {"A": (T12, {"T1": [0], "T2": [0]}), "B": (T12, {"T1": [1], "T2": [1]})},
        {"A": {"T1": [0], "T2": [0, 2]}, "B": {"T1": [1, 2], "T2": [1]}},
        None,
    ),
    "testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        {"T1": 2, "T2": 2},
        {"A": (["T2"], {"T1": [0], "T2": [0]}), "B": (["T2"], {"T1": [1], "T2": [1]})},
        {"A": {"T2": [0]}, "B": {"T2": [1]}},
        None,
    ),
}


WALK_ORDER_EXAMPLES = {
    "testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment",
    "testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics",
}


VERSIONS = {"4.4.0": True, "4.0.1": True, "4.0.0": False, "3.9.1": False, "3.8.0": False}
"""Kafka versions and whether their homogeneous builder has KAFKA-18688's stable extras (4.0.1 and 4.1.0 on)."""


@pytest.mark.parametrize("version", sorted(VERSIONS))
@pytest.mark.parametrize("name", sorted(HOMOGENEOUS))
def test_homogeneous_examples(name: str, version: str) -> None:
    """Kafka's homogeneous builder tests, both builders (None: the same expectation in both)."""
    counts, spec, after_fix, before_fix = HOMOGENEOUS[name]
    expected = after_fix if VERSIONS[version] or before_fix is None else before_fix
    naming = None if name in WALK_ORDER_EXAMPLES else HASH_ORDER
    cluster, subs = group(counts, spec, naming)
    assert shown(UniformAssignor(kafka_version=version).assign(cluster, subs), naming) == expected
    assert UniformAssignor(stable_extras=VERSIONS[version]).assign(cluster, subs) == UniformAssignor(
        kafka_version=version
    ).assign(cluster, subs)
    assert EvenUniformAssignor(kafka_version=version).assign(cluster, subs) == UniformAssignor(
        kafka_version=version
    ).assign(cluster, subs)


def test_kafka_18688_balanced_group_moves_before_the_fix_only() -> None:
    """7 partitions over A=2, B=3, C=2: balanced, yet Kafka 3.8-4.0 moves one of B's to A."""
    owned = {"A": [0, 1], "B": [2, 3, 4], "C": [5, 6]}
    cluster, subs = group({"t": 7}, {m: (["t"], {"t": ps}) for m, ps in owned.items()})
    assert shown(UniformAssignor().assign(cluster, subs)) == {m: {"t": ps} for m, ps in owned.items()}
    before = shown(UniformAssignor(stable_extras=False).assign(cluster, subs))
    assert before == {"A": {"t": [0, 1, 4]}, "B": {"t": [2, 3]}, "C": {"t": [5, 6]}}


# --- heterogeneous uniform: Kafka's UniformHeterogeneousAssignmentBuilderTest ---

HETEROGENEOUS: dict[str, tuple[dict[str, int], Spec, Expected]] = {
    "testFirstAssignmentTwoMembersTwoTopics": (
        {"T1": 3, "T3": 6},
        {"A": (T13, {}), "B": (["T3"], {})},
        {"A": {"T1": [0, 1, 2], "T3": [4]}, "B": {"T3": [0, 1, 2, 3, 5]}},
    ),
    "testFirstAssignmentNumMembersGreaterThanTotalNumPartitions": (
        {"T1": 2, "T3": 1},
        {"A": (["T3"], {}), "B": (["T3"], {}), "C": (["T1"], {})},
        {"A": {"T3": [0]}, "B": {}, "C": {"T1": [0, 1]}},
    ),
    "testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment": (
        {"T1": 6, "T2": 4, "T3": 4},
        {
            "A": (["T1"], {"T1": [0, 1, 2]}),
            "B": (T12, {"T1": [3], "T2": [0]}),
            "C": (["T1", "T2", "T3"], {"T1": [4, 5], "T2": [1, 2, 3], "T3": [0, 1, 2, 3]}),
        },
        {"A": {"T1": [0, 1, 2, 5]}, "B": {"T1": [3], "T2": [0, 1, 2, 3]}, "C": {"T1": [4], "T3": [0, 1, 2, 3]}},
    ),
    "testReassignmentWhenPartitionsAreAddedForTwoMembers": (
        {"T1": 6, "T2": 5, "T3": 3, "T4": 3},
        {
            "A": (T13, {"T1": [0, 1, 2, 3], "T3": [0, 1]}),
            "B": (["T1", "T2", "T3", "T4"], {"T2": [0, 1, 2], "T4": [0, 1, 2]}),
        },
        {"A": {"T1": [0, 1, 2, 3, 4, 5], "T3": [0, 1, 2]}, "B": {"T2": [0, 1, 2, 3, 4], "T4": [0, 1, 2]}},
    ),
    "testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics": (
        {"T1": 6, "T2": 7},
        {"A": (["T1"], {"T1": [0, 2], "T2": [0]}), "B": (T12, {"T1": [1], "T2": [1, 2]}), "C": (T12, {})},
        {"A": {"T1": [0, 2, 3, 4, 5]}, "B": {"T1": [1], "T2": [1, 2, 6]}, "C": {"T2": [0, 3, 4, 5]}},
    ),
    "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics": (
        {"T1": 3, "T2": 8, "T3": 3},
        {"A": (T13, {"T1": [0, 1, 2], "T3": [0, 1]}), "B": (["T2"], {"T2": [3, 4, 5, 6]})},
        {"A": {"T1": [0, 1, 2], "T3": [0, 1, 2]}, "B": {"T2": [0, 1, 2, 3, 4, 5, 6, 7]}},
    ),
    "testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        {"T1": 3, "T2": 5},
        {"A": (["T1"], {"T1": [0, 2], "T2": [1, 3]}), "B": (T12, {"T1": [1], "T2": [0, 2, 4]})},
        {"A": {"T1": [0, 1, 2]}, "B": {"T2": [0, 1, 2, 3, 4]}},
    ),
    "testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions": (
        {"T1": 2, "T2": 2, "T3": 2},
        {
            "A": (["T1", "T2", "T3"], {"T1": [0, 1], "T2": [0, 1], "T3": [0, 1]}),
            "B": (["T1", "T2", "T3"], {}),
        },
        {"A": {"T2": [0], "T3": [0, 1]}, "B": {"T1": [0, 1], "T2": [1]}},
    ),
    "testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions": (
        {"T1": 3},
        {"A": (["T1"], {}), "B": ([], {})},
        {"A": {"T1": [0, 1, 2]}, "B": {}},
    ),
}


def heterogeneous(cluster: Cluster, subs: Mapping[str, Subscription]) -> dict[str, Assignment]:
    """Kafka's heterogeneous builder itself, as its test calls it (even on identical subscriptions)."""
    from assignors.consumer_group._common import previous_targets
    from assignors.consumer_group._heterogeneous import heterogeneous_targets

    order = sorted(subs)
    counts = {t: n for t, n in cluster.partitions_per_topic.items() if n}
    current, owners = previous_targets(order, counts, subs)
    subscribers = {t: [i for i, m in enumerate(order) if t in subs[m].topics] for t in counts}
    topics_of = [frozenset(t for t in subs[m].topics if t in counts) for m in order]
    subscribers = {t: s for t, s in subscribers.items() if s}
    lists = heterogeneous_targets(subscribers, counts, current, owners, members=order, topics_of=topics_of)
    return {m: Assignment(sorted(ps)) for m, ps in zip(order, lists, strict=True)}


@pytest.mark.parametrize("name", sorted(HETEROGENEOUS))
def test_heterogeneous_examples(name: str) -> None:
    counts, spec, expected = HETEROGENEOUS[name]
    cluster, subs = group(counts, spec)
    assert shown(heterogeneous(cluster, subs)) == expected
    if len({s.topics for s in subs.values()}) > 1:  # the assignor dispatches these to the same builder
        assert shown(UniformAssignor().assign(cluster, subs)) == expected
        assert UniformAssignor(stable_extras=False).assign(cluster, subs) == UniformAssignor().assign(cluster, subs)


def test_heterogeneous_overlap_ends_almost_balanced_as_kafka_and_even_in_uniform_even(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kafka's javadoc: overlapping subscriptions can end 9/10/11, each topic balanced on its own; uniform-even: 10s.

    Kafka's passes move partitions of one topic at a time; evening 9/10/11 out takes a chain across topics (m3
    gives a y to m2, which gives an x to m1), which uniform-even's final step finds.
    """
    from assignors.consumer_group import _uniform

    cluster, subs = group(
        {"x": 20, "y": 10},
        {
            "m1": (["x"], {"x": list(range(9))}),
            "m2": (["x", "y"], {"x": list(range(9, 20)), "y": []}),
            "m3": (["y"], {"y": list(range(10))}),
        },
    )
    result = EvenUniformAssignor().assign(cluster, subs)
    assert {m: len(a.partitions) for m, a in result.items()} == {"m1": 10, "m2": 10, "m3": 10}
    cluster, subs = group(
        {"x": 19, "y": 11},
        {"m1": (["x"], {"x": list(range(9))}), "m2": (["x", "y"], {"x": list(range(9, 19))}), "m3": (["y"], {})},
    )
    result = EvenUniformAssignor().assign(cluster, subs)
    assert {m: len(a.partitions) for m, a in result.items()} == {"m1": 10, "m2": 10, "m3": 10}
    kafka = UniformAssignor().assign(cluster, subs)
    assert {m: len(a.partitions) for m, a in kafka.items()} == {"m1": 9, "m2": 10, "m3": 11}
    with monkeypatch.context() as patched:  # more distinct subscriptions than the search takes: Kafka's loads
        patched.setattr(_uniform, "MOST_EVEN_CLASSES", 2)
        assert EvenUniformAssignor().assign(cluster, subs) == kafka
    assert not balance_problems(subs, kafka)  # no single move helps: 9/10/11 needs two moves to become 10/10/10


def test_iteration_cap_is_kafkas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Balancing t1 unbalances t0, which a second pass over the topics fixes; a cap of one pass would stop before.

    Traced by hand: m0 keeps t0-2 (m2's claim on it loses: m0 comes first), m2 keeps t0-1 and t1-0; the fill gives
    t0-0 and t0-3 to m0 (3, 2, 0). Pass 1: t0 is within one (3/2); t1 moves t1-0 from m2 to m1 (3, 1, 1). Pass 2:
    t0 moves m0's highest, t0-3, to m2 (2, 1, 2). Pass 3 moves nothing on t0 again: stop.
    """
    from assignors.consumer_group import _heterogeneous

    cluster, subs = group(
        {"t0": 4, "t1": 1},
        {"m0": (["t0"], {"t0": [2]}), "m1": (["t1"], {}), "m2": (["t0", "t1"], {"t0": [1, 2], "t1": [0]})},
    )
    assert MAX_ITERATION_COUNT == 16
    expected = {"m0": {"t0": [0, 2]}, "m1": {"t1": [0]}, "m2": {"t0": [1, 3]}}
    assert shown(UniformAssignor().assign(cluster, subs)) == expected
    monkeypatch.setattr(_heterogeneous, "MAX_ITERATION_COUNT", 1)
    one_pass = {"m0": {"t0": [0, 2, 3]}, "m1": {"t1": [0]}, "m2": {"t0": [1]}}
    assert shown(UniformAssignor().assign(cluster, subs)) == one_pass


# --- range: Kafka's RangeAssignorTest (server side) ---

RANGE: dict[str, tuple[dict[str, int], Spec, Expected]] = {
    "testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions": (
        {"T1": 3, "T3": 2},
        {"A": (T13, {}), "B": (T13, {})},
        {"A": {"T1": [0, 1], "T3": [0]}, "B": {"T1": [2], "T3": [1]}},
    ),
    "testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions": (
        {"T1": 3, "T2": 3, "T3": 2},
        {"A": (T12, {}), "B": (["T3"], {}), "C": (["T2", "T3"], {})},
        {"A": {"T1": [0, 1, 2], "T2": [0, 1]}, "B": {"T3": [0]}, "C": {"T2": [2], "T3": [1]}},
    ),
    "testFirstAssignmentNumMembersGreaterThanNumPartitions": (
        {"T1": 3, "T3": 2},
        {"A": (T13, {}), "B": (T13, {}), "C": (T13, {})},
        {"A": {"T1": [0], "T3": [0]}, "B": {"T1": [1], "T3": [1]}, "C": {"T1": [2]}},
    ),
    "testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded": (
        {"T1": 2, "T2": 2},
        {"A": (T12, {"T1": [0], "T2": [0]}), "B": (T12, {"T1": [1], "T2": [1]}), "C": (T12, {})},
        {"A": {"T1": [0], "T2": [0]}, "B": {"T1": [1], "T2": [1]}, "C": {}},
    ),
    "testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics": (
        {"T1": 4, "T2": 4},
        {"A": (T12, {"T1": [0, 1], "T2": [0, 1]}), "B": (T12, {"T1": [2], "T2": [2]})},
        {"A": {"T1": [0, 1], "T2": [0, 1]}, "B": {"T1": [2, 3], "T2": [2, 3]}},
    ),
    "testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        {"T1": 3, "T2": 3},
        {"A": (T12, {"T1": [0, 1], "T2": [0, 1]}), "B": (T12, {"T1": [2], "T2": [2]}), "C": (T12, {})},
        {"A": {"T1": [0], "T2": [0]}, "B": {"T1": [1], "T2": [1]}, "C": {"T1": [2], "T2": [2]}},
    ),
    "testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics": (
        {"T1": 4, "T2": 3},
        {"A": (T12, {"T1": [0, 1], "T2": [0, 1]}), "B": (T12, {"T1": [2], "T2": [2]}), "C": (["T1"], {})},
        {"A": {"T1": [0, 1], "T2": [0, 1]}, "B": {"T1": [2], "T2": [2]}, "C": {"T1": [3]}},
    ),
    "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        {"T1": 3, "T2": 3},
        {"B": (T12, {"T1": [2], "T2": [2]})},
        {"B": {"T1": [0, 1, 2], "T2": [0, 1, 2]}},
    ),
    "testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics": (
        {"T1": 3, "T2": 3, "T3": 2},
        {"A": (["T1"], {"T1": [0]}), "B": (["T1", "T2", "T3"], {"T2": [0]}), "C": (["T2"], {"T1": [1]})},
        {"A": {"T1": [0, 1]}, "B": {"T1": [2], "T2": [0, 1], "T3": [0, 1]}, "C": {"T2": [2]}},
    ),
}


@pytest.mark.parametrize("name", sorted(RANGE))
def test_range_examples(name: str) -> None:
    counts, spec, expected = RANGE[name]
    cluster, subs = group(counts, spec)
    assert shown(RangeAssignor().assign(cluster, subs)) == expected


@pytest.mark.parametrize("mixed", [False, True], ids=["testStaticMembership", "testMixedStaticMembership"])
def test_range_static_member_replaced_keeps_its_partitions(mixed: bool) -> None:
    """Kafka's RangeAssignorTest: A restarts as memberA1 with the same instance id; every instance keeps its share."""
    instances = {"A": "instanceA", "B": None if mixed else "instanceB"}
    if mixed:
        instances["C"] = "instanceC"
    cluster = Cluster({"T1": 5 if mixed else 3})

    def subs(names: Mapping[str, str | None]) -> dict[str, Subscription]:
        return {m: Subscription(["T1"], group_instance_id=i) for m, i in names.items()}

    before = RangeAssignor().assign(cluster, subs(instances))
    replaced = {("memberA1" if m == "A" else m): i for m, i in instances.items()}
    after = RangeAssignor().assign(cluster, subs(replaced))
    assert after["memberA1"] == before["A"]
    assert all(after[m] == before[m] for m in instances if m != "A")
    assert before["A"].partitions[0] == TopicPartition("T1", 0)  # static members first, by instance id


# --- properties ---


def test_uniform_passes_the_kit() -> None:
    """Validity, balance, determinism, and stickiness (fixpoint, no needless movement when members leave)."""
    check_assignor(UniformAssignor, balance="sticky", sticky=True)


def test_uniform_before_the_fix_passes_the_kit_but_stickiness() -> None:
    check_assignor(lambda: UniformAssignor(stable_extras=False), balance="sticky", sticky=False)
    # The kit's fixpoint check catches KAFKA-18688 on a balanced group whose extra sits on a later member.
    cluster, subs = group({"t": 7}, {"A": (["t"], {"t": [0, 1]}), "B": (["t"], {"t": [2, 3, 4]}), "C": (["t"], {})})
    subs["C"] = Subscription(["t"], owned_partitions=[TopicPartition("t", 5), TopicPartition("t", 6)])
    settled = {m: Assignment(s.owned_partitions) for m, s in subs.items()}
    assert fixpoint_problems(lambda: UniformAssignor(stable_extras=False), cluster, subs, settled, 1)
    assert not fixpoint_problems(UniformAssignor, cluster, subs, settled, 1)


def test_range_passes_the_kit() -> None:
    check_assignor(RangeAssignor, balance="per-topic")


@given(groups(owned=True))
def test_uniform_homogeneous_balance_and_quota_stickiness(g: Group) -> None:
    """Identical subscriptions: sizes within one; each member keeps at least min(its valid target, quota)."""
    topics = sorted({t for s in g.subscriptions.values() for t in s.topics})
    subs = {m: Subscription(topics, owned_partitions=s.owned_partitions) for m, s in g.subscriptions.items()}
    for stable in (True, False):
        result = UniformAssignor(stable_extras=stable).assign(g.cluster, subs)
        assert not validity_problems(g.cluster, subs, result)
        assert not balance_problems(subs, result)
        total = sum(g.cluster.partition_count(t) or 0 for t in topics)
        quota = total // len(subs) if subs else 0
        claimed: set[TopicPartition] = set()
        for member in coordinator_member_order(subs):  # a partition claimed twice: the first in Kafka's order
            valid = [
                tp
                for tp in subs[member].owned_partitions
                if tp.topic in topics
                and tp.partition < (g.cluster.partition_count(tp.topic) or 0)
                and tp not in claimed
            ]
            claimed.update(valid)
            assert len(set(valid) & set(result[member].partitions)) >= min(len(valid), quota)


@given(groups(owned=False), st.randoms(use_true_random=False))
def test_uniform_balanced_target_comes_back_unchanged(g: Group, rnd: object) -> None:
    """After KAFKA-18688 a balanced, valid target is a fixpoint, whoever holds the extras."""
    topics = sorted({t for s in g.subscriptions.values() for t in s.topics})
    subs = {m: Subscription(topics) for m in g.subscriptions}
    first = UniformAssignor().assign(g.cluster, subs)
    # Shuffle who holds which share: still balanced and valid, so it must come back as given.
    members = sorted(subs)
    shares = [first[m].partitions for m in members]
    rnd.shuffle(shares)  # type: ignore[attr-defined]
    owning = {m: Subscription(topics, owned_partitions=p) for m, p in zip(members, shares, strict=True)}
    again = UniformAssignor().assign(g.cluster, owning)
    assert {m: a.partitions for m, a in again.items()} == {m: s.owned_partitions for m, s in owning.items()}


@given(groups(owned=True))
def test_range_ignores_the_previous_target_and_racks(g: Group) -> None:
    from assignors import RangeAssignor as ClassicRangeAssignor

    plain = {m: Subscription(s.topics, group_instance_id=s.group_instance_id) for m, s in g.subscriptions.items()}
    expected = ClassicRangeAssignor().assign(Cluster(g.cluster.partitions_per_topic), plain)
    assert RangeAssignor().assign(g.cluster, g.subscriptions) == expected


def test_server_assignors_are_not_client_assignors() -> None:
    for assignor in (UniformAssignor(), RangeAssignor()):
        assert isinstance(assignor, ServerAssignor)
        assert assignor.supported_protocols == ()
        assert assignor.group_protocol == "CONSUMER"
        assert assignor.subscription_user_data(["t"]) is None
    assert repr(UniformAssignor(stable_extras=False)) == "UniformAssignor(kafka_version='4.0.0')"
    assert repr(UniformAssignor(kafka_version=KAFKA_VERSION)) == "UniformAssignor()"
    assert repr(EvenUniformAssignor(kafka_version="4.1.0")) == "EvenUniformAssignor(kafka_version='4.1.0')"
    assert (UniformAssignor().name, EvenUniformAssignor().name, RangeAssignor().name) == (
        "uniform",
        "uniform-even",
        "range",
    )


def test_bad_input_names_the_field() -> None:
    with pytest.raises(InvalidSubscriptionError, match="member id"):
        UniformAssignor().assign(Cluster({"t": 1}), {"": Subscription(["t"])})
    with pytest.raises(InvalidSubscriptionError, match="cluster"):
        UniformAssignor().assign({"t": 1}, {})  # type: ignore[arg-type]
    assert UniformAssignor().assign(Cluster({"t": 1}), {}) == {}


def test_uniform_goes_through_members_and_topics_in_kafkas_order() -> None:
    """The coordinator's HashMap iterates c3 .. c7 before c0 .. c2 ("c0" hashes to 3117: bucket 13 of 16), and the
    last members in that order take the extras of a fresh group (KAFKA-18688): c1 and c2, dealt the never-assigned
    partitions topic by topic. By name t1 is dealt first; by the topic ids' HashSet (Uuid.hashCode 2 and 1), t2."""
    assert coordinator_member_order([f"c{i}" for i in range(8)]) == ["c3", "c4", "c5", "c6", "c7", "c0", "c1", "c2"]
    subs = {f"c{i}": Subscription(["t1", "t2"]) for i in range(8)}
    by_name = UniformAssignor().assign(Cluster({"t1": 5, "t2": 5}), subs)
    assert shown(by_name) == {
        "c3": {"t1": [0]},
        "c4": {"t1": [1]},
        "c5": {"t1": [2]},
        "c6": {"t1": [3]},
        "c7": {"t1": [4]},
        "c0": {"t2": [0]},
        "c1": {"t2": [1, 2]},
        "c2": {"t2": [3, 4]},
    }
    ids = {"t1": "AAAAAAAAAAAAAAAAAAAAAg", "t2": "AAAAAAAAAAAAAAAAAAAAAQ"}
    by_id = UniformAssignor().assign(Cluster({"t1": 5, "t2": 5}, topic_ids=ids), subs)
    swapped = {"t1": "t2", "t2": "t1"}
    assert shown(by_id) == {m: {swapped[t]: p for t, p in a.items()} for m, a in shown(by_name).items()}


def test_double_claims_and_stale_partitions_are_dropped() -> None:
    cluster, subs = group({"t": 3}, {"A": (["t"], {"t": [0, 1]}), "B": (["t"], {"t": [1, 2]})})
    subs["C"] = Subscription(["t"], owned_partitions=[TopicPartition("t", 7), TopicPartition("gone", 0)])
    result = UniformAssignor().assign(cluster, subs)
    assert not validity_problems(cluster, subs, result)
    assert shown(result) == {"A": {"t": [0]}, "B": {"t": [2]}, "C": {"t": [1]}}


def _listed(result: Mapping[str, Assignment]) -> dict[str, str]:
    """Each member's partitions as one sorted, space-separated string."""
    return {m: " ".join(map(str, sorted(a.partitions))) for m, a in result.items()}


def test_uniform_heterogeneous_gives_a_member_its_own_partition_back_in_uniform_even_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kafka's balancing passes take t0-0 from m4 and later hand m4 the never-assigned t0-4: 5 moves, Kafka's own
    target under these ids (tests/java/test_uniform.py, MORE_MOVEMENT). uniform-even gives m4 its own t0-0 back and
    t0-4 to m5, which had taken t0-0: the same loads, 4 moves.

    Those loads (m2 and m5 at 4, m1 and m3 at 2) are not the most even: uniform-even's final step then hands t2-6
    from m2 to m5, t0-4 from m5 to m4 and t1-1 from m4 to m1 (squares 56 against 58), one move more.
    """
    from assignors.consumer_group import _heterogeneous

    owned = [TopicPartition(t, p) for t, p in (("t0", 0), ("t0", 1), ("t0", 2), ("t1", 0), ("t1", 1), ("t1", 2))]
    owned.append(TopicPartition("t1", 3))
    topics = {"m0": [], "m1": ["t1"], "m2": ["t0", "t1", "t2"], "m3": ["t1"], "m4": ["t0", "t1"]}
    topics |= {"m5": ["t0", "t1", "t2"], "m6": ["t0"]}
    subs = {m: Subscription(t, owned_partitions=owned if m == "m4" else [], generation_id=0) for m, t in topics.items()}
    cluster = Cluster({"t0": 5, "t1": 6, "t2": 7})
    kafka = UniformAssignor().assign(cluster, subs)
    assert _listed(kafka) == {
        "m0": "",
        "m1": "t1-3 t1-4",
        "m2": "t2-0 t2-2 t2-4 t2-6",
        "m3": "t1-2 t1-5",
        "m4": "t0-4 t1-0 t1-1",
        "m5": "t0-0 t2-1 t2-3 t2-5",
        "m6": "t0-1 t0-2 t0-3",
    }
    assert sum(tp not in kafka["m4"].partitions for tp in owned) == 5
    with monkeypatch.context() as patched:  # the give-back, not the final step
        patched.setattr(_heterogeneous, "_most_even", lambda *_: None)
        result = EvenUniformAssignor().assign(cluster, subs)
    assert _listed(result) == {**_listed(kafka), "m4": "t0-0 t1-0 t1-1", "m5": "t0-4 t2-1 t2-3 t2-5"}
    assert sum(tp not in result["m4"].partitions for tp in owned) == 4
    result = EvenUniformAssignor().assign(cluster, subs)
    assert _listed(result) == {
        "m0": "",
        "m1": "t1-1 t1-3 t1-4",
        "m2": "t2-0 t2-2 t2-4",
        "m3": "t1-2 t1-5",
        "m4": "t0-0 t0-4 t1-0",
        "m5": "t2-1 t2-3 t2-5 t2-6",
        "m6": "t0-1 t0-2 t0-3",
    }
    assert sum(tp not in result["m4"].partitions for tp in owned) == 5


@given(group=groups(identical=False, owned=True, max_members=6, max_partitions=10))
def test_uniform_even_heterogeneous_reaches_the_fewest_squared_loads(group: Group) -> None:
    """Mixed subscriptions, any previous targets: uniform-even's loads have the smallest sum of squares any valid
    target has (the exact oracle of the sticky family's level 2), where Kafka's builder stops "almost balanced"."""
    result = EvenUniformAssignor().assign(group.cluster, group.subscriptions)
    assert not validity_problems(group.cluster, group.subscriptions, result)
    loads = {m: a.partitions for m, a in result.items()}
    assert load_squares(loads) == fewest_squares(group.cluster, group.subscriptions)


def test_uniform_heterogeneous_almost_balanced_by_kafka_is_even_in_uniform_even() -> None:
    """Found against Kafka's Java (ALMOST_BALANCED in tests/java/test_uniform.py): Kafka's passes leave 3/3/4/3/2 in
    member-id order (uniform, as Kafka); uniform-even hands a partition along a chain of subscribers: 3 each."""
    topics = {"m0": [], "m3": [], "m4": [], "m1": ["t1", "t2"], "m2": ["t1", "t2"], "m5": ["t1"], "m6": ["t1"]}
    topics["m7"] = ["t2"]
    subs = {m: Subscription(t) for m, t in topics.items()}
    kafka = UniformAssignor().assign(Cluster({"t1": 7, "t2": 8}), subs)
    assert sorted(len(a.partitions) for a in kafka.values() if a.partitions) == [2, 3, 3, 3, 4]
    result = EvenUniformAssignor().assign(Cluster({"t1": 7, "t2": 8}), subs)
    assert _listed(result) == {
        "m0": "",
        "m1": "t1-6 t2-0 t2-3",
        "m2": "t2-1 t2-4 t2-7",
        "m3": "",
        "m4": "",
        "m5": "t1-0 t1-2 t1-4",
        "m6": "t1-1 t1-3 t1-5",
        "m7": "t2-2 t2-5 t2-6",
    }
