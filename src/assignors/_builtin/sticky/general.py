"""The sticky core's general builder (mixed subscriptions): keep every claim, fill, then balance.

Members keep every valid claim; unowned partitions go, the most constrained topic groups
first, to their least-loaded subscriber; then while some member holds a partition of a
topic that a subscriber with two or more fewer partitions could take, one such partition
moves, heaviest holder first. A partition new to the giver goes in preference to a kept
one; when only a kept one could go, a chain of two new ones is tried first (the giver
passes a new partition to a co-subscriber, which passes one of its new ones to the light
member), so nothing is revoked. Each step lowers the sum of squared loads, so this ends,
and it ends with the sticky condition (Kafka's ``isBalanced``). Longer chains then take
the loads to the most even vector any valid assignment reaches
(:mod:`assignors._builtin.sticky.balance`).
"""

from __future__ import annotations

import heapq
import logging
from itertools import chain
from typing import TYPE_CHECKING

from assignors._builtin.sticky.balance import most_even
from assignors._builtin.sticky.claims import marks, unmarked, water_fill
from assignors._builtin.sticky.racks import Locality, rack_pass
from assignors._core.base import topic_positions

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assignors._builtin.sticky.claims import State
    from assignors._builtin.sticky.racks import RackInfo
    from assignors._core.model import MemberId, Topic, TopicPartition

logger = logging.getLogger(__name__)

__all__ = ["assign_general"]


def assign_general(
    partitions_per_topic: Mapping[Topic, int],
    member_topics: Mapping[MemberId, frozenset[Topic]],
    members: list[MemberId],
    racks: RackInfo,
    state: State,
) -> None:
    subscribers = _subscribers(partitions_per_topic, member_topics, members)
    for member in members:
        state.load[member] = len(state.kept[member])
    # Topics with the same subscribers form a group; the most constrained groups go first.
    groups: dict[tuple[MemberId, ...], list[Topic]] = {}
    for topic in partitions_per_topic:
        groups.setdefault(subscribers[topic], []).append(topic)
    order = sorted(groups.items(), key=lambda item: (len(item[0]), item[1][0]))
    mismatched_by_topic: dict[Topic, dict[TopicPartition, MemberId]] = {}
    if racks.enabled:
        for tp, owner in racks.mismatched(state, members).items():
            mismatched_by_topic.setdefault(tp.topic, {})[tp] = owner
    free = marks(partitions_per_topic, list(chain.from_iterable(state.kept.values())))  # kept: valid, once each
    for group_members, topics in order:
        pool = unmarked(partitions_per_topic, free, topics)
        if racks.enabled:
            mismatched = {tp: o for topic in topics for tp, o in mismatched_by_topic.get(topic, {}).items()}
            pool, _ = rack_pass(pool, mismatched, group_members, racks, state, None)
        water_fill(pool, group_members, state, None)
    _rebalance(order, racks, state)
    most_even(member_topics, members, state)
    if racks.enabled:
        Locality(members, member_topics, racks, state, None).improve()


def _rebalance(groups: list[tuple[tuple[MemberId, ...], list[Topic]]], racks: RackInfo, state: State) -> None:
    """Move partitions until no subscriber of a topic holds two or more fewer than a holder of it."""
    active = [(members, topics) for members, topics in groups if len(members) >= 2]  # noqa: PLR2004
    if active:
        _Balancer(active, racks, state).run()


class _Stack:
    """What one member could give in one topic group, the next one last.

    Kept partitions lie below the new ones (moving a new one revokes nothing), and with
    racks rack-local ones below mismatched ones; ``kept`` counts the kept ones at the bottom.
    """

    __slots__ = ("items", "kept")

    def __init__(self) -> None:
        self.items: list[TopicPartition] = []
        self.kept = 0


