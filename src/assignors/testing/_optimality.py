"""The sticky objective as numbers, and checks that hold an assignor to it.

:func:`load_squares` measures level 2 of the sticky family's lexicographic order (as
balanced as possible); :func:`sticky_score` the levels after it: partitions taken from
their current owner, rack-mismatched placements, per-topic spread.
:func:`optimality_problems` compares an assignor with a solver the caller trusts (an
exact one, for instance a MILP); :func:`topic_spread_problems` needs no solver: it finds
swaps that would even the per-topic spread for free.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, NamedTuple

from assignors.testing._battery import settle
from assignors.testing._checks import balance_problems, rack_aware, validity_problems

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

    from assignors._core.model import Assignment, Cluster, MemberId, Subscription, Topic, TopicPartition
    from assignors.testing._battery import AssignorFactory

__all__ = [
    "StickyScore",
    "current_owners",
    "load_squares",
    "optimality_problems",
    "sticky_score",
    "topic_spread",
    "topic_spread_problems",
]

_LEVELS = ("partitions taken from their current owner", "rack-mismatched placements", "per-topic spread")


class StickyScore(NamedTuple):
    """An assignment's cost at levels 3-5 of the sticky objective (lower is better, compared in order)."""

    moved: int
    mismatched: int
    spread: int


def _subscribed(cluster: Cluster, subscription: Subscription) -> set[Topic]:
    return {t for t in subscription.topics if cluster.partition_count(t)}


def current_owners(cluster: Cluster, subscriptions: Mapping[MemberId, Subscription]) -> dict[TopicPartition, MemberId]:
    """Each partition's current owner: its claimer with the strictly highest generation that still subscribes.

    Claims come from ``owned_partitions`` and ``generation_id``; a claim on a partition the
    cluster does not have is ignored; a tie at the highest generation means no owner.
    """
    best: dict[TopicPartition, tuple[int, MemberId | None]] = {}
    for member in sorted(subscriptions):
        subscription = subscriptions[member]
        topics = _subscribed(cluster, subscription)
        for tp in subscription.owned_partitions:
            if tp.topic not in topics or tp.partition >= (cluster.partition_count(tp.topic) or 0):
                continue
            generation = subscription.generation_id
            current = best.get(tp)
            if current is None or generation > current[0]:
                best[tp] = (generation, member)
            elif generation == current[0] and current[1] != member:
                best[tp] = (generation, None)
    return {tp: member for tp, (_, member) in best.items() if member is not None}


def _local(
    cluster: Cluster, subscriptions: Mapping[MemberId, Subscription], member: MemberId, tp: TopicPartition
) -> bool:
    rack = subscriptions[member].rack_id
    return rack is None or rack in cluster.racks_of(tp)


def topic_spread(
    cluster: Cluster,
    subscriptions: Mapping[MemberId, Subscription],
    held: Mapping[MemberId, Collection[TopicPartition]],
) -> int:
    """The sum over topics of (max - min) of each subscriber's count of that topic."""
    counts: dict[Topic, Counter[MemberId]] = {}
    for member, partitions in held.items():
        for tp in partitions:
            counts.setdefault(tp.topic, Counter())[member] += 1
    total = 0
    for topic in sorted({t for s in subscriptions.values() for t in _subscribed(cluster, s)}):
        per_member = [counts.get(topic, Counter())[m] for m, s in subscriptions.items() if topic in s.topics]
        total += max(per_member) - min(per_member)
    return total


def sticky_score(
    cluster: Cluster,
    subscriptions: Mapping[MemberId, Subscription],
    held: Mapping[MemberId, Collection[TopicPartition]],
) -> StickyScore:
    """Levels 3-5 of the sticky objective for ``held`` (member -> its partitions).

    With rack-aware assignment (:func:`rack_aware`), an owned partition on none of its
    owner's racks counts as movable (taking it is free), and a placement counts as
    mismatched when its member has a rack the partition is not on.
    """
    racks = rack_aware(cluster, subscriptions)
    holder = {tp: m for m, partitions in held.items() for tp in partitions}
    moved = 0
    for tp, owner in current_owners(cluster, subscriptions).items():
        if racks and not _local(cluster, subscriptions, owner, tp):
            continue
        moved += holder.get(tp) != owner
    mismatched = sum(not _local(cluster, subscriptions, m, tp) for tp, m in holder.items()) if racks else 0
    return StickyScore(moved, mismatched, topic_spread(cluster, subscriptions, held))


