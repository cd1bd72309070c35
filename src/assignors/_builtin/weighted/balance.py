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
   closest to half the gap (the fewest moves; ties: the lighter, then by id). Each move lowers the sum of squared loads by more
   than ``2 w tol``, so this ends. Loads are exact sums (``math.fsum``) of the holdings, so the
   outcome does not depend on the order of anything, and a result that satisfies C still
   satisfies it when it is read back as claims: a follow-up round moves nothing.

Runtime complexity: ``O(P log P)`` for the placement, ``O(k (n + C log M))`` for ``k`` moves
(``n`` partitions per member, ``C`` classes of members with equal subscriptions).
"""

from __future__ import annotations

import heapq
import logging
import math
from collections import Counter
from itertools import chain
from operator import add, itemgetter
from typing import TYPE_CHECKING

from assignors._builtin.sticky.claims import marks, offsets, unmarked
from assignors._core.base import topic_positions
from assignors._core.errors import AssignorError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

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


def weighted_assign(  # noqa: PLR0913 - the algorithm's inputs, all needed
    partitions_per_topic: Mapping[Topic, int],
    member_topics: Mapping[MemberId, frozenset[Topic]],
    valid: Mapping[MemberId, Sequence[TopicPartition]],
    weights: Sequence[float],
    tolerance: float,
    racks: tuple[Mapping[MemberId, str], Callable[[TopicPartition], frozenset[str]]] | None = None,
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
        kept_weights = [group.weight_list(held) for held in kept]
        if pool:
            _place(group, pool, list(map(math.fsum, kept_weights)), new, tolerance, racks)
        moves = _even(group, kept, new, kept_weights, tolerance)
        if moves and logger.isEnabledFor(logging.DEBUG):
            logger.debug("weighted-sticky: %d partitions moved to satisfy the balance condition", moves)
    result_kept: dict[MemberId, list[TopicPartition]] = {m: [] for m in member_topics}
    result_new: dict[MemberId, list[TopicPartition]] = {m: [] for m in member_topics}
    for index, member in enumerate(members):
        result_kept[member] = kept[index]
        result_new[member] = new[index]
    return result_kept, result_new


def _place(
    group: _Group,
    pool: list[TopicPartition],
    load: list[float],
    new: list[list[TopicPartition]],
    tolerance: float,
    racks: tuple[Mapping[MemberId, str], Callable[[TopicPartition], frozenset[str]]] | None,
) -> None:
    """Step 2: the pool, heaviest first, each to the least-loaded subscriber (rack-local within ``tolerance``)."""
    pool_weights = group.weight_list(pool)
    order = sorted(range(len(pool)), key=pool_weights.__getitem__, reverse=True)  # stable: ties keep (topic, p)
    if len(group.class_members) == 1 and racks is None:
        _place_identical(group.class_members[0], pool, pool_weights, order, load, new)
        return
    version = [0] * len(group.members)
    class_heaps = [[(load[i], 0, i) for i in members] for members in group.class_members]
    for heap in class_heaps:
        heapq.heapify(heap)
    rack_of: dict[int, str] = {}
    rack_heaps: dict[tuple[int, str], list[tuple[float, int, int]]] = {}
    racks_of: Callable[[TopicPartition], frozenset[str]] | None = None
    if racks is not None:
        member_racks, racks_of = racks
        rack_of = {i: member_racks[m] for i, m in enumerate(group.members) if m in member_racks}
        for index, members in enumerate(group.class_members):
            for i in members:
                if i in rack_of:
                    rack_heaps.setdefault((index, rack_of[i]), []).append((load[i], 0, i))
        for heap in rack_heaps.values():
            heapq.heapify(heap)

    def top(heap: list[tuple[float, int, int]]) -> tuple[float, int, int]:
        while heap[0][1] != version[heap[0][2]]:
            heapq.heappop(heap)
        return heap[0]

    topic_class = group.topic_class
    for j in order:
        tp = pool[j]
        cls = topic_class[tp[0]]
        lightest, _, chosen = top(class_heaps[cls])
        if racks_of is not None:
            best: tuple[float, int, int] | None = None
            for rack in sorted(racks_of(tp)):
                heap = rack_heaps.get((cls, rack))
                if heap:
                    candidate = top(heap)
                    if best is None or (candidate[0], candidate[2]) < (best[0], best[2]):
                        best = candidate
            if best is not None and best[0] <= lightest + tolerance:
                chosen = best[2]
        new[chosen].append(tp)
        load[chosen] += pool_weights[j]
        version[chosen] += 1
        entry = (load[chosen], version[chosen], chosen)
        for index in group.member_classes[chosen]:
            heapq.heappush(class_heaps[index], entry)
            if chosen in rack_of:
                heapq.heappush(rack_heaps[index, rack_of[chosen]], entry)


def _place_identical(
    members: Sequence[int],
    pool: list[TopicPartition],
    pool_weights: list[float],
    order: list[int],
    load: list[float],
    new: list[list[TopicPartition]],
) -> None:
    """LPT with one class of members: each partition to the least-loaded member (ties: id).

    A run of partitions of equal weight ``w`` goes out one by one only while the loads spread ``w`` or more: once
    they are within ``w`` of each other, taking the lightest and adding ``w`` puts it last, so the rest of the run
    goes round robin in (load, id) order, dealt in slices.
    """
    heap = [(load[i], i) for i in members]
    heapq.heapify(heap)
    replace = heapq.heapreplace
    appends = [held.append for held in new]
    highest = max(load[i] for i in members)
    position = 0
    runs = Counter(pool_weights)  # counted in C: the runs of equal weight in ``order``, heaviest first
    for weight in sorted(runs, reverse=True):
        end = position + runs[weight]
        while position < end and highest - heap[0][0] >= weight:
            current, i = heap[0]
            current += weight
            replace(heap, (current, i))
            highest = max(highest, current)
            appends[i](pool[order[position]])
            position += 1
        if position < end:  # within one weight of each other: round robin in (load, id) order
            ranked = sorted(heap)
            count = len(ranked)
            run = list(map(pool.__getitem__, order[position:end]))
            for offset, (current, i) in enumerate(ranked[: end - position]):
                share = run[offset::count]
                new[i] += share
                ranked[offset] = (current + weight * len(share), i)
            heap = ranked
            heapq.heapify(heap)
            highest = max(entry[0] for entry in heap)
            position = end


def _even(
    group: _Group,
    kept: list[list[TopicPartition]],
    new: list[list[TopicPartition]],
    kept_weights: list[list[float]],
    tolerance: float,
) -> int:
    """Step 3: restore condition C; returns the number of moves. ``kept_weights``: the weights of ``kept``."""
    members = group.members
    count = len(members)
    classes = len(group.class_members)
    held = [kept_weights[i] + group.weight_list(new[i]) if new[i] else kept_weights[i] for i in range(count)]
    load = list(map(math.fsum, held))
    # the lightest positive weight each member holds per class (absent: holds none)
    lightest: list[dict[int, float]] = [{} for _ in range(count)]
    if classes == 1:
        for i, weights in enumerate(held):
            value = min(filter(None, weights), default=None)
            if value is not None:
                lightest[i][0] = value
    else:
        for i in range(count):
            _lightest_per_class(group, kept[i], new[i], lightest[i])
    version = [0] * count
    min_heaps: list[list[tuple[float, int, int]]] = [[(load[i], 0, i) for i in ms] for ms in group.class_members]
    max_heaps: list[list[tuple[float, int, int]]] = [
        [(lightest[i][c] - load[i], 0, i) for i in ms if c in lightest[i]] for c, ms in enumerate(group.class_members)
    ]
    for heap in chain(min_heaps, max_heaps):
        heapq.heapify(heap)
    taken_from: dict[TopicPartition, int] = {}
    moves = 0
    limit = 4 * sum(map(len, kept)) + 4 * sum(map(len, new)) + 64
    while True:
        found = _violation(min_heaps, max_heaps, version, tolerance)
        if found is None:
            return moves
        cls, u, v = found
        moves += 1
        if moves > limit:  # pragma: no cover - each move lowers the sum of squared loads; a broken invariant
            msg = f"weighted-sticky: still moving after {limit} moves (member {members[u]!r}, load {load[u]!r})"
            raise AssignorError(msg)
        tp, was_kept = _pick(group, kept[u], new[u], cls, load[u] - load[v], tolerance)
        if was_kept:
            kept[u].remove(tp)
            taken_from.setdefault(tp, u)
        else:
            new[u].remove(tp)
        if taken_from.get(tp) == v:  # back with the member that kept it: kept again, never withheld
            kept[v].append(tp)
        else:
            new[v].append(tp)
        weight = group.weight(tp)
        for i in (u, v):
            held[i] = group.weight_list(kept[i] + new[i])
            load[i] = math.fsum(held[i])
            version[i] += 1
        if classes == 1:
            for i in (u, v):
                value = min(filter(None, held[i]), default=None)
                lightest[i] = {} if value is None else {0: value}
        else:
            lightest[u] = {}
            _lightest_per_class(group, kept[u], new[u], lightest[u])
            if weight > 0 and weight < lightest[v].get(cls, math.inf):
                lightest[v][cls] = weight
        for i in (u, v):
            for c in group.member_classes[i]:
                heapq.heappush(min_heaps[c], (load[i], version[i], i))
                if c in lightest[i]:
                    heapq.heappush(max_heaps[c], (lightest[i][c] - load[i], version[i], i))


def _lightest_per_class(
    group: _Group, kept: list[TopicPartition], new: list[TopicPartition], into: dict[int, float]
) -> None:
    topic_class = group.topic_class
    held = kept + new
    for tp, weight in zip(held, group.weight_list(held), strict=True):
        if weight > 0:
            cls = topic_class[tp[0]]
            if weight < into.get(cls, math.inf):
                into[cls] = weight


def _violation(
    min_heaps: list[list[tuple[float, int, int]]],
    max_heaps: list[list[tuple[float, int, int]]],
    version: list[int],
    tolerance: float,
) -> tuple[int, int, int] | None:
    """A class, a member breaking C there and the class's lightest member; None when C holds."""
    for cls, heap in enumerate(max_heaps):
        while heap and heap[0][1] != version[heap[0][2]]:
            heapq.heappop(heap)
        if not heap:
            continue
        lows = min_heaps[cls]
        while lows[0][1] != version[lows[0][2]]:
            heapq.heappop(lows)
        if -heap[0][0] > lows[0][0] + tolerance:
            return cls, heap[0][2], lows[0][2]
    return None


def _pick(
    group: _Group,
    kept: list[TopicPartition],
    new: list[TopicPartition],
    cls: int,
    gap: float,
    tolerance: float,
) -> tuple[TopicPartition, bool]:
    """The partition to move across ``gap``: new ones first, the weight closest to half the gap (ties: the lighter,
    then id)."""
    topic_class = group.topic_class
    half = gap / 2
    for held, was_kept in ((new, False), (kept, True)):
        best: tuple[float, float, TopicPartition] | None = None
        for tp, weight in zip(held, group.weight_list(held), strict=True):
            if 0 < weight < gap - tolerance and topic_class[tp[0]] == cls:
                key = (abs(weight - half), weight, tp)
                if best is None or key < best:
                    best = key
        if best is not None:
            return best[2], was_kept
    msg = f"weighted-sticky: no partition of class {cls} crosses a gap of {gap!r}"  # pragma: no cover
    raise AssignorError(msg)  # pragma: no cover - the violation found says one does
