"""The sticky core's builder for identical subscriptions: quotas, then an even per-topic spread.

``N`` partitions over ``M`` members gives quotas ``N // M`` and, for ``N % M`` members,
one more; the extra slots go first to members that own that many already (in id order),
so the fewest partitions leave their owners (level 3 of the objective). What a member
keeps and what it receives then aims at level 5, the per-topic spread:

* a member over its quota keeps, topic by topic, up to ``N_T // M`` of topic ``T``, then
  one more where a topic still has room for a member at ``N_T // M + 1``, then evenly
  beyond (claim order within a topic);
* the pool (unowned and trimmed partitions) is dealt topic by topic, each partition to
  the member with room holding the fewest of its topic (ties: the most room left, then
  id);
* nobody keeps anything (a fresh group): round robin over the sorted partitions, one
  C-level slice per member, which is even per topic by construction.

With rack-aware assignment the rack layer places and trades partitions for locality
(level 4) before and after the deal.
"""

from __future__ import annotations

import heapq
import logging
from collections import Counter
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING

from assignors._model import topic_partitions
from assignors._sticky_claims import unclaimed, water_fill
from assignors._sticky_racks import Locality, rack_pass

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from assignors._model import MemberId, Topic, TopicPartition
    from assignors._sticky_claims import State
    from assignors._sticky_racks import RackInfo

logger = logging.getLogger(__name__)

__all__ = ["assign_identical"]

_topic_of = itemgetter(0)


def assign_identical(
    partitions_per_topic: Mapping[Topic, int],
    members: list[MemberId],
    taken: set[TopicPartition],
    racks: RackInfo,
    state: State,
) -> None:
    """Assign when every member in ``members`` (sorted) subscribes to the same topics."""
    if racks.enabled:
        _assign_racked(partitions_per_topic, members, taken, racks, state)
    elif not taken:
        _round_robin(partitions_per_topic, members, state)
    else:
        _Deal(partitions_per_topic, members, state).run(taken)


def _round_robin(partitions_per_topic: Mapping[Topic, int], members: Sequence[MemberId], state: State) -> None:
    """Nobody keeps anything: member ``i`` takes every ``M``-th partition from the ``i``-th on."""
    every = list(chain.from_iterable(topic_partitions(t, n) for t, n in sorted(partitions_per_topic.items())))
    count = len(members)
    new, load = state.new, state.load
    for index, member in enumerate(members):
        new[member] = share = every[index::count]
        load[member] = len(share)


def _quotas(total: int, members: Sequence[MemberId], owned: Mapping[MemberId, int]) -> tuple[dict[MemberId, int], int]:
    """``N // M`` each; ``N % M`` may hold one more: members owning that many first (id order).

    Returns the quotas and how many of those extra slots are still free (the deal gives
    them to whoever evens the per-topic spread best).
    """
    low, extra = divmod(total, len(members))
    quotas = dict.fromkeys(members, low)
    for member in members:
        if extra and owned[member] > low:
            quotas[member] = low + 1
            extra -= 1
    return quotas, extra


