"""Ours against a literal transcription of Kafka's AbstractStickyAssignor (tests/helpers/kafka_sticky.py).

The transcription first reproduces Kafka's own test outputs, then the two run side by
side on groups of 1,000+ partitions, where the exact oracle is too slow: with identical
and with mixed subscriptions, ours never moves more partitions than Kafka's, and is never
worse in the order of the objective (partitions moved, then per-topic spread), except
for the mixed groups pinned in ``MIXED_WIDER`` (docs/sticky.md states them).
"""

from __future__ import annotations

import random

import pytest

from assignors import Assignment, Cluster, StickyAssignor, Subscription, TopicPartition
from assignors.testing import StickyScore, balance_problems, load_squares, sticky_score
from helpers.kafka_sticky import kafka_sticky

TP = TopicPartition


def _strings(assignment: dict[str, list[TopicPartition]]) -> dict[str, list[str]]:
    return {m: [str(tp) for tp in parts] for m, parts in assignment.items()}


def test_the_transcription_reproduces_add_remove_two_consumers_two_topics() -> None:
    """Kafka's ``AbstractStickyAssignorTest.testAddRemoveTwoConsumersTwoTopics``, lists and order as Kafka asserts."""
    both = ["topic1", "topic2"]
    cluster = Cluster({"topic1": 3, "topic2": 4})
    first = kafka_sticky(cluster, {"consumer1": Subscription(both), "consumer2": Subscription(both)})
    assert _strings(first) == {
        "consumer1": ["topic1-0", "topic1-2", "topic2-1", "topic2-3"],
        "consumer2": ["topic1-1", "topic2-0", "topic2-2"],
    }
    subs = {m: Subscription(both, owned_partitions=first[m], generation_id=1) for m in first}
    subs |= {m: Subscription(both, generation_id=1) for m in ("consumer3", "consumer4")}
    second = kafka_sticky(cluster, subs)
    assert _strings(second) == {
        "consumer1": ["topic1-0", "topic2-1"],
        "consumer2": ["topic2-0", "topic1-1"],
        "consumer3": ["topic1-2", "topic2-3"],
        "consumer4": ["topic2-2"],
    }
    survivors = {m: Subscription(both, owned_partitions=second[m], generation_id=2) for m in ("consumer3", "consumer4")}
    assert _strings(kafka_sticky(cluster, survivors)) == {
        "consumer3": ["topic1-2", "topic2-3", "topic1-0", "topic2-1"],
        "consumer4": ["topic2-2", "topic1-1", "topic2-0"],
    }


def test_the_transcription_reproduces_the_javadoc_example_2() -> None:
    """``StickyAssignor``'s Javadoc example 2 through the general builder: C1 takes t0-0 when C0 leaves."""
    cluster = Cluster({"t0": 1, "t1": 2, "t2": 3})
    topics = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}
    first = kafka_sticky(cluster, {m: Subscription(t) for m, t in topics.items()})
    assert _strings(first) == {"C0": ["t0-0"], "C1": ["t1-0", "t1-1"], "C2": ["t2-0", "t2-1", "t2-2"]}
    survivors = {m: Subscription(topics[m], owned_partitions=first[m], generation_id=1) for m in ("C1", "C2")}
    assert _strings(kafka_sticky(cluster, survivors)) == {
        "C1": ["t1-0", "t1-1", "t0-0"],
        "C2": ["t2-0", "t2-1", "t2-2"],
    }


def _group(number: int, identical: bool) -> tuple[Cluster, dict[str, Subscription]]:
    """A settled group of 1,000+ partitions (Kafka's own assignment), then members leave and join."""
    rnd = random.Random(number)  # noqa: S311 - a reproducible group, not a secret
    counts = {f"t{i}": rnd.randint(100, 400) for i in range(rnd.randint(4, 8))}
    while sum(counts.values()) < 1000:
        counts[f"t{len(counts)}"] = rnd.randint(100, 400)
    cluster = Cluster(counts)
    topics = sorted(counts)
    members = [f"m{i:02d}" for i in rnd.sample(range(60), rnd.randint(4, 24))]
    topics_of = {m: topics if identical else sorted(rnd.sample(topics, rnd.randint(1, len(topics)))) for m in members}
    before = kafka_sticky(cluster, {m: Subscription(t) for m, t in topics_of.items()})
    leaving = set(rnd.sample(members, rnd.randint(0, len(members) // 3)))
    subs = {
        m: Subscription(topics_of[m], owned_partitions=before[m], generation_id=1) for m in members if m not in leaving
    }
    for joiner in [f"j{i}" for i in range(rnd.randint(0 if subs else 1, 3))]:
        subs[joiner] = Subscription(topics if identical else sorted(rnd.sample(topics, rnd.randint(1, len(topics)))))
    return cluster, subs


@pytest.mark.parametrize("number", range(12))
def test_identical_subscriptions_never_move_more_nor_spread_wider_than_kafka(number: int) -> None:
    """Identical subscriptions at 1,000+ partitions: as few partitions moved as Kafka's, per-topic spread no wider."""
    theirs, mine, problems = _scores(number, identical=True)
    assert problems == []
    assert mine.moved <= theirs.moved
    assert mine.spread <= theirs.spread


def _scores(number: int, identical: bool) -> tuple[StickyScore, StickyScore, list[str]]:
    cluster, subs = _group(number, identical=identical)
    kafka = kafka_sticky(cluster, subs)
    ours = {m: list(a.partitions) for m, a in StickyAssignor().assign(cluster, subs).items()}
    problems = balance_problems(subs, {m: Assignment(p) for m, p in ours.items()})
    return sticky_score(cluster, subs, kafka), sticky_score(cluster, subs, ours), problems


def _levels(number: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Kafka's and ours at levels 2, 3 and 5 (squared loads, partitions moved, per-topic spread)."""
    cluster, subs = _group(number, identical=False)
    kafka = kafka_sticky(cluster, subs)
    ours = {m: list(a.partitions) for m, a in StickyAssignor().assign(cluster, subs).items()}
    assert balance_problems(subs, {m: Assignment(p) for m, p in ours.items()}) == []
    theirs, mine = sticky_score(cluster, subs, kafka), sticky_score(cluster, subs, ours)
    return (load_squares(kafka), theirs.moved, theirs.spread), (load_squares(ours), mine.moved, mine.spread)


# Mixed groups where ours is more balanced than Kafka's (level 2: smaller sum of squared loads),
# which Kafka's local ``isBalanced`` test cannot see: group number -> (Kafka's sum, ours).
MIXED_MORE_EVEN = {
    1: (100378, 100374),
    2: (79408, 79406),
    3: (357872, 357870),
    4: (168923, 168921),
    9: (188619, 188617),
    11: (243328, 243326),
    16: (639394, 639390),
    21: (145457, 145453),
    22: (61229, 61227),
}


@pytest.mark.parametrize("number", range(24))
def test_mixed_subscriptions_never_do_worse_than_kafka(number: int) -> None:
    """Mixed subscriptions at 1,000+ partitions: as balanced as Kafka's or more; then no more moved; then no wider.

    The order is the objective's: squared loads, then partitions moved, then per-topic spread.
    """
    theirs, mine = _levels(number)
    assert mine <= theirs
    assert (theirs[0], mine[0]) == MIXED_MORE_EVEN.get(number, (theirs[0], theirs[0]))
