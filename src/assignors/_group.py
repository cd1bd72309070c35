"""A consumer-group simulator: Kafka's classic group protocol around any assignors.

Members join, leave, crash, restart and change their subscriptions; topics grow. Every
rebalance creates a new generation per JoinGroup/SyncGroup round, elects the leader
(the longest-standing member), lets the coordinator select the assignor from every
member's preferences, carries each member's subscription to the leader as Kafka's
bytes and each assignment back the same way, and applies each member's own protocol
(EAGER members revoke everything before joining; COOPERATIVE members revoke after the
assignment and rejoin). Rounds repeat until no member needs to rejoin.

Exported from :mod:`assignors.rebalance`.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias, assert_never, cast

from assignors._errors import AssignorError, InconsistentGroupProtocolError, InvalidSubscriptionError
from assignors._interface import ConsumerPartitionAssignor
from assignors._model import (
    DEFAULT_GENERATION,
    Assignment,
    Cluster,
    MemberId,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
    _topic_partitions,
)
from assignors._rebalance import (
    _BUILT_IN,
    choose_protocol,
    receive_assignment,
    revoke_before_join,
    select_assignor,
    validate_cooperative_assignment,
)
from assignors._registry import get_assignor
from assignors.consumer_protocol import decode_assignment, decode_subscription, encode_assignment, encode_subscription

__all__ = [
    "AddPartitions",
    "Crash",
    "Event",
    "GroupSimulator",
    "Join",
    "Leave",
    "Note",
    "Restart",
    "SimulatedRebalance",
    "SimulatedRound",
    "Subscribe",
    "Timeline",
]

AssignorSpec: TypeAlias = str | ConsumerPartitionAssignor


# --- events ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Join:
    """A new consumer joins. ``member`` names it in the timeline (its first member id).

    ``assignors`` is its ``partition.assignment.strategy``, preferred first: names of
    built-in assignors or assignor objects (each member gets its own instances of names).
    """

    at: float
    member: str
    topics: tuple[str, ...]
    assignors: tuple[AssignorSpec, ...] = ("range",)
    instance_id: str | None = None
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class Leave:
    """A consumer closes: it revokes its partitions and leaves at once (a rebalance follows)."""

    at: float
    member: str


@dataclass(frozen=True, slots=True)
class Crash:
    """A consumer stops heartbeating: the coordinator removes it after the session timeout."""

    at: float
    member: str


@dataclass(frozen=True, slots=True)
class Restart:
    """A consumer process restarts and is back after ``downtime_s`` with a new member id.

    The new process has fresh assignor instances, and may come back with new
    ``assignors`` or ``topics`` (None: unchanged), as in a rolling upgrade. A static member
    (with an instance id) back within the session timeout with the same configuration
    keeps its partitions and causes no rebalance; with a new configuration it rejoins at
    once; later than the timeout, it was removed then and joins anew. A dynamic member
    leaves at once and joins again when it is back.
    """

    at: float
    member: str
    downtime_s: float
    assignors: tuple[AssignorSpec, ...] | None = None
    topics: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Subscribe:
    """A consumer changes its subscription and rejoins."""

    at: float
    member: str
    topics: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AddPartitions:
    """A topic grows to ``count`` partitions; the leader sees the new metadata and rebalances."""

    at: float
    topic: str
    count: int


Event: TypeAlias = Join | Leave | Crash | Restart | Subscribe | AddPartitions


# --- results ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SimulatedRound:
    """One JoinGroup/SyncGroup round.

    Attributes:
        generation: the generation this round created.
        leader: the member id of the leader, which ran the assignor.
        assignor: the assignor the coordinator selected.
        protocols: each member's rebalance protocol (from its own assignors).
        owned_at_join: what each member still owned when it joined (after EAGER revocation).
        revoked: per member, what it gave up in this round (before joining or after the assignment).
        added: per member, what it started consuming.
        assignment: per member, what it owns at the end of the round.
        unowned: partitions of subscribed topics that no member owns at the end of the round.
        rejoin: members that must rejoin (another round follows when not empty).
    """

    generation: int
    leader: MemberId
    assignor: str
    protocols: dict[MemberId, RebalanceProtocol]
    owned_at_join: dict[MemberId, tuple[TopicPartition, ...]]
    revoked: dict[MemberId, tuple[TopicPartition, ...]]
    added: dict[MemberId, tuple[TopicPartition, ...]]
    assignment: dict[MemberId, tuple[TopicPartition, ...]]
    unowned: tuple[TopicPartition, ...]
    rejoin: tuple[MemberId, ...]


@dataclass(frozen=True, slots=True)
class SimulatedRebalance:
    """A rebalance: when, why, and its rounds."""

    at: float
    cause: str
    rounds: tuple[SimulatedRound, ...]

    @property
    def generation(self) -> int:
        return self.rounds[-1].generation

    @property
    def assignment(self) -> dict[MemberId, tuple[TopicPartition, ...]]:
        return self.rounds[-1].assignment


@dataclass(frozen=True, slots=True)
class Note:
    """Something that happened without a rebalance (a member down, a static member back)."""

    at: float
    text: str


@dataclass(slots=True)
class Timeline:
    """Everything a simulation did, in time order: rebalances and notes."""

    entries: list[SimulatedRebalance | Note] = field(default_factory=list)

    @property
    def rebalances(self) -> list[SimulatedRebalance]:
        return [entry for entry in self.entries if isinstance(entry, SimulatedRebalance)]

    def render(self) -> str:
        """A readable timeline: one block per rebalance, a line per note."""
        lines: list[str] = []
        for entry in self.entries:
            if isinstance(entry, Note):
                lines.append(f"t={entry.at:g}s  {entry.text}")
                continue
            lines.append(f"t={entry.at:g}s  rebalance: {entry.cause}")
            for number, r in enumerate(entry.rounds, 1):
                protocols = sorted({p.name for p in r.protocols.values()})
                lines.append(
                    f"  round {number}: generation {r.generation}, leader {r.leader}, assignor {r.assignor}, "
                    f"{'/'.join(protocols)}"
                )
                for member in sorted(r.assignment):
                    change = ""
                    if r.revoked.get(member):
                        change += f"  revoked {_compact(r.revoked[member])}"
                    if r.added.get(member):
                        change += f"  added {_compact(r.added[member])}"
                    lines.append(f"    {member}: {_compact(r.assignment[member]) or '-'}{change}")
                if r.unowned:
                    lines.append(f"    no consumer: {_compact(r.unowned)}")
                if r.rejoin:
                    lines.append(f"    rejoin: {', '.join(r.rejoin)}")
        return "\n".join(lines)


def _compact(partitions: Iterable[TopicPartition]) -> str:
    """``t[0-2,5] u[1]``: partitions per topic, runs collapsed."""
    by_topic: dict[str, list[int]] = {}
    for tp in sorted(partitions):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    parts = []
    for topic, numbers in by_topic.items():
        runs: list[str] = []
        for _, run in itertools.groupby(enumerate(numbers), key=lambda pair: pair[1] - pair[0]):
            values = [number for _, number in run]
            runs.append(str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}")
        parts.append(f"{topic}[{','.join(runs)}]")
    return " ".join(parts)


# --- the simulator ------------------------------------------------------------------------


def _instances(handle: str, specs: Sequence[AssignorSpec]) -> dict[str, ConsumerPartitionAssignor]:
    """A member's assignors by name, in preference order: fresh instances for names, objects as given."""
    if not specs:
        msg = f"member {handle!r} has no assignors"
        raise InvalidSubscriptionError(msg)
    assignors: dict[str, ConsumerPartitionAssignor] = {}
    for spec in specs:
        assignor = get_assignor(spec) if isinstance(spec, str) else spec
        if assignor.name in assignors:
            msg = f"member {handle!r} lists assignor {assignor.name!r} twice"
            raise InvalidSubscriptionError(msg)
        assignors[assignor.name] = assignor
    return assignors


