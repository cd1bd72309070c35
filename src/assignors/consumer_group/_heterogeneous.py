"""KIP-848's ``uniform`` assignor when subscriptions differ: Kafka's ``UniformHeterogeneousAssignmentBuilder``."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from itertools import filterfalse, pairwise, repeat
from operator import add, call, setitem
from typing import TYPE_CHECKING, Final

from assignors._builtin.sticky.balance import evenest_at_a_glance, most_even
from assignors._builtin.sticky.claims import State
from assignors.consumer_group._common import cached_partitions, free_partitions

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from assignors._core.model import MemberId, Topic, TopicPartition

__all__ = ["MAX_ITERATION_COUNT", "heterogeneous_targets"]

MAX_ITERATION_COUNT: Final = 16
"""Kafka's cap on the balancing passes over the topics."""
MOST_EVEN_CLASSES: Final = 64
"""Above this many distinct subscriptions Kafka's "almost balanced" loads stand: the chain search runs on the
subscriptions, and on KIP-1263's shape (1,000 members, each on its own 100 of 1,000 topics) it takes seconds."""


def _scatter(owners: list[int], partitions: Sequence[int], member: int | Sequence[int]) -> None:
    """``owners[p] = member`` for every ``p`` in ``partitions`` (or the matching item of ``member``), at C speed."""
    if isinstance(partitions, range) and len(partitions) == len(owners) and not isinstance(member, int):
        owners[:] = member  # a topic nobody owned: one slice copy
        return
    members = repeat(member) if isinstance(member, int) else member
    deque(map(owners.__setitem__, partitions, members), maxlen=0)


def _bump(sizes: list[int], members: list[int], amount: int) -> None:
    """``sizes[m] += amount`` for each of the distinct ``members``, at C speed."""
    deque(map(setitem, repeat(sizes), members, map(add, map(sizes.__getitem__, members), repeat(amount))), maxlen=0)


