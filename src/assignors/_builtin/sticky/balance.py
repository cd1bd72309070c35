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
improvement phase of small groups (:mod:`assignors._builtin.sticky.exchange`) then chooses,
among the most even load vectors, the one that takes the fewest partitions from their
owners.
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from itertools import chain, pairwise
from operator import itemgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from assignors._builtin.sticky.claims import State
    from assignors._core.model import MemberId, Topic, TopicPartition

logger = logging.getLogger(__name__)

__all__ = ["evenest_at_a_glance", "most_even"]

_topic_of = itemgetter(0)


def most_even(
    member_topics: Mapping[MemberId, frozenset[Topic]],
    members: Sequence[MemberId],
    state: State,
) -> int:
    """Move partitions in ``state`` until the member loads have the smallest sum of squares; returns how many moved.

    ``members``: the eligible members, sorted. ``state.load`` must hold each member's load.
    """
    if evenest_at_a_glance(member_topics, members, state.load):
        return 0
    moved = _Chains(member_topics, members, state).run()
    if moved and logger.isEnabledFor(logging.DEBUG):
        logger.debug("sticky balance: %d partitions moved along chains to the most even loads", moved)
    return moved


def evenest_at_a_glance(
    member_topics: Mapping[MemberId, frozenset[Topic]], members: Sequence[MemberId], load: Mapping[MemberId, int]
) -> bool:
    """Whether the loads are the most even without a search: within one of each other wherever a chain could go.

    False does not mean a chain exists (a member of a small topic may be as full as it can be): :func:`most_even`
    searches then.
    """
    low = min(load[m] for m in members)
    return all(load[m] <= low + 1 for m in members) or _even_per_component(member_topics, members, load)


def _even_per_component(
    member_topics: Mapping[MemberId, frozenset[Topic]], members: Sequence[MemberId], load: Mapping[MemberId, int]
) -> bool:
    """Whether, among members linked by shared topics, loads are within one: then no chain can help.

    A chain only passes partitions between members sharing topics, so members of
    different components of the member-topic graph never exchange load.
    """
    span: dict[frozenset[Topic], list[int]] = {}
    for member in members:
        value = load[member]
        bounds = span.get(member_topics[member])
        if bounds is None:
            span[member_topics[member]] = [value, value]
        elif value < bounds[0]:
            bounds[0] = value
        elif value > bounds[1]:
            bounds[1] = value
    root = _components(span)
    component: dict[Topic, list[int]] = {}
    for topics, (low, high) in span.items():
        bounds = component.setdefault(root(min(topics)), [low, high])
        bounds[0], bounds[1] = min(bounds[0], low), max(bounds[1], high)
        if bounds[1] - bounds[0] > 1:
            return False
    return True


