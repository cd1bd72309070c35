"""KIP-848's uniform homogeneous builder: ours against a line-by-line transcription of Kafka's, per version.

The transcription below follows ``UniformHomogeneousAssignmentBuilder`` (Kafka 4.0.1 and later, and 3.8-4.0.0 before
KAFKA-18688) statement by statement on plain dicts and lists, with this library's stand-ins for Java's orders:
members in member-id order, topics in name order, a member's partitions of a topic in ``java_set_order``. Ours
works on runs of partitions and hands unchanged targets back; the two must agree on every group, stale and doubly
claimed previous targets included.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import Assignment, Cluster, ConfigurationError, Subscription, TopicPartition
from assignors.consumer_group import KAFKA_VERSION, EvenUniformAssignor, RangeAssignor, UniformAssignor
from assignors.consumer_group._uniform import java_set_order
from assignors.testing import Group, groups, load_squares


def kafka_homogeneous(  # noqa: C901, PLR0912 - a transcription, statement by statement
    cluster: Cluster, subscriptions: Mapping[str, Subscription], *, stable_extras: bool
) -> dict[str, Assignment]:
    """Kafka's homogeneous builder, transcribed (``maybeRevokePartitions`` then ``assignRemainingPartitions``)."""
    order = sorted(subscriptions)
    topics = [t for t in subscriptions[order[0]].topics if (cluster.partition_count(t) or 0) > 0]
    counts = {t: cluster.partition_count(t) or 0 for t in topics}
    # The previous targets as the coordinator holds them: valid partitions only, the first claim of each.
    claimed: set[TopicPartition] = set()
    previous: dict[str, dict[str, list[int]]] = {}
    for member in order:
        mine: dict[str, list[int]] = {}
        for tp in subscriptions[member].owned_partitions:
            if tp.topic in counts and tp.partition < counts[tp.topic] and tp not in claimed:
                claimed.add(tp)
                mine.setdefault(tp.topic, []).append(tp.partition)
        previous[member] = mine
    unassigned = [TopicPartition(t, p) for t in topics for p in range(counts[t]) if TopicPartition(t, p) not in claimed]
    minimum, remaining = divmod(sum(counts.values()), len(order))
    unfilled: list[tuple[str, int]] = []
    target: dict[str, list[TopicPartition]] = {}
    for index, member in enumerate(order):
        quota, has_extra = minimum, False
        if remaining > 0:
            quota += 1
            if stable_extras:
                has_extra = True
            else:
                remaining -= 1
        kept: list[TopicPartition] = []
        for topic in sorted(previous[member]):
            partitions = java_set_order(sorted(previous[member][topic]))
            if len(partitions) <= quota:
                quota -= len(partitions)
                kept.extend(TopicPartition(topic, p) for p in partitions)
                continue
            for partition in partitions:
                if quota > 0:
                    quota -= 1
                    kept.append(TopicPartition(topic, partition))
                else:
                    unassigned.append(TopicPartition(topic, partition))
        if stable_extras:
            if quota > 0 and has_extra and len(order) - index > remaining:
                quota -= 1
                has_extra = False
            if has_extra:
                remaining -= 1
        if quota > 0:
            unfilled.append((member, quota))
        target[member] = kept
    position = 0
    for member, quota in unfilled:
        target[member].extend(unassigned[position : position + quota])
        position += quota
    assert position == len(unassigned), "partitions left unassigned"
    return {member: Assignment(sorted(target[member])) for member in order}


@st.composite
def homogeneous_groups(draw: st.DrawFn) -> tuple[Cluster, dict[str, Subscription]]:
    """Identical subscriptions over topics of up to 40 partitions (past a HashSet's 16 buckets), with previous
    targets drawn at random: some stale (a topic left, a partition beyond the count), some claimed twice."""
    counts = draw(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 40), min_size=1, max_size=3))
    cluster = Cluster(counts)
    topics = sorted(counts) + draw(st.lists(st.sampled_from(["gone"]), max_size=1))
    every = [TopicPartition(t, p) for t, n in counts.items() for p in range(n + 2)] + [TopicPartition("gone", 0)]
    members = draw(st.lists(st.sampled_from([f"m{i}" for i in range(9)]), min_size=1, max_size=9, unique=True))
    subscriptions = {}
    for member in members:
        owned = draw(st.lists(st.sampled_from(every), max_size=24, unique=True)) if draw(st.booleans()) else []
        subscriptions[member] = Subscription(topics, owned_partitions=owned)
    return cluster, subscriptions


