"""KIP-848's ``uniform`` assignor when subscriptions differ: Kafka's ``UniformHeterogeneousAssignmentBuilder``."""

from __future__ import annotations

from collections import deque
from itertools import repeat
from typing import TYPE_CHECKING, Final

from assignors.consumer_group._common import make_partitions

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from assignors._model import Topic, TopicPartition
    from assignors.consumer_group._common import Runs

__all__ = ["MAX_ITERATION_COUNT", "heterogeneous_targets"]

MAX_ITERATION_COUNT: Final = 16
"""Kafka's cap on the balancing passes over the topics."""


def _scatter(owners: list[int], partitions: Sequence[int], member: int) -> None:
    """``owners[p] = member`` for every ``p`` in ``partitions``, at C speed."""
    deque(map(owners.__setitem__, partitions, repeat(member)), maxlen=0)


class _Balancer:
    """Kafka's ``MemberAssignmentBalancer``: a least loaded range growing right, a most loaded range growing left.

    ``order`` holds one topic's subscribers sorted by (size, index). The least loaded range
    ``[0, least_end)`` has level ``least_level``: each member in it takes one partition per
    cycle, and once all have, the level rises and members of that size join. The most loaded
    range mirrors it from the right; members without partitions of the topic leave it.
    """

    __slots__ = (
        "least_end",
        "least_level",
        "most_end",
        "most_level",
        "most_start",
        "next_least",
        "next_most",
        "order",
        "sizes",
    )

    def __init__(self, sizes: list[int], members: Sequence[int]) -> None:
        self.sizes = sizes
        self.order = sorted(members, key=sizes.__getitem__)  # stable: ties stay in index order
        count = len(self.order)
        self.least_end = 0
        self.least_level = sizes[self.order[0]] - 1
        self.next_least = 0
        self.most_start = self.most_end = count
        self.most_level = sizes[self.order[-1]] + 1
        self.next_most = count - 1

    def imbalance(self) -> int:
        return self.sizes[self.order[-1]] - self.sizes[self.order[0]]

    def next_least_loaded(self) -> int:
        order, sizes = self.order, self.sizes
        if self.next_least >= self.least_end:
            self.least_level += 1
            while self.least_end < len(order) and sizes[order[self.least_end]] == self.least_level:
                self.least_end += 1
            self.next_least = 0
        member = order[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        order, sizes = self.order, self.sizes
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_level = sizes[order[self.most_start - 1]]  # emptied by exclusions: restart below
            else:
                self.most_level -= 1
            while self.most_start > 0 and sizes[order[self.most_start - 1]] == self.most_level:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = order[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        """Drop the member last returned by :meth:`next_most_loaded` from the most loaded range."""
        order, here, last = self.order, self.next_most + 1, self.most_end - 1
        order[here], order[last] = order[last], order[here]
        self.most_end -= 1

    def balanced(self) -> bool:
        return self.most_level - self.least_level <= 1


def _fill(sizes: list[int], members: Sequence[int], free: list[int]) -> list[tuple[int, list[int]]]:
    """Hand ``free`` out as the least loaded range does, one cycle of equal-level members at a time.

    Equivalent to asking :meth:`_Balancer.next_least_loaded` once per partition, but a run of
    cycles at the same range width is one strided slice per member.
    """
    order = sorted(members, key=sizes.__getitem__)
    count = len(order)
    level = sizes[order[0]]
    end = position = 0
    given: list[tuple[int, list[int]]] = []
    while position < len(free):
        while end < count and sizes[order[end]] == level:
            end += 1
        cycles = sizes[order[end]] - level if end < count else len(free)
        chunk = free[position : position + cycles * end]
        for slot in range(min(end, len(chunk))):
            mine = chunk[slot::end]
            sizes[order[slot]] += len(mine)
            given.append((order[slot], mine))
        position += len(chunk)
        level += cycles
    return given


def heterogeneous_targets(
    topic_lists: list[list[Topic]], counts: Mapping[Topic, int], current: list[Runs]
) -> list[list[TopicPartition]]:
    """One target list per member: keep, fill, then balance, as Kafka's heterogeneous builder.

    Args:
        topic_lists: each member's subscribed topics that have partitions.
        counts: partition counts.
        current: each member's previous target (see ``previous_targets``).
    """
    members = len(topic_lists)
    subscribers: dict[Topic, list[int]] = {}
    for index, topics in enumerate(topic_lists):
        for topic in topics:
            subscribers.setdefault(topic, []).append(index)
    owners = {topic: [-1] * counts[topic] for topic in subscribers}
    sizes = [0] * members
    result: list[list[TopicPartition]] = [[] for _ in range(members)]
    for index, runs in enumerate(current):  # keep every partition of a topic still subscribed
        for topic, partitions in runs:
            _scatter(owners[topic], [tp[1] for tp in partitions], index)
            sizes[index] += len(partitions)
            result[index].extend(partitions)

    def rank(topic: Topic) -> tuple[float, int, Topic]:
        subs = len(subscribers[topic])
        return (-(counts[topic] / subs), subs, topic)

    topics = sorted(subscribers, key=rank)
    for topic in topics:
        topic_owners = owners[topic]
        if -1 not in topic_owners:
            continue
        free = [p for p, owner in enumerate(topic_owners) if owner < 0]
        for member, mine in _fill(sizes, subscribers[topic], free):
            _scatter(topic_owners, mine, member)
            result[member].extend(make_partitions(topic, mine))
    moves = _balance([t for t in topics if len(subscribers[t]) > 1], subscribers, owners, sizes)
    if moves:
        _apply_moves(moves, owners, result)
    return result


def _balance(
    topics: list[Topic], subscribers: Mapping[Topic, list[int]], owners: Mapping[Topic, list[int]], sizes: list[int]
) -> dict[tuple[Topic, int], int]:
    """Kafka's ``balanceTopics``: passes over ``topics`` until a whole cycle moves nothing, at most 16.

    Returns the moved partitions with the owner each had before balancing.
    """
    moves: dict[tuple[Topic, int], int] = {}
    last_moved = -1
    for _ in range(MAX_ITERATION_COUNT):
        for index, topic in enumerate(topics):
            if index == last_moved:
                return moves
            moved = _balance_topic(topic, subscribers[topic], owners[topic], sizes, moves)
            if moved or last_moved == -1:
                last_moved = index
    return moves


def _balance_topic(
    topic: Topic, members: list[int], owners: list[int], sizes: list[int], moves: dict[tuple[Topic, int], int]
) -> int:
    """Move partitions of ``topic`` from its most to its least loaded subscribers; return how many moved."""
    balancer = _Balancer(sizes, members)
    if balancer.imbalance() <= 1:
        return 0
    by_owner = sorted(range(len(owners)), key=owners.__getitem__)  # stable: by owner, then partition
    start: dict[int, int] = {}
    end: dict[int, int] = {}
    for position, partition in enumerate(by_owner):
        owner = owners[partition]
        start.setdefault(owner, position)
        end[owner] = position + 1
    moved = 0
    while not balancer.balanced():
        giver = balancer.next_most_loaded()
        while giver != -1 and end.get(giver, 0) - start.get(giver, 0) <= 0:
            balancer.exclude_most_loaded()
            giver = balancer.next_most_loaded()
        if giver == -1:
            break
        end[giver] -= 1
        partition = by_owner[end[giver]]
        receiver = balancer.next_least_loaded()
        if balancer.balanced():
            break
        moves.setdefault((topic, partition), giver)
        owners[partition] = receiver
        sizes[giver] -= 1
        sizes[receiver] += 1
        moved += 1
    return moved


def _apply_moves(
    moves: Mapping[tuple[Topic, int], int], owners: Mapping[Topic, list[int]], result: list[list[TopicPartition]]
) -> None:
    """Take each moved partition from the list of its owner before balancing and give it to its final owner."""
    removed: dict[int, set[tuple[Topic, int]]] = {}
    for (topic, partition), before in sorted(moves.items()):
        after = owners[topic][partition]
        if after != before:
            removed.setdefault(before, set()).add((topic, partition))
            result[after].extend(make_partitions(topic, [partition]))
    for member, gone in removed.items():
        result[member] = [tp for tp in result[member] if tp not in gone]
