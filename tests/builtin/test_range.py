"""RangeAssignor: Apache Kafka's test vectors, the seed documents' examples, properties."""

from __future__ import annotations

from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import Cluster, RangeAssignor, Subscription, TopicPartition
from assignors.testing import (
    Group,
    determinism_problems,
    groups,
    per_topic_balance_problems,
    validity_problems,
)
from helpers.kafka_inputs import as_strings, kafka_cluster, kafka_consumers, naive_range, null_racks, racks

TP = TopicPartition


def assign(cluster: Cluster, subscriptions: dict[str, Subscription]) -> dict[str, list[str]]:
    result = RangeAssignor().assign(cluster, subscriptions)
    return {member: [str(tp) for tp in a.partitions] for member, a in result.items()}


def test_doc_example_two_consumers_two_topics() -> None:
    """The class docstring's example: C0 takes t0-0,t0-1,t1-0,t1-1 and C1 takes t0-2,t1-2."""
    subs = {"C0": Subscription(["t0", "t1"]), "C1": Subscription(["t0", "t1"])}
    assert assign(Cluster({"t0": 3, "t1": 3}), subs) == {
        "C0": ["t0-0", "t0-1", "t1-0", "t1-1"],
        "C1": ["t0-2", "t1-2"],
    }


def test_worked_two_topics_three_partitions() -> None:
    """RangeAssignor's Javadoc example: t1, t2 with 3 partitions and c1, c2.

    c1 gets [t1p0, t1p1, t2p0, t2p1] and c2 [t1p2, t2p2].
    """
    subs = {"c1": Subscription(["t1", "t2"]), "c2": Subscription(["t1", "t2"])}
    assert assign(Cluster({"t1": 3, "t2": 3}), subs) == {
        "c1": ["t1-0", "t1-1", "t2-0", "t2-1"],
        "c2": ["t1-2", "t2-2"],
    }


def test_worked_nine_partitions_three_then_two_consumers() -> None:
    """Worked example: 9 partitions in ranges 0-2, 3-5, 6-8; after a consumer dies, 0-4 and 5-8."""
    cluster = Cluster({"order-topic": 9})
    three = {f"consumer{i}": Subscription(["order-topic"]) for i in (1, 2, 3)}
    result = assign(cluster, three)
    assert result == {
        "consumer1": [f"order-topic-{p}" for p in (0, 1, 2)],
        "consumer2": [f"order-topic-{p}" for p in (3, 4, 5)],
        "consumer3": [f"order-topic-{p}" for p in (6, 7, 8)],
    }
    del three["consumer3"]
    assert assign(cluster, three) == {
        "consumer1": [f"order-topic-{p}" for p in range(5)],
        "consumer2": [f"order-topic-{p}" for p in range(5, 9)],
    }


def test_worked_mixed_subscriptions() -> None:
    """Worked example, a mixed group: c1[t1], c2[t1,t2], c3[t1,t2,t3] with t1:1, t2:2, t3:2."""
    subs = {"c1": Subscription(["t1"]), "c2": Subscription(["t2", "t1"]), "c3": Subscription(["t1", "t2", "t3"])}
    assert assign(Cluster({"t1": 1, "t2": 2, "t3": 2}), subs) == {
        "c1": ["t1-0"],
        "c2": ["t2-0"],
        "c3": ["t2-1", "t3-0", "t3-1"],
    }


@pytest.mark.parametrize(
    ("counts", "subscriptions", "expected"),
    [
        pytest.param({}, {"consumer1": []}, {"consumer1": []}, id="one-consumer-no-topic"),
        pytest.param({}, {"consumer1": ["topic1"]}, {"consumer1": []}, id="one-consumer-nonexistent-topic"),
        pytest.param({"topic1": 3}, {"consumer1": ["topic1"]}, {"consumer1": ["topic1-0", "topic1-1", "topic1-2"]}),
        pytest.param(
            {"topic1": 3, "other": 3},
            {"consumer1": ["topic1"]},
            {"consumer1": ["topic1-0", "topic1-1", "topic1-2"]},
            id="only-subscribed-topics",
        ),
        pytest.param(
            {"topic1": 1, "topic2": 2},
            {"consumer1": ["topic1", "topic2"]},
            {"consumer1": ["topic1-0", "topic2-0", "topic2-1"]},
            id="one-consumer-multiple-topics",
        ),
        pytest.param(
            {"topic1": 1},
            {"consumer1": ["topic1"], "consumer2": ["topic1"]},
            {"consumer1": ["topic1-0"], "consumer2": []},
            id="two-consumers-one-partition",
        ),
        pytest.param(
            {"topic1": 3, "topic2": 2},
            {"consumer1": ["topic1"], "consumer2": ["topic1", "topic2"], "consumer3": ["topic1"]},
            {"consumer1": ["topic1-0"], "consumer2": ["topic1-1", "topic2-0", "topic2-1"], "consumer3": ["topic1-2"]},
            id="multiple-consumers-mixed-topics",
        ),
        pytest.param({"topic1": 0}, {"consumer1": ["topic1"]}, {"consumer1": []}, id="topic-with-zero-partitions"),
    ],
)
def test_kafka_unit_cases(
    counts: dict[str, int], subscriptions: dict[str, list[str]], expected: dict[str, list[str]]
) -> None:
    """Kafka's RangeAssignorTest cases without racks."""
    subs = {member: Subscription(topics) for member, topics in subscriptions.items()}
    assert assign(Cluster(counts), subs) == expected


