"""The sticky algorithm shared by StickyAssignor and CooperativeStickyAssignor.

Input: partition counts of the subscribed topics, subscriptions, and each member's
decoded claim (previously owned partitions and the generation they were owned in).
Output: per member the partitions it keeps from its claim and the partitions new to it,
and the set of every partition some member claims (what a cooperative round withholds).

1. Claims. A claim on a topic the member does not subscribe to (or on a partition the
   topic does not have) is dropped. Of the remaining claims on a partition the highest
   generation wins; a tie at that generation leaves the partition unowned. The outcome
   does not depend on member order.
2. Identical subscriptions: quotas. ``N`` partitions over ``M`` members gives ``N // M``
   each, and ``N % M`` members may hold one more; those extra slots go first to members
   that own that many already, so the fewest partitions leave their owners. Members keep
   owned partitions up to their quota; the rest, and unowned partitions, are handed out
   one at a time to the least-loaded member (ties: member id).
3. Mixed subscriptions: members keep every valid claim; unowned partitions go, the most
   constrained topics first, to their least-loaded subscriber; then while some member
   holds a partition of a topic that a subscriber with two or more fewer partitions
   could take, one such partition moves (a newly placed one in preference to a kept
   one). Each move lowers the sum of squared loads, so this ends, and it ends balanced.
4. Racks (KIP-881), when members and partitions carry racks and not every partition is
   on every rack (Kafka's group-wide rule). An owned partition on none of its owner's
   racks is movable: before the rest are handed out, every partition needing an owner
   and every such mismatched one goes, the fewest rack-local members first, to its
   least-loaded rack-local member with room (identical subscriptions: below the minimum
   quota; mixed: two fewer than the mismatched owner, or any load for an unowned
   partition). Mismatched partitions nobody local can take stay with their owner. Last,
   while a mismatched partition could trade places with a mismatched partition of a
   member local to it (or, with identical subscriptions, move to a local member holding
   one fewer), it does: each step adds a rack-local placement and leaves every load
   as it was, so balance is never traded for locality and a result fed back is kept.

Handing partitions out least-loaded-first is done in bulk: members at the same load
take turns, so each run of equal loads is one strided slice per member.
"""

from __future__ import annotations

import heapq
import logging
from dataclasses import dataclass, field
from itertools import chain, compress, filterfalse, repeat
from operator import contains, itemgetter, not_
from typing import TYPE_CHECKING

from assignors._model import _topic_partitions

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from assignors._model import Cluster, MemberId, Subscription, Topic, TopicPartition

logger = logging.getLogger("assignors")

__all__ = ["Claim", "StickyResult", "sticky_assign"]

_topic_of = itemgetter(0)
_number_of = itemgetter(1)


@dataclass(frozen=True, slots=True)
class Claim:
    """What a member says it owned, and in which generation (-1: unknown)."""

    partitions: Sequence[TopicPartition]
    generation: int


@dataclass(slots=True)
class StickyResult:
    """Per member the partitions kept from its own claim and those new to it.

    ``claimed`` holds every partition any member claims, valid or not: a partition new
    to a member and in ``claimed`` is still owned by someone else (or claimed twice).
    """

    kept: dict[MemberId, list[TopicPartition]]
    new: dict[MemberId, list[TopicPartition]]
    claimed: set[TopicPartition]

    def assignment(self) -> dict[MemberId, list[TopicPartition]]:
        """Kept partitions first, in claim order, then the new ones."""
        new = self.new
        return {member: kept + new[member] if new[member] else kept for member, kept in self.kept.items()}


def _valid_claim(
    claimed: Sequence[TopicPartition],
    topics: frozenset[Topic],
    partitions_per_topic: Mapping[Topic, int],
    fewest: int,
) -> Sequence[TopicPartition]:
    """The partitions of ``claimed`` on ``topics`` that exist (``claimed`` itself when all do).

    ``fewest`` is the smallest partition count of any topic: claims below it need no lookup.
    """
    if set(map(_topic_of, claimed)) <= topics and max(map(_number_of, claimed)) < fewest:
        return claimed
    return [tp for tp in claimed if tp[0] in topics and tp[1] < partitions_per_topic[tp[0]]]


