"""Kafka 3.8/3.9's heterogeneous uniform builder (before KAFKA-17710), transcribed.

A transcription of ``org.apache.kafka.coordinator.group.assignor.UniformHeterogeneousAssignmentBuilder`` as
released in Kafka 3.9.1 (kafka-group-coordinator-3.9.1; 3.8.1's class is the same but for one import), which
Kafka 4.0.0 replaced (KAFKA-17710, see :mod:`assignors.consumer_group._heterogeneous`): keep every partition of a
still-subscribed topic, give the rest one by one to the least loaded subscriber (fewest partitions, then member
id), then move partitions from a subscriber more than one above another to the least loaded subscriber, with
``PartitionMovements``' bookkeeping of who moved what, until Kafka's ``isBalanced`` holds or a pass moves nothing.

Order. Members go in member-id order (Java's string order), as in the other ports. Kafka's partition order is
its comparator's (partitions per subscriber descending, subscribers ascending, partition number ascending) and,
where that ties (the same partition number of two topics alike in both), the iteration order of a Java
``HashSet<TopicIdPartition>``: here the one a topic Uuid whose ``hashCode`` is the topic's 1-based position in name
order among the assigned topics gives (``Objects.hash(topicId, partition)`` bucketed as ``HashMap`` does, then
insertion order), and so for the first partition of a ``PartitionMovements`` set. Under Kafka's random Uuids such
ties fall otherwise. Not modelled: the order inside a bin Java has turned into a tree (9 or more entries in a table
of 64 or more buckets, possible with many one-partition topics) after entries were added to it again.

Where Kafka's builder throws (``PartitionAssignorException``: "Mismatch in partition movement record with respect
to partition ownership during a rebalance", its ``PartitionMovements`` bookkeeping; the broker then computes no new
target), :class:`KafkaThrows` is raised for the caller to fall back on.

Runtime complexity: O(P log P) per pass over the reassignable partitions, plus O(M log M + P) per move (the
sorted members) and per balance check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assignors.consumer_group._common import cached_partitions

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from assignors._core.model import Topic, TopicPartition

__all__ = ["KafkaThrows", "heterogeneous_targets_38"]

_MASK: int = 0xFFFFFFFF
Key = tuple[int, int]  # (topic position, partition)
Pair = tuple[int, int]  # (source member, destination member)


class KafkaThrows(Exception):  # noqa: N818 - it names what Kafka does
    """Kafka 3.9's builder throws ``PartitionAssignorException`` on this group (the message says where)."""


def _capacity(size: int) -> int:
    """The table size of a ``new HashSet<>()`` after ``size`` adds (16, doubled past three quarters full)."""
    capacity = 16
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def _bucket(topic: int, partition: int, capacity: int) -> int:
    """The ``HashMap`` bucket of ``TopicIdPartition(topic, partition)``: ``Objects.hash(topicId, partition)``
    with ``topicId.hashCode()`` = the topic's position + 1."""
    h = (31 * (31 + topic + 1) + partition) & _MASK
    return (h ^ (h >> 16)) & (capacity - 1)


class _JavaHashSet:
    """A ``HashSet<TopicIdPartition>`` of one topic's partitions, for its iteration's first element."""

    __slots__ = ("capacity", "items", "topic")

    def __init__(self, topic: int) -> None:
        self.topic = topic
        self.capacity = 16
        self.items: list[int] = []  # insertion order

    def add(self, partition: int) -> None:
        if partition in self.items:
            return
        self.items.append(partition)
        if len(self.items) > self.capacity * 3 // 4:
            self.capacity *= 2  # a resize keeps the order within a bucket

    def remove(self, partition: int) -> None:
        if partition in self.items:
            self.items.remove(partition)

    def first(self) -> int:
        seq = {p: i for i, p in enumerate(self.items)}
        return min(self.items, key=lambda p: (_bucket(self.topic, p, self.capacity), seq[p]))


