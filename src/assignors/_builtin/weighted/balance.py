"""The weighted-sticky algorithm: keep what members own, place the rest heaviest first, then even the loads.

The guarantee is a condition on the result, checked and restored, not a hope about the greedy steps:

    **Condition C.** For every member ``u``, every partition ``p`` it holds whose weight ``w(p)`` is
    positive, and every other subscriber ``v`` of ``p``'s topic: ``load(u) <= load(v) + w(p) + tol``.

No single partition can move to another subscriber and leave the pair's heavier side lighter by more
than ``tol``. With identical subscriptions it bounds the spread: the heaviest member's load is at
most the lightest member's plus the lightest positive partition it holds plus ``tol``, so at most
``mean + max weight + tol``, and at most ``2 x optimum + tol`` (the optimum is at least the mean
and at least the heaviest partition).

The steps:

1. Every member keeps its valid claims.
2. The partitions nobody keeps go out heaviest first (ties: topic, partition), each to the
   least-loaded subscriber of its topic (ties: member id), or, with racks, to the least-loaded
   subscriber on one of its replicas' racks when that one is within ``tol`` of the least-loaded.
   With identical subscriptions and nothing kept this is LPT (longest processing time first),
   whose result satisfies C with ``tol = 0``: the last partition placed on a member went to the
   lightest member and was the lightest it holds.
3. While C fails, a partition moves from the member ``u`` with the worst violation to the
   lightest subscriber ``v`` of its class: a partition new to ``u`` when one qualifies (so
   nothing is taken from an owner), else one ``u`` kept; among those, the one whose weight is
   closest to half the gap (the fewest moves; ties: the lighter, then by id). Each move lowers
   the sum of squared loads by more than ``2 w tol``, so this ends. Loads are exact sums
   (``math.fsum``) of the holdings, so the outcome does not depend on the order of anything,
   and a result that satisfies C still satisfies it when read back as claims: a follow-up
   round moves nothing.

Runtime complexity: ``O(P log P)`` for the placement, ``O(k (n + C log M))`` for ``k`` moves
(``n`` partitions per member, ``C`` classes of members with equal subscriptions).
"""

from __future__ import annotations

import heapq
import logging
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from operator import add, itemgetter
from typing import NamedTuple, TypeAlias

from assignors._builtin.sticky.claims import marks, offsets, unmarked
from assignors._core.base import topic_positions
from assignors._core.errors import AssignorError
from assignors._core.model import MemberId, Topic, TopicPartition

logger = logging.getLogger(__name__)

__all__ = ["weighted_assign"]

_topic_of = itemgetter(0)
_number_of = itemgetter(1)


class _Group:
    """Members (by index in id order), their classes (equal subscriber sets of topics), holdings and loads."""

    def __init__(
        self,
        partitions_per_topic: Mapping[Topic, int],
        member_topics: Mapping[MemberId, frozenset[Topic]],
        weights: Sequence[float],
    ) -> None:
        self.members = sorted(m for m, topics in member_topics.items() if topics)
        self.starts, _ = offsets(partitions_per_topic)
        self.weights = weights
        positions = topic_positions(partitions_per_topic, [member_topics[m] for m in self.members])
        class_of_key: dict[tuple[int, ...], int] = {}
        self.class_members: list[tuple[int, ...]] = []
        self.topic_class: dict[Topic, int] = {}
        for topic in partitions_per_topic:  # in sorted topic order: class numbers never follow string hashing
            key, members = positions[topic]
            index = class_of_key.get(key)
            if index is None:
                index = class_of_key[key] = len(self.class_members)
                self.class_members.append(members)
            self.topic_class[topic] = index
        self.member_classes: list[list[int]] = [[] for _ in self.members]
        for index, members in enumerate(self.class_members):
            for member in members:
                self.member_classes[member].append(index)

    def weight_list(self, partitions: Sequence[TopicPartition]) -> list[float]:
        starts = self.starts
        indexes = map(add, map(starts.__getitem__, map(_topic_of, partitions)), map(_number_of, partitions))
        return list(map(self.weights.__getitem__, indexes))

    def weight(self, tp: TopicPartition) -> float:
        return self.weights[self.starts[tp[0]] + tp[1]]


Racks: TypeAlias = tuple[Mapping[MemberId, str], Callable[[TopicPartition], frozenset[str]]]
"""Each racked member's rack, and the replica racks of a partition."""