def _resolve_claims(
    partitions_per_topic: Mapping[Topic, int],
    member_topics: Mapping[MemberId, frozenset[Topic]],
    claims: Mapping[MemberId, Claim],
) -> tuple[dict[MemberId, list[TopicPartition]], set[TopicPartition], set[TopicPartition]]:
    """What each member keeps of its claim, every claimed partition, and the kept ones."""
    valid: dict[MemberId, Sequence[TopicPartition]] = {}
    claimed: set[TopicPartition] = set()
    claim_count = 0
    all_valid = True
    fewest = min(partitions_per_topic.values(), default=0)
    for member in sorted(claims):
        partitions = claims[member].partitions
        if not partitions:
            continue
        claimed.update(partitions)
        claim_count += len(partitions)
        kept = _valid_claim(partitions, member_topics.get(member, frozenset()), partitions_per_topic, fewest)
        if len(kept) != len(partitions):
            all_valid = False
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug("dropping %d stale claims of member %r", len(partitions) - len(kept), member)
        if kept:
            valid[member] = kept
    if len(claimed) == claim_count:  # the usual case: nobody claims a partition twice
        kept_lists = {member: list(partitions) for member, partitions in valid.items()}
        taken = claimed if all_valid else set(chain.from_iterable(kept_lists.values()))
        return kept_lists, claimed, taken
    winner = _resolve_conflicts(valid, claims)
    kept_lists = {m: [tp for tp in dict.fromkeys(parts) if winner.get(tp) == m] for m, parts in valid.items()}
    return kept_lists, claimed, set(winner)


def _resolve_conflicts(
    valid: Mapping[MemberId, Sequence[TopicPartition]], claims: Mapping[MemberId, Claim]
) -> dict[TopicPartition, MemberId]:
    """Highest generation wins; a tie at the highest generation leaves the partition unowned."""
    best: dict[TopicPartition, tuple[int, MemberId | None]] = {}
    for member, kept in valid.items():
        generation = claims[member].generation
        for tp in kept:
            current = best.get(tp)
            if current is None or generation > current[0]:
                best[tp] = (generation, member)
            elif generation == current[0] and current[1] != member:
                best[tp] = (generation, None)
    contested = sum(1 for _, member in best.values() if member is None)
    if contested:
        logger.info("%d partitions are claimed by two members of the same generation", contested)
    return {tp: member for tp, (_, member) in best.items() if member is not None}


@dataclass(slots=True)
class _State:
    """Loads and holdings while partitions are handed out."""

    load: dict[MemberId, int]
    kept: dict[MemberId, list[TopicPartition]]
    new: dict[MemberId, list[TopicPartition]]
    unkept: dict[TopicPartition, MemberId] = field(default_factory=dict)  # taken from its keeper

    def settle(self) -> None:
        """A partition that went back to the member that kept it counts as kept again.

        Cooperative rounds withhold new partitions that someone claims; without this, a
        partition moved away and back while balancing would be withheld from its own owner.
        """
        unkept = self.unkept
        for member, fresh in self.new.items():
            if any(unkept.get(tp) == member for tp in fresh):
                self.kept[member].extend(tp for tp in fresh if unkept.get(tp) == member)
                self.new[member] = [tp for tp in fresh if unkept.get(tp) != member]


def _water_fill(pool: Sequence[TopicPartition], members: Sequence[MemberId], state: _State, limit: int | None) -> int:
    """Give ``pool`` out one at a time to the least-loaded member (ties: id), none above ``limit``.

    ``members`` must be sorted by id. Returns how many partitions were given out.
    """
    load = state.load
    by_load: dict[int, list[MemberId]] = {}
    for member in members:
        current = load[member]
        if limit is None or current < limit:
            by_load.setdefault(current, []).append(member)
    levels = sorted(by_load)
    given = 0
    remaining = len(pool)
    active: list[MemberId] = []
    for index, level in enumerate(levels):
        active = sorted(chain(active, by_load[level])) if active else by_load[level]
        upper = levels[index + 1] if index + 1 < len(levels) else None
        if limit is not None:
            upper = limit if upper is None else min(upper, limit)
        count = len(active)
        take = remaining if upper is None else min(remaining, (upper - level) * count)
        chunk = pool[given : given + take]
        new = state.new
        for offset, member in enumerate(active[:take]):
            share = chunk[offset::count]
            new[member].extend(share)
            load[member] += len(share)
        given += take
        remaining -= take
        if remaining == 0:
            break
    return given


