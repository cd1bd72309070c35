"""The sticky core's shared ground: claims, who owns what, and the state partitions are handed out in.

A claim on a topic the member does not subscribe to (or on a partition the topic does
not have) is dropped. Of the remaining claims on a partition the highest generation
wins; a tie at that generation leaves the partition unowned. The outcome does not
depend on member order.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import add, itemgetter
from typing import TYPE_CHECKING

from assignors._core.model import TopicPartition

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping, Sequence

    from assignors._core.model import MemberId, Topic

logger = logging.getLogger(__name__)

__all__ = ["Claim", "State", "StickyResult", "marks", "numbers", "offsets", "resolve_claims", "unmarked", "water_fill"]

_topic_of = itemgetter(0)
_number_of = itemgetter(1)
_tuple_new = tuple.__new__


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


def resolve_claims(
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
class State:
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


def water_fill(pool: Sequence[TopicPartition], members: Sequence[MemberId], state: State, limit: int | None) -> int:
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


def numbers(partitions_per_topic: Mapping[Topic, int]) -> list[int]:
    """``0 .. N - 1`` for the largest partition count ``N``: every topic's partitions share these int objects."""
    return list(range(max(partitions_per_topic.values(), default=0)))


def offsets(partitions_per_topic: Mapping[Topic, int]) -> tuple[dict[Topic, int], int]:
    """Where each topic's partitions start in a flat array of all of them (topic by topic in the mapping's order,
    then by number), and the array's length."""
    starts: dict[Topic, int] = {}
    total = 0
    for topic, count in partitions_per_topic.items():
        starts[topic] = total
        total += count
    return starts, total


def marks(partitions_per_topic: Mapping[Topic, int], claimed: Collection[TopicPartition]) -> bytearray:
    """One byte per partition (as :func:`offsets` lays them out): 0 where ``claimed`` holds it, else 1.

    Marking costs a few C-level steps per claim and touches a byte array of one byte per
    partition: no hashing, and no set of a million entries to build and walk. Every claimed
    partition's number must be below its topic's count.

    Raises:
        KeyError: a claimed partition's topic is not in ``partitions_per_topic``.
    """
    starts, total = offsets(partitions_per_topic)
    flags = bytearray(b"\x01") * total
    indexes = map(add, map(starts.__getitem__, map(_topic_of, claimed)), map(_number_of, claimed))
    deque(map(flags.__setitem__, indexes, repeat(0)), maxlen=0)  # consumed in C
    return flags


_FEW = 8  # free partitions of a topic below which finding them one by one beats a pass over the topic


def unmarked(
    partitions_per_topic: Mapping[Topic, int], flags: bytearray, topics: Iterable[Topic] | None = None
) -> list[TopicPartition]:
    """The partitions ``flags`` (from :func:`marks`) leaves at 1, of ``topics`` (default: all, in the mapping's
    order), topic by topic and in partition order; only these are built."""
    starts, _ = offsets(partitions_per_topic)
    every: list[int] = []
    pool: list[TopicPartition] = []
    for topic in partitions_per_topic if topics is None else topics:
        start = starts[topic]
        end = start + partitions_per_topic[topic]
        free = flags.count(1, start, end)
        if free > _FEW:
            every = every or numbers(partitions_per_topic)
            chosen = compress(every, flags[start:end])
            pool += map(_tuple_new, repeat(TopicPartition, free), zip(repeat(topic, free), chosen, strict=True))
        elif free:
            index = flags.find(1, start, end)
            while index >= 0:
                pool.append(_tuple_new(TopicPartition, (topic, index - start)))
                index = flags.find(1, index + 1, end)
    return pool