@pytest.mark.parametrize("version", ["4.4.0", "4.0.0"])
@given(group=homogeneous_groups())
def test_homogeneous_is_kafkas_builder(version: str, group: tuple[Cluster, dict[str, Subscription]]) -> None:
    cluster, subscriptions = group
    stable = version != "4.0.0"
    expected = kafka_homogeneous(cluster, subscriptions, stable_extras=stable)
    assert UniformAssignor(kafka_version=version).assign(cluster, subscriptions) == expected
    assert EvenUniformAssignor(kafka_version=version).assign(cluster, subscriptions) == expected


@given(group=homogeneous_groups())
def test_a_kept_target_is_handed_back_as_it_is(group: tuple[Cluster, dict[str, Subscription]]) -> None:
    """A member whose previous target is valid, within its quota and gains nothing gets the same tuple back."""
    cluster, subscriptions = group
    result = UniformAssignor().assign(cluster, subscriptions)
    for member, assignment in result.items():
        owned = subscriptions[member].owned_partitions
        if owned and assignment.partitions == owned:
            assert assignment.partitions is owned


def test_java_set_order_is_hashsets() -> None:
    """Java 17's ``new HashSet<>(List.of(...))`` iteration orders, as jshell prints them."""
    assert java_set_order([0, 5, 16, 17]) == [0, 16, 17, 5]  # 16 buckets: 16 shares bucket 0, 17 bucket 1
    assert java_set_order(list(range(12))) == list(range(12))
    assert java_set_order([1, 31, 32, 33]) == [32, 1, 33, 31]
    thirteen = [*range(12), 40]  # 13 numbers: 13 / 0.75 + 1 = 18 -> 32 buckets; 40 lands in bucket 8
    assert java_set_order(thirteen) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 40, 9, 10, 11]
    assert java_set_order([65536, 3]) == [65536, 3]  # 65536 ^ (65536 >>> 16) = 65537: bucket 1


def test_an_over_quota_member_keeps_its_partitions_in_hashset_order() -> None:
    """B held 8 partitions of t; with three more members its quota is 5. Java's HashSet of 8 numbers has 16
    buckets, so it iterates 0, 16, 1, 17, 2, 18, 3, 19: B keeps 0, 16, 1, 17 and 2, not the five lowest."""
    held = [TopicPartition("t", p) for p in (0, 1, 2, 3, 16, 17, 18, 19)]
    subs = {m: Subscription(["t"]) for m in "ACD"} | {"B": Subscription(["t"], owned_partitions=held)}
    result = UniformAssignor().assign(Cluster({"t": 20}), subs)
    assert [tp.partition for tp in result["B"].partitions] == [0, 1, 2, 16, 17]
    assert [tp.partition for tp in result["A"].partitions] == [4, 5, 6, 7, 8]  # the free ones first,
    assert [tp.partition for tp in result["D"].partitions] == [3, 14, 15, 18, 19]  # then B's, in HashSet order


def test_kafka_version_and_stable_extras() -> None:
    assert UniformAssignor().kafka_version == KAFKA_VERSION == "4.4.0"
    assert UniformAssignor().stable_extras
    assert not UniformAssignor(kafka_version="4.0.0").stable_extras
    assert UniformAssignor(kafka_version="4.0.1").stable_extras  # KAFKA-18688 was backported to 4.0.1
    assert UniformAssignor(kafka_version="4.1").stable_extras
    assert UniformAssignor(kafka_version="4.2.0-SNAPSHOT").stable_extras
    assert UniformAssignor(stable_extras=False).kafka_version == "4.0.0"
    assert UniformAssignor(kafka_version="3.9.1", stable_extras=False).kafka_version == "3.9.1"
    with pytest.raises(ConfigurationError, match=r"contradicts kafka_version='3\.9\.1'"):
        UniformAssignor(kafka_version="3.9.1", stable_extras=True)
    with pytest.raises(ConfigurationError, match=r"kafka_version='4\.x' must be a Kafka version number"):
        UniformAssignor(kafka_version="4.x")
    with pytest.raises(ConfigurationError, match=r"from Kafka 3\.8\.0 on"):
        UniformAssignor(kafka_version="3.7.2")
    with pytest.raises(ConfigurationError, match="stable_extras=1 must be True or False"):
        UniformAssignor(stable_extras=1)  # type: ignore[arg-type]