def weighted_assign(  # noqa: PLR0913 - keyword-only knobs beside the group
    partitions_per_topic: Mapping[Topic, int],
    member_topics: Mapping[MemberId, frozenset[Topic]],
    valid: Mapping[MemberId, Sequence[TopicPartition]],
    weights: Sequence[float],
    *,
    tolerance: float,
    racks: Racks | None = None,
) -> tuple[dict[MemberId, list[TopicPartition]], dict[MemberId, list[TopicPartition]]]:
    """Per member, the partitions it keeps of its valid claims and those new to it (module docstring).

    Args:
        partitions_per_topic: the subscribed topics' partition counts, in sorted topic order.
        member_topics: each member's subscribed topics that exist.
        valid: each member's resolved claims (valid, at most one member per partition).
        weights: one weight per partition, topic by topic in ``partitions_per_topic``'s order.
        tolerance: the ``tol`` of condition C, in weight units (>= 0).
        racks: each racked member's rack and the replica racks of a partition, when rack-aware.
    """
    group = _Group(partitions_per_topic, member_topics, weights)
    members = group.members
    kept: list[list[TopicPartition]] = [list(valid.get(m, ())) for m in members]
    new: list[list[TopicPartition]] = [[] for _ in members]
    if members:
        taken = list(chain.from_iterable(kept))
        pool = unmarked(partitions_per_topic, marks(partitions_per_topic, taken))
        every = group.weight_list(taken)  # one pass for all, then cut per member
        kept_weights = []
        start = 0
        for held in kept:
            kept_weights.append(every[start : start + len(held)])
            start += len(held)
        if pool:
            load = list(map(math.fsum, kept_weights))
            if len(group.class_members) == 1 and racks is None:
                _place_identical(group.class_members[0], _Pool.of(group, pool), load, new)
            else:
                _Placer(group, load, new, tolerance, racks).place(_Pool.of(group, pool))
        moves = _Evener(group, kept, new, kept_weights).even(tolerance)
        if moves and logger.isEnabledFor(logging.DEBUG):
            logger.debug("weighted-sticky: %d partitions moved to satisfy the balance condition", moves)
    result_kept: dict[MemberId, list[TopicPartition]] = {m: [] for m in member_topics}
    result_new: dict[MemberId, list[TopicPartition]] = {m: [] for m in member_topics}
    for index, member in enumerate(members):
        result_kept[member] = kept[index]
        result_new[member] = new[index]
    return result_kept, result_new


class _Pool(NamedTuple):
    """The partitions to place, their weights, and the order to place them in (heaviest first, ties: topic, p)."""

    partitions: list[TopicPartition]
    weights: list[float]
    order: list[int]

    @classmethod
    def of(cls, group: _Group, partitions: list[TopicPartition]) -> _Pool:
        weights = group.weight_list(partitions)
        return cls(partitions, weights, sorted(range(len(partitions)), key=weights.__getitem__, reverse=True))


def _place_identical(members: Sequence[int], pool: _Pool, load: list[float], new: list[list[TopicPartition]]) -> None:
    """Step 2 with one class of members: LPT, each partition to the least-loaded member (ties: id).

    A run of partitions of equal weight ``w`` goes out one by one only while the loads spread ``w`` or more: once
    they are within ``w`` of each other, taking the lightest and adding ``w`` puts it last, so the rest of the run
    goes round robin in (load, id) order, dealt in slices.
    """
    partitions, weights, order = pool
    heap = [(load[i], i) for i in members]
    heapq.heapify(heap)
    replace = heapq.heapreplace
    appends = [held.append for held in new]
    highest = max(load[i] for i in members)
    position = 0
    runs = Counter(weights)  # counted in C: the runs of equal weight in ``order``, heaviest first
    for weight in sorted(runs, reverse=True):
        end = position + runs[weight]
        while position < end and highest - heap[0][0] >= weight:
            current, i = heap[0]
            current += weight
            replace(heap, (current, i))
            highest = max(highest, current)
            appends[i](partitions[order[position]])
            position += 1
        if position < end:  # within one weight of each other: round robin in (load, id) order
            ranked = sorted(heap)
            count = len(ranked)
            run = list(map(partitions.__getitem__, order[position:end]))
            for offset, (current, i) in enumerate(ranked[: end - position]):
                share = run[offset::count]
                new[i] += share
                ranked[offset] = (current + weight * len(share), i)
            heap = ranked
            heapq.heapify(heap)
            highest = max(entry[0] for entry in heap)
            position = end