def _unclaimed(partitions_per_topic: Mapping[Topic, int], taken: set[TopicPartition]) -> list[TopicPartition]:
    """The partitions nobody keeps, in topic and partition order."""
    every = chain.from_iterable(_topic_partitions(topic, count) for topic, count in partitions_per_topic.items())
    return list(filterfalse(taken.__contains__, every)) if taken else list(every)


def sticky_assign(
    cluster: Cluster,
    partitions_per_topic: Mapping[Topic, int],
    subscriptions: Mapping[MemberId, Subscription],
    claims: Mapping[MemberId, Claim],
) -> StickyResult:
    """Assign stickily; see the module docstring for the rules."""
    by_topic_list: dict[tuple[Topic, ...], frozenset[Topic]] = {}
    member_topics: dict[MemberId, frozenset[Topic]] = {}
    for member, subscription in subscriptions.items():
        topics = by_topic_list.get(subscription.topics)
        if topics is None:
            topics = frozenset(partitions_per_topic.keys() & subscription.topics)
            by_topic_list[subscription.topics] = topics
        member_topics[member] = topics
    valid, claimed, taken = _resolve_claims(partitions_per_topic, member_topics, claims)
    eligible = sorted(m for m, topics in member_topics.items() if topics)
    kept = {m: valid.get(m, []) for m in subscriptions}
    state = _State(dict.fromkeys(eligible, 0), kept, {m: [] for m in subscriptions})
    if eligible:
        racks = _RackInfo.build(cluster, partitions_per_topic, subscriptions, eligible)
        if len({member_topics[m] for m in eligible}) == 1:
            _assign_identical(partitions_per_topic, eligible, taken, racks, state)
        else:
            _assign_general(partitions_per_topic, member_topics, eligible, taken, racks, state)
        if state.unkept:
            state.settle()
    return StickyResult(state.kept, state.new, claimed)


_NO_RACKS: frozenset[str] = frozenset()


@dataclass(slots=True)
class _RackInfo:
    """Racks of members and partitions, when rack-aware assignment applies (Kafka's group-wide rule).

    Partitions with the same replica racks (a layout) have the same rack-local members,
    so the hot paths work per layout, of which a cluster has few.
    """

    enabled: bool
    member_rack: dict[MemberId, str]
    on_rack: dict[str | None, list[MemberId]]  # None: members without a rack, local to every partition
    racks_by_partition: Mapping[TopicPartition, frozenset[str]]

    @classmethod
    def build(
        cls,
        cluster: Cluster,
        partitions_per_topic: Mapping[Topic, int],
        subscriptions: Mapping[MemberId, Subscription],
        eligible: Sequence[MemberId],
    ) -> _RackInfo:
        member_rack = {m: r for m in eligible if (r := subscriptions[m].rack_id) is not None}
        racks_by_partition = cluster._racks_by_partition  # noqa: SLF001 - the plain dict behind the public view
        enabled = False
        if member_rack and racks_by_partition:
            every_tp = chain.from_iterable(_topic_partitions(t, c) for t, c in partitions_per_topic.items())
            layouts = set(map(racks_by_partition.get, every_tp, repeat(_NO_RACKS)))
            every = frozenset().union(*layouts)
            enabled = not every.isdisjoint(member_rack.values()) and len(layouts) > 1
        on_rack: dict[str | None, list[MemberId]] = {}
        if enabled:
            for member in eligible:  # sorted, so every list is
                on_rack.setdefault(member_rack.get(member), []).append(member)
        return cls(enabled, member_rack, on_rack, racks_by_partition)

    def layout(self, tp: TopicPartition) -> frozenset[str]:
        return self.racks_by_partition.get(tp, _NO_RACKS)

    def local(self, member: MemberId, tp: TopicPartition) -> bool:
        rack = self.member_rack.get(member)
        return rack is None or rack in self.racks_by_partition.get(tp, _NO_RACKS)

    def local_members(self, layout: frozenset[str], members: Sequence[MemberId]) -> list[MemberId]:
        """The members of ``members`` (sorted) local to partitions on ``layout``."""
        rack_of = self.member_rack
        return [m for m in members if (rack := rack_of.get(m)) is None or rack in layout]

    def off_rack(self, member: MemberId, partitions: Sequence[TopicPartition]) -> list[TopicPartition]:
        """The partitions of ``partitions`` on none of ``member``'s racks."""
        rack = self.member_rack.get(member)
        if rack is None:
            return []
        layouts = map(self.racks_by_partition.get, partitions, repeat(_NO_RACKS))
        return list(compress(partitions, map(not_, map(contains, layouts, repeat(rack)))))

    def mismatched(self, state: _State, members: Iterable[MemberId]) -> dict[TopicPartition, MemberId]:
        """The kept partitions on none of their owner's racks, with their owners."""
        return {tp: member for member in members for tp in self.off_rack(member, state.kept[member])}


