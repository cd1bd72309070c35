"""Level 2 of the sticky objective, exactly: the most even member loads any valid assignment reaches.

The loads of the valid assignments of a group are the bases of a polymatroid (a member
set can take at most the partitions of the topics its members subscribe to), and the sum
of squared loads is separable and convex; on such a set a load vector is a minimum as
soon as no single exchange lowers it. An exchange takes one partition from a member
``u`` and passes partitions along a chain ``u -> c1 -> ... -> v``: each step hands one
partition of a topic the next member subscribes to, and every member in between gives
one and gets one, so only ``u`` loses and only ``v`` gains. It lowers the sum of squares
exactly when ``load(u) >= load(v) + 2``. Kafka's ``isBalanced`` looks at chains of one
step only; a longer chain is how 5/4/3 becomes 4/4/4 in Kafka's
``StickyAssignorTest.testAssignmentWithMultipleGenerations2``.

Members with equal subscriptions (a *class*) are interchangeable in a chain, so the
search runs on a small graph whatever the partition count: classes, and *groups* of
topics with the same subscribing classes; a class reaches a topic group when one of its
members holds some of it, and a topic group reaches every class subscribing to it. For
each load level ``h`` from the top, a backwards search from the classes holding a member
at ``h - 2`` or less finds whether a member at ``h`` or more starts a chain to one; if
so, as many partitions as the chain carries and the two loads allow move along it, and
the search starts again. When no level finds a chain the loads are a minimum.

A chain prefers partitions new to their holder (moving those revokes nothing); the exact
improvement phase of small groups (:mod:`assignors._sticky_exchange`) then chooses,
among the most even load vectors, the one that takes the fewest partitions from their
owners.
"""

from __future__ import annotations

import logging
from collections import deque
from itertools import chain, pairwise
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from assignors._model import MemberId, Topic, TopicPartition
    from assignors._sticky_claims import State

logger = logging.getLogger(__name__)

__all__ = ["most_even"]


def most_even(
    member_topics: Mapping[MemberId, frozenset[Topic]],
    members: Sequence[MemberId],
    state: State,
) -> int:
    """Move partitions in ``state`` until the member loads have the smallest sum of squares; returns how many moved.

    ``members``: the eligible members, sorted. ``state.load`` must hold each member's load.
    """
    load = state.load
    low = min(load[m] for m in members)
    if all(load[m] <= low + 1 for m in members):
        return 0  # loads within one of each other: the most even vector there is
    moved = _Chains(member_topics, members, state).run()
    if moved and logger.isEnabledFor(logging.DEBUG):
        logger.debug("sticky balance: %d partitions moved along chains to the most even loads", moved)
    return moved