_Entry: TypeAlias = tuple[float, int, int]  # (load, version, member): a heap entry, stale once the version moved


class _Placer:
    """Step 2 in general: per class a heap of its members by load, and with racks one per (class, rack)."""

    def __init__(
        self, group: _Group, load: list[float], new: list[list[TopicPartition]], tolerance: float, racks: Racks | None
    ) -> None:
        self.group, self.load, self.new, self.tolerance = group, load, new, tolerance
        self.version = [0] * len(group.members)
        self.class_heaps = [[(load[i], 0, i) for i in members] for members in group.class_members]
        self.rack_of: dict[int, str] = {}
        self.rack_heaps: dict[tuple[int, str], list[_Entry]] = {}
        self.racks_of = racks[1] if racks is not None else None
        if racks is not None:
            self.rack_of = {i: racks[0][m] for i, m in enumerate(group.members) if m in racks[0]}
            for index, members in enumerate(group.class_members):
                for i in members:
                    if i in self.rack_of:
                        self.rack_heaps.setdefault((index, self.rack_of[i]), []).append((load[i], 0, i))
        for heap in chain(self.class_heaps, self.rack_heaps.values()):
            heapq.heapify(heap)

    def _top(self, heap: list[_Entry]) -> _Entry:
        version = self.version
        while heap[0][1] != version[heap[0][2]]:
            heapq.heappop(heap)
        return heap[0]

    def _local(self, cls: int, tp: TopicPartition, lightest: float) -> int | None:
        """The least-loaded member of ``cls`` on one of ``tp``'s racks, if within the tolerance of ``lightest``."""
        best: _Entry | None = None
        for rack in sorted(self.racks_of(tp)) if self.racks_of is not None else ():
            heap = self.rack_heaps.get((cls, rack))
            if heap:
                candidate = self._top(heap)
                if best is None or (candidate[0], candidate[2]) < (best[0], best[2]):
                    best = candidate
        return best[2] if best is not None and best[0] <= lightest + self.tolerance else None

    def place(self, pool: _Pool) -> None:
        topic_class = self.group.topic_class
        load, version = self.load, self.version
        for j in pool.order:
            tp = pool.partitions[j]
            cls = topic_class[tp[0]]
            lightest, _, chosen = self._top(self.class_heaps[cls])
            if self.racks_of is not None:
                local = self._local(cls, tp, lightest)
                chosen = chosen if local is None else local
            self.new[chosen].append(tp)
            load[chosen] += pool.weights[j]
            version[chosen] += 1
            entry = (load[chosen], version[chosen], chosen)
            for index in self.group.member_classes[chosen]:
                heapq.heappush(self.class_heaps[index], entry)
                if chosen in self.rack_of:
                    heapq.heappush(self.rack_heaps[index, self.rack_of[chosen]], entry)