class _LocalPicker:
    """The least-loaded rack-local member (ties: id) among ``members``, with one heap per rack."""

    def __init__(self, members: Sequence[MemberId], racks: _RackInfo, load: dict[MemberId, int]) -> None:
        self._rack_of = racks.member_rack
        self._load = load
        self._heaps: dict[str | None, list[tuple[int, MemberId]]] = {}
        for member in members:
            self._heaps.setdefault(self._rack_of.get(member), []).append((load[member], member))
        for heap in self._heaps.values():
            heapq.heapify(heap)

    def pick(self, layout: frozenset[str], below: int | None) -> MemberId | None:
        """The least-loaded member local to ``layout`` with load under ``below`` (None: any).

        Loads may have changed since an entry was pushed: a stale top is re-pushed with
        the member's current load before the heap is read.
        """
        load = self._load
        best: tuple[int, MemberId] | None = None
        for key in (None, *sorted(layout)):
            heap = self._heaps.get(key)
            if not heap:
                continue
            while heap[0][0] != load[heap[0][1]]:
                member = heap[0][1]
                heapq.heapreplace(heap, (load[member], member))
            if best is None or heap[0] < best:
                best = heap[0]
        if best is None or (below is not None and best[0] >= below):
            return None
        return best[1]


def _rack_pass(  # noqa: PLR0913, PLR0917 - the algorithm's state
    pool: list[TopicPartition],
    mismatched: Mapping[TopicPartition, MemberId],
    members: Sequence[MemberId],
    racks: _RackInfo,
    state: _State,
    limit: int | None,
) -> tuple[list[TopicPartition], set[TopicPartition]]:
    """Place ``pool`` and ``mismatched`` partitions on rack-local members.

    Returns the unplaced part of ``pool`` and the mismatched partitions that moved.

    Pool partitions are handed out least-loaded-first to the local members of their
    layout, none above ``limit``; layouts with the fewest local members first, and taking
    turns, one partition per local member at a time, so that no layout fills the members
    it shares with another before that one had its turn. Then, in the room that is left,
    each mismatched partition goes to its least-loaded local member under ``limit`` (with
    ``limit`` None: holding two fewer than its owner), or stays with its owner: an unowned
    partition placed locally costs nothing, a move revokes.
    """
    rest = _place_locally(pool, members, racks, state, limit)
    moved = _move_mismatched(mismatched, members, racks, state, limit) if mismatched else set()
    return rest, moved


_TURN = 8  # partitions per local member in one turn of a layout