def _components(classes: Iterable[frozenset[Topic]]) -> Callable[[Topic], Topic]:
    """Union-find over topics: two topics of one subscription are in one component; returns the root finder."""
    parent: dict[Topic, Topic] = {}

    def root(topic: Topic) -> Topic:
        while parent.setdefault(topic, topic) != topic:
            parent[topic] = parent[parent[topic]]
            topic = parent[topic]
        return topic

    for topics in classes:
        first, *rest = sorted(topics)
        for topic in rest:
            parent[root(topic)] = root(first)
    return root


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
        for member in members:  # counted per topic first: Counter runs in C
            row, fresh = self._held[self._class[member]], self._fresh[self._class[member]]
            for topic, count in Counter(map(_topic_of, state.kept[member])).items():
                row[group[topic]] += count
            for topic, count in Counter(map(_topic_of, state.new[member])).items():
                row[group[topic]] += count
                fresh[group[topic]] += count
        self._light: list[MemberId | None] = [None] * len(self._members_of)  # per class, cached
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
        while batch := self._batch():
            moved += batch
        self._finish()
        return moved

    def _batch(self) -> int:
        """Chains from members at the highest level ``h`` that has one to members at ``h - 2`` or less.

        One backwards search serves every giver at that level: givers go in the order of
        the fewest partitions revoked (passing on partitions their holders kept), then the
        heaviest (ties: id), and each carries along chains while one still reaches a member
        two or more lighter. Returns how many partitions moved (0: no chain at any level, so
        the loads are the minimum).
        """
        load, members_of, held = self._load, self._members_of, self._held
        lightest = [self._lightest(k) for k in range(len(members_of))]
        floor = min(load[m] for m in lightest)
        by_level = sorted({load[m] for ms in members_of for m in ms if load[m] >= floor + 2}, reverse=True)
        for level in by_level:
            towards = self._backwards([k for k, m in enumerate(lightest) if load[m] <= level - 2])
            givers: list[tuple[int, int, MemberId, int]] = []
            for klass, ms in enumerate(members_of):
                groups = [g for g in self._groups_of[klass] if g in towards and held[klass][g]]
                for member in ms if groups else ():
                    if load[member] < level:
                        continue
                    for group in groups:
                        items, kept = self._stack(member, group)
                        if items:
                            cost = towards[group][0][2] + (len(items) <= kept[0])
                            givers.append((cost, -load[member], member, group))
            moved = 0
            dead: dict[int, int] = {}  # shared by the givers of this search (see _route)
            for _, _, member, group in sorted(givers):
                while (steps := self._route(group, load[member] - 2, towards, dead)) and (
                    carried := self._carry(member, steps)
                ):
                    moved += carried
            if moved:
                return moved
        return 0

    def _lightest(self, klass: int) -> MemberId:
        """The member of ``klass`` with the fewest partitions (ties: id), cached between moves."""
        member = self._light[klass]
        if member is None:
            load = self._load
            member = self._light[klass] = min(self._members_of[klass], key=lambda m: (load[m], m))
        return member

    def _backwards(self, targets: list[int]) -> dict[int, list[tuple[int, int | None, int]]]:
        """Per topic group that leads to a target class: the classes it can go to, cheapest first.

        Each entry: a class subscribing to the group, the group that class passes on (None:
        a target class, where the chain ends), and the cost. A search backwards from
        ``targets`` (0-1 breadth first): a topic group leads to a target when a target
        subscribes to it, or when a class subscribing to it holds some of a topic group that
        leads to a target (and so can pass one on). The cost counts the relays that can only
        pass on a partition they kept (a revocation).
        """
        towards: dict[int, list[tuple[int, int | None, int]]] = {}
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
                entries = towards.get(group)
                if entries is not None:
                    entries.append((klass, passes, distance))
                    continue
                towards[group] = [(klass, passes, distance)]
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

    def _route(
        self,
        group: int,
        limit: int,
        towards: Mapping[int, list[tuple[int, int | None, int]]],
        dead: dict[int, int],
    ) -> list[tuple[int, int]] | None:
        """A chain from ``group`` that still holds, to a class with a member at ``limit`` or less (cheapest first).

        Depth first over the search's entries: a target class qualifies when its lightest
        member is light enough, a relay class when it still holds some of the group it
        passes on and that group still leads somewhere. Returns the steps (topic group,
        class that receives it), or None.

        ``dead``: per topic group, the highest limit it was found to reach no target at.
        Reachability does not depend on where the search starts, so this is exact as long
        as nothing moved since; after a move it may miss a chain, which the next search
        (with a new ``dead``) finds. The search that moves nothing is exact.
        """
        if dead.get(group, limit - 1) >= limit:
            return None
        found = self._walk(group, limit, towards, dead)
        if found is not None:
            for current, _ in found:  # on a chain that reached a target: not dead
                if dead.get(current) == limit:
                    del dead[current]
        return found

    def _walk(
        self,
        current: int,
        limit: int,
        towards: Mapping[int, list[tuple[int, int | None, int]]],
        dead: dict[int, int],
    ) -> list[tuple[int, int]] | None:
        """:meth:`_route`'s depth-first step from topic group ``current``."""
        dead[current] = limit  # visited: not entered again
        load, held = self._load, self._held
        for klass, passes, _ in towards[current]:
            if passes is None:
                if load[self._lightest(klass)] <= limit:
                    return [(current, klass)]
            elif held[klass][passes] and dead.get(passes, limit - 1) < limit:
                rest = self._walk(passes, limit, towards, dead)
                if rest is not None:
                    return [(current, klass), *rest]
        return None

    def _carry(self, giver: MemberId, steps: list[tuple[int, int]]) -> int:
        """Move as many partitions along the chain as it carries while they lower the sum of squares.

        Returns how many partitions moved (0: the chain no longer holds, or the ends are even).
        """
        load = self._load
        receiver = self._lightest(steps[-1][1])
        amount = min((load[giver] - load[receiver]) // 2, self._count(giver, steps[0][0]))
        relays: list[MemberId] = []
        for (_, klass), (group, _) in pairwise(steps):
            if amount <= 0:
                return 0
            relay = self._relay(klass, group)
            if relay is None:
                return 0
            relays.append(relay)
            amount = min(amount, self._count(relay, group))
        if amount <= 0:
            return 0
        path = [giver, *relays, receiver]
        for _ in range(amount):
            for index, (group, _) in enumerate(steps):
                self._move(group, path[index], path[index + 1])
        return amount * len(steps)

    def _relay(self, klass: int, group: int) -> MemberId | None:
        """The member of ``klass`` that passes a partition of ``group`` on: one new to it first, then the most."""
        if not self._held[klass][group]:
            return None
        best: tuple[bool, int, MemberId] | None = None
        for member in self._members_of[klass]:
            items, kept = self._stack(member, group)
            if not items:
                continue
            key = (len(items) <= kept[0], -len(items), member)
            if best is None or key < best:
                best = key
        return None if best is None else best[2]

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
        giving, receiving = self._class[giver], self._class[receiver]
        self._held[giving][group] -= 1
        self._held[receiving][group] += 1
        self._fresh[receiving][group] += 1
        load = self._load
        load[giver] -= 1
        load[receiver] += 1
        light = self._light
        if light[receiving] == receiver:
            light[receiving] = None  # maybe no longer the lightest
        lightest = light[giving]
        if lightest is not None and (load[giver], giver) < (load[lightest], lightest):
            light[giving] = giver

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
