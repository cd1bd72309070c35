"""The sticky algorithm shared by StickyAssignor and CooperativeStickyAssignor.

Input: partition counts of the subscribed topics, subscriptions, and each member's
decoded claim (previously owned partitions and the generation they were owned in).
Output: one list per member, and the partitions two members claimed in one generation.

1. Claims. A claim on a topic the member does not subscribe to (or that has no such
   partition) is dropped. Of the remaining claims on a partition the highest generation
   wins; a tie at that generation leaves the partition unowned. The outcome does not
   depend on member order.
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
4. Racks (KIP-881): when members and partitions carry racks and not every partition is
   on every rack, partitions that need a new owner go to the least-loaded rack-local
   member that has room, before the rest are handed out. Owned partitions stay with
   their owner whatever its rack (stickiness first), and balance is never traded for
   locality.

Handing partitions out least-loaded-first is done in bulk: members at the same load
take turns, so each run of equal loads is one strided slice per member.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

from assignors._model import _topic_partitions

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from assignors._model import Cluster, MemberId, Subscription, Topic, TopicPartition

logger = logging.getLogger("assignors")

__all__ = ["Claim", "StickyResult", "sticky_assign"]


@dataclass(frozen=True, slots=True)
class Claim:
    """What a member says it owned, and in which generation (-1: unknown)."""

    partitions: Sequence[TopicPartition]
    generation: int


@dataclass(slots=True)
class StickyResult:
    """The assignment, and the partitions claimed by two members of one generation."""

    assignment: dict[MemberId, list[TopicPartition]]
    contested: set[TopicPartition]


def _resolve_claims(
    partitions_per_topic: Mapping[Topic, int],
    member_topics: Mapping[MemberId, frozenset[Topic]],
    claims: Mapping[MemberId, Claim],
) -> tuple[dict[TopicPartition, MemberId], set[TopicPartition]]:
    """Owner of each validly claimed partition, and the partitions tied at their highest generation."""
    valid: dict[MemberId, list[TopicPartition]] = {}
    total = 0
    for member in sorted(claims):
        claimed = claims[member].partitions
        if not claimed:
            continue
        topics = member_topics.get(member, frozenset())
        kept = [tp for tp in claimed if tp[0] in topics and tp[1] < partitions_per_topic[tp[0]]]
        if len(kept) != len(claimed) and logger.isEnabledFor(logging.DEBUG):
            logger.debug("dropping %d stale claims of member %r", len(claimed) - len(kept), member)
        valid[member] = kept
        total += len(kept)
    owner: dict[TopicPartition, MemberId] = {}
    for member, kept in valid.items():
        owner.update(dict.fromkeys(kept, member))
    if len(owner) == total:  # the usual case: nobody claims a partition twice
        return owner, set()
    return _resolve_conflicts(valid, claims)


def _resolve_conflicts(
    valid: Mapping[MemberId, list[TopicPartition]], claims: Mapping[MemberId, Claim]
) -> tuple[dict[TopicPartition, MemberId], set[TopicPartition]]:
    """Highest generation wins; a tie at the highest generation leaves the partition unowned."""
    best: dict[TopicPartition, tuple[int, MemberId | None]] = {}
    for member, kept in valid.items():
        generation = claims[member].generation
        for tp in kept:
            current = best.get(tp)
            if current is None or generation > current[0]:
                best[tp] = (generation, member)
            elif generation == current[0]:
                best[tp] = (generation, None)
    contested = {tp for tp, (_, member) in best.items() if member is None}
    if contested:
        logger.info("%d partitions are claimed by two members of the same generation", len(contested))
    return {tp: member for tp, (_, member) in best.items() if member is not None}, contested


@dataclass(slots=True)
class _State:
    """Loads and holdings while partitions are handed out."""

    load: dict[MemberId, int]
    new: dict[MemberId, list[TopicPartition]]


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


def sticky_assign(
    cluster: Cluster,
    partitions_per_topic: Mapping[Topic, int],
    subscriptions: Mapping[MemberId, Subscription],
    claims: Mapping[MemberId, Claim],
) -> StickyResult:
    """Assign stickily; see the module docstring for the rules."""
    member_topics = {
        member: frozenset(t for t in s.topics if t in partitions_per_topic) for member, s in subscriptions.items()
    }
    owner, contested = _resolve_claims(partitions_per_topic, member_topics, claims)
    eligible = sorted(m for m, topics in member_topics.items() if topics)
    racks = _RackInfo.build(cluster, partitions_per_topic, subscriptions, eligible)
    kept: dict[MemberId, list[TopicPartition]] = {m: [] for m in subscriptions}
    for member in eligible:
        claim = claims.get(member)
        if claim is not None and claim.partitions:
            kept[member] = [tp for tp in claim.partitions if owner.get(tp) == member]
    identical = len({member_topics[m] for m in eligible}) <= 1
    state = _State(dict.fromkeys(eligible, 0), {m: [] for m in eligible})
    if eligible:
        if identical:
            _assign_identical(partitions_per_topic, eligible, kept, racks, state)
        else:
            _assign_general(partitions_per_topic, member_topics, eligible, kept, owner, racks, state)
    assignment = {m: kept[m] + state.new.get(m, []) for m in subscriptions}
    return StickyResult(assignment, contested)


@dataclass(slots=True)
class _RackInfo:
    """Racks of members and partitions, when rack-aware assignment applies (Kafka's group-wide rule)."""

    member_rack: dict[MemberId, str]
    cluster: Cluster
    enabled: bool

    @classmethod
    def build(
        cls,
        cluster: Cluster,
        partitions_per_topic: Mapping[Topic, int],
        subscriptions: Mapping[MemberId, Subscription],
        eligible: Sequence[MemberId],
    ) -> _RackInfo:
        member_rack = {m: r for m in eligible if (r := subscriptions[m].rack_id) is not None}
        enabled = False
        if member_rack and cluster.partition_racks:
            racks_seen = [
                cluster.racks_of(tp)
                for topic, count in partitions_per_topic.items()
                for tp in _topic_partitions(topic, count)
            ]
            every = frozenset().union(*racks_seen)
            enabled = not every.isdisjoint(member_rack.values()) and any(r != every for r in racks_seen)
        return cls(member_rack, cluster, enabled)

    def local(self, member: MemberId, tp: TopicPartition) -> bool:
        rack = self.member_rack.get(member)
        return rack is None or rack in self.cluster.racks_of(tp)


def _rack_pass(
    pool: list[TopicPartition],
    candidates: Mapping[str, Sequence[MemberId]],
    racks: _RackInfo,
    state: _State,
    limit: int | None,
) -> list[TopicPartition]:
    """Give each partition to its least-loaded rack-local candidate under ``limit``; returns the rest."""
    load = state.load
    rest: list[TopicPartition] = []
    for tp in pool:
        best: MemberId | None = None
        for member in candidates[tp.topic]:
            fits = (limit is None or load[member] < limit) and racks.local(member, tp)
            if fits and (best is None or load[member] < load[best]):
                best = member
        if best is None:
            rest.append(tp)
        else:
            state.new[best].append(tp)
            load[best] += 1
    return rest


def _assign_identical(
    partitions_per_topic: Mapping[Topic, int],
    members: list[MemberId],
    kept: dict[MemberId, list[TopicPartition]],
    racks: _RackInfo,
    state: _State,
) -> None:
    total = sum(partitions_per_topic.values())
    min_quota, extra = divmod(total, len(members))
    max_quota = min_quota + (1 if extra else 0)
    # Extra slots go to members that already own max_quota partitions (in id order).
    slots = extra
    for member in members:
        owned = kept[member]
        if len(owned) >= max_quota and slots > 0:
            quota = max_quota
            slots -= 1
        else:
            quota = min_quota
        if len(owned) > quota:
            kept[member] = owned[:quota]
        state.load[member] = len(kept[member])
    taken = set(chain.from_iterable(kept[m] for m in members))
    pool = [tp for t, c in partitions_per_topic.items() for tp in _topic_partitions(t, c) if tp not in taken]
    if racks.enabled:
        everyone = dict.fromkeys(partitions_per_topic, members)
        pool = _rack_pass(pool, everyone, racks, state, min_quota)
    given = _water_fill(pool, members, state, min_quota)
    given += _water_fill(pool[given:], members, state, max_quota)
    if given != len(pool):  # pragma: no cover - quotas always add up
        msg = f"sticky quotas left {len(pool) - given} of {total} partitions unassigned"
        raise AssertionError(msg)


def _assign_general(  # noqa: PLR0913, PLR0917 - the algorithm's whole state
    partitions_per_topic: Mapping[Topic, int],
    member_topics: Mapping[MemberId, frozenset[Topic]],
    members: list[MemberId],
    kept: dict[MemberId, list[TopicPartition]],
    owner: Mapping[TopicPartition, MemberId],
    racks: _RackInfo,
    state: _State,
) -> None:
    subscribers: dict[Topic, list[MemberId]] = {t: [] for t in partitions_per_topic}
    for member in members:
        for topic in member_topics[member]:
            subscribers[topic].append(member)
    for member in members:
        state.load[member] = len(kept[member])
    # Topics with the same subscribers form a group; the most constrained groups go first.
    groups: dict[tuple[MemberId, ...], list[Topic]] = {}
    for topic in partitions_per_topic:
        groups.setdefault(tuple(subscribers[topic]), []).append(topic)
    order = sorted(groups.items(), key=lambda item: (len(item[0]), item[1][0]))
    for group_members, topics in order:
        pool = [
            tp for topic in topics for tp in _topic_partitions(topic, partitions_per_topic[topic]) if tp not in owner
        ]
        if racks.enabled:
            pool = _rack_pass(pool, subscribers, racks, state, None)
        _water_fill(pool, group_members, state, None)
    _rebalance(order, kept, racks, state)


def _rebalance(
    groups: list[tuple[tuple[MemberId, ...], list[Topic]]],
    kept: dict[MemberId, list[TopicPartition]],
    racks: _RackInfo,
    state: _State,
) -> None:
    """Move partitions until no subscriber of a topic holds two or more fewer than a holder of it."""
    load = state.load
    moved = True
    while moved:
        moved = False
        for group_members, topics in groups:
            if len(group_members) < 2:  # noqa: PLR2004 - a lone subscriber cannot trade
                continue
            topic_set = set(topics)
            while True:
                receiver = min(group_members, key=lambda m: (load[m], m))
                giver, victim = _pick_victim(group_members, topic_set, kept, racks, state, load[receiver] + 2)
                if giver is None or victim is None:
                    break
                state.new[receiver].append(victim)
                load[giver] -= 1
                load[receiver] += 1
                moved = True


def _pick_victim(  # noqa: PLR0913, PLR0917 - the algorithm's state
    members: Sequence[MemberId],
    topics: set[Topic],
    kept: dict[MemberId, list[TopicPartition]],
    racks: _RackInfo,
    state: _State,
    at_least: int,
) -> tuple[MemberId | None, TopicPartition | None]:
    """The most-loaded member (load >= ``at_least``) holding a partition of ``topics``, and that partition.

    Newly placed partitions leave before kept ones, and rack-mismatched before local ones.
    The partition is removed from its holder.
    """
    load = state.load
    for member in sorted(members, key=lambda m: (-load[m], m)):
        if load[member] < at_least:
            return None, None
        for source in (state.new[member], kept[member]):
            candidates = [i for i in range(len(source) - 1, -1, -1) if source[i].topic in topics]
            if not candidates:
                continue
            if racks.enabled:
                mismatched = [i for i in candidates if not racks.local(member, source[i])]
                candidates = mismatched or candidates
            return member, source.pop(candidates[0])
    return None, None