def test_range_kafka_version() -> None:
    """The server range is one rule from Kafka 3.9.0 (KAFKA-16944) to 4.4.0; 3.7 and 3.8's sticky range is refused."""
    assert RangeAssignor().kafka_version == KAFKA_VERSION
    assert repr(RangeAssignor(kafka_version="3.9.1")) == "RangeAssignor(kafka_version='3.9.1')"
    cluster = Cluster({"t": 5})
    subs = {m: Subscription(["t"]) for m in "abc"}
    assert RangeAssignor(kafka_version="3.9.0").assign(cluster, subs) == RangeAssignor().assign(cluster, subs)
    with pytest.raises(ConfigurationError, match=r"from Kafka 3\.9\.0 on"):
        RangeAssignor(kafka_version="3.8.1")


def test_server_assignor_by_strategy_name_and_kafka_version() -> None:
    """The replay's names resolve to the assignor as the given broker version runs it."""
    from assignors.consumer_group import server_assignor

    assert repr(server_assignor("uniform", kafka_version="4.0.0")) == "UniformAssignor(kafka_version='4.0.0')"
    assert repr(server_assignor("consumer-range", kafka_version="4.1.0")) == "RangeAssignor(kafka_version='4.1.0')"
    assert repr(server_assignor("uniform")) == "UniformAssignor()"
    given = UniformAssignor(kafka_version="4.0.1")
    assert server_assignor(given, kafka_version="4.4.0") is given
    with pytest.raises(ConfigurationError, match=r"kafka_version='four'"):
        server_assignor("uniform", kafka_version="four")


@given(group=groups(identical=False, owned=True, max_members=6, max_partitions=10))
def test_previous_targets_are_the_valid_first_claims(group: Group) -> None:
    """The fast reading of previous targets (validated by the owners' own lookups) is the plain one: a member keeps
    the partitions of its subscribed topics that exist, and a partition claimed twice stays with the first member."""
    from assignors.consumer_group._common import previous_targets

    order = sorted(group.subscriptions)
    counts = {t: n for t, n in group.cluster.partitions_per_topic.items() if n}
    current, owners = previous_targets(order, counts, group.subscriptions)
    claimed: set[TopicPartition] = set()
    for index, member in enumerate(order):
        subscription = group.subscriptions[member]
        expected = [
            tp
            for tp in subscription.owned_partitions
            if tp.topic in subscription.topics and tp.partition < counts.get(tp.topic, 0) and tp not in claimed
        ]
        claimed.update(expected)
        assert list(current[index]) == expected
        assert all(owners[tp.topic][tp.partition] == index for tp in expected)
    assert sum(o.count(-1) for o in owners.values()) == sum(counts.values()) - len(claimed)


@given(group=groups(identical=False, owned=True, max_members=6, max_partitions=10))
def test_uniform_even_is_at_least_as_even_as_uniform(group: Group) -> None:
    """uniform-even starts from Kafka's target in the same order: never less even, and as even, no more moves."""
    kafka = UniformAssignor().assign(group.cluster, group.subscriptions)
    even = EvenUniformAssignor().assign(group.cluster, group.subscriptions)
    assert load_squares({m: a.partitions for m, a in even.items()}) <= load_squares(
        {m: a.partitions for m, a in kafka.items()}
    )
    if sorted(len(a.partitions) for a in even.values()) == sorted(len(a.partitions) for a in kafka.values()):
        previous = {tp: m for m, s in group.subscriptions.items() for tp in s.owned_partitions}

        def moved(result: Mapping[str, Assignment]) -> int:
            return sum(previous.get(tp, m) != m for m, a in result.items() for tp in a.partitions)

        assert moved(even) <= moved(kafka)


def test_cached_partitions_are_built_once_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from assignors.consumer_group import _common

    monkeypatch.setattr(_common, "_PARTITIONS", {})
    monkeypatch.setattr(_common, "_PARTITIONS_HELD", [0])
    first = _common.cached_partitions("t", 3)
    assert first == tuple(TopicPartition("t", p) for p in range(3))
    assert _common.cached_partitions("t", 2) is first  # a shorter count slices the same tuple
    grown = _common.cached_partitions("t", 5)
    assert len(grown) == 5
    assert _common._PARTITIONS_HELD == [5]
    monkeypatch.setattr(_common, "_PARTITIONS_CEILING", 6)
    _common.cached_partitions("u", 4)  # 5 + 4 > 6: the cache starts over
    assert set(_common._PARTITIONS) == {"u"}
    assert _common._PARTITIONS_HELD == [4]
