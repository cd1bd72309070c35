"""Invariant checks: each returns a list of readable problems (empty = the invariant holds)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from assignors.metrics import check_assignment

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from assignors._interface import ConsumerPartitionAssignor
    from assignors._model import Assignment, Cluster, MemberId, Subscription

__all__ = [
    "InvariantViolationError",
    "balance_problems",
    "determinism_problems",
    "per_topic_balance_problems",
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


def determinism_problems(
    make_assignor: Callable[[], ConsumerPartitionAssignor],
    cluster: Cluster,
    subscriptions: Mapping[MemberId, Subscription],
    permuted: Mapping[MemberId, Subscription] | None = None,
) -> list[str]:
    """The same input gives the same output: on a fresh instance, again, and in another member insertion order."""
    first = make_assignor().assign(cluster, subscriptions)
    problems: list[str] = []
    again = make_assignor().assign(cluster, subscriptions)
    if again != first:
        problems.append("two fresh instances gave different assignments for the same input")
    if permuted is not None:
        other = make_assignor().assign(cluster, permuted)
        if other != first:
            changed = sorted(m for m in first if other.get(m) != first[m])
            problems.append(f"reordering the members changed the assignment of {changed}")
    return problems
