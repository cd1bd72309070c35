"""RoundRobinAssignor: Apache Kafka's test vectors, the seed documents' examples, properties."""

from __future__ import annotations

from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import Cluster, RoundRobinAssignor, Subscription
from assignors.testing import Group, balance_problems, determinism_problems, groups, validity_problems
from helpers.kafka_inputs import naive_round_robin


def assign(cluster: Cluster, subscriptions: dict[str, Subscription]) -> dict[str, list[str]]:
    result = RoundRobinAssignor().assign(cluster, subscriptions)
    return {member: [str(tp) for tp in a.partitions] for member, a in result.items()}


def test_worked_two_topics_three_partitions() -> None:
    """Kafka's RoundRobinAssignor Javadoc example: c1[t1p0,t1p2,t2p1], c2[t1p1,t2p0,t2p2]."""
    subs = {"c1": Subscription(["t1", "t2"]), "c2": Subscription(["t1", "t2"])}
    assert assign(Cluster({"t1": 3, "t2": 3}), subs) == {"c1": ["t1-0", "t1-2", "t2-1"], "c2": ["t1-1", "t2-0", "t2-2"]}


def test_worked_mixed_subscriptions() -> None:
    """A mixed group, as in RoundRobinAssignor's Javadoc: c1[t1], c2[t1,t2], c3[t1,t2,t3].

    They get c1[t1p0], c2[t2p0], c3[t2p1, t3p0, t3p1].
    """
    subs = {"c1": Subscription(["t1"]), "c2": Subscription(["t1", "t2"]), "c3": Subscription(["t1", "t2", "t3"])}
    assert assign(Cluster({"t1": 1, "t2": 2, "t3": 2}), subs) == {
        "c1": ["t1-0"],
        "c2": ["t2-0"],
        "c3": ["t2-1", "t3-0", "t3-1"],
    }


def test_worked_four_topics_then_c1_leaves() -> None:
    """Worked example: t1..t4 with 2 partitions; after c1 leaves, c2 takes every partition 0 and c3 every 1."""
    cluster = Cluster({f"t{i}": 2 for i in (1, 2, 3, 4)})
    topics = ["t1", "t2", "t3", "t4"]
    subs = {m: Subscription(topics) for m in ("c1", "c2", "c3")}
    assert assign(cluster, subs) == {
        "c1": ["t1-0", "t2-1", "t4-0"],
        "c2": ["t1-1", "t3-0", "t4-1"],
        "c3": ["t2-0", "t3-1"],
    }
    del subs["c1"]
    assert assign(cluster, subs) == {"c2": ["t1-0", "t2-0", "t3-0", "t4-0"], "c3": ["t1-1", "t2-1", "t3-1", "t4-1"]}


def test_worked_nine_partitions() -> None:
    """Worked example: partitions 0,3,6 / 1,4,7 / 2,5,8."""
    subs = {f"consumer{i}": Subscription(["order-topic"]) for i in (1, 2, 3)}
    assert assign(Cluster({"order-topic": 9}), subs) == {
        f"consumer{i + 1}": [f"order-topic-{p}" for p in range(i, 9, 3)] for i in range(3)
    }


@pytest.mark.parametrize(
    ("counts", "subscriptions", "expected"),
    [
        pytest.param({}, {"consumer": []}, {"consumer": []}, id="no-topic"),
        pytest.param(
            {"topic": 3, "other": 3}, {"consumer": ["topic"]}, {"consumer": ["topic-0", "topic-1", "topic-2"]}
        ),
        pytest.param(
            {"topic1": 1, "topic2": 2},
            {"consumer": ["topic1", "topic2"]},
            {"consumer": ["topic1-0", "topic2-0", "topic2-1"]},
            id="multiple-topics",
        ),
        pytest.param(
            {"topic": 1},
            {"consumer1": ["topic"], "consumer2": ["topic"]},
            {"consumer1": ["topic-0"], "consumer2": []},
            id="one-partition",
        ),
        pytest.param(
            {"topic1": 3, "topic2": 2},
            {"consumer1": ["topic1"], "consumer2": ["topic1", "topic2"], "consumer3": ["topic1"]},
            {"consumer1": ["topic1-0"], "consumer2": ["topic1-1", "topic2-0", "topic2-1"], "consumer3": ["topic1-2"]},
            id="mixed-topics",
        ),
    ],
)
def test_kafka_unit_cases(
    counts: dict[str, int], subscriptions: dict[str, list[str]], expected: dict[str, list[str]]
) -> None:
    """Kafka's RoundRobinAssignorTest cases."""
    subs = {member: Subscription(topics) for member, topics in subscriptions.items()}
    assert assign(Cluster(counts), subs) == expected


