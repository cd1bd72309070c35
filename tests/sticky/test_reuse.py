"""A Cluster assigned again keeps its partitions (``reused_partitions``); equal topic lists share one tuple.

Neither may change a result: a fresh identical group dealt from the partitions a Cluster keeps
gets what a brand-new Cluster's round robin gives, on the first call, the second (which builds
them) and every later one, also when another topic set comes between.
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from assignors import Assignment, Cluster, CooperativeStickyAssignor, StickyAssignor, Subscription, TopicPartition
from assignors._core import model
from assignors._core.model import reused_partitions
from assignors.testing import Group, groups

TP = TopicPartition
STICKY = [StickyAssignor, CooperativeStickyAssignor]


def copy_of(cluster: Cluster) -> Cluster:
    """An equal Cluster that has never been asked for anything."""
    return Cluster(dict(cluster.partitions_per_topic), partition_racks=dict(cluster.partition_racks))


def round_robin(cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, tuple[TopicPartition, ...]]:
    """The fresh identical group's result, naively: sorted partitions of the subscribed topics, every M-th."""
    topics = {t for s in subscriptions.values() for t in s.topics}
    partitions = sorted(tp for t in topics for tp in cluster.partitions(t))
    members = sorted(subscriptions)
    return {m: tuple(partitions[i :: len(members)]) for i, m in enumerate(members)}


def partitions(result: Mapping[str, Assignment]) -> dict[str, tuple[TopicPartition, ...]]:
    return {member: a.partitions for member, a in result.items()}


@settings(max_examples=40)
@given(group=groups(identical=True, max_members=30, max_topics=5, max_partitions=60), calls=st.integers(1, 4))
def test_assigned_again_on_the_same_cluster(group: Group, calls: int) -> None:
    """Every call on one Cluster gives what a new Cluster gives; without racks, the naive round robin."""
    racked = any(s.rack_id is not None for s in group.subscriptions.values()) and group.cluster.partition_racks
    for assignor in STICKY:
        expected = assignor().assign(copy_of(group.cluster), group.subscriptions)
        if not racked:
            assert partitions(expected) == round_robin(group.cluster, group.subscriptions)
        for _ in range(calls + 1):
            assert assignor().assign(group.cluster, group.subscriptions) == expected


def test_another_topic_set_between() -> None:
    """One entry: a group on other topics replaces it, and the first group's partitions are built again, equal."""
    cluster = Cluster({"a": 40, "b": 30, "c": 20})
    first = {f"m{i}": Subscription(["a", "c"]) for i in range(30)}
    second = {f"n{i}": Subscription(["b"]) for i in range(40)}
    for subscriptions in (first, first, second, second, first, first, first):
        result = StickyAssignor().assign(cluster, subscriptions)
        assert partitions(result) == round_robin(cluster, subscriptions)
    assert cluster == Cluster({"a": 40, "b": 30, "c": 20})
    assert hash(cluster) == hash(Cluster({"a": 40, "b": 30, "c": 20}))


def test_reused_partitions() -> None:
    """None on the first request for a topic list; then the partitions, topic after topic, kept."""
    cluster = Cluster({"x": 3, "y": 2, "empty": 0})
    topics = ("y", "missing", "empty", "x")
    assert reused_partitions(cluster, topics) is None
    built = reused_partitions(cluster, topics)
    assert built == (TP("y", 0), TP("y", 1), TP("x", 0), TP("x", 1), TP("x", 2))
    assert all(type(tp) is TopicPartition for tp in built)
    assert reused_partitions(cluster, topics) is built
    assert reused_partitions(cluster, ("x",)) is None
    assert reused_partitions(cluster, ("x",)) == (TP("x", 0), TP("x", 1), TP("x", 2))
    assert reused_partitions(cluster, topics) is None  # replaced


def test_equal_topic_lists_share_one_tuple() -> None:
    """Equal topic lists are one object, in a table that stays small."""
    assert Subscription(["b", "a", "b"]).topics is Subscription(("a", "b")).topics
    assert Subscription({"a", "b"}).topics == ("a", "b")
    for i in range(model._TOPIC_LISTS_KEPT + 10):
        assert Subscription([f"t{i}", "u"]).topics == tuple(sorted((f"t{i}", "u")))
    assert len(model._TOPIC_LISTS) <= model._TOPIC_LISTS_KEPT