def _place_locally(
    pool: list[TopicPartition], members: Sequence[MemberId], racks: _RackInfo, state: _State, limit: int | None
) -> list[TopicPartition]:
    """The pool step of :func:`_rack_pass`; returns what no local member had room for."""
    by_layout: dict[frozenset[str], list[TopicPartition]] = {}
    for tp in pool:
        by_layout.setdefault(racks.layout(tp), []).append(tp)
    local = {layout: racks.local_members(layout, members) for layout in by_layout}
    rest: list[TopicPartition] = []
    turns = [(by_layout[layout], local[layout]) for layout in sorted(local, key=lambda k: (len(local[k]), sorted(k)))]
    offset = dict.fromkeys(range(len(turns)), 0)
    while offset:
        for index in list(offset):
            partitions, candidates = turns[index]
            start = offset[index]
            chunk = partitions[start : start + _TURN * max(1, len(candidates))]
            given = _water_fill(chunk, candidates, state, limit)
            if given < len(chunk):  # every local member is full
                rest.extend(partitions[start + given :])
                del offset[index]
            elif start + given == len(partitions):
                del offset[index]
            else:
                offset[index] = start + given
    return rest


def _move_mismatched(
    mismatched: Mapping[TopicPartition, MemberId],
    members: Sequence[MemberId],
    racks: _RackInfo,
    state: _State,
    limit: int | None,
) -> set[TopicPartition]:
    """The mismatched step of :func:`_rack_pass`; returns the partitions that moved."""
    load = state.load
    picker = _LocalPicker(members, racks, load)
    released: dict[MemberId, set[TopicPartition]] = {}
    local_count: dict[frozenset[str], int] = {}
    for layout in {racks.layout(tp) for tp in mismatched}:
        local_count[layout] = len(racks.local_members(layout, members))
    for tp in sorted(mismatched, key=lambda tp: (local_count[racks.layout(tp)], tp)):
        owner = mismatched[tp]
        member = picker.pick(racks.layout(tp), limit if limit is not None else load[owner] - 1)
        if member is not None:
            state.new[member].append(tp)
            load[member] += 1
            released.setdefault(owner, set()).add(tp)
            load[owner] -= 1
    for owner, gone in released.items():
        state.kept[owner] = [tp for tp in state.kept[owner] if tp not in gone]
    return set().union(*released.values())


def _assign_identical(
    partitions_per_topic: Mapping[Topic, int],
    members: list[MemberId],
    taken: set[TopicPartition],
    racks: _RackInfo,
    state: _State,
) -> None:
    total = sum(partitions_per_topic.values())
    min_quota, extra = divmod(total, len(members))
    max_quota = min_quota + (1 if extra else 0)
    # Extra slots go to members that already own max_quota partitions (in id order).
    slots = extra
    trimmed: list[TopicPartition] = []
    kept = state.kept
    for member in members:
        owned = kept[member]
        if len(owned) >= max_quota and slots > 0:
            quota = max_quota
            slots -= 1
        else:
            quota = min_quota
        if len(owned) > quota:
            kept[member], dropped = _trim(owned, quota, member, racks)
            trimmed.extend(dropped)
        state.load[member] = len(kept[member])
    pool = _unclaimed(partitions_per_topic, taken)
    if trimmed:
        pool = sorted(chain(pool, trimmed))
    if racks.enabled:
        off_rack = racks.mismatched(state, members)
        pool, moved = _rack_pass(pool, off_rack, members, racks, state, min_quota)
    given = _water_fill(pool, members, state, min_quota)
    given += _water_fill(pool[given:], members, state, max_quota)
    if given != len(pool):  # pragma: no cover - quotas always add up
        msg = f"sticky quotas left {len(pool) - given} of {total} partitions unassigned"
        raise AssertionError(msg)
    if racks.enabled:
        still_off: dict[MemberId, list[TopicPartition]] = {}
        for tp, owner in off_rack.items():
            if tp not in moved:
                still_off.setdefault(owner, []).append(tp)
        _Locality(members, None, racks, state, still_off).improve()


def _trim(
    owned: list[TopicPartition], quota: int, member: MemberId, racks: _RackInfo
) -> tuple[list[TopicPartition], list[TopicPartition]]:
    """Keep ``quota`` of ``owned`` (rack-local ones first, claim order kept); returns kept and dropped."""
    if not racks.enabled:
        return owned[:quota], owned[quota:]
    ranked = sorted(range(len(owned)), key=lambda i: (not racks.local(member, owned[i]), i))
    keep = sorted(ranked[:quota])
    return [owned[i] for i in keep], [owned[i] for i in sorted(ranked[quota:])]


