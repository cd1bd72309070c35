"""The rack layer of the sticky core (KIP-881): who is rack-local, placing and trading for locality.

Rack-aware assignment applies, as in Kafka, when members and partitions carry racks and
not every partition is on every rack (one group-wide decision). An owned partition on
none of its owner's racks is movable. Balance always wins over locality.
"""

from __future__ import annotations

import heapq
from array import array
from collections import defaultdict, deque
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import add, attrgetter, contains, not_
from typing import TYPE_CHECKING

from assignors._builtin.sticky.claims import offsets, water_fill

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from assignors._builtin.sticky.claims import State
    from assignors._core.model import Cluster, MemberId, Subscription, Topic, TopicPartition

__all__ = ["Locality", "RackInfo", "rack_pass"]

_NO_RACKS: frozenset[str] = frozenset()


@dataclass(slots=True)
class RackInfo:
    """Racks of members and partitions, when rack-aware assignment applies (Kafka's group-wide rule).

    Partitions with the same replica racks (a layout) have the same rack-local members,
    so the hot paths work per layout, of which a cluster has few. Each subscribed partition
    has its layout's number in a flat array (topic by topic, then by partition number), and
    each rack a table of the layouts it is off: a member's off-rack partitions are found by
    indexing, with no hashing of partitions.
    """

    enabled: bool
    member_rack: dict[MemberId, str]
    on_rack: dict[str | None, list[MemberId]]  # None: members without a rack, local to every partition
    racks_by_partition: Mapping[TopicPartition, frozenset[str]]
    offsets: dict[Topic, int] = field(default_factory=dict)
    """Where each subscribed topic's partitions start in :attr:`layout_ids`."""
    layout_ids: bytearray | array[int] = field(default_factory=bytearray)
    """Per subscribed partition, its layout's number (0: no racks)."""
    off_layouts: dict[str, bytes] = field(default_factory=dict)
    """Per rack of a member, per layout number: 1 where the rack is not in the layout."""

    @classmethod
    def build(
        cls,
        cluster: Cluster,
        partitions_per_topic: Mapping[Topic, int],
        subscriptions: Mapping[MemberId, Subscription],
        eligible: Sequence[MemberId],
    ) -> RackInfo:
        member_rack = {m: r for m in eligible if (r := subscriptions[m].rack_id) is not None}
        racks_by_partition = cluster._racks_by_partition  # noqa: SLF001 - the plain dict behind the public view
        # Kafka's AbstractStickyAssignor.RackInfo decides on the racks of every member, also one that subscribes
        # to no existing topic (and so gets nothing): the decision is group-wide, and so is ours.
        group_racks = {r for s in subscriptions.values() if (r := s.rack_id)}
        if not (group_racks and racks_by_partition):
            return cls(enabled=False, member_rack=member_rack, on_rack={}, racks_by_partition=racks_by_partition)
        starts, layout_ids, layouts = _layout_ids(cluster, partitions_per_topic, racks_by_partition)
        every = frozenset[str]().union(*layouts.values())
        if every.isdisjoint(group_racks) or len(layouts) <= 1:
            return cls(enabled=False, member_rack=member_rack, on_rack={}, racks_by_partition=racks_by_partition)
        on_rack: dict[str | None, list[MemberId]] = {}
        for member in eligible:  # sorted, so every list is
            on_rack.setdefault(member_rack.get(member), []).append(member)
        numbered = _numbered(layouts)
        off_layouts = {
            rack: bytes(rack not in layout for layout in numbered) for rack in sorted(set(member_rack.values()))
        }
        return cls(True, member_rack, on_rack, racks_by_partition, starts, layout_ids, off_layouts)  # noqa: FBT003

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
        """The partitions of ``partitions`` (all subscribed) on none of ``member``'s racks."""
        rack = self.member_rack.get(member)
        if rack is None or not self.enabled:
            return [] if rack is None else self._off_rack_by_lookup(rack, partitions)
        indexes = map(add, map(self.offsets.__getitem__, map(_topic_of, partitions)), map(_number_of, partitions))
        return list(
            compress(partitions, map(self.off_layouts[rack].__getitem__, map(self.layout_ids.__getitem__, indexes)))
        )

    def _off_rack_by_lookup(self, rack: str, partitions: Sequence[TopicPartition]) -> list[TopicPartition]:
        layouts = map(self.racks_by_partition.get, partitions, repeat(_NO_RACKS))
        return list(compress(partitions, map(not_, map(contains, layouts, repeat(rack)))))

    def mismatched(self, state: State, members: Iterable[MemberId]) -> dict[TopicPartition, MemberId]:
        """The kept partitions on none of their owner's racks, with their owners."""
        return {tp: member for member in members for tp in self.off_rack(member, state.kept[member])}


_topic_of = attrgetter("topic")
_number_of = attrgetter("partition")


def _numbered(layouts: Mapping[int, frozenset[str]]) -> list[frozenset[str]]:
    """The layouts as a list indexed by their numbers (a number no partition has: no racks)."""
    numbered = [_NO_RACKS] * (max(layouts) + 1)
    for number, layout in layouts.items():
        numbered[number] = layout
    return numbered


