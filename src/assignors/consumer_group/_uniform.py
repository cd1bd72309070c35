"""KIP-848's ``uniform`` server assignor: the homogeneous builder (identical subscriptions) and its dispatch."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from assignors._core.base import subscriber_positions
from assignors.consumer_group._common import ServerAssignor, free_partitions, make_partitions, previous_targets
from assignors.consumer_group._heterogeneous import MOST_EVEN_CLASSES, heterogeneous_targets

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assignors._core.model import MemberId, Subscription, Topic, TopicPartition

__all__ = ["UNIFORM_ASSIGNOR_NAME", "UniformAssignor"]

UNIFORM_ASSIGNOR_NAME = "uniform"


class UniformAssignor(ServerAssignor):
    """Kafka's server-side ``UniformAssignor`` (KIP-848), the default of ``group.consumer.assignors``.

    When every member subscribes to the same topics, the homogeneous builder runs: sizes
    differ by at most one, and each member keeps as much of its previous target as its
    quota allows. Otherwise the heterogeneous builder (KAFKA-17710, Kafka 4.0) keeps every
    partition of a still-subscribed topic, gives the rest to the least loaded subscribers
    topic by topic, then moves partitions from the most to the least loaded subscribers of
    each topic, for at most 16 passes over the topics. Kafka's result can stop there "almost
    balanced" (9/10/11) when subscriptions overlap; ours then evens the loads out along chains
    of subscribers across topics (the most even loads any valid target has), and changes
    nothing where Kafka's passes reach them; above 64 distinct subscriptions Kafka's loads
    stand (the search runs on the subscriptions). A member with an empty subscription makes
    the group heterogeneous, as in Kafka.

    ``stable_extras`` picks the homogeneous builder's version:

    - True (default): after KAFKA-18688 (Kafka 4.1 and later): a member already holding
      ``min + 1`` keeps its extra partition, so a balanced, valid target comes back
      unchanged whatever the member order; leftover extras go to the last unfilled members.
    - False: Kafka 3.8 to 4.0.x: the ``total % members`` extras go to the first members in
      iteration order, which can move partitions of an already balanced group.

    Order. Kafka iterates members and topic ids in Java ``HashMap``/``HashSet`` order, which
    depends on random member ids and topic Uuids. Here members go in member-id order
    (Java's string order) and topics in name order; a member's previous partitions go in
    ascending partition order (Java's ``HashSet<Integer>`` order for fewer partitions than
    its capacity). The heterogeneous topic comparator breaks its last tie by topic name
    where Kafka uses the topic Uuid. So Kafka's exact output differs when a result hinges
    on those orders: which members get the extras, which new partitions a member gets
    first, which of its partitions an over-quota member keeps. The rules, balance and
    stickiness are Kafka's. Racks are ignored, as every released Kafka version ignores them.

    >>> from assignors import Cluster, Subscription, TopicPartition
    >>> a, b, c = (TopicPartition("t", p) for p in range(3))
    >>> prev = {"A": Subscription(["t"], owned_partitions=[b]), "B": Subscription(["t"], owned_partitions=[a, c])}
    >>> result = UniformAssignor().assign(Cluster({"t": 3}), prev)
    >>> {m: [str(tp) for tp in x.partitions] for m, x in result.items()}
    {'A': ['t-1'], 'B': ['t-0', 't-2']}
    >>> result = UniformAssignor(stable_extras=False).assign(Cluster({"t": 3}), prev)
    >>> {m: [str(tp) for tp in x.partitions] for m, x in result.items()}
    {'A': ['t-1', 't-2'], 'B': ['t-0']}
    """

    name = UNIFORM_ASSIGNOR_NAME

    def __init__(self, *, stable_extras: bool = True) -> None:
        self.stable_extras = stable_extras

    def _targets(
        self, order: list[MemberId], counts: Mapping[Topic, int], subscriptions: Mapping[MemberId, Subscription]
    ) -> list[list[TopicPartition]]:
        current, owners = previous_targets(order, counts, subscriptions)
        first = subscriptions[order[0]].topics
        if all(subscriptions[m].topics == first for m in order):
            topics = [t for t in first if t in counts]
            return homogeneous_targets(topics, current, owners, stable_extras=self.stable_extras)
        subscribers = {
            topic: positions for topic, (_, positions) in subscriber_positions(counts, subscriptions, order).items()
        }
        distinct = {subscriptions[m].topics for m in order}
        topics_of = None  # too many distinct subscriptions for the most-even step: it is skipped
        if len(distinct) <= MOST_EVEN_CLASSES:
            known = {topics: frozenset(t for t in topics if t in counts) for topics in distinct}
            topics_of = [known[subscriptions[m].topics] for m in order]
        return heterogeneous_targets(subscribers, counts, current, owners, members=order, topics_of=topics_of)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()" if self.stable_extras else f"{type(self).__name__}(stable_extras=False)"


def homogeneous_targets(
    topics: list[Topic], current: list[list[TopicPartition]], owners: Mapping[Topic, list[int]], *, stable_extras: bool
) -> list[list[TopicPartition]]:
    """Kafka's ``UniformHomogeneousAssignmentBuilder``: one target list per member of ``current``.

    Every member's quota is ``total // members``, and ``total % members`` of them take one
    more. Each member keeps its previous partitions up to its quota, in order; what exceeds
    it goes after the never-assigned partitions; the members still short of their quota
    then take from that list in order. ``stable_extras`` chooses who takes the extras (see
    :class:`UniformAssignor`).
    """
    members = len(current)
    total = sum(len(owners[t]) for t in topics)
    min_quota, extra = divmod(total, members)
    unassigned: list[TopicPartition] = []  # never assigned first, topic by topic, then what members give up
    for topic in topics:
        free = free_partitions(owners[topic])
        if free:
            unassigned.extend(make_partitions(topic, free))
    if stable_extras:
        kept, unfilled = _keep_stable_extras(current, min_quota, extra, unassigned)
    else:
        kept, unfilled = _keep_first_extras(current, min_quota, extra, unassigned)
    position = 0
    for index, quota in unfilled:
        kept[index].extend(unassigned[position : position + quota])
        position += quota
    return kept


Kept: TypeAlias = "tuple[list[list[TopicPartition]], list[tuple[int, int]]]"


def _keep_first_extras(
    current: list[list[TopicPartition]], min_quota: int, extra: int, unassigned: list[TopicPartition]
) -> Kept:
    """Kafka 3.8-4.0: the first ``extra`` members in order may hold ``min + 1``, the others ``min``.

    Returns what each member keeps, and the members short of their quota, in order, with what they lack.
    """
    kept: list[list[TopicPartition]] = []
    unfilled: list[tuple[int, int]] = []
    for index, mine in enumerate(current):
        quota = min_quota + (index < extra)
        kept.append(mine[:quota])
        unassigned.extend(mine[quota:])
        if len(mine) < quota:
            unfilled.append((index, quota - len(mine)))
    return kept, unfilled


def _keep_stable_extras(
    current: list[list[TopicPartition]], min_quota: int, extra: int, unassigned: list[TopicPartition]
) -> Kept:
    """After KAFKA-18688: members already holding ``min + 1`` keep their extra; leftovers go to the last unfilled.

    Returns what each member keeps, and the members short of their quota, in order, with what they lack.
    """
    kept: list[list[TopicPartition]] = []
    unfilled: list[list[int]] = []  # [member index, what it lacks]
    for index, mine in enumerate(current):
        has_extra = extra > 0  # tentatively min + 1, claimed only by a member that already fills it
        quota = min_quota + has_extra
        kept.append(mine[:quota])
        unassigned.extend(mine[quota:])
        lacking = max(quota - len(mine), 0)
        if has_extra and lacking > 0:  # short of min + 1: give the extra slot back for now
            lacking -= 1
            has_extra = False
        elif has_extra:  # already holds min + 1: keeps its extra
            extra -= 1
        if lacking > 0 or (extra > 0 and not has_extra):
            unfilled.append([index, lacking])
    for entry in reversed(unfilled):  # leftover extras go to the last unfilled members
        if extra == 0:
            break
        entry[1] += 1
        extra -= 1
    return kept, [(index, lacking) for index, lacking in unfilled if lacking > 0]