class _Balancer:
    """The balancing moves of the general (mixed subscriptions) case, most-loaded holder first.

    Each sweep takes members from the heaviest down; a member gives one partition to the
    lightest co-subscriber (of a topic it holds) that holds two or more fewer, and goes
    back on the heap. Taking from the heaviest first keeps a light holder from feeding a
    lighter member with partitions the heavy holder's would later replace (a move for
    nothing). Sweeps repeat until none moves; each move lowers the sum of squared loads,
    so they end. Lightest members come from lazy per-group heaps, so a move costs
    ``O(groups of the two members x log members)``, not a scan of every holding.
    """

    def __init__(self, groups: list[tuple[tuple[MemberId, ...], list[Topic]]], racks: RackInfo, state: State) -> None:
        self._state = state
        load = self._load = state.load
        group_of_topic = {topic: index for index, (_, topics) in enumerate(groups) for topic in topics}
        self._groups_of: dict[MemberId, list[int]] = {}
        self._heaps: list[list[tuple[int, MemberId]]] = []
        self._stacks: list[dict[MemberId, _Stack]] = []
        self._members_of = [members for members, _ in groups]
        for index, (members, _) in enumerate(groups):
            for member in members:
                self._groups_of.setdefault(member, []).append(index)
            heap = [(load[m], m) for m in members]
            heapq.heapify(heap)
            self._heaps.append(heap)
            self._stacks.append({})
        self._group_of_topic = group_of_topic
        self._racks = racks
        self._holder: dict[TopicPartition, MemberId] = {}  # where each moved partition is now
        self._received: dict[MemberId, list[TopicPartition]] = {}
        self._touched: set[MemberId] = set()

    def _stack(self, index: int, member: MemberId) -> _Stack:
        """``member``'s stack in group ``index``, built on first use (most members never give)."""
        stacks = self._stacks[index]
        stack = stacks.get(member)
        if stack is not None:
            return stack
        stack = stacks[member] = _Stack()
        in_group = self._group_of_topic.get
        state = self._state
        kept = [tp for tp in state.kept[member] if in_group(tp[0]) == index]
        new = [tp for tp in state.new[member] if in_group(tp[0]) == index]
        if self._racks.enabled:
            local = self._racks.local
            kept = [tp for tp in kept if local(member, tp)] + [tp for tp in kept if not local(member, tp)]
            new = [tp for tp in new if local(member, tp)] + [tp for tp in new if not local(member, tp)]
        stack.items, stack.kept = kept + new, len(kept)
        return stack

    def run(self) -> None:
        load = self._load
        moved = True
        while moved:
            moved = False
            heaviest = [(-load[m], m) for m in self._groups_of]
            heapq.heapify(heaviest)
            while heaviest:
                negative, giver = heapq.heappop(heaviest)
                if -negative != load[giver]:
                    continue  # a stale entry
                target = self._receiver_for(giver)
                if target is None:
                    continue  # nothing to give this sweep
                chain = self._chain(giver) if target[2] else None
                if chain is None:
                    self._move(target[0], giver, target[1])
                    receiver = target[1]
                else:  # two moves of new partitions instead of one revocation
                    first, middle, second, receiver = chain
                    self._move(first, giver, middle)
                    self._move(second, middle, receiver)
                moved = True
                heapq.heappush(heaviest, (-load[giver], giver))
                heapq.heappush(heaviest, (-load[receiver], receiver))
        self._finish()

    def _receiver_for(self, giver: MemberId) -> tuple[int, MemberId, bool] | None:
        """The group and lightest member there that holds two or more fewer than ``giver``.

        Groups where the giver has a partition new to it come first: giving that one away
        revokes nothing, where giving a kept one would. The flag: a kept one would go.
        """
        load = self._load
        limit = load[giver] - 2
        best: tuple[int, MemberId, bool] | None = None
        for index in self._groups_of[giver]:
            receiver = self._lightest(index)
            if load[receiver] > limit:
                continue
            stack = self._stack(index, giver)
            if not stack.items:
                continue
            kept = len(stack.items) <= stack.kept
            if best is None or (kept, load[receiver], receiver) < (best[2], load[best[1]], best[1]):
                best = (index, receiver, kept)
        return best

    def _gives_kept(self, index: int, giver: MemberId) -> bool:
        stack = self._stack(index, giver)
        return len(stack.items) <= stack.kept

    def _chain(self, giver: MemberId) -> tuple[int, MemberId, int, MemberId] | None:
        """Instead of a kept partition: a new one to a co-subscriber that passes one of its new ones on.

        ``giver`` gives a partition new to it (group ``first``) to ``middle``, which gives
        one new to it (group ``second``) to ``receiver``, two or more lighter than ``giver``:
        the middle's load is unchanged and nothing is revoked.
        """
        limit = self._load[giver] - 2
        for first in self._groups_of[giver]:
            if self._gives_kept(first, giver):
                continue
            for middle in self._members_of[first]:
                if middle == giver:
                    continue
                for second in self._groups_of[middle]:
                    if second == first or self._gives_kept(second, middle):
                        continue
                    receiver = self._lightest(second)
                    if receiver != giver and self._load[receiver] <= limit:
                        return first, middle, second, receiver
        return None

    def _lightest(self, index: int) -> MemberId:
        heap, load = self._heaps[index], self._load
        while heap[0][0] != load[heap[0][1]]:
            heapq.heappop(heap)  # stale: a fresher entry for that member is in the heap
        return heap[0][1]

    def _move(self, index: int, giver: MemberId, receiver: MemberId) -> None:
        stack = self._stack(index, giver)
        tp = stack.items.pop()
        if len(stack.items) < stack.kept:
            stack.kept -= 1
            self._state.unkept.setdefault(tp, giver)
        self._stack(index, receiver).items.append(tp)
        self._holder[tp] = receiver
        self._received.setdefault(receiver, []).append(tp)
        self._touched.update((giver, receiver))
        load = self._load
        load[giver] -= 1
        load[receiver] += 1
        for member in (giver, receiver):
            for group in self._groups_of[member]:
                heapq.heappush(self._heaps[group], (load[member], member))

    def _finish(self) -> None:
        """Write the moves into the state's kept and new lists (a partition back with its keeper is kept)."""
        holder = self._holder
        if not holder:
            return
        state = self._state
        for member in sorted(self._touched):
            here = holder.get
            kept = [tp for tp in state.kept[member] if here(tp, member) == member]
            own = set(kept)
            arrived = chain(state.new[member], self._received.get(member, ()))
            state.kept[member] = kept
            state.new[member] = [tp for tp in dict.fromkeys(arrived) if here(tp, member) == member and tp not in own]


def _subscribers(
    partitions_per_topic: Mapping[Topic, int],
    member_topics: Mapping[MemberId, frozenset[Topic]],
    members: list[MemberId],
) -> dict[Topic, tuple[MemberId, ...]]:
    """Each topic's subscribers in ``members`` order, built once per class of equal subscriptions."""
    positions = topic_positions(partitions_per_topic, [member_topics[member] for member in members])
    by_class: dict[tuple[int, ...], tuple[MemberId, ...]] = {}
    result: dict[Topic, tuple[MemberId, ...]] = {}
    for topic in partitions_per_topic:
        entry = positions.get(topic)
        if entry is None:
            result[topic] = ()
            continue
        key, indexes = entry
        subscribers = by_class.get(key)
        if subscribers is None:
            subscribers = by_class[key] = tuple(map(members.__getitem__, indexes))
        result[topic] = subscribers
    return result