class _Evener:
    """Step 3: per class a min-heap of loads and a max-heap of ``load - lightest positive weight held there``."""

    def __init__(
        self,
        group: _Group,
        kept: list[list[TopicPartition]],
        new: list[list[TopicPartition]],
        kept_weights: list[list[float]],
    ) -> None:
        self.group, self.kept, self.new = group, kept, new
        count = len(group.members)
        self.held = [kept_weights[i] + group.weight_list(new[i]) if new[i] else kept_weights[i] for i in range(count)]
        self.load = list(map(math.fsum, self.held))
        self.lightest: list[dict[int, float]]  # per class the lightest positive weight held (absent: holds none)
        if len(group.class_members) == 1:
            lows = [min(filter(None, weights), default=None) for weights in self.held]
            self.lightest = [{} if low is None else {0: low} for low in lows]
        else:
            self.lightest = [self._lightest(i) for i in range(count)]
        self.version = [0] * count
        self.min_heaps: list[list[_Entry]] = []
        self.max_heaps: list[list[_Entry]] = []
        self.taken_from: dict[TopicPartition, int] = {}

    def _holds(self, tolerance: float) -> bool:
        """Whether condition C holds now, checked class by class without building the heaps (the usual case)."""
        load, lightest = self.load, self.lightest
        for c, members in enumerate(self.group.class_members):
            worst = max((load[i] - lightest[i][c] for i in members if c in lightest[i]), default=None)
            if worst is not None and worst > min(load[i] for i in members) + tolerance:
                return False
        return True

    def _heaps(self) -> None:
        load, lightest = self.load, self.lightest
        self.min_heaps = [[(load[i], 0, i) for i in ms] for ms in self.group.class_members]
        self.max_heaps = [
            [(lightest[i][c] - load[i], 0, i) for i in ms if c in lightest[i]]
            for c, ms in enumerate(self.group.class_members)
        ]
        for heap in chain(self.min_heaps, self.max_heaps):
            heapq.heapify(heap)

    def _lightest(self, member: int) -> dict[int, float]:
        """The lightest positive weight ``member`` holds in each class."""
        if len(self.group.class_members) == 1:
            value = min(filter(None, self.held[member]), default=None)
            return {} if value is None else {0: value}
        topic_class = self.group.topic_class
        found: dict[int, float] = {}
        for tp, weight in zip(self.kept[member] + self.new[member], self.held[member], strict=True):
            if weight > 0:
                cls = topic_class[tp[0]]
                if weight < found.get(cls, math.inf):
                    found[cls] = weight
        return found

    def even(self, tolerance: float) -> int:
        """Move partitions until condition C holds; the number of moves."""
        if self._holds(tolerance):
            return 0
        self._heaps()
        moves = 0
        limit = 4 * sum(map(len, self.held)) + 64
        while (found := self._violation(tolerance)) is not None:
            moves += 1
            if moves > limit:  # pragma: no cover - each move lowers the sum of squared loads; a broken invariant
                msg = f"weighted-sticky: still moving after {limit} moves"
                raise AssignorError(msg)
            self._move(*found, tolerance)
        return moves

    def _violation(self, tolerance: float) -> tuple[int, int, int] | None:
        """A class, a member breaking C there and the class's lightest member; None when C holds."""
        version = self.version
        for cls, heap in enumerate(self.max_heaps):
            while heap and heap[0][1] != version[heap[0][2]]:
                heapq.heappop(heap)
            if not heap:
                continue
            lows = self.min_heaps[cls]
            while lows[0][1] != version[lows[0][2]]:
                heapq.heappop(lows)
            if -heap[0][0] > lows[0][0] + tolerance:
                return cls, heap[0][2], lows[0][2]
        return None

    def _move(self, cls: int, u: int, v: int, tolerance: float) -> None:
        tp, was_kept = self._pick(cls, u, self.load[u] - self.load[v], tolerance)
        if was_kept:
            self.kept[u].remove(tp)
            self.taken_from.setdefault(tp, u)
        else:
            self.new[u].remove(tp)
        if self.taken_from.get(tp) == v:  # back with the member that kept it: kept again, never withheld
            self.kept[v].append(tp)
        else:
            self.new[v].append(tp)
        for i in (u, v):
            self.held[i] = self.group.weight_list(self.kept[i] + self.new[i])
            self.load[i] = math.fsum(self.held[i])
            self.lightest[i] = self._lightest(i)
            self.version[i] += 1
            for c in self.group.member_classes[i]:
                heapq.heappush(self.min_heaps[c], (self.load[i], self.version[i], i))
                if c in self.lightest[i]:
                    heapq.heappush(self.max_heaps[c], (self.lightest[i][c] - self.load[i], self.version[i], i))

    def _pick(self, cls: int, member: int, gap: float, tolerance: float) -> tuple[TopicPartition, bool]:
        """The partition to move across ``gap``: new ones first, the weight closest to half the gap (ties: the
        lighter, then id)."""
        topic_class = self.group.topic_class
        half = gap / 2
        for held, was_kept in ((self.new[member], False), (self.kept[member], True)):
            best: tuple[float, float, TopicPartition] | None = None
            for tp, weight in zip(held, self.group.weight_list(held), strict=True):
                if 0 < weight < gap - tolerance and topic_class[tp[0]] == cls:
                    key = (abs(weight - half), weight, tp)
                    if best is None or key < best:
                        best = key
            if best is not None:
                return best[2], was_kept
        msg = f"weighted-sticky: no partition of class {cls} crosses a gap of {gap!r}"  # pragma: no cover
        raise AssignorError(msg)  # pragma: no cover - the violation found says one does