def _layout_ids(
    cluster: Cluster,
    partitions_per_topic: Mapping[Topic, int],
    racks_by_partition: Mapping[TopicPartition, frozenset[str]],
) -> tuple[dict[Topic, int], bytearray | array[int], dict[int, frozenset[str]]]:
    """Each subscribed partition's layout number in a flat array, and the layouts the subscribed partitions have.

    Layouts are numbered in sorted order (0: no racks); the array is filled by C-level maps over the cluster's
    racks, so that a million partitions cost no Python-level step each.
    """
    starts, total = offsets(partitions_per_topic)
    distinct = sorted(set(racks_by_partition.values()) - {_NO_RACKS}, key=sorted)
    number = {_NO_RACKS: 0} | {layout: i for i, layout in enumerate(distinct, 1)}
    ids: bytearray | array[int] = bytearray(total) if len(number) <= _BYTE else array("l", [0]) * total
    keys: Iterable[TopicPartition] = racks_by_partition.keys()
    values: Iterable[frozenset[str]] = racks_by_partition.values()
    racked_topics = set(map(_topic_of, racks_by_partition))
    if any(partitions_per_topic.get(t) != cluster.partition_count(t) for t in racked_topics):
        # racks of topics no member subscribes to (or of partitions beyond a count the caller gave): left out
        kept = [(tp, v) for tp, v in racks_by_partition.items() if tp.partition < partitions_per_topic.get(tp.topic, 0)]
        keys, values = [tp for tp, _ in kept], [v for _, v in kept]
    keys = list(keys)
    indexes = map(add, map(starts.__getitem__, map(_topic_of, keys)), map(_number_of, keys))
    deque(map(ids.__setitem__, indexes, map(number.__getitem__, values)), maxlen=0)  # consumed in C
    present = set(ids)
    layouts = {i: layout for layout, i in number.items() if i in present}
    return starts, ids, layouts


_BYTE = 256


class _LocalPicker:
    """The least-loaded rack-local member (ties: id) among ``members``, with one heap per rack."""

    def __init__(self, members: Sequence[MemberId], racks: RackInfo, load: dict[MemberId, int]) -> None:
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


def rack_pass(  # noqa: PLR0913, PLR0917 - the algorithm's state
    pool: list[TopicPartition],
    mismatched: Mapping[TopicPartition, MemberId],
    members: Sequence[MemberId],
    racks: RackInfo,
    state: State,
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
    pool: list[TopicPartition], members: Sequence[MemberId], racks: RackInfo, state: State, limit: int | None
) -> list[TopicPartition]:
    """The pool step of :func:`rack_pass`; returns what no local member had room for."""
    by_layout: defaultdict[frozenset[str], list[TopicPartition]] = defaultdict(list)
    for tp, layout in zip(pool, map(racks.racks_by_partition.get, pool, repeat(_NO_RACKS)), strict=True):
        by_layout[layout].append(tp)
    local = {layout: racks.local_members(layout, members) for layout in by_layout}
    rest: list[TopicPartition] = []
    turns = [(by_layout[layout], local[layout]) for layout in sorted(local, key=lambda k: (len(local[k]), sorted(k)))]
    offset = dict.fromkeys(range(len(turns)), 0)
    while offset:
        for index in list(offset):
            partitions, candidates = turns[index]
            start = offset[index]
            chunk = partitions[start : start + _TURN * max(1, len(candidates))]
            given = water_fill(chunk, candidates, state, limit)
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
    racks: RackInfo,
    state: State,
    limit: int | None,
) -> set[TopicPartition]:
    """The mismatched step of :func:`rack_pass`; returns the partitions that moved."""
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


class Locality:
    """The last rack step: trades that add rack-local placements and change no load.

    A mismatched partition ``p`` of member ``a`` goes to a member ``b`` local to it when
    ``b`` gives back one of its own mismatched partitions that ``a`` may hold (a swap), when
    ``b`` has no rack and gives back a partition new to it that is local to ``a``, or,
    with identical subscriptions (``member_topics`` None), when ``b`` holds one fewer than
    ``a`` (a move: the two loads trade places). With mixed subscriptions a swap must keep
    every subscriber of the traded topics within one of the new holder. Every trade adds
    at least one rack-local placement, so this ends.
    """

    def __init__(  # noqa: PLR0913, PLR0917 - the algorithm's state
        self,
        members: Sequence[MemberId],
        member_topics: Mapping[MemberId, frozenset[Topic]] | None,
        racks: RackInfo,
        state: State,
        kept_off_rack: Mapping[MemberId, list[TopicPartition]] | None,
        new_off_rack: Mapping[MemberId, list[TopicPartition]] | None = None,
    ) -> None:
        """``kept_off_rack`` and ``new_off_rack``: each member's mismatched kept and new partitions, if known."""
        self._racks = racks
        self._state = state
        self._member_topics = member_topics
        self._mismatched: dict[MemberId, list[TopicPartition]] = {}
        self._holders: dict[str, set[MemberId]] = {}  # rack -> members holding mismatched partitions
        self._at_load: dict[tuple[str | None, int], set[MemberId]] = {}
        self._rackless = [m for m in members if racks.member_rack.get(m) is None]  # ``members`` is sorted
        for member in members:
            rack = racks.member_rack.get(member)
            if member_topics is None:
                self._at_load.setdefault((rack, state.load[member]), set()).add(member)
            # New partitions first: trading them revokes nothing.
            if new_off_rack is None:
                held = racks.off_rack(member, state.new[member])
            else:
                held = list(new_off_rack.get(member, ()))
            if kept_off_rack is None:
                held += racks.off_rack(member, state.kept[member])
            else:
                held += kept_off_rack.get(member, [])
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
        for b in self._rackless:  # local to every partition: a swap for one of its new ones local to ``a``
            if b == a or not self._may_hold(b, p):
                continue
            q = next((q for q in self._state.new[b] if self._racks.local(a, q) and self._may_hold(a, q)), None)
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
        held = self._mismatched.get(giver)
        if held is not None and tp in held:
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