@dataclass(slots=True)
class _Member:
    handle: str
    member_id: MemberId
    topics: tuple[str, ...]
    specs: tuple[AssignorSpec, ...]
    names: tuple[str, ...]
    assignors: dict[str, ConsumerPartitionAssignor]
    protocol: RebalanceProtocol
    instance_id: str | None
    rack: str | None
    seniority: int
    owned: tuple[TopicPartition, ...] = ()
    generation: int = DEFAULT_GENERATION
    down: int | None = None  # the token of its current downtime; None while it runs
    incarnation: int = 1
    comes_back_with: Restart | None = None


class GroupSimulator:
    """One consumer group driven by events, on a coordinator with a session timeout.

    >>> sim = GroupSimulator({"t": 4}, session_timeout_s=10)
    >>> _ = sim.apply(Join(0, "a", ("t",), ("cooperative-sticky",)))
    >>> [r.generation for r in sim.apply(Join(1, "b", ("t",), ("cooperative-sticky",))).rounds]
    [2, 3]
    >>> sim.owned()
    {'a': (TopicPartition(topic='t', partition=0), TopicPartition(topic='t', partition=1)), \
'b': (TopicPartition(topic='t', partition=2), TopicPartition(topic='t', partition=3))}

    Args:
        partitions: partition count per topic (or a :class:`~assignors.Cluster`, whose racks
            are kept).
        session_timeout_s: how long the coordinator waits for a silent member.
        max_rounds: a rebalance still needing rounds after this many raises (a broken
            cooperative assignor would otherwise loop).
    """

    def __init__(
        self,
        partitions: Mapping[str, int] | Cluster,
        *,
        session_timeout_s: float = 10.0,
        max_rounds: int = 10,
    ) -> None:
        if not (isinstance(session_timeout_s, int | float) and session_timeout_s > 0):
            msg = f"session_timeout_s={session_timeout_s!r} must be a positive number"
            raise InvalidSubscriptionError(msg)
        self._cluster = partitions if isinstance(partitions, Cluster) else Cluster(partitions)
        self.session_timeout_s = float(session_timeout_s)
        self.max_rounds = max_rounds
        self.generation = 0
        self.now = -math.inf
        self.timeline = Timeline()
        self._members: dict[str, _Member] = {}  # by handle
        self._away: dict[str, _Member] = {}  # removed while down; may come back (a restart)
        self._seniority = itertools.count()
        self._timers: list[tuple[float, int, str, str, int]] = []  # (due, order, kind, handle, down token)
        self._tokens = itertools.count()
        self._selected: str | None = None  # the assignor of the last round

    # -- state ---------------------------------------------------------------------------

    @property
    def cluster(self) -> Cluster:
        return self._cluster

    def members(self) -> list[MemberId]:
        """Member ids of the group, oldest first (the first is the leader)."""
        return [m.member_id for m in self._ordered()]

    def owned(self) -> dict[MemberId, tuple[TopicPartition, ...]]:
        """What each member owns now, by member id."""
        return {m.member_id: m.owned for m in self._ordered()}

    def _ordered(self) -> list[_Member]:
        return sorted(self._members.values(), key=lambda m: m.seniority)

    def _member(self, handle: str) -> _Member:
        found = self._members.get(handle)
        if found is None:
            msg = f"member {handle!r} is not in the group (at t={self.now:g}s)"
            raise InvalidSubscriptionError(msg)
        return found

    # -- driving -------------------------------------------------------------------------

    def run(self, events: Iterable[Event]) -> Timeline:
        """Apply every event in order, then let pending timers fire; returns the timeline."""
        for event in events:
            self.apply(event)
        self.advance(math.inf)
        return self.timeline

    def apply(self, event: Event) -> SimulatedRebalance | None:
        """Advance to ``event.at`` (timers due before it fire first) and apply it.

        Returns the rebalance the event caused, if any.

        Raises:
            InvalidSubscriptionError: the event refers to an unknown member, goes back in time,
                or is otherwise not possible; the event changes nothing (time still advances to it).
            AssignorError: from the assignors (an inconsistent group protocol, a cooperative violation).
        """
        if not isinstance(cast("object", event), Join | Leave | Crash | Restart | Subscribe | AddPartitions):
            msg = f"{event!r} is not a simulator event"
            raise InvalidSubscriptionError(msg)
        if not isinstance(event.at, int | float) or math.isnan(event.at):
            msg = f"{type(event).__name__}.at={event.at!r} must be a number"
            raise InvalidSubscriptionError(msg)
        if event.at < self.now:
            msg = f"{type(event).__name__} at t={event.at:g}s comes before the current time t={self.now:g}s"
            raise InvalidSubscriptionError(msg)
        self.advance(event.at)
        match event:
            case Join():
                return self._join(event)
            case Leave():
                leaving = self._member(event.member)
                leaving.down = None  # gone for good, even if it was down
                revokes = f" (revokes {_compact(leaving.owned)})" if leaving.owned else ""
                return self._remove(event.member, f"{leaving.member_id} leaves{revokes}")
            case Crash():
                self._crash(event)
                return None
            case Restart():
                return self._restart(event)
            case Subscribe():
                return self._subscribe(event)
            case AddPartitions():
                return self._add_partitions(event)
        assert_never(event)

    def advance(self, to: float) -> list[SimulatedRebalance]:
        """Let time pass until ``to``: session timeouts expire and restarted members come back."""
        done: list[SimulatedRebalance] = []
        while self._timers and self._timers[0][0] <= to:
            due, _, kind, handle, token = heapq.heappop(self._timers)
            self.now = max(self.now, due)
            member = self._members.get(handle)
            result: SimulatedRebalance | None = None
            if kind == "timeout" and member is not None and member.down == token:
                result = self._remove(handle, f"session timeout of {member.member_id}")
            elif kind == "back":
                result = self._back(handle, token)
            if result is not None:
                done.append(result)
        if to != math.inf:
            self.now = max(self.now, to)
        return done

    def _schedule(self, due: float, kind: str, handle: str, token: int) -> None:
        heapq.heappush(self._timers, (due, next(self._tokens), kind, handle, token))

    def _go_down(self, member: _Member) -> int:
        if member.down is not None:
            msg = f"member {member.handle!r} is already down"
            raise InvalidSubscriptionError(msg)
        member.down = next(self._tokens)
        return member.down

    # -- events ----------------------------------------------------------------------------

    def _join(self, event: Join) -> SimulatedRebalance | None:
        if event.member in self._members:
            msg = f"member {event.member!r} is already in the group"
            raise InvalidSubscriptionError(msg)
        if event.instance_id is not None and any(m.instance_id == event.instance_id for m in self._members.values()):
            msg = f"group_instance_id {event.instance_id!r} is already used by a member (FENCED_INSTANCE_ID)"
            raise InvalidSubscriptionError(msg)
        member = self._new_member(event)
        self._away.pop(event.member, None)  # a new process under the old name: the old one never comes back
        if not self._accepts(member, "join"):
            return None
        self._members[event.member] = member
        return self._rebalance(f"{member.member_id} joins")

    def _accepts(self, member: _Member, what: str) -> bool:
        """The coordinator's check of a joining member's assignors against the group's (a Note if refused)."""
        others = {m.member_id: m.names for m in self._members.values() if m.handle != member.handle}
        try:
            select_assignor({**others, member.member_id: member.names})
        except InconsistentGroupProtocolError:
            offered = sorted(set.intersection(*(set(n) for n in others.values()))) if others else []
            self.timeline.entries.append(
                Note(
                    self.now,
                    f"{member.member_id}'s {what} is refused (INCONSISTENT_GROUP_PROTOCOL): it offers "
                    f"{list(member.names)}, the group {offered}",
                )
            )
            return False
        return True

    def _new_member(self, event: Join) -> _Member:
        Subscription(event.topics, rack_id=event.rack, group_instance_id=event.instance_id)  # validates
        assignors = _instances(event.member, event.assignors)
        return _Member(
            handle=event.member,
            member_id=event.member,
            topics=tuple(sorted(set(event.topics))),
            specs=tuple(event.assignors),
            names=tuple(assignors),
            assignors=assignors,
            protocol=choose_protocol(assignors.values()),
            instance_id=event.instance_id,
            rack=event.rack,
            seniority=next(self._seniority),
        )

    def _remove(self, handle: str, cause: str) -> SimulatedRebalance | None:
        member = self._members.pop(handle)
        if member.down is not None:
            self._away[handle] = member
        if not self._members:
            self.timeline.entries.append(Note(self.now, f"{cause}; the group is empty"))
            return None
        return self._rebalance(cause)

    def _crash(self, event: Crash) -> None:
        member = self._member(event.member)
        token = self._go_down(member)
        self._schedule(event.at + self.session_timeout_s, "timeout", event.member, token)
        self.timeline.entries.append(
            Note(
                event.at,
                f"{member.member_id} crashes; {_compact(member.owned) or 'nothing'} without a consumer until "
                f"t={event.at + self.session_timeout_s:g}s",
            )
        )

    def _restart(self, event: Restart) -> SimulatedRebalance | None:
        member = self._member(event.member)
        if not (isinstance(event.downtime_s, int | float) and event.downtime_s >= 0):
            msg = f"Restart.downtime_s={event.downtime_s!r} must be a number >= 0"
            raise InvalidSubscriptionError(msg)
        if event.topics is not None:
            Subscription(event.topics)  # validates
        _instances(event.member, event.assignors if event.assignors is not None else member.specs)  # validates now
        token = self._go_down(member)
        member.comes_back_with = event
        self._schedule(event.at + event.downtime_s, "back", event.member, token)
        if member.instance_id is None:  # a dynamic member leaves on close and joins as a new member
            member.owned = ()
            return self._remove(event.member, f"{member.member_id} restarts (dynamic: leaves the group)")
        self._schedule(event.at + self.session_timeout_s, "timeout", event.member, token)
        self.timeline.entries.append(
            Note(event.at, f"{member.member_id} restarts; {_compact(member.owned) or 'nothing'} without a consumer")
        )
        return None

    def _back(self, handle: str, token: int) -> SimulatedRebalance | None:
        member = self._members.get(handle)
        if member is None or member.down != token:
            away = self._away.get(handle)
            if away is None or away.down != token:
                return None  # it left or joined anew meanwhile
            del self._away[handle]
            return self._rejoin_as_new(away)
        # A static member still in the group: back within the session timeout.
        member.down = None
        member.incarnation += 1
        old = member.member_id
        member.member_id = f"{handle}~{member.incarnation}"
        before = (member.names, member.topics)
        self._restarted(member)
        if (member.names, member.topics) != before:
            if not self._accepts(member, "rejoin"):
                member.down = next(self._tokens)  # out of the group for good
                return self._remove(handle, f"{member.member_id} is refused")
            return self._rebalance(f"{old} is back as {member.member_id} with a new configuration")
        if self._selected is not None and self._selected in member.assignors:
            # The coordinator hands the new process its current assignment.
            member.assignors[self._selected].on_assignment(Assignment(member.owned), member.generation)
        self.timeline.entries.append(
            Note(
                self.now,
                f"{old} is back as {member.member_id} (static, within the session timeout): keeps "
                f"{_compact(member.owned) or 'nothing'}, no rebalance",
            )
        )
        return None

    def _restarted(self, member: _Member) -> None:
        """The member's new process: fresh assignor instances, maybe a new configuration."""
        restart = member.comes_back_with
        member.comes_back_with = None
        if restart is None:
            return
        if restart.assignors is not None:
            member.specs = restart.assignors
        member.assignors = _instances(member.handle, member.specs)
        member.names = tuple(member.assignors)
        member.protocol = choose_protocol(member.assignors.values())
        if restart.topics is not None:
            member.topics = tuple(sorted(set(restart.topics)))

    def _rejoin_as_new(self, member: _Member) -> SimulatedRebalance | None:
        self._restarted(member)
        member.incarnation += 1
        member.member_id = f"{member.handle}~{member.incarnation}"
        member.down = None
        member.owned = ()
        member.generation = DEFAULT_GENERATION
        member.seniority = next(self._seniority)
        if not self._accepts(member, "join"):
            return None
        self._members[member.handle] = member
        return self._rebalance(f"{member.member_id} joins (restarted)")

    def _subscribe(self, event: Subscribe) -> SimulatedRebalance | None:
        member = self._member(event.member)
        Subscription(event.topics)  # validates
        member.topics = tuple(sorted(set(event.topics)))
        return self._rebalance(f"{member.member_id} subscribes to {list(member.topics)}")

    def _add_partitions(self, event: AddPartitions) -> SimulatedRebalance | None:
        current = self._cluster.partitions_per_topic.get(event.topic, 0)
        if type(event.count) is not int or event.count < current:
            msg = (
                f"topic {event.topic!r} has {current} partitions; AddPartitions.count={event.count!r} must not be fewer"
            )
            raise InvalidSubscriptionError(msg)
        counts = dict(self._cluster.partitions_per_topic)
        counts[event.topic] = event.count
        self._cluster = Cluster(counts, partition_racks=self._cluster.partition_racks)
        subscribed = any(event.topic in m.topics for m in self._members.values())
        if not subscribed or event.count == current:
            self.timeline.entries.append(Note(event.at, f"{event.topic} has {event.count} partitions"))
            return None
        return self._rebalance(f"{event.topic} grows from {current} to {event.count} partitions")

    # -- the rebalance -----------------------------------------------------------------------

    def _rebalance(self, cause: str) -> SimulatedRebalance:
        rounds: list[SimulatedRound] = []
        dropped = [m for m in self._ordered() if m.down is not None]
        for member in dropped:  # a member that is down cannot rejoin: the round goes on without it
            del self._members[member.handle]
            self._away[member.handle] = member
        if dropped:
            cause += f"; {', '.join(m.member_id for m in dropped)} down, dropped from the group"
        while self._members:
            rounds.append(self._round())
            if not rounds[-1].rejoin:
                break
            if len(rounds) >= self.max_rounds:
                msg = f"the group still rebalances after {self.max_rounds} rounds ({cause})"
                raise AssignorError(msg)
        result = SimulatedRebalance(self.now, cause, tuple(rounds))
        self.timeline.entries.append(result)
        return result

    def _round(self) -> SimulatedRound:
        members = self._ordered()
        leader = members[0]
        revoked: dict[MemberId, tuple[TopicPartition, ...]] = {}
        metadata: dict[MemberId, dict[str, bytes]] = {}
        for m in members:
            revoked[m.member_id] = revoke_before_join(m.protocol, m.owned, m.topics)
            gone = set(revoked[m.member_id])
            m.owned = tuple(tp for tp in m.owned if tp not in gone)
            metadata[m.member_id] = {
                name: encode_subscription(
                    Subscription(
                        m.topics,
                        user_data=assignor.subscription_user_data(m.topics),
                        owned_partitions=m.owned,
                        generation_id=m.generation,
                        rack_id=m.rack,
                    )
                )
                for name, assignor in m.assignors.items()
            }
        chosen = select_assignor({m.member_id: m.names for m in members})
        self._selected = chosen
        self.generation += 1
        owned_at_join = {m.member_id: m.owned for m in members}
        # The leader reads every member's metadata for the chosen protocol, as on the wire.
        subscriptions = {
            m.member_id: decode_subscription(metadata[m.member_id][chosen], group_instance_id=m.instance_id)
            for m in members
        }
        assignor = leader.assignors[chosen]
        assignment = assignor.assign(self._cluster, subscriptions)
        if leader.protocol is RebalanceProtocol.COOPERATIVE and chosen not in _BUILT_IN:
            validate_cooperative_assignment(owned_at_join, assignment)
        added: dict[MemberId, tuple[TopicPartition, ...]] = {}
        rejoin: list[MemberId] = []
        for m in members:
            if m.member_id not in assignment:
                msg = f"assignor {chosen!r} returned no assignment for member {m.member_id!r}"
                raise AssignorError(msg)
            received = decode_assignment(encode_assignment(assignment[m.member_id]))
            update = receive_assignment(m.protocol, m.owned, received, m.topics)
            m.assignors[chosen].on_assignment(received, self.generation)
            m.owned, m.generation = update.owned, self.generation
            revoked[m.member_id] += update.revoked
            added[m.member_id] = update.added
            if update.rejoin:
                rejoin.append(m.member_id)
        return SimulatedRound(
            generation=self.generation,
            leader=leader.member_id,
            assignor=chosen,
            protocols={m.member_id: m.protocol for m in members},
            owned_at_join=owned_at_join,
            revoked=revoked,
            added=added,
            assignment={m.member_id: m.owned for m in members},
            unowned=self._unowned(members),
            rejoin=tuple(rejoin),
        )

    def _unowned(self, members: Sequence[_Member]) -> tuple[TopicPartition, ...]:
        owned = {tp for m in members for tp in m.owned}
        counts = self._cluster.partitions_per_topic
        subscribed = sorted({t for m in members for t in m.topics})
        return tuple(tp for t in subscribed for tp in _topic_partitions(t, counts.get(t, 0)) if tp not in owned)
