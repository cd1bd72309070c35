"""Hypothesis strategies for clusters and consumer groups.

Groups are small on purpose (a handful of members, topics and partitions): they shrink
to counterexamples a person can read. Scale belongs in the benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from assignors._model import Assignment, Cluster, MemberId, Subscription, TopicPartition

__all__ = ["Group", "assignments", "clusters", "groups", "subscriptions", "topic_names"]

RACKS = ("a", "b", "c")


@dataclass(frozen=True)
class Group:
    """One rebalance's input: cluster metadata and every member's subscription."""

    cluster: Cluster
    subscriptions: dict[MemberId, Subscription] = field(default_factory=dict)

    @property
    def identical(self) -> bool:
        """Whether every member subscribes to the same topics."""
        return len({s.topics for s in self.subscriptions.values()}) <= 1


@st.composite
def clusters(
    draw: st.DrawFn,
    *,
    min_topics: int = 1,
    max_topics: int = 4,
    max_partitions: int = 12,
    racks: bool | None = None,
) -> Cluster:
    """Clusters of topics ``t0, t1, ...``, with zero to ``max_partitions`` partitions each.

    Args:
        min_topics: fewest topics.
        max_topics: most topics.
        max_partitions: most partitions of one topic (zero partitions is drawn too).
        racks: whether partitions carry replica racks (from ``a``, ``b``, ``c``); None draws it.
    """
    count = draw(st.integers(min_topics, max_topics))
    partitions = {f"t{i}": draw(st.integers(0, max_partitions)) for i in range(count)}
    with_racks = draw(st.booleans()) if racks is None else racks
    partition_racks: dict[TopicPartition, frozenset[str]] = {}
    if with_racks:
        # Either every partition on every rack (rack-awareness stays off) or a random layout.
        everywhere = draw(st.booleans())
        for topic, size in partitions.items():
            for number in range(size):
                chosen = frozenset(RACKS) if everywhere else draw(st.frozensets(st.sampled_from(RACKS), max_size=3))
                if chosen:
                    partition_racks[TopicPartition(topic, number)] = chosen
    return Cluster(partitions, partition_racks=partition_racks)


@st.composite
def groups(  # noqa: PLR0913 - keyword-only bounds, as hypothesis strategies take them
    draw: st.DrawFn,
    *,
    min_members: int = 1,
    max_members: int = 8,
    max_topics: int = 4,
    max_partitions: int = 12,
    identical: bool | None = None,
    static: bool | None = None,
    racks: bool | None = None,
    missing_topics: bool = True,
    owned: bool = False,
) -> Group:
    """Consumer groups: members ``c0, c1, ...`` in random insertion order.

    Args:
        min_members: fewest members.
        max_members: most members.
        max_topics: most topics in the cluster.
        max_partitions: most partitions of one topic.
        identical: all members subscribe to the same topics (True), to independent random
            subsets (False), or either (None).
        static: all members static (True), none (False), or each drawn (None). Static
            members get instance ids unrelated to their member ids.
        racks: members and partitions carry racks (True), do not (False), or drawn (None).
        missing_topics: members may subscribe to a topic the cluster has no metadata for.
        owned: members claim random partitions (of any topic, some claimed twice) with random
            generations from -1 to 3, as after an arbitrary history.
    """
    with_racks = draw(st.booleans()) if racks is None else racks
    cluster = draw(clusters(max_topics=max_topics, max_partitions=max_partitions, racks=with_racks))
    topics = list(cluster.topics)
    if missing_topics and draw(st.booleans()):
        topics.append("unknown")
    size = draw(st.integers(min_members, max_members))
    members = draw(st.permutations([f"c{i}" for i in range(size)]))
    instance_ids = draw(st.permutations([f"i{i}" for i in range(size)]))
    same = draw(st.booleans()) if identical is None else identical
    shared = draw(st.frozensets(st.sampled_from(topics), min_size=1))
    every_partition = [tp for t in cluster.topics for tp in cluster.partitions(t)]
    subscriptions: dict[MemberId, Subscription] = {}
    for index, member in enumerate(members):
        member_topics = shared if same else draw(st.frozensets(st.sampled_from(topics)))
        is_static = draw(st.booleans()) if static is None else static
        rack = draw(st.sampled_from((*RACKS, None))) if with_racks else None
        claims: frozenset[TopicPartition] = frozenset()
        generation = -1
        if owned and every_partition:
            claims = draw(st.frozensets(st.sampled_from(every_partition), max_size=len(every_partition)))
            generation = draw(st.integers(-1, 3))
        subscriptions[member] = Subscription(
            member_topics,
            group_instance_id=instance_ids[index] if is_static else None,
            rack_id=rack,
            owned_partitions=claims,
            generation_id=generation,
        )
    return Group(cluster, subscriptions)


def topic_names(*, max_size: int = 12) -> st.SearchStrategy[str]:
    """Non-empty topic names of any Unicode text (what the wire format carries), ``max_size`` characters at most."""
    return st.text(st.characters(codec="utf-8"), min_size=1, max_size=max_size)


def _any_partitions() -> st.SearchStrategy[TopicPartition]:
    return st.builds(TopicPartition, topic_names(max_size=6), st.integers(0, 2**31 - 1))


@st.composite
def subscriptions(
    draw: st.DrawFn, *, max_topics: int = 5, max_owned: int = 8, static: bool | None = None
) -> Subscription:
    """Single subscriptions with every field drawn: topics, user data (or None), owned
    partitions, generation (-1 or any INT32 >= 0), rack (or None), instance id (or None).

    Args:
        max_topics: most subscribed topics.
        max_owned: most owned partitions.
        static: with a ``group_instance_id`` (True), without (False), or drawn (None).
    """
    is_static = draw(st.booleans()) if static is None else static
    return Subscription(
        draw(st.lists(topic_names(), max_size=max_topics)),
        user_data=draw(st.none() | st.binary(max_size=16)),
        owned_partitions=draw(st.frozensets(_any_partitions(), max_size=max_owned)),
        generation_id=draw(st.just(-1) | st.integers(0, 2**31 - 1)),
        rack_id=draw(st.none() | topic_names(max_size=6)),
        group_instance_id=draw(topic_names(max_size=8)) if is_static else None,
    )


@st.composite
def assignments(draw: st.DrawFn, *, max_partitions: int = 12) -> Assignment:
    """Single member assignments: distinct partitions in any order, user data or None."""
    partitions = draw(st.lists(_any_partitions(), max_size=max_partitions, unique=True))
    return Assignment(partitions, user_data=draw(st.none() | st.binary(max_size=16)))
