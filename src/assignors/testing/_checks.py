"""Invariant checks: each returns a list of readable problems (empty = the invariant holds)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from assignors._core.metrics import check_assignment
from assignors._core.model import RebalanceProtocol

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from assignors._classic.timeline import Timeline
    from assignors._core.interface import ConsumerPartitionAssignor
    from assignors._core.model import Assignment, Cluster, MemberId, Subscription, TopicPartition

__all__ = [
    "InvariantViolationError",
    "balance_problems",
    "determinism_problems",
    "per_topic_balance_problems",
    "rack_aware",
    "rack_locality_problems",
    "simulation_problems",
    "validity_problems",
]


class InvariantViolationError(AssertionError):
    """An assignor broke an invariant; the message is the readable report."""


def _loads(result: Mapping[MemberId, Assignment]) -> dict[MemberId, int]:
    return {member: len(a.partitions) for member, a in result.items()}


def validity_problems(
    cluster: Cluster, subscriptions: Mapping[MemberId, Subscription], result: Mapping[MemberId, Assignment]
) -> list[str]:
    """Each partition of a subscribed topic with metadata goes to exactly one subscriber; nothing else."""
    return [str(v) for v in check_assignment(cluster, subscriptions, result)]


def balance_problems(
    subscriptions: Mapping[MemberId, Subscription], result: Mapping[MemberId, Assignment]
) -> list[str]:
    """The sticky notion of balance.

    With identical subscriptions, member totals differ by at most one. Otherwise no
    partition of a topic T could move from its owner to a subscriber of T that holds
    two or more fewer partitions.
    """
    loads = _loads(result)
    if not loads:
        return []
    if len({s.topics for s in subscriptions.values()}) <= 1:
        low, high = min(loads.values()), max(loads.values())
        if high - low > 1:
            heavy = min(m for m, n in loads.items() if n == high)
            light = min(m for m, n in loads.items() if n == low)
            return [f"identical subscriptions but {heavy!r} holds {high} partitions and {light!r} only {low}"]
        return []
    subscribers: dict[str, list[MemberId]] = {}
    for member in sorted(subscriptions):
        for topic in subscriptions[member].topics:
            subscribers.setdefault(topic, []).append(member)
    problems: list[str] = []
    for owner in sorted(result):
        for tp in result[owner].partitions:
            for other in subscribers.get(tp.topic, ()):
                if loads[owner] - loads[other] >= 2:  # noqa: PLR2004 - the definition
                    problems.append(
                        f"{tp} could move from {owner!r} ({loads[owner]} partitions) "
                        f"to subscriber {other!r} ({loads[other]} partitions)"
                    )
                    break
    return problems


def per_topic_balance_problems(
    subscriptions: Mapping[MemberId, Subscription], result: Mapping[MemberId, Assignment]
) -> list[str]:
    """Range's guarantee: per topic, the subscribers' partition counts differ by at most one."""
    problems: list[str] = []
    per_topic: dict[str, Counter[MemberId]] = {}
    for member, assignment in result.items():
        for tp in assignment.partitions:
            per_topic.setdefault(tp.topic, Counter())[member] += 1
    for topic in sorted(per_topic):
        counts = per_topic[topic]
        loads = [counts.get(m, 0) for m, s in subscriptions.items() if topic in s.topics]
        if max(loads) - min(loads) > 1:
            problems.append(
                f"topic {topic!r}: subscribers hold between {min(loads)} and {max(loads)} of its partitions"
            )
    return problems


def rack_aware(cluster: Cluster, subscriptions: Mapping[MemberId, Subscription]) -> bool:
    """Kafka's group-wide rule (KIP-881) for the sticky assignors.

    True when some member has a rack that some subscribed partition is on, and not every
    subscribed partition is on every rack. As in Kafka (``AbstractStickyAssignor.RackInfo``),
    every member's rack counts, also one that subscribes to no existing topic.
    """
    topics = sorted({t for s in subscriptions.values() for t in s.topics if cluster.partition_count(t)})
    member_racks = {s.rack_id for s in subscriptions.values() if s.rack_id}
    layouts = [cluster.racks_of(tp) for topic in topics for tp in cluster.partitions(topic)]
    every = frozenset().union(*layouts)
    return bool(member_racks & every) and any(layout != every for layout in layouts)


def rack_locality_problems(
    cluster: Cluster, subscriptions: Mapping[MemberId, Subscription], result: Mapping[MemberId, Assignment]
) -> list[str]:
    """No trade that keeps every load would add a rack-local placement (when :func:`rack_aware`).

    A partition is mismatched when its holder has a rack the partition is not on. Reported:
    a mismatched partition that a rack-local subscriber could swap for one of its own
    mismatched partitions (keeping the sticky balance), or, with identical subscriptions,
    one that could move to a rack-local member holding one fewer (the loads trade places).
    """
    if not rack_aware(cluster, subscriptions):
        return []
    loads = _loads(result)
    topics = {m: {t for t in s.topics if cluster.partition_count(t)} for m, s in subscriptions.items()}
    identical = len({frozenset(t) for t in topics.values() if t}) == 1
    lowest: dict[str, int] = {}
    for member in sorted(topics):
        for topic in topics[member]:
            lowest[topic] = min(lowest.get(topic, loads[member]), loads[member])

    def local(member: MemberId, tp: TopicPartition) -> bool:
        rack = subscriptions[member].rack_id
        return rack is None or rack in cluster.racks_of(tp)

    def may_hold(member: MemberId, tp: TopicPartition) -> bool:
        return tp.topic in topics[member] and (identical or lowest[tp.topic] >= loads[member] - 1)

    mismatched = {m: [tp for tp in a.partitions if not local(m, tp)] for m, a in sorted(result.items())}
    problems: list[str] = []
    for a, p, b in [(a, p, b) for a, held in mismatched.items() for p in held for b in sorted(result)]:
        if b == a or not local(b, p) or not may_hold(b, p):
            continue
        if identical and loads[b] == loads[a] - 1:
            problems.append(f"{p} is off the rack of {a!r}; rack-local {b!r} holds one fewer")
        swaps = [q for q in mismatched[b] if may_hold(a, q)]
        if swaps:
            problems.append(f"{p} of {a!r} and {swaps[0]} of {b!r} are both off-rack; {b!r} is local to {p}")
    return problems


def determinism_problems(
    make_assignor: Callable[[], ConsumerPartitionAssignor],
    cluster: Cluster,
    subscriptions: Mapping[MemberId, Subscription],
    permuted: Mapping[MemberId, Subscription] | None = None,
    *,
    reordered_cluster: Cluster | None = None,
) -> list[str]:
    """The same input gives the same output: on a fresh instance, again, and in another insertion order.

    Args:
        make_assignor: a factory of fresh assignors, such as the class.
        cluster: topic metadata.
        subscriptions: the members.
        permuted: the same members inserted in another order (see :meth:`Group.shuffled`).
        reordered_cluster: the same cluster with its topics and racks inserted in another order;
            used with ``permuted`` (or with ``subscriptions`` when that is None).
    """
    first = make_assignor().assign(cluster, subscriptions)
    problems: list[str] = []
    again = make_assignor().assign(cluster, subscriptions)
    if again != first:
        problems.append("two fresh instances gave different assignments for the same input")
    if permuted is not None or reordered_cluster is not None:
        other = make_assignor().assign(reordered_cluster or cluster, permuted or subscriptions)
        if other != first:
            changed = sorted(m for m in first if other.get(m) != first[m])
            what = "topics" if permuted is None else "members" if reordered_cluster is None else "members and topics"
            problems.append(f"reordering the {what} changed the assignment of {changed}")
    return problems


def simulation_problems(timeline: Timeline) -> list[str]:
    """The group-protocol invariants over a simulator timeline.

    - No partition is owned by two members at once: what a member adds in a round was
      owned by no other member when the round's members joined (COOPERATIVE members still
      own what they will revoke after the assignment), and no round ends with a partition
      owned twice.
    - Once a rebalance ends, every partition of a subscribed topic is owned.
    - A COOPERATIVE group never revokes a partition and then gives it back to the same
      member in the next round of the same rebalance. (While some member is still EAGER,
      as in a rolling upgrade, that member revokes everything every round and the group
      behaves as EAGER: partitions may come back.)
    - Every round creates the next generation: generations go up by one.
    """
    problems: list[str] = []
    generation: int | None = None
    for rebalance in timeline.rebalances:
        where = f"t={rebalance.at:g}s ({rebalance.cause})"
        previous_revoked: dict[MemberId, tuple[TopicPartition, ...]] = {}
        for number, r in enumerate(rebalance.rounds, 1):
            at = f"{where} round {number}"
            if generation is not None and r.generation != generation + 1:
                problems.append(f"{at}: generation {r.generation} follows {generation}")
            generation = r.generation
            holder = {tp: m for m, owned in r.owned_at_join.items() for tp in owned}
            cooperative = all(p is RebalanceProtocol.COOPERATIVE for p in r.protocols.values())
            for member in sorted(r.added):
                problems.extend(
                    f"{at}: {tp} added to {member!r} while {holder[tp]!r} still owns it"
                    for tp in r.added[member]
                    if holder.get(tp, member) != member
                )
                if cooperative:
                    back = set(previous_revoked.get(member, ())) & set(r.added[member])
                    if back:
                        problems.append(f"{at}: {member!r} revoked {sorted(map(str, back))} and got them back")
            counts = Counter(tp for owned in r.assignment.values() for tp in owned.partitions)
            problems.extend(f"{at}: {tp} owned by {n} members" for tp, n in sorted(counts.items()) if n > 1)
            previous_revoked = r.revoked
        if rebalance.rounds and rebalance.rounds[-1].unowned:
            unowned = [str(tp) for tp in rebalance.rounds[-1].unowned]
            problems.append(f"{where}: the group settled with {unowned} owned by nobody")
    return problems