def test_static_members_order_by_instance_id() -> None:
    """Kafka: consumer-b (instance1) ranks before consumer-a (instance2); static before dynamic."""
    cluster = Cluster({"topic1": 3, "topic2": 3})
    both_static = {
        "consumer-b": Subscription(["topic1", "topic2"], group_instance_id="instance1"),
        "consumer-a": Subscription(["topic1", "topic2"], group_instance_id="instance2"),
    }
    expected = {"consumer-a": ["topic1-2", "topic2-2"], "consumer-b": ["topic1-0", "topic1-1", "topic2-0", "topic2-1"]}
    assert assign(cluster, both_static) == expected
    one_static = {
        "consumer-b": Subscription(["topic1", "topic2"], group_instance_id="instance1"),
        "consumer-a": Subscription(["topic1", "topic2"]),
    }
    assert assign(cluster, one_static) == expected


def test_static_assignment_persists_across_member_ids() -> None:
    """Kafka testStaticMemberRangeAssignmentPersistent: static members keep their ranges; dynamics follow."""
    cluster = Cluster({"topic1": 5, "topic2": 4})
    subs = {f"consumer{i}": Subscription(["topic1", "topic2"], group_instance_id=f"instance{i}") for i in (1, 2, 3)}
    subs["consumer4"] = Subscription(["topic1", "topic2"])
    expected = {
        "consumer1": ["topic1-0", "topic1-1", "topic2-0"],
        "consumer2": ["topic1-2", "topic2-1"],
        "consumer3": ["topic1-3", "topic2-2"],
        "consumer4": ["topic1-4", "topic2-3"],
    }
    assert assign(cluster, subs) == expected
    subs["consumer5"] = subs.pop("consumer4")
    expected["consumer5"] = expected.pop("consumer4")
    assert assign(cluster, subs) == expected


def test_static_assignment_survives_member_id_swap() -> None:
    """Kafka: swapping member ids of static members keeps each instance's partitions."""
    cluster = Cluster({"topic1": 5, "topic2": 5})
    subs = {f"consumer{i}": Subscription(["topic1", "topic2"], group_instance_id=f"instance{i}") for i in (1, 2, 3)}

    def by_instance(result: dict[str, list[str]], s: dict[str, Subscription]) -> dict[str | None, list[str]]:
        return {s[m].group_instance_id: parts for m, parts in result.items()}

    first = by_instance(assign(cluster, subs), subs)
    assert first == {
        "instance1": ["topic1-0", "topic1-1", "topic2-0", "topic2-1"],
        "instance2": ["topic1-2", "topic1-3", "topic2-2", "topic2-3"],
        "instance3": ["topic1-4", "topic2-4"],
    }
    swapped = {"consumer4": subs["consumer3"], "consumer5": subs["consumer2"], "consumer1": subs["consumer1"]}
    assert by_instance(assign(cluster, swapped), swapped) == first


UNIFORM = {"t1": 6, "t2": 7, "t3": 2}
ALL3 = ["t1", "t2", "t3"]


def rack_case(
    topics: dict[str, int],
    replication: int,
    broker_racks: list[str | None],
    consumer_racks: list[str | None],
    consumer_topics: list[list[str]],
    expected: list[str],
) -> tuple[dict[str, str], dict[str, str]]:
    cluster = kafka_cluster(topics, replication, broker_racks)
    result = RangeAssignor().assign(cluster, kafka_consumers(consumer_topics, consumer_racks))
    return as_strings(result), {f"consumer{i}": e for i, e in enumerate(expected)}


NON_RACK_UNIFORM = ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"]
NON_RACK_NON_EQUAL = ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"]