class _Builder:
    """The Java class's state; member ``m`` is position ``m`` in member-id order, topic ``t`` in name order."""

    def __init__(
        self,
        counts: Sequence[int],
        topics_of: Sequence[Sequence[int]],
        current: Sequence[Sequence[Key]],
    ) -> None:
        self.counts = counts
        self.topics_of = topics_of
        self.subscribed = [frozenset(ts) for ts in topics_of]
        members_per_topic: dict[int, list[int]] = {}
        for member, topics in enumerate(topics_of):
            for topic in topics:
                members_per_topic.setdefault(topic, []).append(member)
        self.members_per_topic = members_per_topic
        self.capacity = _capacity(sum(counts[t] for t in members_per_topic))
        self.assigned: list[dict[int, set[int]]] = [{} for _ in topics_of]
        self.size = [0] * len(topics_of)
        self.max_size = [sum(counts[t] for t in topics) for topics in topics_of]
        self.sorted_members = {m for m in range(len(topics_of)) if self.max_size[m] > 0}
        self.owner: dict[Key, int] = {}
        self.unassigned = self._all_partitions()
        self.by_topic: dict[int, dict[Pair, _JavaHashSet]] = {}
        self.by_partition: dict[Key, Pair] = {}
        self.current = current

    def _all_partitions(self) -> set[Key]:
        return {(t, p) for t in self.members_per_topic for p in range(self.counts[t])}

    def _sorted(self, partitions: set[Key]) -> list[Key]:
        """``sortTopicIdPartitions`` over a ``HashSet``'s iteration order."""
        cap, members = self.capacity, self.members_per_topic
        return sorted(
            partitions,
            key=lambda k: (
                -(self.counts[k[0]] / len(members[k[0]])),
                len(members[k[0]]),
                k[1],
                _bucket(k[0], k[1], cap),
                k[0],
            ),
        )

    def _members_by_size(self) -> list[int]:
        size = self.size
        return sorted(self.sorted_members, key=lambda m: (size[m], m))

    def build(self) -> list[dict[int, set[int]]]:
        if not self.members_per_topic:
            return self.assigned
        for member, partitions in enumerate(self.current):  # assignStickyPartitions
            for key in partitions:
                if key[0] in self.subscribed[member]:
                    self._add(key, member)
        for key in self._sorted(self.unassigned):  # unassignedPartitionsAssignment
            candidates = [m for m in self.members_per_topic[key[0]] if self.size[m] < self.max_size[m]]
            if candidates:
                self._add(key, min(candidates, key=lambda m: (self.size[m], m)))
        self._balance()
        return self.assigned

    def _add(self, key: Key, member: int) -> None:
        self.assigned[member].setdefault(key[0], set()).add(key[1])
        self.owner[key] = member
        self.sorted_members.discard(member)
        self.size[member] += 1
        if self.size[member] < self.max_size[member]:
            self.sorted_members.add(member)
        self.unassigned.discard(key)

    def _remove(self, key: Key, member: int) -> None:
        mine = self.assigned[member].get(key[0])
        if mine is not None:
            mine.discard(key[1])
            if not mine:
                del self.assigned[member][key[0]]
        if self.owner.get(key) == member:
            del self.owner[key]
        self.sorted_members.discard(member)
        if self.size[member] > 0:
            self.size[member] -= 1
        if self.size[member] < self.max_size[member]:
            self.sorted_members.add(member)

    def _can_member_participate(self, member: int) -> bool:
        if self.size[member] < self.max_size[member]:
            return True
        return any(len(self.members_per_topic[t]) >= 2 for t in self.assigned[member])  # noqa: PLR2004

    def _is_balanced(self) -> bool:
        ordered = self._members_by_size()
        if not ordered:
            msg = "NoSuchElementException: TreeSet.first() on no members"
            raise KafkaThrows(msg)
        if self.size[ordered[0]] >= self.size[ordered[-1]] - 1:
            return True
        for member in ordered:
            count = self.size[member]
            if count == self.max_size[member]:
                continue
            for topic in self.topics_of[member]:
                mine = self.assigned[member].get(topic, ())
                for p in range(self.counts[topic]):
                    if p not in mine:
                        other = self.owner.get((topic, p))
                        if count + 1 < (0 if other is None else self.size[other]):
                            return False
        return True

    def _balance(self) -> None:
        if self.unassigned:
            msg = "PartitionAssignorException: Some partitions were left unassigned"
            raise KafkaThrows(msg)
        self.unassigned = {k for k in self._all_partitions() if len(self.members_per_topic[k[0]]) >= 2}  # noqa: PLR2004
        for member in range(len(self.topics_of)):
            if not self._can_member_participate(member):
                self.sorted_members.discard(member)
        if self.unassigned:
            self._perform_reassignments()

    def _perform_reassignments(self) -> None:
        modified = True
        while modified:
            modified = False
            occurred = False
            for key in self._sorted(self.unassigned):
                if occurred and self._is_balanced():
                    return
                occurred = False
                owner = self.owner.get(key)
                if owner is None:
                    msg = f"PartitionAssignorException: Expected topicIdPartition '{key}' to be assigned to a member"
                    raise KafkaThrows(msg)
                if any(self.size[owner] > self.size[o] + 1 for o in self.members_per_topic[key[0]]):
                    self._reassign(key)
                    modified = occurred = True

    def _reassign(self, key: Key) -> None:
        new = next((m for m in self._members_by_size() if key[0] in self.subscribed[m]), None)
        if new is None:
            msg = f"PartitionAssignorException: No suitable new owner was found for the partition{key}"
            raise KafkaThrows(msg)
        moved = self._actual_partition_to_be_moved(key, self.owner[key], new)
        old = self.owner[moved]
        self._move_partition(moved, old, new)
        self._remove(moved, old)
        self._add(moved, new)

    def _actual_partition_to_be_moved(self, key: Key, old: int, new: int) -> Key:
        movements = self.by_topic.get(key[0])
        if movements is None:
            return key
        record = self.by_partition.get(key)
        if record is not None:
            if old != record[1]:
                msg = f"PartitionAssignorException: Old owner does not match expected value for partition: {key}"
                raise KafkaThrows(msg)
            old = record[0]
        reverse = movements.get((new, old))
        if reverse is None:
            return key
        return (key[0], reverse.first())

    def _remove_record(self, key: Key) -> Pair:
        pair = self.by_partition.pop(key)
        movements = self.by_topic[key[0]]
        movements[pair].remove(key[1])
        if not movements[pair].items:
            del movements[pair]
        if not movements:
            del self.by_topic[key[0]]
        return pair

    def _add_record(self, key: Key, pair: Pair) -> None:
        self.by_partition[key] = pair
        movements = self.by_topic.setdefault(key[0], {})
        if pair not in movements:
            movements[pair] = _JavaHashSet(key[0])
        movements[pair].add(key[1])

    def _move_partition(self, key: Key, old: int, new: int) -> None:
        if key in self.by_partition:
            existing = self._remove_record(key)
            if existing[1] == old:  # sic: Kafka 3.9 throws when the record agrees with the owner
                msg = (
                    "PartitionAssignorException: Mismatch in partition movement record with respect to partition "
                    "ownership during a rebalance"
                )
                raise KafkaThrows(msg)
            if existing[0] != new:
                self._add_record(key, (existing[0], new))
        else:
            self._add_record(key, (old, new))


