"""The one JoinGroup/SyncGroup round engine of Kafka's classic group protocol.

Every rebalance in this library runs through :func:`run_round`: :func:`~assignors.rebalance.rebalance` (the Spark
replay and ``assignors assign``) and :class:`~assignors.rebalance.GroupSimulator` (the
simulator and the test kit). A round does what Kafka's ``ConsumerCoordinator`` and the group
coordinator do between them:

1. each member prepares to join (``onJoinPrepare``): an EAGER member revokes everything it
   owns, a COOPERATIVE one only the partitions of topics it no longer subscribes to;
2. each member sends its subscription: its topics, the user data of its *own* assignor
   instance, the partitions it still owns (so none under EAGER) and its generation;
3. the coordinator selects the assignor from every member's preferences, bumps the
   generation and the leader assigns with its own instance;
4. each member receives its assignment (``onJoinComplete``), tells its assignor instance, and
   rejoins when it revoked something under COOPERATIVE.

So an EAGER sticky assignor sees no owned partitions, exactly like Kafka's: its memory travels
in its user data (Kafka's ``StickyAssignor`` ``UserData`` V1).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import chain, filterfalse
from operator import itemgetter
from typing import TYPE_CHECKING

from assignors._builtin.registry import is_built_in
from assignors._classic.rules import (
    received,
    revoke_before_join,
    select_assignor,
    validate_cooperative_assignment,
)
from assignors._core.base import AbstractPartitionAssignor
from assignors._core.errors import AssignorError
from assignors._core.model import (
    DEFAULT_GENERATION,
    INT32_MAX,
    Assignment,
    RebalanceProtocol,
    Subscription,
    rejoined_subscription,
    topic_partitions,
    unchecked_assignment,
    unchecked_subscription,
)
from assignors._wire.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from assignors._core.interface import ConsumerPartitionAssignor
    from assignors._core.model import Cluster, MemberId, TopicPartition

__all__ = ["ReusingMember", "Round", "RoundMember", "run_round", "run_rounds"]


@dataclass(slots=True, kw_only=True)
class RoundMember:
    """A consumer as a round sees it; :func:`run_round` updates ``owned`` and ``generation``.

    Attributes:
        member_id: its member id.
        topics: its subscription, sorted.
        assignors: its own assignor instances by name, preferred first
            (``partition.assignment.strategy``).
        protocol: its rebalance protocol (the highest all its assignors support).
        owned: what it owns now.
        generation: the generation of what it owns (-1: none yet).
        rack: its ``client.rack``.
        instance_id: its ``group.instance.id`` (static membership).
        user_data: user data to send in its next round instead of its assignor's (consumed by
            that round; later rounds ask the assignor).
    """

    member_id: MemberId
    topics: tuple[str, ...]
    assignors: dict[str, ConsumerPartitionAssignor]
    protocol: RebalanceProtocol
    owned: tuple[TopicPartition, ...] = ()
    generation: int = DEFAULT_GENERATION
    rack: str | None = None
    instance_id: str | None = None
    user_data: bytes | None = field(default=None, repr=False)


@dataclass(slots=True, kw_only=True)
class ReusingMember(RoundMember):
    """A :class:`RoundMember` that keeps what its rounds may reuse instead of checking it again (not exported:
    :func:`rebalance` and the group simulator build these; a plain ``RoundMember`` gives the same rounds).

    Attributes:
        subscription: a subscription already built with these topics, rack and instance id
            (:func:`rebalance` passes the caller's): each round sends a copy of it with the
            round's user data, owned partitions and generation, instead of validating it again.
        received: the assignment ``owned`` comes from (its ``partitions`` are ``owned``, its
            user data None), when known: a round sends ``owned`` without checking it again and
            tells a shared instance this object instead of building it (:func:`run_round`
            sets it; ignored once ``owned`` is something else).
    """

    subscription: Subscription | None = field(default=None, repr=False, compare=False)
    received: Assignment | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Round:
    """One JoinGroup/SyncGroup round.

    Attributes:
        generation: the generation this round created.
        leader: the member id of the leader, which ran the assignor.
        assignor: the assignor the coordinator selected.
        protocols: each member's rebalance protocol.
        owned_at_join: what each member still owned when it joined (nothing under EAGER).
        assignment: what the leader assigned, per member; each member owns exactly this at the end of
            the round.
        revoked: per member, what it gave up in this round: before joining, then after the assignment.
        added: per member, what it started consuming.
        unowned: partitions of subscribed topics that no member owns at the end of the round.
        rejoin: members that must rejoin (another round follows when not empty).
        assign_seconds: time spent in the assignor's ``assign``.
    """

    generation: int
    leader: MemberId
    assignor: str
    protocols: dict[MemberId, RebalanceProtocol]
    owned_at_join: dict[MemberId, tuple[TopicPartition, ...]]
    assignment: dict[MemberId, Assignment]
    revoked: dict[MemberId, tuple[TopicPartition, ...]]
    added: dict[MemberId, tuple[TopicPartition, ...]]
    unowned: tuple[TopicPartition, ...]
    rejoin: tuple[MemberId, ...]
    assign_seconds: float

    @property
    def revoked_count(self) -> int:
        return sum(len(p) for p in self.revoked.values())


def run_round(
    members: Sequence[RoundMember],
    cluster: Cluster,
    generation: int,
    *,
    wire: bool = True,
    shared_instance: bool = False,
) -> Round:
    """One round of ``members`` (the leader first) in a group now at ``generation``.

    Args:
        members: the members that join, the leader first; updated in place.
        cluster: the metadata the leader sees.
        generation: the group's current generation (0 for a new group).
        wire: carry every subscription and assignment through Kafka's bytes, as on the network
            (the codecs are exact, so this only checks that everything encodes).
        shared_instance: all members share one assignor instance (:func:`rebalance` given one
            assignor): before it writes a member's user data, the instance is told that member's
            last assignment, as that member's own instance would have been (``onAssignment``).

    Raises:
        InconsistentGroupProtocolError: no assignor every member offers.
        CooperativeViolationError: a COOPERATIVE leader's assignor that is not built in gives a
            partition to a member while another member still owns it.
        AssignorError: the assignor's own errors, or no assignment for some member.
    """
    leader = members[0]
    chosen = _select(members)
    revoked: dict[MemberId, tuple[TopicPartition, ...]] = {}
    subscriptions: dict[MemberId, Subscription] = {}
    for m in members:
        revoked[m.member_id], subscriptions[m.member_id] = _join(m, chosen, wire=wire, shared_instance=shared_instance)
    generation = max(generation, 0) + 1
    owned_at_join = {m.member_id: m.owned for m in members}
    assignor = leader.assignors[chosen]
    start = time.perf_counter()
    assignment = assignor.assign(cluster, subscriptions)
    elapsed = time.perf_counter() - start
    if leader.protocol is RebalanceProtocol.COOPERATIVE and not is_built_in(assignor):
        validate_cooperative_assignment(owned_at_join, assignment)
    received_all: dict[MemberId, Assignment] = {}
    added: dict[MemberId, tuple[TopicPartition, ...]] = {}
    rejoin: list[MemberId] = []
    for m in members:
        result = assignment.get(m.member_id)
        if result is None:
            msg = f"assignor {chosen!r} returned no assignment for member {m.member_id!r}"
            raise AssignorError(msg)
        received = decode_assignment(encode_assignment(result)) if wire else result
        member_assignor = m.assignors[chosen]
        lost, added[m.member_id], again = _receive(m, received)
        if lost:
            revoked[m.member_id] += lost
        if again:
            rejoin.append(m.member_id)
        if not _stateless(member_assignor):
            member_assignor.on_assignment(received, generation)
        m.generation = generation
        if type(received) is Assignment and isinstance(m, ReusingMember):
            m.received = received if received.user_data is None else unchecked_assignment(received.partitions)
        received_all[m.member_id] = received
    return Round(
        generation=generation,
        leader=leader.member_id,
        assignor=chosen,
        protocols={m.member_id: m.protocol for m in members},
        owned_at_join=owned_at_join,
        assignment=received_all,
        revoked=revoked,
        added=added,
        unowned=_unowned(members, cluster, valid=is_built_in(assignor)),
        rejoin=tuple(rejoin),
        assign_seconds=elapsed,
    )


def _receive(
    m: RoundMember, assignment: Assignment
) -> tuple[tuple[TopicPartition, ...], tuple[TopicPartition, ...], bool]:
    """``onJoinComplete`` (:func:`receive_assignment`): ``m`` now owns ``assignment``; returns what it lost and
    gained, and whether it must rejoin."""
    owned = m.owned
    revoked, added, m.owned, rejoin = received(
        m.protocol,
        owned if type(owned) is tuple else tuple(owned),
        assignment.partitions if isinstance(assignment, Assignment) else tuple(assignment),
        m.topics,
    )
    return revoked, added, rejoin


def _select(members: Sequence[RoundMember]) -> str:
    """The coordinator's choice (:func:`select_assignor`); members sharing one preference dict vote unanimously."""
    first = members[0].assignors
    if first and all(m.assignors is first for m in members):
        return next(iter(first))
    return select_assignor({m.member_id: tuple(m.assignors) for m in members})


_STATELESS: dict[type, bool] = {}


def _stateless(assignor: ConsumerPartitionAssignor) -> bool:
    """A built-in assignor (by type) whose ``on_assignment`` and ``subscription_user_data`` are the base's no-ops.

    A round need not call either for it: it remembers nothing and sends no user data (range, roundrobin).
    """
    kind = type(assignor)
    known = _STATELESS.get(kind)
    if known is None:
        known = _STATELESS[kind] = (
            is_built_in(assignor)
            and kind.on_assignment is AbstractPartitionAssignor.on_assignment
            and kind.subscription_user_data is AbstractPartitionAssignor.subscription_user_data
        )
    return known


def _join(
    m: RoundMember, chosen: str, *, wire: bool, shared_instance: bool
) -> tuple[tuple[TopicPartition, ...], Subscription]:
    """A member prepares to join (``onJoinPrepare``) and sends its subscription: what it revoked, and that."""
    before = m.owned
    reused = m.received if isinstance(m, ReusingMember) else None
    memory = reused if reused is not None and reused.partitions is before else None
    gone = _prepare(m)
    user_data, m.user_data = m.user_data, None
    if user_data is None:
        assignor = m.assignors[chosen]
        remembers = not _stateless(assignor)
        if shared_instance:
            told = memory if memory is not None else Assignment(before)  # checks what the caller said it owned
            if remembers:
                assignor.on_assignment(told, m.generation)
        if remembers:
            user_data = assignor.subscription_user_data(m.topics)
    subscription = _subscription(m, user_data, checked=not m.owned or memory is not None)
    if wire:
        subscription = decode_subscription(encode_subscription(subscription), group_instance_id=m.instance_id)
    return gone, subscription


def _prepare(m: RoundMember) -> tuple[TopicPartition, ...]:
    """``onJoinPrepare`` (:func:`revoke_before_join`): drops what ``m`` revokes from its ``owned``; returns that."""
    before = m.owned
    if m.protocol is RebalanceProtocol.EAGER:
        m.owned = ()
        return before if type(before) is tuple else tuple(before)
    gone = revoke_before_join(m.protocol, before, m.topics)
    if len(gone) == len(before):
        m.owned = ()  # every topic dropped
    elif gone:
        dropped = set(gone)
        m.owned = tuple(tp for tp in before if tp not in dropped)
    return gone


def _subscription(m: RoundMember, user_data: bytes | None, *, checked: bool) -> Subscription:
    """What ``m`` sends: its template with this round's fields, checked unless they are known good.

    ``checked``: ``m.owned`` holds partitions of an Assignment (checked when it was built), or nothing.
    """
    template = m.subscription if isinstance(m, ReusingMember) else None
    generation = m.generation
    if (
        template is None
        or template.topics != m.topics
        or template.rack_id != m.rack
        or template.group_instance_id != m.instance_id
    ):
        return Subscription(
            m.topics,
            user_data=user_data,
            owned_partitions=m.owned,
            generation_id=generation,
            rack_id=m.rack,
            group_instance_id=m.instance_id,
        )
    if (
        checked
        and (user_data is None or type(user_data) is bytes)
        and type(generation) is int
        and generation <= INT32_MAX
    ):
        return unchecked_subscription(template, user_data, tuple(sorted(m.owned)) if m.owned else (), generation)
    return rejoined_subscription(template, user_data=user_data, owned_partitions=m.owned, generation_id=generation)


def run_rounds(  # noqa: PLR0913 - keyword-only knobs of run_round
    members: Sequence[RoundMember],
    cluster: Cluster,
    generation: int,
    *,
    wire: bool = True,
    shared_instance: bool = False,
    max_rounds: int = 10,
) -> tuple[Round, ...]:
    """Rounds until no member needs to rejoin: one rebalance.

    Raises:
        AssignorError: still rejoining after ``max_rounds`` rounds (a broken cooperative
            assignor would otherwise loop), or from :func:`run_round`.
    """
    rounds: list[Round] = []
    while True:
        rounds.append(run_round(members, cluster, generation, wire=wire, shared_instance=shared_instance))
        if not rounds[-1].rejoin:
            return tuple(rounds)
        if len(rounds) >= max_rounds:
            msg = (
                f"the group still rebalances after {max_rounds} rounds with assignor {rounds[-1].assignor!r} "
                f"(members {', '.join(rounds[-1].rejoin)} must rejoin)"
            )
            raise AssignorError(msg)
        generation = rounds[-1].generation


_topic_of = itemgetter(0)


def _unowned(members: Sequence[RoundMember], cluster: Cluster, *, valid: bool) -> tuple[TopicPartition, ...]:
    """Partitions of subscribed topics nobody owns after the round.

    ``valid``: the assignment came from a built-in assignor (by type), so every partition owned now
    exists and is of a subscribed topic; then as many owned partitions as the topics have means none is
    left out, without listing them.
    """
    owned = set().union(*(m.owned for m in members))
    counts = cluster.partitions_per_topic
    subscribed = sorted(set().union(*(m.topics for m in members)))
    if valid and len(owned) == sum(counts.get(t, 0) for t in subscribed):
        return ()
    every = chain.from_iterable(topic_partitions(t, counts.get(t, 0)) for t in subscribed)
    return tuple(filterfalse(owned.__contains__, every))