@pytest.mark.parametrize(
    ("topics", "consumer_topics", "non_rack"),
    [
        (UNIFORM, [ALL3, ALL3, ALL3], NON_RACK_UNIFORM),
        (UNIFORM, [ALL3, ALL3, ["t1", "t3"]], NON_RACK_NON_EQUAL),
        (
            {"t1": 5, "t2": 5, "t3": 5},
            [ALL3, ALL3, ALL3],
            ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4"],
        ),
    ],
)
@pytest.mark.parametrize(
    ("replication", "brokers", "consumers"),
    [
        (3, null_racks(3), racks(3)),
        (3, racks(3), null_racks(3)),
        (3, racks(3), racks(3)),
        (4, racks(4), racks(3)),
        (3, racks(3), ["d", "e", "f"]),
        (3, racks(3), [None, "e", "f"]),
    ],
)
def test_kafka_rack_configs_that_keep_plain_range(
    topics: dict[str, int],
    consumer_topics: list[list[str]],
    non_rack: list[str],
    replication: int,
    brokers: list[str | None],
    consumers: list[str | None],
) -> None:
    """Kafka verifyNonRackAwareAssignment: no racks, all partitions on all racks, or no rack in common."""
    actual, expected = rack_case(topics, replication, brokers, consumers, consumer_topics, non_rack)
    assert expected == actual