def _assign_general(  # noqa: PLR0913, PLR0917 - the algorithm's whole state
    partitions_per_topic: Mapping[Topic, int],
    member_topics: Mapping[MemberId, frozenset[Topic]],
    members: list[MemberId],
    taken: set[TopicPartition],
    racks: _RackInfo,
    state: _State,
) -> None:
    subscribers: dict[Topic, list[MemberId]] = {t: [] for t in partitions_per_topic}
    for member in members:
        for topic in member_topics[member]:
            subscribers[topic].append(member)
    for member in members:
        state.load[member] = len(state.kept[member])
    # Topics with the same subscribers form a group; the most constrained groups go first.
    groups: dict[tuple[MemberId, ...], list[Topic]] = {}
    for topic in partitions_per_topic:
        groups.setdefault(tuple(subscribers[topic]), []).append(topic)
    order = sorted(groups.items(), key=lambda item: (len(item[0]), item[1][0]))
    mismatched_by_topic: dict[Topic, dict[TopicPartition, MemberId]] = {}
    if racks.enabled:
        for tp, owner in racks.mismatched(state, members).items():
            mismatched_by_topic.setdefault(tp.topic, {})[tp] = owner
    for group_members, topics in order:
        pool = _unclaimed({topic: partitions_per_topic[topic] for topic in topics}, taken)
        if racks.enabled:
            mismatched = {tp: o for topic in topics for tp, o in mismatched_by_topic.get(topic, {}).items()}
            pool, _ = _rack_pass(pool, mismatched, group_members, racks, state, None)
        _water_fill(pool, group_members, state, None)
    _rebalance(order, racks, state)
    if racks.enabled:
        _Locality(members, member_topics, racks, state, None).improve()


def _rebalance(groups: list[tuple[tuple[MemberId, ...], list[Topic]]], racks: _RackInfo, state: _State) -> None:
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

    def __init__(self, groups: list[tuple[tuple[MemberId, ...], list[Topic]]], racks: _RackInfo, state: _State) -> None:
        self._state = state
        load = self._load = state.load
        group_of_topic = {topic: index for index, (_, topics) in enumerate(groups) for topic in topics}
        self._groups_of: dict[MemberId, list[int]] = {}
        self._heaps: list[list[tuple[int, MemberId]]] = []
        self._stacks: list[dict[MemberId, _Stack]] = []
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
                self._move(target[0], giver, target[1])
                moved = True
                heapq.heappush(heaviest, (-load[giver], giver))
                heapq.heappush(heaviest, (-load[target[1]], target[1]))
        self._finish()

    def _receiver_for(self, giver: MemberId) -> tuple[int, MemberId] | None:
        """The group and lightest member there that holds two or more fewer than ``giver``."""
        load = self._load
        best: tuple[int, MemberId] | None = None
        for index in self._groups_of[giver]:
            receiver = self._lightest(index)
            if load[receiver] > load[giver] - 2 or (
                best is not None and (load[receiver], receiver) >= (load[best[1]], best[1])
            ):
                continue
            if self._stack(index, giver).items:  # it holds something there to give
                best = (index, receiver)
        return best

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


