"""Worked examples of a widely read article on Kafka consumer groups and rebalancing, pinned for every assignor.

The article: "kafka消费组与重平衡机制详解".

1.2: a group on topics A, B and C with 1, 2 and 3 partitions is best served by 6 consumers, one partition
each; 3 consumers take about 2 each; of 8 consumers, 2 stay idle. That is RoundRobin's and Sticky's
arithmetic; Range assigns each topic on its own, so it piles onto the first consumers.
2.1: 20 consumers on one topic of 100 partitions take 5 each.
"""

from __future__ import annotations

import pytest

from assignors import Cluster, Subscription, get_assignor

ABC = Cluster({"A": 1, "B": 2, "C": 3})


def assign(name: str, cluster: Cluster, members: int) -> dict[str, list[str]]:
    subscriptions = {f"c{i}": Subscription(cluster.topics) for i in range(1, members + 1)}
    result = get_assignor(name).assign(cluster, subscriptions)
    return {member: sorted(str(tp) for tp in a.partitions) for member, a in result.items()}


def test_six_consumers_one_partition_each() -> None:
    assert assign("roundrobin", ABC, 6) == {
        "c1": ["A-0"], "c2": ["B-0"], "c3": ["B-1"], "c4": ["C-0"], "c5": ["C-1"], "c6": ["C-2"],
    }  # fmt: skip
    for name in ("sticky", "cooperative-sticky"):
        assert sorted(map(len, assign(name, ABC, 6).values())) == [1] * 6
    # Range: A's only partition, B's first and C's first all go to c1.
    assert assign("range", ABC, 6) == {
        "c1": ["A-0", "B-0", "C-0"], "c2": ["B-1", "C-1"], "c3": ["C-2"], "c4": [], "c5": [], "c6": [],
    }  # fmt: skip


def test_three_consumers_two_each() -> None:
    assert assign("roundrobin", ABC, 3) == {"c1": ["A-0", "C-0"], "c2": ["B-0", "C-1"], "c3": ["B-1", "C-2"]}
    for name in ("sticky", "cooperative-sticky"):
        assert sorted(map(len, assign(name, ABC, 3).values())) == [2, 2, 2]
    assert assign("range", ABC, 3) == {"c1": ["A-0", "B-0", "C-0"], "c2": ["B-1", "C-1"], "c3": ["C-2"]}


@pytest.mark.parametrize(("name", "idle"), [("roundrobin", 2), ("sticky", 2), ("cooperative-sticky", 2), ("range", 5)])
def test_eight_consumers_leave_some_idle(name: str, idle: int) -> None:
    result = assign(name, ABC, 8)
    assert sum(not partitions for partitions in result.values()) == idle
    assert sorted(p for partitions in result.values() for p in partitions) == ["A-0", "B-0", "B-1", "C-0", "C-1", "C-2"]
    if name == "roundrobin":
        assert result["c7"] == result["c8"] == []


@pytest.mark.parametrize("name", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_twenty_consumers_on_a_hundred_partitions_take_five_each(name: str) -> None:
    subscriptions = {f"consumer-{i:02d}": Subscription(["orders"]) for i in range(20)}
    result = get_assignor(name).assign(Cluster({"orders": 100}), subscriptions)
    assert [len(a.partitions) for a in result.values()] == [5] * 20
    partitions = {member: [tp.partition for tp in a.partitions] for member, a in result.items()}
    if name == "range":
        assert partitions["consumer-03"] == [15, 16, 17, 18, 19]
    if name == "roundrobin":
        assert partitions["consumer-03"] == [3, 23, 43, 63, 83]