@pytest.mark.parametrize(
    ("topics", "replication", "brokers", "consumers", "consumer_topics", "expected"),
    [
        pytest.param(
            UNIFORM, 1, racks(3), racks(3), [ALL3, ALL3, ALL3],
            ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"],
            id="uniform-rf1",
        ),
        pytest.param(
            UNIFORM, 2, racks(3), racks(3), [ALL3, ALL3, ALL3],
            ["t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0", "t1-4, t1-5, t2-5, t2-6"],
            id="uniform-rf2",
        ),
        pytest.param(
            UNIFORM, 3, racks(2), racks(3), [ALL3, ALL3, ALL3], NON_RACK_UNIFORM, id="uniform-consumer-on-empty-rack"
        ),
        pytest.param(
            UNIFORM, 1, racks(3), racks(3), [ALL3, ALL3, ["t1", "t3"]],
            ["t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0", "t1-2, t1-5, t3-1"],
            id="non-equal-rf1",
        ),
        pytest.param(
            UNIFORM, 2, racks(3), racks(3), [ALL3, ALL3, ["t1", "t3"]],
            ["t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0", "t1-4, t1-5"],
            id="non-equal-rf2",
        ),
        pytest.param(
            UNIFORM, 3, racks(2), racks(3), [ALL3, ALL3, ["t1", "t3"]], NON_RACK_NON_EQUAL,
            id="non-equal-consumer-on-empty-rack",
        ),
        pytest.param(
            {"t1": 5, "t2": 5, "t3": 5}, 1, racks(3), racks(3), [ALL3, ALL3, ALL3],
            ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4"],
            id="co-partitioning-beats-racks",
        ),
        pytest.param(
            {"t1": 5, "t2": 5, "t3": 5}, 1, racks(3), racks(3), [ALL3, ALL3, ["t1", "t3"]],
            ["t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t3-4"],
            id="uniform-partitions-non-equal-rf1",
        ),
        pytest.param(
            {"t1": 5, "t2": 5, "t3": 5}, 2, racks(3), racks(3), [ALL3, ALL3, ["t1", "t3"]],
            ["t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3", "t1-1, t1-4, t3-1, t3-4"],
            id="uniform-partitions-non-equal-rf2",
        ),
        pytest.param(
            {"t1": 6, "t2": 6, "t3": 2, "t4": 2}, 1, racks(2), ["a", "b", "b", "a"],
            [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]],
            ["t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5", "t3-1, t4-1", "t3-0, t4-0"],
            id="co-partitioned-pairs",
        ),
        pytest.param(
            {"t1": 6, "t2": 6, "t3": 2, "t4": 2}, 1, racks(2), ["a", "b", "b", "a"],
            [["t1", "t2", "t3", "t4"]] * 4,
            ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1", "t1-5, t2-5", "t1-4, t2-4"],
            id="co-partitioned-all-topics-rf1-2racks",
        ),
        pytest.param(
            {"t1": 6, "t2": 6, "t3": 2, "t4": 2}, 1, racks(3), ["a", "b", "b", "a"],
            [["t1", "t2", "t3", "t4"]] * 4,
            ["t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1", "t1-2, t2-2", "t1-5, t2-5"],
            id="co-partitioned-all-topics-rf1-3racks",
        ),
        pytest.param(
            {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}, 2, racks(3), ["a", "b", "c"],
            [["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]] * 3,
            [
                "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0, t5-1, t6-1",
                "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1, t5-2, t6-2",
                "t1-4, t1-5, t2-4, t2-5, t5-0, t5-3, t6-0, t6-3",
            ],
            id="co-partitioned-same-subscription",
        ),
    ],
)  # fmt: skip
def test_kafka_rack_aware_vectors(
    topics: dict[str, int],
    replication: int,
    brokers: list[str | None],
    consumers: list[str | None],
    consumer_topics: list[list[str]],
    expected: list[str],
) -> None:
    """Kafka's RangeAssignorTest rack-aware cases (KIP-881), output for output."""
    actual, wanted = rack_case(topics, replication, brokers, consumers, consumer_topics, expected)
    assert wanted == actual


def test_kafka_rack_aware_static_members_persist() -> None:
    """Kafka testRackAwareStaticMemberRangeAssignmentPersistentAfterMemberIdChanges."""
    brokers = ["a", "b", "c", "a", "b", "c"]
    cluster = kafka_cluster({"topic1": 5, "topic2": 5}, 2, brokers)
    # Kafka builds both topics with nextNodeIndex 0; rebuild topic2 the same way.
    topic2 = kafka_cluster({"topic2": 5}, 2, brokers)
    cluster = Cluster(
        {"topic1": 5, "topic2": 5},
        partition_racks={**{tp: r for tp, r in cluster.partition_racks.items() if tp.topic == "topic1"},
                         **topic2.partition_racks},
    )  # fmt: skip
    subs = {
        f"consumer{i}": Subscription(["topic1", "topic2"], group_instance_id=f"instance{i}", rack_id=rack)
        for i, rack in ((1, "a"), (2, "b"), (3, "c"))
    }
    result = RangeAssignor().assign(cluster, subs)
    by_instance = {subs[m].group_instance_id: [str(tp) for tp in a.partitions] for m, a in result.items()}
    assert by_instance == {
        "instance1": ["topic1-0", "topic1-2", "topic2-0", "topic2-2"],
        "instance2": ["topic1-1", "topic1-3", "topic2-1", "topic2-3"],
        "instance3": ["topic1-4", "topic2-4"],
    }
    swapped = {"consumer4": subs["consumer3"], "consumer5": subs["consumer2"], "consumer1": subs["consumer1"]}
    again = RangeAssignor().assign(cluster, swapped)
    assert {swapped[m].group_instance_id: [str(tp) for tp in a.partitions] for m, a in again.items()} == by_instance


def test_partitions_without_replica_racks_go_to_rackless_rules() -> None:
    """A partition with no replica racks matches no racked consumer, so the rack pass skips it."""
    cluster = Cluster({"t": 4}, partition_racks={TP("t", 0): ["b"], TP("t", 1): ["a"], TP("t", 3): ["b"]})
    subs = {"x": Subscription(["t"], rack_id="a"), "y": Subscription(["t"], rack_id="b")}
    # rack pass: x (cap 2) takes t-1; y takes t-0 and t-3; then plain ranges: x takes t-2.
    assert assign(cluster, subs) == {"x": ["t-1", "t-2"], "y": ["t-0", "t-3"]}


@given(groups(racks=False))
def test_equals_naive_kafka_range(group: Group) -> None:
    """Without racks the fast path equals a literal transcription of Kafka's algorithm."""
    result = RangeAssignor().assign(group.cluster, group.subscriptions)
    expected = naive_range(group.cluster, group.subscriptions)
    assert {m: sorted(p) for m, p in expected.items()} == {m: list(a.partitions) for m, a in result.items()}


@given(groups())
def test_valid_and_balanced_per_topic(group: Group) -> None:
    """Every subscribed partition goes to one subscriber; per topic, counts differ by at most one."""
    result = RangeAssignor().assign(group.cluster, group.subscriptions)
    assert validity_problems(group.cluster, group.subscriptions, result) == []
    assert per_topic_balance_problems(group.subscriptions, result) == []
    assert sorted(result) == sorted(group.subscriptions)


@given(groups(), st.randoms(use_true_random=False))
def test_deterministic_and_order_independent(group: Group, rnd: Random) -> None:
    """Same input, same output, whatever the insertion order of members, topics and partition racks."""
    other = group.shuffled(rnd)
    problems = determinism_problems(
        RangeAssignor, group.cluster, group.subscriptions, other.subscriptions, reordered_cluster=other.cluster
    )
    assert problems == []


@given(groups(racks=True))
def test_rack_aware_never_costs_balance(group: Group) -> None:
    """Rack matching keeps Range's per-topic counts: the same multiset as without racks."""
    with_racks = RangeAssignor().assign(group.cluster, group.subscriptions)
    plain_cluster = Cluster(group.cluster.partitions_per_topic)
    plain = RangeAssignor().assign(plain_cluster, group.subscriptions)
    for topic in group.cluster.topics:
        counts = sorted(sum(tp.topic == topic for tp in a.partitions) for a in with_racks.values())
        expected = sorted(sum(tp.topic == topic for tp in a.partitions) for a in plain.values())
        assert counts == expected