def _fill(sizes: list[int], members: Sequence[int], free: int) -> list[int]:
    """The owners of ``free`` partitions handed out as the least loaded range does, in order.

    Equivalent to asking Kafka's ``MemberAssignmentBalancer.nextLeastLoadedMember`` once per
    partition, but each run of cycles at one range width is built at once: the range's members
    repeated.
    """
    load = sizes.__getitem__
    order = sorted(members, key=load)  # stable: ties stay in index order
    count = len(order)
    level = load(order[0])
    end = 0
    owners: list[int] = []
    while len(owners) < free:  # members past the range keep their sizes: bisected as they were
        end = bisect_right(order, level, end, key=load)
        cycles = load(order[end]) - level if end < count else -(-(free - len(owners)) // end)
        take = min(cycles * end, free - len(owners))
        full, partial = divmod(take, end)
        ranged = order[:end]
        owners.extend(ranged * full)
        owners.extend(ranged[:partial])
        if full:
            _bump(sizes, ranged, full)
        if partial:
            _bump(sizes, ranged[:partial], 1)
        level += cycles
    return owners


def heterogeneous_targets(  # noqa: PLR0913 - Kafka's inputs, then the members' names and topics
    subscribers: Mapping[Topic, Sequence[int]],
    counts: Mapping[Topic, int],
    current: list[tuple[TopicPartition, ...]],
    owners: Mapping[Topic, list[int]],
    *,
    members: Sequence[MemberId],
    topics_of: Sequence[frozenset[Topic]] | None,
    restore: bool = False,
    topic_key: Callable[[Topic], object] | None = None,
) -> list[list[TopicPartition] | tuple[TopicPartition, ...]]:
    """One target list per member: keep, fill, then balance, as Kafka's heterogeneous builder; optionally evened out.

    Kafka's balancing passes (``balanceTopics``) move partitions of one topic between its subscribers, so they
    stop "almost balanced" (its Javadoc's words) where evening out the loads needs hand-overs across topics: a
    member over its share on one topic, a member under it on another, and a third subscribing to both in
    between. Where that is so, :func:`_most_even` finishes the job (``topics_of`` given: ``EvenUniformAssignor``).

    Args:
        subscribers: per subscribed topic with partitions, its subscribers' positions, ascending.
        counts: partition counts.
        current: each member's valid previous target (see ``previous_targets``): all of it is kept.
        owners: per topic, each partition's owner in ``current`` (-1 for none); updated in place.
        members: the member ids in the coordinator's order (position ``i`` is ``members[i]``).
        topics_of: per position, the member's subscribed topics that have partitions; None skips the most-even
            step (Kafka's result, or more than :data:`MOST_EVEN_CLASSES` distinct subscriptions).
        restore: give a member back a partition Kafka's passes took from it where they gave it another of the same
            topic (:func:`_restore`); False is Kafka's result.
        topic_key: the last tie-break of Kafka's topic comparator, its topic ids' ``compareTo`` (None: the names).
    """
    sizes = list(map(len, current))
    result: list[list[TopicPartition] | tuple[TopicPartition, ...]] = list(current)  # a list once it changes

    def rank(topic: Topic) -> tuple[float, int, object]:
        subs = len(subscribers[topic])
        return (-(counts[topic] / subs), subs, topic if topic_key is None else topic_key(topic))

    topics = sorted(subscribers, key=rank)
    before = {topic: owners[topic][:] for topic in topics} if restore else {}  # each partition's previous owner
    added: list[TopicPartition] = []
    added_owners: list[int] = []
    for topic in topics:
        free = free_partitions(owners[topic])
        if free:
            given = _fill(sizes, subscribers[topic], len(free))
            _scatter(owners[topic], free, given)
            cache = cached_partitions(topic, counts[topic])
            added.extend(cache[: free.stop] if isinstance(free, range) else map(cache.__getitem__, free))
            added_owners.extend(given)
    if added:
        _distribute(added, added_owners, result)
    filled = sizes[:]  # the loads after the fill, before balancing
    moves = _balance([t for t in topics if len(subscribers[t]) > 1], subscribers, owners, sizes)
    moved: set[int] = set()
    if moves:
        if restore:
            _restore(moves, owners, before)
        moved = _apply_moves(moves, owners, result, counts, in_order=restore or topics_of is not None)
    if topics_of is not None and _most_even(members, topics_of, current, result):
        return list(result)
    return _sorted_where_known(result, current, filled, moved, in_name_order=all(a < b for a, b in pairwise(topics)))


def _sorted_where_known(
    result: list[list[TopicPartition] | tuple[TopicPartition, ...]],
    current: list[tuple[TopicPartition, ...]],
    filled: list[int],
    moved: set[int],
    *,
    in_name_order: bool,
) -> list[list[TopicPartition] | tuple[TopicPartition, ...]]:
    """``result`` with the targets known sorted as tuples (not sorted again), the others as lists.

    A member nothing touched holds its previous target as it is; one that gained nothing but kept all of it holds
    it sorted; one that had none and gained only in the fill holds its partitions in the topics' order, sorted too
    when that is the names' order.
    """
    targets: list[list[TopicPartition] | tuple[TopicPartition, ...]] = []
    for member, (mine, was) in enumerate(zip(result, current, strict=True)):
        if type(mine) is tuple:
            targets.append(mine)
        elif member not in moved and (filled[member] == len(was) or (in_name_order and not was)):
            targets.append(tuple(mine))
        else:
            targets.append(mine)
    return targets


def _most_even(
    members: Sequence[MemberId],
    topics_of: Sequence[frozenset[Topic]],
    current: list[tuple[TopicPartition, ...]],
    result: list[list[TopicPartition] | tuple[TopicPartition, ...]],
) -> bool:
    """Hand partitions along chains of subscribers until the loads have the smallest sum of squares; True if it did.

    The sticky family's exact balancing step (:func:`assignors._builtin.sticky.balance.most_even`): each chain
    takes one partition from a member at least two above another and passes partitions between members who
    subscribe to them, preferring partitions new to their holder, so it revokes as little of the previous target
    as the most even loads allow. Kafka's builder leaves the same loads wherever its passes reach the minimum, and
    then this moves nothing. Up to :data:`MOST_EVEN_CLASSES` distinct subscriptions (the search runs on them).
    """
    eligible = [position for position, topics in enumerate(topics_of) if topics]
    if len(eligible) < 2:  # noqa: PLR2004 - nobody to hand over to
        return False
    names = [members[position] for position in eligible]
    member_topics = {members[position]: topics_of[position] for position in eligible}
    load = {members[position]: len(result[position]) for position in eligible}
    if evenest_at_a_glance(member_topics, names, load):
        return False
    kept: dict[MemberId, list[TopicPartition]] = {}
    new: dict[MemberId, list[TopicPartition]] = {}
    for position in eligible:
        was = set(current[position])
        name = members[position]
        kept[name] = [tp for tp in result[position] if tp in was]
        new[name] = [tp for tp in result[position] if tp not in was]
    state = State(load, kept, new)
    if not most_even(member_topics, names, state):
        return False
    for position in eligible:
        name = members[position]
        result[position] = state.kept[name] + state.new[name]
    return True


def _restore(
    moves: dict[tuple[Topic, int], int], owners: Mapping[Topic, list[int]], before: Mapping[Topic, list[int]]
) -> None:
    """Undo needless churn: a member that lost a partition of a topic and gained another of the same topic gets
    its own back, the gained one going to the member that took it.

    Kafka's balancing passes (``balanceTopics``) can move a partition away from a member and, a pass later, hand
    the same member a different partition of that topic (a never-assigned one, or another member's): which
    member it happens to depends on Kafka's ``HashMap`` order. Each exchange keeps every member's load and moves
    one partition fewer off its previous target, so at equal balance ours never moves more than Kafka's.
    ``moves`` (each moved partition's owner before balancing) gains what this moves.
    """
    by_topic: dict[Topic, list[int]] = {}
    for topic, partition in moves:
        by_topic.setdefault(topic, []).append(partition)
    for topic in sorted(by_topic):
        touched = by_topic[topic]
        while given := _exchange(owners[topic], before[topic], touched):
            for partition, owner in given:
                moves.setdefault((topic, partition), owner)
                touched.append(partition)


def _exchange(now: list[int], was: list[int], touched: list[int]) -> list[tuple[int, int]]:
    """One pass of :func:`_restore` over a topic; returns the gained partitions given away, with their owners
    before (nothing when no member both lost and gained a partition of the topic)."""
    lost: dict[int, list[int]] = {}
    for partition in sorted(set(touched)):
        owner = was[partition]
        if owner != -1 and now[partition] != owner:
            lost.setdefault(owner, []).append(partition)
    if not lost:
        return []
    gained: dict[int, list[int]] = {member: [] for member in lost}
    for partition, owner in enumerate(now):
        if owner in gained and was[partition] != owner:
            gained[owner].append(partition)
    given: list[tuple[int, int]] = []
    for member in sorted(lost):
        gains = iter(gained[member])
        for taken in lost[member]:
            other = next((p for p in gains if now[p] == member), -1)
            if other == -1:
                break
            now[taken], now[other] = member, now[taken]
            given.append((other, member))
    return given


def _distribute(
    added: list[TopicPartition], owners: list[int], result: list[list[TopicPartition] | tuple[TopicPartition, ...]]
) -> None:
    """Append ``added[i]`` to ``result[owners[i]]``, at C speed (each append is a bound method called by ``map``);
    a gainer's previous target (a tuple) becomes a list first."""
    appends: dict[int, Callable[[TopicPartition], None]] = {}
    for member in set(owners):
        mine = result[member] = list(result[member])
        appends[member] = mine.append
    deque(map(call, map(appends.__getitem__, owners), added), maxlen=0)


def _balance(  # noqa: C901, PLR0912 - the passes' loop, Levels.balanced inlined
    topics: list[Topic], subscribers: Mapping[Topic, Sequence[int]], owners: Mapping[Topic, list[int]], sizes: list[int]
) -> dict[tuple[Topic, int], int]:
    """Kafka's ``balanceTopics``: passes over ``topics`` until a whole cycle moves nothing, at most 16.

    From the second pass on, a topic whose subscribers' loads are within one is told by :class:`_Levels` (a few
    operations on bit masks) instead of reading its subscribers' loads: KIP-1263's shape visits 1,000 topics of 100
    subscribers each some ten times, and most visits find the topic balanced.

    Returns the moved partitions with the owner each had before balancing.
    """
    moves: dict[tuple[Topic, int], int] = {}
    last_moved = -1
    levels: _Levels | None = None
    balanced: set[int] = set()  # subscriber lists (by id: topics sharing one) found balanced since the last move
    for sweep in range(MAX_ITERATION_COUNT):
        if sweep and last_moved:  # (a pass that moved nothing at all ends at the first topic: no masks needed)
            levels = _Levels.of(topics, subscribers, sizes) if levels is None else levels.refreshed(sizes)
        for index, topic in enumerate(topics):
            if index == last_moved:
                return moves
            members = subscribers[topic]
            moved = 0
            if id(members) in balanced:
                pass
            elif levels is None:
                if _within_one(sizes, members):
                    balanced.add(id(members))
                else:
                    moved = _balance_topic(topic, members, owners[topic], sizes, moves)
            else:  # levels.balanced(topic), inlined: the check most visits end at
                mask = levels.topic_masks[topic]
                at_least = levels.at_least
                level = levels.floor - levels.base
                while mask & at_least[level + 1] == mask:
                    level += 1
                if mask & at_least[level + 2]:
                    moved = _balance_topic(topic, members, owners[topic], sizes, moves, levels=levels)
            if moved:
                balanced.clear()
            if moved or last_moved == -1:
                last_moved = index
    return moves


def _within_one(sizes: list[int], members: Sequence[int]) -> bool:
    """Whether the loads of ``members`` are within one of each other (their few distinct values compared)."""
    loads = set(map(sizes.__getitem__, members))
    return max(loads) - min(loads) <= 1


_LEVELS_SPREAD: Final = 64
""":class:`_Levels` keeps one mask per load level: used while the loads span at most this many levels."""
_LEVELS_CELLS: Final = 1 << 24
"""... and while the topics' masks take at most this many member cells to build (topics x members)."""
_LEVELS_BITS: Final = 4096
"""Up to this many members each member's bit is built once (their sizes sum to members squared over 2 bits)."""
_DIGITS: Final = bytes([48, 49, *range(2, 256)])  # 0 -> "0", 1 -> "1": a bytes of 0/1 flags read by int(..., 2)


class _Levels:
    """The members' loads as bit masks, so that "are this topic's subscribers within one?" is a few big-int ANDs.

    Bit ``m`` stands for the member at position ``m``. ``topic_masks[t]`` holds the subscribers of ``t``;
    ``at_least[i]`` the members whose load is at least ``base + i`` (kept up to date by :func:`_balance_topic`'s
    moves, one bit flip each). A topic is balanced when no subscriber is two above its least loaded one.
    """

    __slots__ = ("at_least", "base", "floor", "topic_masks")

    def __init__(self, topic_masks: dict[Topic, int], sizes: list[int]) -> None:
        self.topic_masks = topic_masks
        self.base = self.floor = min(sizes)
        flags = [bytes(map(level.__le__, sizes)).translate(_DIGITS)[::-1] for level in range(self.base, max(sizes) + 1)]
        self.at_least = [*(int(digits, 2) for digits in flags), 0, 0]

    @classmethod
    def of(cls, topics: list[Topic], subscribers: Mapping[Topic, Sequence[int]], sizes: list[int]) -> _Levels | None:
        """The masks of ``topics``, or None where the loads spread too far or the group is too large for them."""
        if max(sizes) - min(sizes) > _LEVELS_SPREAD or len(topics) * len(sizes) > _LEVELS_CELLS:
            return None
        masks: dict[Topic, int] = {}
        shared: dict[int, int] = {}  # by the subscriber list's id: topics sharing one list share its mask
        if len(sizes) <= _LEVELS_BITS:  # each member's bit built once, each mask their sum
            bits = [1 << member for member in range(len(sizes))]
            for topic in topics:
                members = subscribers[topic]
                mask = shared.get(id(members))
                if mask is None:
                    mask = shared[id(members)] = sum(map(bits.__getitem__, members))
                masks[topic] = mask
            return cls(masks, sizes)
        blank = bytearray(b"0") * len(sizes)
        for topic in topics:
            members = subscribers[topic]
            mask = shared.get(id(members))
            if mask is None:  # the binary digits written at the members' places, read by int()
                digits = blank[:]
                deque(map(digits.__setitem__, members, repeat(49)), maxlen=0)  # "1"
                digits.reverse()
                mask = shared[id(members)] = int(digits, 2)
            masks[topic] = mask
        return cls(masks, sizes)

    def refreshed(self, sizes: list[int]) -> _Levels:
        """Itself, its floor raised to the least load (where the search for a topic's least load starts)."""
        self.floor = min(sizes)
        return self

    def balanced(self, topic: Topic) -> bool:
        """Whether every subscriber of ``topic`` is within one of its least loaded one."""
        mask = self.topic_masks[topic]
        at_least = self.at_least
        level = self.floor - self.base
        while mask & at_least[level + 1] == mask:
            level += 1
        return not mask & at_least[level + 2]

    def moved(self, giver: int, receiver: int, sizes: list[int]) -> None:
        """Follow one partition from ``giver`` to ``receiver`` (``sizes`` already updated)."""
        self.at_least[sizes[giver] + 1 - self.base] ^= 1 << giver
        self.at_least[sizes[receiver] - self.base] |= 1 << receiver


def _balance_topic(  # noqa: C901, PLR0912, PLR0913, PLR0915 - Kafka's balancer inlined: the hot loop on many topics
    topic: Topic,
    members: Sequence[int],
    owners: list[int],
    sizes: list[int],
    moves: dict[tuple[Topic, int], int],
    *,
    levels: _Levels | None = None,
) -> int:
    """Move partitions of ``topic`` from its most to its least loaded subscribers; return how many moved.

    Kafka's ``balanceTopic`` with its ``MemberAssignmentBalancer``: the subscribers sorted by (load, index); a least
    loaded range ``[0, least_end)`` at level ``least_level`` whose members take one partition per cycle, the level
    rising and members of that load joining once all have; a most loaded range mirroring it from the right, from
    which a member with no partition of the topic left to give is excluded (swapped past ``most_end``). Each giver
    gives its highest-numbered partition of the topic first; it stops when the levels are within one.
    The caller has found the topic unbalanced; ``levels`` are kept up to date with the moves.
    """
    load = sizes.__getitem__
    order = sorted(members, key=load)  # stable: ties stay in index order
    count = len(order)
    least_end, least_level, next_least = 0, sizes[order[0]] - 1, 0
    most_start = most_end = count
    most_level, next_most = sizes[order[-1]] + 1, count - 1
    # What each giver may give: its partitions as this topic's pass began, highest-numbered first (the snapshot
    # reversed, searched at C speed from where the giver's last one was). Most subscribers of a many-topics group
    # hold nothing of a given topic: excluded at a set lookup.
    held = owners[::-1]
    holders = set(held)
    after: dict[int, int] = {}  # a giver's next place to search in held
    found = 0
    moved = 0
    while most_level - least_level > 1:
        giver = -1
        while True:  # next_most_loaded, excluding members with no partition of the topic left to give
            if next_most < most_start:
                if most_end <= most_start and most_start > 0:
                    most_level = sizes[order[most_start - 1]]  # emptied by exclusions: restart below
                else:
                    most_level -= 1
                # Between the ranges the loads are as the pass began (sorted): bisection finds the members of a level.
                if most_start > least_end and sizes[order[most_start - 1]] == most_level:
                    most_start = bisect_left(order, most_level, least_end, most_start, key=load)
                while most_start > 0 and sizes[order[most_start - 1]] == most_level:
                    most_start -= 1
                next_most = most_end - 1
            if next_most < 0:
                giver = -1
                break
            giver = order[next_most]
            next_most -= 1
            if giver in holders:
                try:
                    found = held.index(giver, after.get(giver, 0))
                    break
                except ValueError:
                    holders.discard(giver)  # all given
            here, last = next_most + 1, most_end - 1  # exclude_most_loaded
            order[here], order[last] = order[last], order[here]
            most_end -= 1
        if giver == -1:
            break
        after[giver] = found + 1
        partition = len(held) - 1 - found
        if next_least >= least_end:  # next_least_loaded
            least_level += 1
            if least_end < most_start and sizes[order[least_end]] == least_level:  # as above
                least_end = bisect_right(order, least_level, least_end, most_start, key=load)
            while least_end < count and sizes[order[least_end]] == least_level:
                least_end += 1
            next_least = 0
        receiver = order[next_least]
        next_least += 1
        if most_level - least_level <= 1:
            break
        moves.setdefault((topic, partition), giver)
        owners[partition] = receiver
        sizes[giver] -= 1
        sizes[receiver] += 1
        if levels is not None:
            levels.moved(giver, receiver, sizes)
        moved += 1
    return moved


def _apply_moves(
    moves: Mapping[tuple[Topic, int], int],
    owners: Mapping[Topic, list[int]],
    result: list[list[TopicPartition] | tuple[TopicPartition, ...]],
    counts: Mapping[Topic, int],
    *,
    in_order: bool,
) -> set[int]:
    """Take each moved partition from the list of its owner before balancing and give it to its final owner.

    ``in_order``: a member's gains are appended in (topic, partition) order, for the most-even step that reads the
    lists; otherwise in the order they moved (the targets are sorted anyway).

    Returns the members whose lists changed.
    """
    removed: dict[int, set[tuple[Topic, int]]] = {}
    gained: dict[int, list[TopicPartition]] = {}
    partitions_of: dict[Topic, tuple[TopicPartition, ...]] = {}
    for key, before in sorted(moves.items()) if in_order else moves.items():
        topic, partition = key
        after = owners[topic][partition]
        if after == before:
            continue
        gone = removed.get(before)
        if gone is None:
            gone = removed[before] = set()
        gone.add(key)
        cache = partitions_of.get(topic)
        if cache is None:
            cache = partitions_of[topic] = cached_partitions(topic, counts[topic])
        more = gained.get(after)
        if more is None:
            more = gained[after] = []
        more.append(cache[partition])
    for member, gone in removed.items():
        result[member] = list(filterfalse(gone.__contains__, result[member]))
    for member, more in gained.items():
        mine = result[member]
        result[member] = mine + more if type(mine) is list else [*mine, *more]
    return gained.keys() | removed.keys()
