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
* nobody keeps anything (a fresh group): round robin over the sorted partitions, which
  is even per topic by construction.

With rack-aware assignment the rack layer places and trades partitions for locality
(level 4) before and after the deal.

Two short paths give the same results for the common shapes without the general claim
resolution (the sticky assignors try them first): :func:`round_robin` when nobody claims
anything, :func:`assign_single_claims` when every claim is valid and claimed once. Both
need :func:`plain_identical`: the same topic list for every member, and no racks that
could make assignment rack-aware. Partitions are built per member or only where free,
never all at once to be filtered; claims are marked in a byte per partition, not hashed
into a set.
"""

from __future__ import annotations

import heapq
import logging
from collections import Counter
from itertools import chain, groupby, repeat
from operator import attrgetter, gt, itemgetter
from typing import TYPE_CHECKING

from assignors._builtin.sticky.claims import State, StickyResult, water_fill
from assignors._builtin.sticky.claims import marks as _marks
from assignors._builtin.sticky.claims import numbers as _numbers
from assignors._builtin.sticky.claims import unmarked as _unmarked
from assignors._builtin.sticky.exchange import SHIFT_SPREAD
from assignors._builtin.sticky.racks import Locality, rack_pass
from assignors._core.model import TopicPartition, reused_partitions

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from assignors._builtin.sticky.claims import Claim
    from assignors._builtin.sticky.racks import RackInfo
    from assignors._core.model import Cluster, MemberId, Subscription, Topic

logger = logging.getLogger(__name__)

__all__ = ["assign_identical", "assign_single_claims", "plain_identical", "round_robin"]

_topic_of = itemgetter(0)
_number_of = itemgetter(1)
_topics_of = attrgetter("topics")
_tuple_new = tuple.__new__


def plain_identical(
    cluster: Cluster, partitions_per_topic: Mapping[Topic, int], subscriptions: Mapping[MemberId, Subscription]
) -> list[MemberId] | None:
    """The members, sorted, when the short paths give the general path's result; else None.

    That is when all subscribe to the same topics (with metadata), racks cannot apply, and
    the group is above the size where the exchange phase (:mod:`assignors._builtin.sticky.exchange`) would
    still work on the identical builder's result.
    """
    topic_lists = list(map(_topics_of, subscriptions.values()))
    # Equal lists are mostly one object (Subscription shares them): count() compares pointers first.
    if not partitions_per_topic or not topic_lists or topic_lists.count(topic_lists[0]) != len(topic_lists):
        return None
    if cluster.partition_racks and any(s.rack_id is not None for s in subscriptions.values()):
        return None
    if len(subscriptions) > 1 and sum(partitions_per_topic.values()) * len(subscriptions) <= SHIFT_SPREAD:
        return None
    return sorted(subscriptions)


def round_robin(
    cluster: Cluster, partitions_per_topic: Mapping[Topic, int], members: Sequence[MemberId]
) -> dict[MemberId, tuple[TopicPartition, ...]]:
    """A fresh group (nobody claims anything) of ``plain_identical`` members: the round robin, as tuples.

    Member ``i`` takes every ``M``-th of the sorted partitions from the ``i``-th on. On metadata
    assigned before, that is one strided slice, copied in C, of the partitions the Cluster keeps
    (:func:`~assignors._core.model.reused_partitions`): no per-partition Python work left in the
    call. ``partitions_per_topic`` is ``cluster``'s counts of the subscribed topics (``validate_group``).
    """
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("sticky: %d members, identical subscriptions, nothing claimed: round robin", len(members))
    partitions = reused_partitions(cluster, tuple(sorted(partitions_per_topic)))
    if partitions is None:
        return {member: tuple(share) for member, share in _shares(partitions_per_topic, members)}
    step = len(members)
    return {member: partitions[index::step] for index, member in enumerate(members)}


def assign_single_claims(
    partitions_per_topic: Mapping[Topic, int], members: list[MemberId], claims: Mapping[MemberId, Claim]
) -> StickyResult | None:
    """``plain_identical`` members whose claims are all single and valid; None when some are not.

    Every claimed partition exists, is subscribed and is claimed by one member only, so
    generations cannot matter. The result is the one the general path (claim resolution,
    then :func:`assign_identical`) gives; this path skips its per-member work, most of a
    small group's cost. Its ``claimed`` holds the claimed partitions that a member may
    receive as new, the trimmed ones (every other claimed partition stays with its
    claimer), which is all a cooperative round looks up in it.
    """
    partitions = [claim.partitions for claim in claims.values()]
    every = list(chain.from_iterable(partitions))
    try:
        if not _numbers_exist(every, partitions_per_topic):
            return None
        marks = _marks(partitions_per_topic, every)
    except KeyError:  # a claim on a topic without metadata or not subscribed
        return None
    if marks.count(0) != len(every):  # a partition claimed twice
        return None
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("sticky: %d members, identical subscriptions, every claim single and valid", len(members))
    kept: dict[MemberId, list[TopicPartition]] = {m: [] for m in members}
    kept.update(zip(claims, map(list, partitions), strict=True))
    state = State(dict.fromkeys(members, 0), kept, {m: [] for m in members})
    trimmed = _Deal(partitions_per_topic, members, state).run(_unmarked(partitions_per_topic, marks))
    return StickyResult(state.kept, state.new, set(trimmed))


def _numbers_exist(claimed: Sequence[TopicPartition], partitions_per_topic: Mapping[Topic, int]) -> bool:
    """Whether each claimed partition's number is below its topic's count (KeyError: a topic is not there)."""
    if max(map(_number_of, claimed), default=-1) < min(partitions_per_topic.values()):
        return True
    counts = map(partitions_per_topic.__getitem__, map(_topic_of, claimed))
    return all(map(gt, counts, map(_number_of, claimed)))


def _shares(
    partitions_per_topic: Mapping[Topic, int], members: Sequence[MemberId]
) -> Iterator[tuple[MemberId, Iterator[TopicPartition]]]:
    """Round robin over the sorted partitions: member ``i`` takes every ``M``-th from the ``i``-th on.

    Each member's partitions are built together (slices of the topic and number columns,
    then one C-level pass), so they lie together in memory: copying and freeing them later
    runs through memory in order, not ``M`` apart.
    """
    numbers = _numbers(partitions_per_topic)
    topic_column: list[Topic] = []
    number_column: list[int] = []
    for topic, count in sorted(partitions_per_topic.items()):
        topic_column += repeat(topic, count)
        number_column += numbers[:count]
    step = len(members)
    for index, member in enumerate(members):
        topics = topic_column[index::step]
        pairs = zip(topics, number_column[index::step], strict=True)
        yield member, map(_tuple_new, repeat(TopicPartition, len(topics)), pairs)


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
        pool = _unmarked(partitions_per_topic, _marks(partitions_per_topic, taken))
        _Deal(partitions_per_topic, members, state).run(pool)


def _round_robin(partitions_per_topic: Mapping[Topic, int], members: Sequence[MemberId], state: State) -> None:
    """Nobody keeps anything: the round robin of :func:`_shares`, into ``state``."""
    new, load = state.new, state.load
    for member, share in _shares(partitions_per_topic, members):
        new[member] = partitions = list(share)
        load[member] = len(partitions)


def _quotas(total: int, members: Sequence[MemberId], owned: Mapping[MemberId, int]) -> tuple[dict[MemberId, int], int]:
    """``N // M`` each; ``N % M`` may hold one more: members owning that many first (id order).

    Returns the quotas and how many of those extra slots are still free (the deal gives
    them to whoever evens the per-topic spread best).
    """
    low, extra = divmod(total, len(members))
    quotas = dict.fromkeys(members, low)
    if extra:
        for member in members:
            if owned[member] > low:
                quotas[member] = low + 1
                extra -= 1
                if not extra:
                    break
    return quotas, extra


class _Deal:
    """Quotas, per-topic even trimming and the per-topic deal of the pool (no racks)."""

    def __init__(self, partitions_per_topic: Mapping[Topic, int], members: Sequence[MemberId], state: State) -> None:
        self._counts = partitions_per_topic
        self._members = members
        self._state = state
        self._floor: dict[Topic, int] = {}  # per topic N_T // M, and how many members may still hold one more
        self._room_above: dict[Topic, int] = {}

    def run(self, pool: list[TopicPartition]) -> list[TopicPartition]:
        """Trim, then deal ``pool`` (the unclaimed partitions, in topic and partition order) and the trimmed ones.

        Returns the trimmed partitions (claimed, and now with other members).
        """
        state, members = self._state, self._members
        kept, load = state.kept, state.load
        load.update(zip(members, map(len, map(kept.__getitem__, members)), strict=True))
        total = sum(self._counts.values())
        quotas, free = _quotas(total, members, load)
        receivers = [m for m in members if load[m] < quotas[m] or (free and load[m] == quotas[m])]
        per_topic, trimmed = self._trim_all(quotas)
        if not receivers:
            return trimmed
        if trimmed:
            pool = sorted(chain(pool, trimmed))
        for member in receivers:
            if member not in per_topic:
                per_topic[member] = Counter(map(_topic_of, kept[member]))
        low = total // len(members)
        above = {m for m in receivers if quotas[m] > low}  # already hold their extra slot
        self._deal(pool, receivers, {m: quotas[m] - load[m] for m in receivers}, (free, above), per_topic)
        return trimmed

    def _trim_all(self, quotas: Mapping[MemberId, int]) -> tuple[dict[MemberId, Counter[Topic]], list[TopicPartition]]:
        """Trim every member over its quota; returns the per-topic counts known so far and what was trimmed."""
        kept, load = self._state.kept, self._state.load
        over = [m for m in self._members if load[m] > quotas[m]]
        per_topic: dict[MemberId, Counter[Topic]] = {}
        if not over:
            return per_topic, []
        count = len(self._members)
        self._floor = {t: n // count for t, n in self._counts.items()}
        self._room_above = {t: n % count for t, n in self._counts.items()}
        for member in self._members:
            if load[member] <= quotas[member]:
                self._take_room(per_topic.setdefault(member, Counter(map(_topic_of, kept[member]))))
        trimmed: list[TopicPartition] = []
        for member in over:
            kept[member], dropped = self._trim(kept[member], quotas[member])
            per_topic[member] = Counter(map(_topic_of, kept[member]))
            load[member] = quotas[member]
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
        if len(receivers) == 1:  # one member joined, say: it has room for the whole pool
            new[receivers[0]].extend(pool)
            load[receivers[0]] += len(pool)
            return
        free, extra_taken = extra
        for topic, partitions in groupby(pool, _topic_of):
            heap = [
                (per_topic[m][topic], -need[m], m) for m in receivers if need[m] > 0 or (free and m not in extra_taken)
            ]
            heapq.heapify(heap)
            for tp in partitions:
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
    pool = _unmarked(partitions_per_topic, _marks(partitions_per_topic, taken))
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