class _Deal:
    """Quotas, per-topic even trimming and the per-topic deal of the pool (no racks)."""

    def __init__(self, partitions_per_topic: Mapping[Topic, int], members: Sequence[MemberId], state: State) -> None:
        self._counts = partitions_per_topic
        self._members = members
        self._state = state
        count = len(members)
        self._floor = {t: n // count for t, n in partitions_per_topic.items()}
        self._room_above = {t: n % count for t, n in partitions_per_topic.items()}  # members that may hold floor + 1

    def run(self, taken: set[TopicPartition]) -> None:
        state, members = self._state, self._members
        kept, load = state.kept, state.load
        quotas, free = _quotas(sum(self._counts.values()), members, {m: len(kept[m]) for m in members})
        receivers = [m for m in members if len(kept[m]) < quotas[m] or (free and len(kept[m]) == quotas[m])]
        per_topic, trimmed = self._trim_all(quotas)
        for member in members:
            load[member] = len(kept[member])
        if not receivers:
            return
        pool = unclaimed(self._counts, taken)
        if trimmed:
            pool = sorted(chain(pool, trimmed))
        for member in receivers:
            if member not in per_topic:
                per_topic[member] = Counter(map(_topic_of, kept[member]))
        low = sum(self._counts.values()) // len(members)
        above = {m for m in receivers if quotas[m] > low}  # already hold their extra slot
        self._deal(pool, receivers, {m: quotas[m] - load[m] for m in receivers}, (free, above), per_topic)

    def _trim_all(self, quotas: Mapping[MemberId, int]) -> tuple[dict[MemberId, Counter[Topic]], list[TopicPartition]]:
        """Trim every member over its quota; returns the per-topic counts known so far and what was trimmed."""
        kept = self._state.kept
        over = [m for m in self._members if len(kept[m]) > quotas[m]]
        per_topic: dict[MemberId, Counter[Topic]] = {}
        if not over:
            return per_topic, []
        for member in self._members:
            if len(kept[member]) <= quotas[member]:
                self._take_room(per_topic.setdefault(member, Counter(map(_topic_of, kept[member]))))
        trimmed: list[TopicPartition] = []
        for member in over:
            kept[member], dropped = self._trim(kept[member], quotas[member])
            per_topic[member] = Counter(map(_topic_of, kept[member]))
            trimmed.extend(dropped)
        return per_topic, trimmed

    def _take_room(self, counts: Counter[Topic]) -> None:
        floor, room = self._floor, self._room_above
        for topic, n in counts.items():
            if n > floor[topic] and room[topic] > 0:
                room[topic] -= 1

    def _trim(self, owned: list[TopicPartition], quota: int) -> tuple[list[TopicPartition], list[TopicPartition]]:
        """Keep ``quota`` of ``owned``, as even per topic as the other members allow."""
        by_topic: dict[Topic, list[TopicPartition]] = {}
        for tp in owned:
            by_topic.setdefault(tp[0], []).append(tp)
        floor, room = self._floor, self._room_above
        keep = {t: min(len(parts), floor[t]) for t, parts in by_topic.items()}
        left = quota - sum(keep.values())  # >= 0: the floors add up to at most N // M
        # One more where the topic still has room for a member above its floor, most room first.
        for topic in sorted(by_topic, key=lambda t: (-room[t], t)):
            if left == 0:
                break
            if len(by_topic[topic]) > keep[topic] and room[topic] > 0:
                keep[topic] += 1
                room[topic] -= 1
                left -= 1
        # Then evenly above the floors.
        heap = [(keep[t] - floor[t], t) for t, parts in by_topic.items() if len(parts) > keep[t]]
        heapq.heapify(heap)
        while left > 0:
            excess, topic = heapq.heappop(heap)
            keep[topic] += 1
            left -= 1
            if len(by_topic[topic]) > keep[topic]:
                heapq.heappush(heap, (excess + 1, topic))
        kept: list[TopicPartition] = []
        dropped: list[TopicPartition] = []
        for tp in owned:
            if keep[tp[0]] > 0:
                keep[tp[0]] -= 1
                kept.append(tp)
            else:
                dropped.append(tp)
        return kept, dropped

    def _deal(
        self,
        pool: list[TopicPartition],
        receivers: list[MemberId],
        need: dict[MemberId, int],
        extra: tuple[int, set[MemberId]],
        per_topic: dict[MemberId, Counter[Topic]],
    ) -> None:
        """Each pool partition to the receiver with room holding the fewest of its topic (ties: most room, id).

        A receiver has room while below its quota, or once (``extra``: how many such slots
        are free, and who holds one already) when at ``N // M``: the free slots go where they even the spread.
        """
        new, load = self._state.new, self._state.load
        free, extra_taken = extra
        start = 0
        while start < len(pool):
            topic = pool[start][0]
            end = start
            while end < len(pool) and pool[end][0] == topic:
                end += 1
            heap = [
                (per_topic[m][topic], -need[m], m) for m in receivers if need[m] > 0 or (free and m not in extra_taken)
            ]
            heapq.heapify(heap)
            for tp in pool[start:end]:
                while True:
                    held, minus_room, member = heapq.heappop(heap)
                    if minus_room < 0 or (free and member not in extra_taken):
                        break
                if minus_room == 0:
                    free -= 1
                    extra_taken.add(member)
                new[member].append(tp)
                load[member] += 1
                need[member] = room = -minus_room - 1 if minus_room < 0 else 0
                per_topic[member][topic] = held + 1
                if room > 0 or (free and member not in extra_taken):
                    heapq.heappush(heap, (held + 1, -room, member))
            start = end


def _assign_racked(
    partitions_per_topic: Mapping[Topic, int],
    members: list[MemberId],
    taken: set[TopicPartition],
    racks: RackInfo,
    state: State,
) -> None:
    """Rack-aware: keep local partitions first, place the pool rack-locally, then trade for locality."""
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
            for tp in dropped:  # dealt back to its owner later, it counts as kept (State.settle)
                state.unkept.setdefault(tp, member)
        state.load[member] = len(kept[member])
    pool = unclaimed(partitions_per_topic, taken)
    if trimmed:
        pool = sorted(chain(pool, trimmed))
    if racks.enabled:
        off_rack = racks.mismatched(state, members)
        pool, moved = rack_pass(pool, off_rack, members, racks, state, min_quota)
    placed = {m: len(state.new[m]) for m in members}  # so far every new partition is rack-local
    given = water_fill(pool, members, state, min_quota)
    water_fill(pool[given:], members, state, max_quota)  # the quotas add up: nothing is left
    if racks.enabled:
        still_off: dict[MemberId, list[TopicPartition]] = {}
        for tp, owner in off_rack.items():
            if tp not in moved:
                still_off.setdefault(owner, []).append(tp)
        new_off = {m: racks.off_rack(m, state.new[m][placed[m] :]) for m in members if len(state.new[m]) > placed[m]}
        Locality(members, None, racks, state, still_off, new_off).improve()


def _trim(
    owned: list[TopicPartition], quota: int, member: MemberId, racks: RackInfo
) -> tuple[list[TopicPartition], list[TopicPartition]]:
    """Keep ``quota`` of ``owned`` (rack-local ones first, claim order kept); returns kept and dropped."""
    if not racks.enabled:
        return owned[:quota], owned[quota:]
    ranked = sorted(range(len(owned)), key=lambda i: (not racks.local(member, owned[i]), i))
    keep = sorted(ranked[:quota])
    return [owned[i] for i in keep], [owned[i] for i in sorted(ranked[quota:])]
