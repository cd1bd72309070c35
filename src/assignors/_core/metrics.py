"""Metrics of assignments; :mod:`assignors.metrics` re-exports them (see its docs)."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from operator import itemgetter
from typing import TypeAlias

from assignors._core.load import (
    CALIBRATION_SETTINGS,
    CLIENT_PAUSE_FACTORS,
    DEFAULT_HEARTBEAT_SECONDS,
    DEFAULT_PAUSE_MODEL,
    DEFAULT_REBALANCE_SECONDS,
    KAFKA_DEFAULT,
    KAFKA_DEFAULT_SETTINGS,
    MEASURED,
    InvalidWeightError,
    PartitionWeights,
    PauseModel,
    PauseProtocol,
    WeightedLoad,
    Weights,
    leader_share,
    moved_partitions,
    pause_partition_seconds,
    rebalance_pause,
    rejoined_partitions,
    restart_pause,
    topic_spreads,
    weighted_load,
)
from assignors._core.model import (
    Assignment,
    Cluster,
    MemberId,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
    topic_partitions,
    unchecked_tp,
)

__all__ = [
    "CALIBRATION_SETTINGS",
    "CLIENT_PAUSE_FACTORS",
    "DEFAULT_HEARTBEAT_SECONDS",
    "DEFAULT_PAUSE_MODEL",
    "DEFAULT_REBALANCE_SECONDS",
    "KAFKA_DEFAULT",
    "KAFKA_DEFAULT_SETTINGS",
    "MEASURED",
    "AssignmentLike",
    "Balance",
    "InvalidWeightError",
    "Movement",
    "PartitionWeights",
    "PauseModel",
    "PauseProtocol",
    "Violation",
    "WeightedLoad",
    "Weights",
    "balance",
    "check_assignment",
    "leader_share",
    "moved_weight",
    "movement",
    "owners",
    "pause_partition_seconds",
    "rebalance_pause",
    "rejoined_partitions",
    "restart_pause",
    "topic_spreads",
    "weighted_load",
]

AssignmentLike: TypeAlias = Mapping[MemberId, Assignment | Iterable[TopicPartition]]


def _partitions_of(value: Assignment | Iterable[TopicPartition]) -> Iterable[TopicPartition]:
    return value.partitions if isinstance(value, Assignment) else value


def _sequence(value: Assignment | Iterable[TopicPartition]) -> Sequence[TopicPartition]:
    """The partitions as a sequence, copied only when given as a one-shot iterable."""
    if type(value) is tuple:  # the common case first: no further type check
        return value
    partitions = _partitions_of(value)
    return partitions if isinstance(partitions, tuple | list) else list(partitions)


def owners(assignment: AssignmentLike) -> dict[TopicPartition, MemberId]:
    """Map each assigned partition to its member (the last one, if an invalid input lists it twice)."""
    result: dict[TopicPartition, MemberId] = {}
    for member, value in assignment.items():
        result.update(dict.fromkeys(_partitions_of(value), member))
    return result


@dataclass(frozen=True, slots=True)
class Balance:
    """How evenly partitions are spread over members.

    Attributes:
        members: number of members (empty ones included).
        partitions: number of assigned partitions.
        min_load: fewest partitions any member holds (0 when there are no members).
        max_load: most partitions any member holds.
        spread: ``max_load - min_load``; 0 or 1 is perfectly balanced.
        stddev: population standard deviation of the loads.
        topic_spread: the worst topic's spread: over topics, the largest ``max - min`` of its
            subscribers' counts of that topic's partitions (see :func:`topic_spreads`).
        topic_spread_sum: the sum of every topic's spread (what the sticky family minimises).
        worst_topic: the topic with the largest spread (the first by name on a tie; None
            when nothing is subscribed).
    """

    members: int
    partitions: int
    min_load: int
    max_load: int
    spread: int
    stddev: float
    topic_spread: int = 0
    topic_spread_sum: int = 0
    worst_topic: str | None = None


def balance(
    assignment: AssignmentLike, subscriptions: Mapping[MemberId, Subscription | Collection[str]] | None = None
) -> Balance:
    """Measure the balance of an assignment, overall and per topic.

    ``subscriptions`` says who subscribes to which topic, for the per-topic spread; without
    it every member counts as a subscriber of every assigned topic (see :func:`topic_spreads`).

    >>> from assignors import TopicPartition as TP
    >>> balance({"a": [TP("t", 0), TP("t", 1)], "b": [], "c": [TP("t", 2)]})  # doctest: +NORMALIZE_WHITESPACE
    Balance(members=3, partitions=3, min_load=0, max_load=2, spread=2, stddev=0.816496580927726,
            topic_spread=2, topic_spread_sum=2, worst_topic='t')
    """
    sequences = [value if type(value) is tuple else _sequence(value) for value in assignment.values()]
    loads = list(map(len, sequences))
    if not loads:
        return Balance(0, 0, 0, 0, 0, 0.0)
    total = sum(loads)
    mean = total / len(loads)
    variance = math.fsum((load - mean) ** 2 for load in loads) / len(loads)  # exact: independent of member order
    low, high = min(loads), max(loads)
    by_member = dict(zip(assignment.keys(), sequences, strict=True))
    if subscriptions is not None and subscriptions.keys() == by_member.keys():
        spreads = _spreads_by_class(by_member, subscriptions)
    else:
        spreads = topic_spreads(by_member, subscriptions)
    worst = max(spreads, key=spreads.__getitem__, default=None)  # first topic by name among the largest
    return Balance(
        len(loads),
        total,
        low,
        high,
        high - low,
        math.sqrt(variance),
        spreads[worst] if worst is not None else 0,
        sum(spreads.values()),
        worst,
    )


def _spreads_by_class(
    assignment: Mapping[MemberId, Sequence[TopicPartition]],
    subscriptions: Mapping[MemberId, Subscription | Collection[str]],
) -> dict[str, int]:
    """:func:`topic_spreads` of members that all have a subscription, one topic list at a time.

    Members of one topic that hold nothing else are counted by their lengths alone.
    """
    classes: dict[tuple[str, ...], list[Sequence[TopicPartition]]] = {}
    for member, partitions in assignment.items():
        subscription = subscriptions[member]
        names = subscription.topics if isinstance(subscription, Subscription) else tuple(subscription)
        classes.setdefault(names, []).append(partitions)
    held: dict[str, list[int]] = {}
    for names, lists in classes.items():
        if len(names) == 1 and set(map(_topic_of, chain.from_iterable(lists))) <= set(names):
            held.setdefault(names[0], []).extend(map(len, lists))
            continue
        for partitions in lists:
            topics = list(map(_topic_of, partitions))
            for topic in set(topics).union(names):
                held.setdefault(topic, []).append(topics.count(topic))
    return {topic: max(counts) - min(counts) for topic, counts in sorted(held.items())}


@dataclass(frozen=True, slots=True)
class Movement:
    """What changed between a previous assignment A and the next one B.

    Attributes:
        moved: partitions owned in A by a member still present that a different member owns
            in B: the avoidable churn.
        orphaned: partitions whose owner in A has left the group.
        retained: partitions owned by the same member in A and B.
        released: partitions owned in A by a member still present that nobody owns in B
            (the topic is gone or no longer subscribed, or a cooperative round withholds it).
        retained_revoking: of ``retained``, the partitions kept by a member that also gives some up (moved or
            released), counted only when another member present in A and B gives up none. Under COOPERATIVE
            (KIP-429) the members that give something up rejoin a second round at once and the others on their
            next heartbeat (Kafka's ``ConsumerCoordinator.onJoinComplete`` requests the rejoin of a member that
            revoked); a client that stops fetching while it rejoins (kafka-python) keeps these waiting until then
            (:func:`rebalance_pause`'s ``retained_revoking``). When every member present gives something up, they
            all rejoin at once and nobody waits.
    """

    moved: int
    orphaned: int
    retained: int
    released: int
    retained_revoking: int = 0

    def revoked(self, protocol: RebalanceProtocol) -> int:
        """Partitions the surviving members had to give up under ``protocol``.

        EAGER revokes everything a survivor owned; COOPERATIVE only what it loses.
        """
        if protocol is RebalanceProtocol.EAGER:
            return self.moved + self.retained + self.released
        return self.moved + self.released


def movement(
    before: AssignmentLike, after: AssignmentLike, members_after: Collection[MemberId] | None = None
) -> Movement:
    """Compare two assignments of one group.

    Args:
        before: the previous assignment A.
        after: the next assignment B.
        members_after: the members present at B; by default the members of ``after``.

    >>> from assignors import TopicPartition as TP
    >>> a = {"x": [TP("t", 0), TP("t", 1)], "y": [TP("t", 2)], "z": [TP("t", 3)]}
    >>> b = {"x": [TP("t", 0)], "y": [TP("t", 1), TP("t", 2), TP("t", 3)]}
    >>> movement(a, b)
    Movement(moved=1, orphaned=1, retained=2, released=0, retained_revoking=1)

    ``x`` gives ``t-1`` up and keeps ``t-0`` while ``y`` gives nothing up: ``t-0`` is ``retained_revoking``.
    """
    present = after.keys() if members_after is None else members_after
    if not isinstance(present, Collection) or isinstance(present, str):
        present = set(present)
    new_owner = owners(after)
    moved = orphaned = retained = released = revoking_kept = 0
    steady = False  # a member present in A and B that gives nothing up
    for member, value in before.items():
        partitions = value if type(value) is tuple else _sequence(value)
        if member not in present:
            orphaned += len(partitions)
            continue
        now = list(map(new_owner.get, partitions))  # counted in C below
        kept, lost = now.count(member), now.count(None)
        retained += kept
        released += lost
        moved += len(now) - kept - lost
        if kept == len(now):
            steady = True
        else:
            revoking_kept += kept
    return Movement(moved, orphaned, retained, released, revoking_kept if steady else 0)


def moved_weight(
    before: AssignmentLike,
    after: AssignmentLike,
    weights: Weights,
    *,
    members_after: Collection[MemberId] | None = None,
    default: float = 0.0,
) -> float:
    """The weight of what moved from A to B: the partitions :func:`movement` counts as ``moved`` (owned in A by a
    member still present, owned by another member in B), each weighed as :func:`weighted_load` weighs it.

    Sums are exact (``math.fsum``): the figure does not depend on the order of members or partitions.

    Raises:
        InvalidWeightError: a weight (or ``default``) that is negative, NaN or infinite, naming its topic and
            partition.

    >>> from assignors import TopicPartition as TP
    >>> a = {"x": [TP("hot", 0), TP("cold", 0)], "y": [TP("cold", 1)], "z": [TP("cold", 2)]}
    >>> b = {"x": [TP("cold", 0)], "y": [TP("hot", 0), TP("cold", 1), TP("cold", 2)]}
    >>> moved_weight(a, b, {("hot", None): 10.0, ("cold", None): 1.0})
    10.0
    """
    weighted_load({}, weights, default=default)  # checks every weight and the default, naming a bad one
    parts: list[float] = []
    for tp in moved_partitions(before, after, members_after):
        weight = weights.get((tp[0], tp[1]))
        parts.append(weights.get((tp[0], None), default) if weight is None else weight)
    return math.fsum(parts)


@dataclass(frozen=True, slots=True)
class Violation:
    """One way an assignment breaks validity.

    Attributes:
        kind: ``"unknown-member"``, ``"missing-member"``, ``"unknown-partition"``,
            ``"not-subscribed"``, ``"duplicate"`` or ``"unassigned"``.
        message: a readable sentence naming the member and partition.
        member: the member concerned, when there is one.
        partition: the partition concerned, when there is one.
    """

    kind: str
    message: str
    member: MemberId | None = None
    partition: TopicPartition | None = None

    def __str__(self) -> str:
        return self.message


def check_assignment(
    cluster: Cluster, subscriptions: Mapping[MemberId, Subscription], assignment: AssignmentLike
) -> list[Violation]:
    """Every way ``assignment`` is not a valid assignment of ``subscriptions`` on ``cluster``.

    Valid means: one entry per member and no other; every partition of a subscribed topic
    with metadata goes to exactly one member, which subscribes to its topic; nothing else
    is assigned. Returns the violations in a deterministic order; an empty list means valid.
    """
    sequences = {  # one-shot iterables: read once (tuples, the common case, without a call)
        member: value if type(value) is tuple else _sequence(value) for member, value in assignment.items()
    }
    if _plainly_valid(cluster, subscriptions, sequences):
        return []
    assignment = sequences
    violations = [
        Violation("unknown-member", f"member {member!r} is assigned but did not subscribe", member)
        for member in sorted(set(assignment) - set(subscriptions))
    ]
    violations.extend(
        Violation("missing-member", f"member {member!r} has no entry in the assignment", member)
        for member in sorted(set(subscriptions) - set(assignment))
    )
    owner: dict[TopicPartition, MemberId] = {}
    for member in sorted(assignment):
        violations.extend(_member_violations(cluster, subscriptions.get(member), member, assignment[member], owner))
    counts = cluster.partitions_per_topic
    for topic in sorted({topic for s in subscriptions.values() for topic in s.topics}):
        for partition in range(counts.get(topic, 0)):
            tp = unchecked_tp(topic, partition)
            if tp not in owner:
                violations.append(
                    Violation("unassigned", f"{tp} of subscribed topic {topic!r} is not assigned", None, tp)
                )
    return violations


def _plainly_valid(
    cluster: Cluster,
    subscriptions: Mapping[MemberId, Subscription],
    assignment: Mapping[MemberId, Sequence[TopicPartition]],
) -> bool:
    """True when ``assignment`` is valid, decided with C-level set operations.

    Members with one topic list are checked together. False means "look closer":
    ``check_assignment`` then lists the violations one by one.
    """
    if assignment.keys() != subscriptions.keys():
        return False
    by_topics: dict[tuple[str, ...], list[Sequence[TopicPartition]]] = {}
    for member, value in assignment.items():
        by_topics.setdefault(subscriptions[member].topics, []).append(value)
    owned: set[TopicPartition] = set()
    total = 0
    for topics, lists in by_topics.items():
        partitions = list(chain.from_iterable(lists))
        total += len(partitions)
        owned.update(partitions)
        if not set(map(_topic_of, partitions)).issubset(topics):
            return False
    if total != len(owned):  # a partition assigned twice
        return False
    counts = cluster.partitions_per_topic
    expected: set[TopicPartition] = set()
    for topic in {topic for topics in by_topics for topic in topics}:
        count = counts.get(topic, 0)
        expected.update(_partition_set(topic, count) if count <= _SET_CACHED else topic_partitions(topic, count))
    return owned == expected


_SET_CACHED = 1024  # topics of at most this many partitions keep their set: 512 such sets stay under ~64 MiB


@lru_cache(maxsize=512)
def _partition_set(topic: str, count: int) -> frozenset[TopicPartition]:
    """The partitions ``0..count-1`` of ``topic``, as a set built once: the replay checks every rebalance's assignment
    against the same topics (a set's hashes are copied, not computed again, when another set takes it in)."""
    return frozenset(topic_partitions(topic, count))


_topic_of = itemgetter(0)


def _member_violations(
    cluster: Cluster,
    subscription: Subscription | None,
    member: MemberId,
    partitions: Assignment | Iterable[TopicPartition],
    owner: dict[TopicPartition, MemberId],
) -> list[Violation]:
    """Violations in one member's partitions; records each partition's owner in ``owner``."""
    violations: list[Violation] = []
    subscribed = set(subscription.topics) if subscription is not None else None
    counts = cluster.partitions_per_topic
    for tp in _partitions_of(partitions):
        if tp.partition >= counts.get(tp.topic, 0):
            message = f"{tp} assigned to {member!r} does not exist in the cluster"
            violations.append(Violation("unknown-partition", message, member, tp))
        elif subscribed is not None and tp.topic not in subscribed:
            message = f"{tp} assigned to {member!r}, which does not subscribe to {tp.topic!r}"
            violations.append(Violation("not-subscribed", message, member, tp))
        previous = owner.get(tp)
        if previous is not None:
            violations.append(Violation("duplicate", f"{tp} assigned to both {previous!r} and {member!r}", member, tp))
        owner[tp] = member
    return violations