class _Locality:
    """The last rack step: trades that add rack-local placements and change no load.

    A mismatched partition ``p`` of member ``a`` goes to a member ``b`` local to it when
    ``b`` gives back one of its own mismatched partitions that ``a`` may hold (a swap), or,
    with identical subscriptions (``member_topics`` None), when ``b`` holds one fewer than
    ``a`` (a move: the two loads trade places). With mixed subscriptions a swap must keep
    every subscriber of the traded topics within one of the new holder. Every trade adds
    at least one rack-local placement, so this ends.
    """

    def __init__(
        self,
        members: Sequence[MemberId],
        member_topics: Mapping[MemberId, frozenset[Topic]] | None,
        racks: _RackInfo,
        state: _State,
        kept_off_rack: Mapping[MemberId, list[TopicPartition]] | None,
    ) -> None:
        """``kept_off_rack``: each member's mismatched kept partitions, if known."""
        self._racks = racks
        self._state = state
        self._member_topics = member_topics
        self._mismatched: dict[MemberId, list[TopicPartition]] = {}
        self._holders: dict[str, set[MemberId]] = {}  # rack -> members holding mismatched partitions
        self._at_load: dict[tuple[str | None, int], set[MemberId]] = {}
        for member in members:
            rack = racks.member_rack.get(member)
            if member_topics is None:
                self._at_load.setdefault((rack, state.load[member]), set()).add(member)
            # New partitions first: trading them revokes nothing.
            if kept_off_rack is None:
                held = racks.off_rack(member, state.new[member]) + racks.off_rack(member, state.kept[member])
            else:
                held = racks.off_rack(member, state.new[member]) + kept_off_rack.get(member, [])
            if held and rack is not None:
                self._mismatched[member] = held
                self._holders.setdefault(rack, set()).add(member)
        self._min_subscriber_load: dict[Topic, int] = {}
        if member_topics is not None:
            for member in members:
                for topic in member_topics[member]:
                    current = self._min_subscriber_load.get(topic)
                    if current is None or state.load[member] < current:
                        self._min_subscriber_load[topic] = state.load[member]

    def improve(self) -> None:
        changed = True
        while changed:
            changed = False
            for a in sorted(self._mismatched):
                for p in list(self._mismatched.get(a, ())):
                    if p in self._mismatched.get(a, ()) and self._trade(a, p):
                        changed = True

    def _may_hold(self, member: MemberId, tp: TopicPartition) -> bool:
        """``member`` subscribes to ``tp``'s topic and could hold it at its load, balance-wise."""
        if self._member_topics is None:
            return True
        if tp.topic not in self._member_topics[member]:
            return False
        return self._min_subscriber_load[tp.topic] >= self._state.load[member] - 1

    def _trade(self, a: MemberId, p: TopicPartition) -> bool:
        layout = self._racks.layout(p)
        if self._member_topics is None:
            below = self._state.load[a] - 1
            lighter = [b for key in (None, *layout) for b in self._at_load.get((key, below), ())]
            if lighter:
                self._move(a, min(lighter), p)
                return True
        for rack in sorted(layout):  # members without a rack hold no mismatched partitions
            for b in sorted(self._holders.get(rack, ())):
                if b == a or not self._may_hold(b, p):
                    continue
                q = self._swap_partner(a, b)
                if q is not None:
                    self._move(a, b, p)
                    self._move(b, a, q)
                    return True
        return False

    def _swap_partner(self, a: MemberId, b: MemberId) -> TopicPartition | None:
        """A mismatched partition of ``b`` that ``a`` may take, one local to ``a`` if any."""
        fallback: TopicPartition | None = None
        for q in self._mismatched.get(b, ()):
            if self._may_hold(a, q):
                if self._racks.local(a, q):
                    return q
                if fallback is None:
                    fallback = q
        return fallback

    def _move(self, giver: MemberId, receiver: MemberId, tp: TopicPartition) -> None:
        state = self._state
        if tp in state.kept[giver]:
            state.kept[giver].remove(tp)
            state.unkept[tp] = giver
        else:
            state.new[giver].remove(tp)
        state.new[receiver].append(tp)
        rack_of = self._racks.member_rack
        held = self._mismatched[giver]
        held.remove(tp)
        if not held:
            del self._mismatched[giver]
            self._holders[rack_of[giver]].discard(giver)
        if not self._racks.local(receiver, tp):
            self._mismatched.setdefault(receiver, []).insert(0, tp)  # new to it
            self._holders.setdefault(rack_of[receiver], set()).add(receiver)
        if self._member_topics is None:  # identical: a lone move shifts one unit of load
            load = state.load
            for member, delta in ((giver, -1), (receiver, 1)):
                self._at_load[rack_of.get(member), load[member]].discard(member)
                load[member] += delta
                self._at_load.setdefault((rack_of.get(member), load[member]), set()).add(member)
