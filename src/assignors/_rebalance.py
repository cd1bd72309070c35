"""EAGER and COOPERATIVE rebalance handling around any assignor.

:func:`rebalance` runs one group rebalance the way the members and the leader of a Kafka
consumer group do it: under EAGER every member gives up all it owns before joining and
one round assigns everything; under COOPERATIVE members keep what they own, the leader's
assignment may withhold partitions that change owner, members revoke what they lost and
rejoin, and rounds repeat until nothing is revoked.

>>> from assignors import Cluster, CooperativeStickyAssignor, Subscription, TopicPartition as TP
>>> subs = {m: Subscription(["t"]) for m in ("a", "b")}
>>> owned = {"a": [TP("t", 0), TP("t", 1), TP("t", 2), TP("t", 3)]}
>>> result = rebalance(CooperativeStickyAssignor(), Cluster({"t": 4}), subs, owned, generation=1)
>>> len(result.rounds), result.generation
(2, 3)
>>> [(r.revoked["a"], r.added["b"]) for r in result.rounds]  # doctest: +NORMALIZE_WHITESPACE
[((TopicPartition(topic='t', partition=2), TopicPartition(topic='t', partition=3)), ()),
 ((), (TopicPartition(topic='t', partition=2), TopicPartition(topic='t', partition=3)))]
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assignors._errors import (
    AssignorError,
    CooperativeViolationError,
    InconsistentGroupProtocolError,
    InvalidSubscriptionError,
)
from assignors._model import DEFAULT_GENERATION, Assignment, RebalanceProtocol

if TYPE_CHECKING:
    from collections.abc import Iterable

    from assignors._interface import ConsumerPartitionAssignor
    from assignors._model import Cluster, MemberId, Subscription, TopicPartition

__all__ = [
    "BROKER_TIE_ORDER",
    "MemberUpdate",
    "RebalanceResult",
    "Round",
    "choose_protocol",
    "rebalance",
    "receive_assignment",
    "revoke_before_join",
    "select_assignor",
    "validate_cooperative_assignment",
]

_BUILT_IN = frozenset({"range", "roundrobin", "sticky", "cooperative-sticky"})

BROKER_TIE_ORDER: tuple[str, ...] = ("sticky", "range", "roundrobin", "cooperative-sticky")
"""How a Kafka broker breaks a tie between built-in names (its HashMap order, reference section 11)."""


def choose_protocol(assignors: Iterable[ConsumerPartitionAssignor]) -> RebalanceProtocol:
    """The protocol of a consumer configured with ``assignors``: the highest that all of them support.

    Raises:
        InvalidSubscriptionError: no assignors, or no protocol they all support.

    >>> from assignors import CooperativeStickyAssignor, RangeAssignor
    >>> choose_protocol([CooperativeStickyAssignor()]).name
    'COOPERATIVE'
    >>> choose_protocol([CooperativeStickyAssignor(), RangeAssignor()]).name
    'EAGER'
    """
    common: set[RebalanceProtocol] | None = None
    names: list[str] = []
    for assignor in assignors:
        names.append(assignor.name)
        supported = set(assignor.supported_protocols)
        common = supported if common is None else common & supported
    if common is None:
        msg = "a consumer needs at least one assignor"
        raise InvalidSubscriptionError(msg)
    if not common:
        msg = f"assignors {names} support no rebalance protocol in common"
        raise InvalidSubscriptionError(msg)
    return max(common)


def select_assignor(preferences: Mapping[MemberId, Sequence[str]]) -> str:
    """The assignor the group coordinator picks from every member's ordered preferences.

    Candidates are the names every member offers; each member votes for its first
    candidate; the most votes win. Ties break as Kafka brokers do for built-in names
    (:data:`BROKER_TIE_ORDER`: sticky, range, roundrobin, cooperative-sticky), then by name
    for other assignors, so the choice never depends on member or dict order.

    Raises:
        InconsistentGroupProtocolError: no member, or no name every member offers; the
            message names a member that shares nothing with the others.

    >>> select_assignor({"a": ["cooperative-sticky", "range"], "b": ["range", "cooperative-sticky"]})
    'range'
    >>> select_assignor({"a": ["cooperative-sticky", "range"], "b": ["cooperative-sticky"]})
    'cooperative-sticky'
    """
    if not preferences:
        msg = "a group needs at least one member to select an assignor"
        raise InconsistentGroupProtocolError(msg, member="")
    members = sorted(preferences)
    candidates = set(preferences[members[0]])
    for member in members[1:]:
        offered = set(preferences[member])
        if not candidates & offered:
            msg = (
                f"member {member!r} offers {list(preferences[member])}, which shares no assignor with the "
                f"group's candidates {sorted(candidates)} (INCONSISTENT_GROUP_PROTOCOL)"
            )
            raise InconsistentGroupProtocolError(msg, member=member)
        candidates &= offered
    votes: dict[str, int] = {}
    for member in members:
        choice = next(name for name in preferences[member] if name in candidates)
        votes[choice] = votes.get(choice, 0) + 1
    most = max(votes.values())
    return min((name for name, count in votes.items() if count == most), key=_tie_rank)


def _tie_rank(name: str) -> tuple[int, str]:
    order = BROKER_TIE_ORDER.index(name) if name in BROKER_TIE_ORDER else len(BROKER_TIE_ORDER)
    return order, name


def revoke_before_join(
    protocol: RebalanceProtocol, owned: Iterable[TopicPartition], topics: Iterable[str]
) -> tuple[TopicPartition, ...]:
    """What a member gives up before it (re)joins (Kafka's ``onJoinPrepare``).

    EAGER: everything it owns. COOPERATIVE: only partitions of topics it no longer
    subscribes to.
    """
    if protocol is RebalanceProtocol.EAGER:
        return tuple(owned)
    subscribed = set(topics)
    return tuple(tp for tp in owned if tp.topic not in subscribed)


@dataclass(frozen=True, slots=True)
class MemberUpdate:
    """What a member does when the leader's assignment reaches it (Kafka's ``onJoinComplete``).

    Attributes:
        revoked: partitions it owned and was not assigned: it stops consuming them.
        added: partitions assigned that it did not own: it starts consuming them.
        owned: what it owns afterwards (the assignment, minus nothing).
        rejoin: it must rejoin at once: COOPERATIVE and it revoked something, or (either
            protocol) the assignment holds a topic it does not subscribe to.
    """

    revoked: tuple[TopicPartition, ...]
    added: tuple[TopicPartition, ...]
    owned: tuple[TopicPartition, ...]
    rejoin: bool


def receive_assignment(
    protocol: RebalanceProtocol,
    owned: Iterable[TopicPartition],
    assignment: Assignment | Iterable[TopicPartition],
    topics: Iterable[str],
) -> MemberUpdate:
    """A member's reaction to its assignment, given what it owned when it joined.

    Under EAGER the member owned nothing when it joined (it revoked everything first), so
    everything assigned is added; under COOPERATIVE it revokes ``owned - assigned`` and
    must rejoin if that is not empty (the second rebalance of the protocol).

    >>> from assignors import TopicPartition as TP
    >>> update = receive_assignment(RebalanceProtocol.COOPERATIVE, [TP("t", 0), TP("t", 1)], [TP("t", 0)], ["t"])
    >>> update.revoked, update.added, update.rejoin
    ((TopicPartition(topic='t', partition=1),), (), True)
    """
    assigned = assignment.partitions if isinstance(assignment, Assignment) else tuple(assignment)
    revoked, added = _diff(tuple(owned), assigned)
    subscribed = set(topics)
    mismatch = any(tp.topic not in subscribed for tp in assigned)
    rejoin = mismatch or (protocol is RebalanceProtocol.COOPERATIVE and bool(revoked))
    return MemberUpdate(revoked, added, assigned, rejoin)


def validate_cooperative_assignment(
    owned: Mapping[MemberId, Iterable[TopicPartition]], assigned: Mapping[MemberId, Assignment]
) -> None:
    """Check that no partition goes to a member while another member still owns it.

    Raises:
        CooperativeViolationError: naming the partition and both members.
    """
    owner: dict[TopicPartition, MemberId] = {}
    for member in sorted(owned):
        for tp in owned[member]:
            owner.setdefault(tp, member)
    for member in sorted(assigned):
        for tp in assigned[member].partitions:
            previous = owner.get(tp)
            if previous is not None and previous != member:
                msg = f"{tp} is assigned to {member!r} while {previous!r} still owns it"
                raise CooperativeViolationError(msg, partition=str(tp), previous_owner=previous, new_owner=member)


@dataclass(frozen=True, slots=True)
class Round:
    """One JoinGroup/SyncGroup round of a rebalance.

    Attributes:
        generation: the generation this round created.
        assignment: what the leader assigned, per member.
        revoked: per member, what it gave up in this round (EAGER: before joining, all it
            owned; COOPERATIVE: after the assignment, what it owned and was not assigned).
        added: per member, what it gained.
        assign_seconds: time spent in the assignor's ``assign``.
    """

    generation: int
    assignment: dict[MemberId, Assignment]
    revoked: dict[MemberId, tuple[TopicPartition, ...]]
    added: dict[MemberId, tuple[TopicPartition, ...]]
    assign_seconds: float

    @property
    def revoked_count(self) -> int:
        return sum(len(p) for p in self.revoked.values())


@dataclass(frozen=True, slots=True)
class RebalanceResult:
    """The rounds of one rebalance and where it ended."""

    protocol: RebalanceProtocol
    rounds: tuple[Round, ...]

    @property
    def generation(self) -> int:
        return self.rounds[-1].generation

    @property
    def assignment(self) -> dict[MemberId, Assignment]:
        return self.rounds[-1].assignment

    @property
    def assign_seconds(self) -> float:
        return sum(r.assign_seconds for r in self.rounds)


def rebalance(  # noqa: PLR0913 - keyword-only knobs
    assignor: ConsumerPartitionAssignor,
    cluster: Cluster,
    subscriptions: Mapping[MemberId, Subscription],
    owned: Mapping[MemberId, Sequence[TopicPartition]],
    *,
    generation: int,
    protocol: RebalanceProtocol | None = None,
    max_rounds: int = 10,
) -> RebalanceResult:
    """Run one rebalance of a group with ``assignor`` until it settles.

    Args:
        assignor: the group's selected assignor (the leader's instance).
        cluster: topic metadata.
        subscriptions: each member's subscription (topics, rack, instance id, user data);
            its ``owned_partitions`` and ``generation_id`` are replaced by the ones below,
            as each member reports them.
        owned: what each member owned before the rebalance (absent: nothing).
        generation: the group's current generation (-1 for a new group); every round
            creates the next one.
        protocol: EAGER or COOPERATIVE; by default the assignor's preferred one.
        max_rounds: a COOPERATIVE rebalance that still revokes after this many rounds
            raises (a broken assignor would otherwise loop).

    Raises:
        AssignorError: from the assignor; ``CooperativeViolationError`` when an assignor
            that is not built in hands over a partition another member still owns.
    """
    chosen = protocol if protocol is not None else choose_protocol([assignor])
    if chosen not in assignor.supported_protocols:
        msg = f"assignor {assignor.name!r} does not support the {chosen.name} protocol"
        raise InvalidSubscriptionError(msg)
    holding: dict[MemberId, tuple[TopicPartition, ...]] = {}
    for member, subscription in subscriptions.items():
        had = tuple(owned.get(member, ()))
        if chosen is RebalanceProtocol.COOPERATIVE and had:
            topics = set(subscription.topics)
            had = tuple(tp for tp in had if tp.topic in topics)  # revoked before joining
        holding[member] = had
    rounds: list[Round] = []
    check = chosen is RebalanceProtocol.COOPERATIVE and assignor.name not in _BUILT_IN
    while True:
        reported = generation if generation >= 0 else DEFAULT_GENERATION
        joined = {m: s._rejoined(holding[m], reported) for m, s in subscriptions.items()}  # noqa: SLF001
        start = time.perf_counter()
        assignment = assignor.assign(cluster, joined)
        elapsed = time.perf_counter() - start
        generation = max(generation, 0) + 1
        if check:
            validate_cooperative_assignment(holding, assignment)
        revoked, added = _changes(chosen, holding, owned, assignment, first=not rounds)
        rounds.append(Round(generation, assignment, revoked, added, elapsed))
        if chosen is RebalanceProtocol.EAGER or not any(revoked.values()):
            return RebalanceResult(chosen, tuple(rounds))
        if len(rounds) >= max_rounds:
            msg = f"assignor {assignor.name!r} still revokes partitions after {max_rounds} cooperative rounds"
            raise AssignorError(msg)
        holding = {m: assignment[m].partitions for m in subscriptions}


def _changes(
    protocol: RebalanceProtocol,
    holding: Mapping[MemberId, tuple[TopicPartition, ...]],
    owned_before: Mapping[MemberId, Sequence[TopicPartition]],
    assignment: Mapping[MemberId, Assignment],
    *,
    first: bool,
) -> tuple[dict[MemberId, tuple[TopicPartition, ...]], dict[MemberId, tuple[TopicPartition, ...]]]:
    """What each member revoked and gained in one round."""
    revoked: dict[MemberId, tuple[TopicPartition, ...]] = {}
    added: dict[MemberId, tuple[TopicPartition, ...]] = {}
    for member, result in assignment.items():
        now = result.partitions
        if protocol is RebalanceProtocol.EAGER:
            revoked[member] = tuple(owned_before.get(member, ()))
            added[member] = now
            continue
        had = holding.get(member, ())
        if first:  # partitions of topics it stopped subscribing to went before joining
            before = tuple(owned_before.get(member, ()))
            dropped = set(before) - set(had)
        else:
            dropped = set()
        lost, gained = _diff(had, now)
        revoked[member] = lost + tuple(sorted(dropped))
        added[member] = gained
    return revoked, added


def _diff(
    had: tuple[TopicPartition, ...], now: tuple[TopicPartition, ...]
) -> tuple[tuple[TopicPartition, ...], tuple[TopicPartition, ...]]:
    """What a member loses (``had - now``) and gains (``now - had``), each in its own order."""
    keep, had_set = set(now), set(had)
    return tuple(tp for tp in had if tp not in keep), tuple(tp for tp in now if tp not in had_set)