def load_squares(held: Mapping[MemberId, Collection[TopicPartition]]) -> int:
    """Level 2 of the sticky objective: the sum of squared member loads (smaller is more balanced).

    Among valid assignments of one group, the smallest sum belongs to the most even load
    vector; with identical subscriptions, to loads that differ by at most one.

    >>> from assignors import TopicPartition as TP
    >>> load_squares({"a": [TP("t", 0), TP("t", 1)], "b": [TP("t", 2)], "c": []})
    5
    """
    return sum(len(partitions) ** 2 for partitions in held.values())


def optimality_problems(
    make: AssignorFactory,
    cluster: Cluster,
    subscriptions: Mapping[MemberId, Subscription],
    solver: Callable[[Cluster, Mapping[MemberId, Subscription]], Mapping[MemberId, Collection[TopicPartition]]],
    *,
    max_rounds: int = 5,
) -> list[str]:
    """The assignor's settled result is valid, balanced, and scores no worse than ``solver``'s at any level.

    Level 2 compares the sums of squared loads (:func:`load_squares`); levels 3-5, when
    level 2 is equal, :func:`sticky_score`.

    ``solver(cluster, subscriptions)`` returns an assignment the caller trusts to be the
    optimum of the sticky objective (valid and balanced). A cooperative assignor is
    judged after its follow-up rounds (:func:`settle`), against the first round's owners.
    """
    generation = max((s.generation_id for s in subscriptions.values()), default=0) + 1
    result, _ = settle(make, cluster, subscriptions, generation, max_rounds=max_rounds)
    problems = validity_problems(cluster, subscriptions, result) + balance_problems(subscriptions, result)
    if problems:
        return problems
    held = {m: a.partitions for m, a in result.items()}
    optimum = solver(cluster, subscriptions)
    mine, theirs = load_squares(held), load_squares(optimum)
    if mine != theirs:
        if mine > theirs:
            problems.append(f"level 2 (as balanced as possible): squared loads {mine}, the solver reaches {theirs}")
        return problems
    ours = sticky_score(cluster, subscriptions, held)
    best = sticky_score(cluster, subscriptions, optimum)
    for level, name, mine, theirs in zip(range(3, 6), _LEVELS, ours, best, strict=True):
        if mine != theirs:
            if mine > theirs:
                problems.append(f"level {level} ({name}): {mine}, the solver reaches {theirs}")
            break
    return problems


def topic_spread_problems(
    cluster: Cluster, subscriptions: Mapping[MemberId, Subscription], result: Mapping[MemberId, Assignment]
) -> list[str]:
    """No swap of two partitions between two members would lower the per-topic spread for free.

    A swap is free when it keeps every load, takes no partition from a member that owned
    it (``owned_partitions``), gives both to subscribers of their topics and, with
    rack-aware assignment, adds no rack-mismatched placement. Every such swap left undone
    is reported once per pair of members and topics.
    """
    held = {m: list(a.partitions) for m, a in result.items()}
    racks = rack_aware(cluster, subscriptions)
    spread = topic_spread(cluster, subscriptions, held)
    owned = {m: set(s.owned_partitions) for m, s in subscriptions.items()}
    problems: list[str] = []
    members = sorted(held)
    for index, a in enumerate(members):
        for b in members[index + 1 :]:
            reported: set[tuple[Topic, Topic]] = set()
            for p in held[a]:
                for q in held[b]:
                    topics = (p.topic, q.topic)
                    if p.topic == q.topic or topics in reported or p in owned[a] or q in owned[b]:
                        continue
                    if p.topic not in subscriptions[b].topics or q.topic not in subscriptions[a].topics:
                        continue
                    if racks and (
                        _local(cluster, subscriptions, b, p) + _local(cluster, subscriptions, a, q)
                        < _local(cluster, subscriptions, a, p) + _local(cluster, subscriptions, b, q)
                    ):
                        continue
                    swapped = {**held, a: [*(t for t in held[a] if t != p), q], b: [*(t for t in held[b] if t != q), p]}
                    after = topic_spread(cluster, subscriptions, swapped)
                    if after < spread:
                        reported.add(topics)
                        problems.append(
                            f"swapping {p} of {a!r} with {q} of {b!r} lowers the per-topic spread {spread} -> {after}"
                        )
    return problems
