"""KIP-848's uniform heterogeneous builder: ours against a plain transcription of Kafka's, and its fast paths.

The transcription below follows ``UniformHeterogeneousAssignmentBuilder`` (Kafka 4.0, KAFKA-17710) and its
``MemberAssignmentBalancer`` one partition and one member at a time, on plain lists, with this library's stand-ins
for Java's orders (members in member-id order, topics in name order where Kafka's comparator ties). Ours hands
unchanged targets back, tells balanced topics by bit masks of the loads, shares the subscriber lists of topics
named by the same subscriptions and walks the balancer's ranges by bisection; the two must agree on every group,
stale and doubly claimed previous targets included.
"""

from __future__ import annotations

from collections.abc import Mapping
from random import Random
from unittest.mock import patch

from hypothesis import assume, given
from hypothesis import strategies as st

from assignors import Assignment, Cluster, Subscription, TopicPartition
from assignors.consumer_group import UniformAssignor, _heterogeneous, coordinator_member_order
from assignors.consumer_group._heterogeneous import MAX_ITERATION_COUNT, _Levels, _within_one
from assignors.consumer_group._uniform import _appended, _subscribers
from assignors.testing import Group, groups


class _Balancer:
    """Kafka's ``MemberAssignmentBalancer`` over one topic's subscribers (``sizes`` read and kept by the caller)."""

    def __init__(self, members: list[int], sizes: list[int]) -> None:
        self.sizes = sizes
        self.order = sorted(members, key=lambda m: (sizes[m], m))
        self.count = len(self.order)
        self.least_end, self.least_level, self.next_least = 0, sizes[self.order[0]] - 1, 0
        self.most_start = self.most_end = self.count
        self.most_level, self.next_most = sizes[self.order[-1]] + 1, self.count - 1

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_level += 1
            while self.least_end < self.count and self.sizes[self.order[self.least_end]] == self.least_level:
                self.least_end += 1
            self.next_least = 0
        member = self.order[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_level = self.sizes[self.order[self.most_start - 1]]
            else:
                self.most_level -= 1
            while self.most_start > 0 and self.sizes[self.order[self.most_start - 1]] == self.most_level:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.order[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        here, last = self.next_most + 1, self.most_end - 1
        self.order[here], self.order[last] = self.order[last], self.order[here]
        self.most_end -= 1


def kafka_heterogeneous(cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
    """Kafka's heterogeneous builder, transcribed: keep, fill one partition at a time, then the balancing passes;
    members in the coordinator's order."""
    order = coordinator_member_order(subscriptions)
    subscribed = sorted({t for s in subscriptions.values() for t in s.topics})
    counts = {t: n for t in subscribed if (n := cluster.partition_count(t) or 0) > 0}
    owners, sizes = _kept(order, counts, subscriptions)
    subscribers = {t: [i for i, m in enumerate(order) if t in subscriptions[m].topics] for t in counts}
    subscribers = {t: members for t, members in subscribers.items() if members}
    topics = sorted(subscribers, key=lambda t: (-(counts[t] / len(subscribers[t])), len(subscribers[t]), t))
    for topic in topics:  # assignRemainingPartitions
        balancer = _Balancer(subscribers[topic], sizes)
        for partition, owner in enumerate(owners[topic]):
            if owner == -1:
                receiver = balancer.next_least_loaded()
                owners[topic][partition] = receiver
                sizes[receiver] += 1
    _balance_topics([t for t in topics if len(subscribers[t]) > 1], subscribers, owners, sizes)
    lists: dict[str, list[TopicPartition]] = {m: [] for m in order}
    for topic, owner_of in owners.items():
        for partition, owner in enumerate(owner_of):
            if owner != -1:
                lists[order[owner]].append(TopicPartition(topic, partition))
    return {m: Assignment(sorted(lists[m])) for m in sorted(order)}


def _kept(
    order: list[str], counts: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> tuple[dict[str, list[int]], list[int]]:
    """Each partition's owner in the valid previous targets (the first claim of each), and the members' loads."""
    owners = {t: [-1] * n for t, n in counts.items()}
    sizes = [0] * len(order)
    for index, member in enumerate(order):
        for tp in subscriptions[member].owned_partitions:
            valid = tp.topic in subscriptions[member].topics and tp.partition < counts.get(tp.topic, 0)
            if valid and owners[tp.topic][tp.partition] == -1:
                owners[tp.topic][tp.partition] = index
                sizes[index] += 1
    return owners, sizes


def _balance_topics(
    topics: list[str], subscribers: Mapping[str, list[int]], owners: Mapping[str, list[int]], sizes: list[int]
) -> None:
    """Kafka's ``balanceTopics``: passes over the topics until a whole cycle moves nothing, at most 16."""
    last_moved = -1
    for _ in range(MAX_ITERATION_COUNT):
        for index, topic in enumerate(topics):
            if index == last_moved:
                return
            moved = _balance_topic(subscribers[topic], owners[topic], sizes)
            if moved or last_moved == -1:
                last_moved = index


def _balance_topic(members: list[int], owners: list[int], sizes: list[int]) -> int:
    """Kafka's ``balanceTopic``: from the most to the least loaded subscribers, each giver's highest partition first."""
    loads = [sizes[m] for m in members]
    if max(loads) - min(loads) <= 1:
        return 0
    balancer = _Balancer(members, sizes)
    left = {m: [p for p, o in enumerate(owners) if o == m] for m in members}  # as the topic's pass began
    moved = 0
    while balancer.most_level - balancer.least_level > 1:
        giver = balancer.next_most_loaded()
        while giver != -1 and not left[giver]:
            balancer.exclude_most_loaded()
            giver = balancer.next_most_loaded()
        if giver == -1:
            break
        partition = left[giver].pop()
        receiver = balancer.next_least_loaded()
        if balancer.most_level - balancer.least_level <= 1:
            break
        owners[partition] = receiver
        sizes[giver] -= 1
        sizes[receiver] += 1
        moved += 1
    return moved


def _mixed(group: Group) -> bool:
    return len({s.topics for s in group.subscriptions.values()}) > 1


@given(group=groups(identical=False, owned=True, max_members=12, max_topics=5, max_partitions=16))
def test_heterogeneous_is_kafkas_builder(group: Group) -> None:
    """Kafka's target; and a member whose valid previous target nothing changed gets the same tuple back (Kafka's
    builders hand an unchanged member's immutable map back)."""
    assume(_mixed(group))
    result = UniformAssignor().assign(group.cluster, group.subscriptions)
    assert result == kafka_heterogeneous(group.cluster, group.subscriptions)
    claimed = [tp for s in group.subscriptions.values() for tp in s.owned_partitions]
    for member, assignment in result.items():
        owned = group.subscriptions[member].owned_partitions
        if owned and assignment.partitions == owned and len(claimed) == len(set(claimed)):
            assert assignment.partitions is owned


@given(
    topics=st.integers(2, 7),
    shapes=st.integers(2, 4),
    members=st.integers(4, 40),
    partitions=st.integers(1, 30),
    rng=st.randoms(use_true_random=False),
)
def test_heterogeneous_is_kafkas_builder_on_few_shared_subscriptions(
    topics: int, shapes: int, members: int, partitions: int, rng: Random
) -> None:
    """Many members on a few subscriptions (topics sharing subscriber lists), over three rounds from a fresh group,
    one member restarting each time: the grouped subscribers and the masks' passes take part."""
    names = [f"t{i}" for i in range(topics)]
    cluster = Cluster({t: rng.randint(1, partitions) for t in names})
    kinds = [rng.sample(names, rng.randint(1, topics)) for _ in range(shapes)]
    subscriptions = {f"m{i:02d}": Subscription(kinds[rng.randrange(shapes)]) for i in range(members)}
    assume(len({s.topics for s in subscriptions.values()}) > 1)
    for _ in range(3):
        result = UniformAssignor().assign(cluster, subscriptions)
        assert result == kafka_heterogeneous(cluster, subscriptions)
        subscriptions = {
            m: Subscription(s.topics, owned_partitions=result[m].partitions) for m, s in subscriptions.items()
        }
        restarted = rng.choice(sorted(subscriptions))
        subscriptions[restarted] = Subscription(subscriptions[restarted].topics)


@given(
    lists=st.lists(st.lists(st.sampled_from(["a", "b", "c", "d", "e", "gone"]), unique=True), min_size=1, max_size=12),
    share=st.booleans(),
)
def test_grouped_subscribers_are_the_appended_ones(lists: list[list[str]], share: bool) -> None:
    """Built per subscription group or by one append per member and topic, the subscriber lists are the same
    (topics without metadata, here "gone", left out)."""
    counts = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}
    kinds = [Subscription(topics).topics for topics in lists]  # equal lists are one object, as assign sees them
    topic_lists = [kinds[i % 2] for i in range(len(kinds))] if share else kinds
    assert _subscribers(counts, topic_lists) == _appended(counts, topic_lists)


@given(
    sizes=st.lists(st.integers(0, 6), min_size=2, max_size=40),
    rng=st.randoms(use_true_random=False),
    digits=st.booleans(),
)
def test_levels_tell_balanced_topics_as_the_loads_do(sizes: list[int], rng: Random, digits: bool) -> None:
    """After any sequence of one-partition moves between members, the masks say "balanced" exactly when the loads
    of a topic's subscribers are within one (the masks built from each member's bit, or from binary digits as
    above ``_LEVELS_BITS`` members)."""
    with patch.object(_heterogeneous, "_LEVELS_BITS", 0 if digits else _heterogeneous._LEVELS_BITS):
        _levels_follow_the_loads(sizes, rng)


def _levels_follow_the_loads(sizes: list[int], rng: Random) -> None:
    members = len(sizes)
    subscribers = {f"t{i}": sorted(rng.sample(range(members), rng.randint(1, members))) for i in range(6)}
    levels = _Levels.of(sorted(subscribers), subscribers, sizes)
    assert levels is not None
    for _ in range(20):
        for topic, chosen in subscribers.items():
            assert levels.balanced(topic) == _within_one(sizes, chosen)
        lowest, highest = min(sizes), max(sizes)
        givers = [m for m in range(members) if sizes[m] > lowest]
        if not givers:
            break
        giver = rng.choice(givers)
        receiver = rng.choice([m for m in range(members) if m != giver and sizes[m] < highest] or [giver])
        if receiver == giver:
            break
        sizes[giver] -= 1
        sizes[receiver] += 1
        levels.refreshed(sizes)
        levels.moved(giver, receiver, sizes)