class _Chains:
    """Classes, topic groups, who holds how many of each, and the chain search."""

    def __init__(
        self, member_topics: Mapping[MemberId, frozenset[Topic]], members: Sequence[MemberId], state: State
    ) -> None:
        self._state = state
        self._load = state.load
        self._members_of: list[list[MemberId]] = []
        self._class: dict[MemberId, int] = {}
        self._group: dict[Topic, int] = {}
        self._classes_of: list[tuple[int, ...]] = []  # per topic group, its subscribing classes
        self._classify(member_topics, members)
        self._groups_of: list[list[int]] = [[] for _ in self._members_of]  # per class, its topic groups
        for index, key in enumerate(self._classes_of):
            for klass in key:
                self._groups_of[klass].append(index)
        # Per member and topic group: what it could give, kept partitions below new ones (built on first use).
        self._stacks: dict[tuple[MemberId, int], tuple[list[TopicPartition], list[int]]] = {}
        # How many partitions of each topic group each class holds.
        self._held = [[0] * len(self._classes_of) for _ in self._members_of]
        # ... and how many of those are new to their holder (passing one on revokes nothing).
        self._fresh = [[0] * len(self._classes_of) for _ in self._members_of]
        group = self._group
        for member in members:
            row, fresh = self._held[self._class[member]], self._fresh[self._class[member]]
            for tp in state.kept[member]:
                row[group[tp[0]]] += 1
            for tp in state.new[member]:
                row[group[tp[0]]] += 1
                fresh[group[tp[0]]] += 1
        self._holder: dict[TopicPartition, MemberId] = {}
        self._received: dict[MemberId, list[TopicPartition]] = {}

    def _classify(self, member_topics: Mapping[MemberId, frozenset[Topic]], members: Sequence[MemberId]) -> None:
        """Members into classes (equal subscriptions), topics into groups (equal subscribing classes)."""
        class_of_topics: dict[frozenset[Topic], int] = {}
        for member in members:  # sorted: classes are numbered by their first member
            index = class_of_topics.setdefault(member_topics[member], len(class_of_topics))
            if index == len(self._members_of):
                self._members_of.append([])
            self._members_of[index].append(member)
            self._class[member] = index
        subscribers: dict[Topic, list[int]] = {}
        for topics, index in class_of_topics.items():
            for topic in topics:
                subscribers.setdefault(topic, []).append(index)
        group_of_key: dict[tuple[int, ...], int] = {}
        for topic in sorted(subscribers):
            key = tuple(subscribers[topic])
            index = group_of_key.setdefault(key, len(group_of_key))
            if index == len(self._classes_of):
                self._classes_of.append(key)
            self._group[topic] = index

    def _stack(self, member: MemberId, group: int) -> tuple[list[TopicPartition], list[int]]:
        """``member``'s partitions of ``group``, kept ones first, and how many of them are kept."""
        key = (member, group)
        stack = self._stacks.get(key)
        if stack is None:
            of = self._group
            kept = [tp for tp in self._state.kept[member] if of[tp[0]] == group]
            new = [tp for tp in self._state.new[member] if of[tp[0]] == group]
            stack = self._stacks[key] = (kept + new, [len(kept)])
        return stack

    def _count(self, member: MemberId, group: int) -> int:
        return len(self._stack(member, group)[0])

    def run(self) -> int:
        moved = 0
        while True:
            found = self._find()
            if found is None:
                break
            moved += self._carry(*found)
        self._finish()
        return moved

    def _find(self) -> tuple[MemberId, list[tuple[int, int]], MemberId] | None:
        """A chain from a member at some level ``h`` to one at ``h - 2`` or less, the highest ``h`` first.

        Of the chains from that level, one that revokes the fewest partitions (passes on
        the fewest partitions their holder kept), then from the heaviest member (ties: id).
        Returns the giver, the steps (topic group, class that receives it) and the receiver.
        """
        load, members_of = self._load, self._members_of
        lightest = [min(ms, key=lambda m: (load[m], m)) for ms in members_of]
        floor = min(load[m] for m in lightest)
        by_level = sorted({load[m] for ms in members_of for m in ms if load[m] >= floor + 2}, reverse=True)
        for level in by_level:
            targets = [k for k, m in enumerate(lightest) if load[m] <= level - 2]
            towards = self._backwards(targets)
            best: tuple[int, int, MemberId, int] | None = None
            for klass, ms in enumerate(members_of):
                groups = [g for g in self._groups_of[klass] if g in towards and self._held[klass][g]]
                if not groups:
                    continue
                for member in ms:
                    if load[member] < level:
                        continue
                    for group in groups:
                        items, kept = self._stack(member, group)
                        if items:
                            key = (towards[group][2] + (len(items) <= kept[0]), -load[member], member, group)
                            if best is None or key < best:
                                best = key
            if best is not None:
                member, group = best[2], best[3]
                steps = self._walk(group, towards)
                return member, steps, lightest[steps[-1][1]]
        return None

    def _backwards(self, targets: list[int]) -> dict[int, tuple[int, int | None, int]]:
        """Per topic group that leads to a target class: the class it goes to, the group that class passes on, the cost.

        A search backwards from ``targets`` (0-1 breadth first): a topic group leads to a
        target when a target subscribes to it (the chain ends there: None), or when a class
        subscribing to it holds some of a topic group that leads to a target (and so can
        pass one on). The cost counts the relays that can only pass on a partition they
        kept (a revocation); each group takes the cheapest way.
        """
        towards: dict[int, tuple[int, int | None, int]] = {}
        onward: dict[int, int | None] = dict.fromkeys(targets)
        cost = dict.fromkeys(targets, 0)
        done: set[int] = set()
        held, fresh, groups_of, classes_of = self._held, self._fresh, self._groups_of, self._classes_of
        queue = deque((0, klass) for klass in targets)
        while queue:
            distance, klass = queue.popleft()
            if klass in done or distance != cost[klass]:
                continue
            done.add(klass)
            passes = onward[klass]
            for group in groups_of[klass]:
                if group in towards:
                    continue
                towards[group] = (klass, passes, distance)
                for other in classes_of[group]:
                    if other in done or not held[other][group]:
                        continue
                    step = 0 if fresh[other][group] else 1
                    if distance + step < cost.get(other, distance + 2):
                        cost[other] = distance + step
                        onward[other] = group
                        if step:
                            queue.append((distance + 1, other))
                        else:
                            queue.appendleft((distance, other))
        return towards

    def _walk(self, group: int, towards: Mapping[int, tuple[int, int | None, int]]) -> list[tuple[int, int]]:
        steps: list[tuple[int, int]] = []
        current: int | None = group
        while current is not None:
            klass, following, _ = towards[current]
            steps.append((current, klass))
            current = following
        return steps

    def _carry(self, giver: MemberId, steps: list[tuple[int, int]], receiver: MemberId) -> int:
        """Move as many partitions along the chain as it carries and keep lowering the sum of squares."""
        load = self._load
        amount = (load[giver] - load[receiver]) // 2
        amount = min(amount, self._count(giver, steps[0][0]))
        relays: list[MemberId] = []
        for (_, klass), (group, _) in pairwise(steps):
            relay = self._relay(klass, group)
            relays.append(relay)
            amount = min(amount, self._count(relay, group))
        path = [giver, *relays, receiver]
        for _ in range(amount):
            for index, (group, _) in enumerate(steps):
                self._move(group, path[index], path[index + 1])
        return amount * len(steps)

    def _relay(self, klass: int, group: int) -> MemberId:
        """The member of ``klass`` that passes a partition of ``group`` on: one new to it first, then the most."""
        best: tuple[bool, int, MemberId] | None = None
        for member in self._members_of[klass]:
            items, kept = self._stack(member, group)
            if not items:
                continue
            key = (len(items) <= kept[0], -len(items), member)
            if best is None or key < best:
                best = key
        if best is None:  # pragma: no cover - the search only walks through holders
            msg = "a chain through a class that holds nothing of the topic group"
            raise AssertionError(msg)
        return best[2]

    def _move(self, group: int, giver: MemberId, receiver: MemberId) -> None:
        items, kept = self._stack(giver, group)
        tp = items.pop()
        if len(items) < kept[0]:
            kept[0] -= 1
            self._state.unkept.setdefault(tp, giver)
        else:
            self._fresh[self._class[giver]][group] -= 1
        self._stack(receiver, group)[0].append(tp)
        self._holder[tp] = receiver
        self._received.setdefault(receiver, []).append(tp)
        self._held[self._class[giver]][group] -= 1
        self._held[self._class[receiver]][group] += 1
        self._fresh[self._class[receiver]][group] += 1
        self._load[giver] -= 1
        self._load[receiver] += 1

    def _finish(self) -> None:
        """Write the moves into the state's kept and new lists (a partition back with its keeper is kept)."""
        holder = self._holder
        if not holder:
            return
        state = self._state
        touched = {m for m, _ in self._stacks}
        for member in sorted(touched):
            here = holder.get
            kept = [tp for tp in state.kept[member] if here(tp, member) == member]
            own = set(kept)
            arrived = chain(state.new[member], self._received.get(member, ()))
            state.kept[member] = kept
            state.new[member] = [tp for tp in dict.fromkeys(arrived) if here(tp, member) == member and tp not in own]