def heterogeneous_targets_38(
    counts: Mapping[Topic, int],
    topic_lists: Sequence[Sequence[Topic]],
    current: Sequence[Sequence[TopicPartition]],
) -> list[list[TopicPartition]]:
    """One target list per member (in member-id order), as Kafka 3.9.1's heterogeneous builder computes it.

    Args:
        counts: partition counts of the assigned topics, in name order.
        topic_lists: per member, its subscribed topics (those without metadata are ignored).
        current: per member, its valid previous target (see ``previous_targets``).

    Raises:
        KafkaThrows: Kafka's builder throws on this group.
    """
    topics = list(counts)
    position = {topic: index for index, topic in enumerate(topics)}
    sizes = [counts[t] for t in topics]
    topics_of = [sorted({position[t] for t in ts if t in position}) for ts in topic_lists]
    previous = [[(position[tp[0]], tp[1]) for tp in mine if tp[0] in position] for mine in current]
    assigned = _Builder(sizes, topics_of, previous).build()
    result: list[list[TopicPartition]] = []
    for mine in assigned:
        partitions: list[TopicPartition] = []
        for t in sorted(mine):
            every = cached_partitions(topics[t], sizes[t])
            partitions.extend(every[p] for p in sorted(mine[t]))
        result.append(partitions)
    return result