def test_static_members_persist() -> None:
    """Kafka testStaticMemberAssignmentPersistent: static members first by instance id, then dynamic."""
    cluster = Cluster({"topic1": 3, "topic2": 3})
    subs = {f"consumer{i}": Subscription(["topic1", "topic2"], group_instance_id=f"instance{i}") for i in (1, 2, 3)}
    subs["consumer4"] = Subscription(["topic1", "topic2"])
    expected = {
        "consumer1": ["topic1-0", "topic2-1"],
        "consumer2": ["topic1-1", "topic2-2"],
        "consumer3": ["topic1-2"],
        "consumer4": ["topic2-0"],
    }
    assert assign(cluster, subs) == expected
    subs["consumer5"] = subs.pop("consumer4")
    expected["consumer5"] = expected.pop("consumer4")
    assert assign(cluster, subs) == expected


def test_static_members_survive_member_id_swap() -> None:
    """Kafka testStaticMemberAssignmentPersistentAfterMemberIdChanges."""
    cluster = Cluster({"topic1": 3, "topic2": 3})
    first = {"consumer1": "instance1", "consumer2": "instance2", "consumer3": "instance3"}
    second = {"consumer4": "instance1", "consumer5": "instance2", "consumer1": "instance3"}
    for mapping in (first, second):
        subs = {m: Subscription(["topic1", "topic2"], group_instance_id=i) for m, i in mapping.items()}
        by_instance = {mapping[m]: parts for m, parts in assign(cluster, subs).items()}
        assert by_instance == {f"instance{i + 1}": [f"topic1-{i}", f"topic2-{i}"] for i in range(3)}


def test_java_string_order_for_supplementary_characters() -> None:
    """Member order is Java's UTF-16 order: U+10000 (surrogates) sorts before U+FFFF."""
    subs = {"\uffff": Subscription(["t"]), "\U00010000": Subscription(["t"])}
    assert assign(Cluster({"t": 2}), subs) == {"\U00010000": ["t-0"], "\uffff": ["t-1"]}


@given(groups(racks=False))
def test_equals_naive_kafka_round_robin(group: Group) -> None:
    """The segment-slicing implementation equals Kafka's partition-by-partition circular iterator."""
    result = RoundRobinAssignor().assign(group.cluster, group.subscriptions)
    expected = naive_round_robin(group.cluster, group.subscriptions)
    assert expected == {m: list(a.partitions) for m, a in result.items()}


@given(groups())
def test_valid(group: Group) -> None:
    """Every subscribed partition goes to exactly one subscriber, every member has an entry."""
    result = RoundRobinAssignor().assign(group.cluster, group.subscriptions)
    assert validity_problems(group.cluster, group.subscriptions, result) == []


@given(groups(identical=True, min_members=1))
def test_balanced_under_identical_subscriptions(group: Group) -> None:
    """With identical subscriptions member totals differ by at most one."""
    result = RoundRobinAssignor().assign(group.cluster, group.subscriptions)
    assert balance_problems(group.subscriptions, result) == []


@given(groups(), st.randoms(use_true_random=False))
def test_deterministic_and_order_independent(group: Group, rnd: Random) -> None:
    """Same input, same output, whatever the insertion order of members, topics and partition racks."""
    other = group.shuffled(rnd)
    problems = determinism_problems(
        RoundRobinAssignor, group.cluster, group.subscriptions, other.subscriptions, reordered_cluster=other.cluster
    )
    assert problems == []
