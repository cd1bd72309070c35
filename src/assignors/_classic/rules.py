"""The rules of Kafka's classic group protocol around any assignor, as pure functions.

- the coordinator's side: :func:`select_assignor` (the vote among the members' preferences);
- a consumer's side: :func:`choose_protocol` / :func:`preferred_protocol` (EAGER or
  COOPERATIVE, from its assignors), :func:`revoke_before_join` (``onJoinPrepare``) and
  :func:`receive_assignment` (``onJoinComplete``);
- the leader's check of a user's cooperative assignor, :func:`validate_cooperative_assignment`.

The round engine that applies them is :mod:`assignors._classic.rounds`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING

from assignors._core.errors import ConfigurationError, CooperativeViolationError, InconsistentGroupProtocolError
from assignors._core.model import (
    COOPERATIVE_STICKY_ASSIGNOR_NAME,
    RANGE_ASSIGNOR_NAME,
    ROUNDROBIN_ASSIGNOR_NAME,
    STICKY_ASSIGNOR_NAME,
    Assignment,
    RebalanceProtocol,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from assignors._core.interface import ConsumerPartitionAssignor
    from assignors._core.model import MemberId, TopicPartition

__all__ = [
    "BROKER_TIE_ORDER",
    "MemberUpdate",
    "choose_protocol",
    "diff",
    "preferred_protocol",
    "receive_assignment",
    "received",
    "revoke_before_join",
    "select_assignor",
    "validate_cooperative_assignment",
]

BROKER_TIE_ORDER: tuple[str, ...] = (
    STICKY_ASSIGNOR_NAME,
    RANGE_ASSIGNOR_NAME,
    ROUNDROBIN_ASSIGNOR_NAME,
    COOPERATIVE_STICKY_ASSIGNOR_NAME,
)
"""How a Kafka broker breaks a tie between the built-in names in ``GroupMetadata.selectProtocol``
(the iteration order of its hash map of votes)."""


def choose_protocol(assignors: Iterable[ConsumerPartitionAssignor]) -> RebalanceProtocol:
    """The protocol of a consumer configured with ``assignors``: the highest that all of them support.

    Raises:
        ConfigurationError: no assignors, or no protocol they all support.

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
        raise ConfigurationError(msg)
    if not common:
        msg = f"assignors {names} support no rebalance protocol in common"
        raise ConfigurationError(msg)
    return max(common)


def preferred_protocol(assignor: ConsumerPartitionAssignor) -> RebalanceProtocol:
    """The protocol a consumer configured with ``assignor`` alone uses: the highest it supports.

    >>> from assignors import CooperativeStickyAssignor, StickyAssignor
    >>> preferred_protocol(CooperativeStickyAssignor()).name, preferred_protocol(StickyAssignor()).name
    ('COOPERATIVE', 'EAGER')
    """
    return choose_protocol([assignor])


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
    first = tuple(preferences[members[0]])
    if first and all(tuple(preferences[m]) == first for m in members[1:]):
        return first[0]  # the same list everywhere (a group of one configuration): a unanimous vote for its first
    candidates = set(first)
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


_topic_of = attrgetter("topic")


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
    return MemberUpdate(*received(protocol, tuple(owned), assigned, topics))


def received(
    protocol: RebalanceProtocol,
    owned: tuple[TopicPartition, ...],
    assigned: tuple[TopicPartition, ...],
    topics: Iterable[str],
) -> tuple[tuple[TopicPartition, ...], tuple[TopicPartition, ...], tuple[TopicPartition, ...], bool]:
    """:func:`receive_assignment`'s fields as a tuple, for a caller that reads them at once (the round engine runs
    this for every member of every round): ``(revoked, added, owned, rejoin)``."""
    revoked, added = diff(owned, assigned)
    mismatch = not set(topics).issuperset(map(_topic_of, assigned))
    rejoin = mismatch or (protocol is RebalanceProtocol.COOPERATIVE and bool(revoked))
    return revoked, added, assigned, rejoin


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


def diff(
    had: tuple[TopicPartition, ...], now: tuple[TopicPartition, ...]
) -> tuple[tuple[TopicPartition, ...], tuple[TopicPartition, ...]]:
    """What a member loses (``had - now``) and gains (``now - had``), each in its own order."""
    if not had or not now:  # a fresh or EAGER member, or one given nothing: no set needed
        return had, now
    keep, had_set = set(now), set(had)
    return tuple(tp for tp in had if tp not in keep), tuple(tp for tp in now if tp not in had_set)
