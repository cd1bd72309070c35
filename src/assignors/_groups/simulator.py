"""A consumer-group simulator: Kafka's classic group protocol around any assignors.

Members join, leave, crash, restart and change their subscriptions; topics grow. The members are
:mod:`assignors._classic.group`'s (the one classic group model); every
rebalance runs the rounds of :mod:`assignors._classic.rounds` (one generation per JoinGroup/SyncGroup
round): the leader is the longest-standing member, the coordinator selects the assignor from
every member's preferences, each subscription reaches the leader as Kafka's bytes and each
assignment comes back the same way, and each member applies its own protocol (EAGER members
revoke everything before joining; COOPERATIVE members revoke after the assignment and
rejoin). Rounds repeat until no member needs to rejoin.

A member with ``group.protocol=consumer`` (KIP-848) hands the group to the consumer-protocol
model (:mod:`assignors._groups.handover`): the online upgrade and heartbeats from then on.

Exported from :mod:`assignors.rebalance`.
"""

from __future__ import annotations

import enum
import heapq
import itertools
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, assert_never, cast

from assignors._classic.events import AddPartitions, Crash, Event, Join, Leave, Restart, Subscribe
from assignors._classic.group import ClassicGroup, GroupMember, member_assignors
from assignors._classic.timeline import Note, SimulatedRebalance, Timeline, compact
from assignors._core.errors import ConfigurationError, SimulationError
from assignors._core.model import Assignment, Cluster, MemberId, Subscription, TopicPartition
from assignors._groups.handover import ConsumerDelegate, speaks_consumer_protocol

if TYPE_CHECKING:
    from assignors.consumer_group import ConsumerGroupSimulator

__all__ = ["GroupSimulator"]


class _Timer(enum.Enum):
    """What happens when a timer fires."""

    SESSION_TIMEOUT = "session timeout"  # the coordinator removes a member that stayed silent
    BACK = "back"  # a restarted process is up again


class GroupSimulator:
    """One consumer group driven by events, on a coordinator with a session timeout.

    Examples:
        >>> sim = GroupSimulator({"t": 4}, session_timeout_s=10)
        >>> _ = sim.apply(Join(0, "a", ("t",), ("cooperative-sticky",)))
        >>> [r.generation for r in sim.apply(Join(1, "b", ("t",), ("cooperative-sticky",))).rounds]
        [2, 3]
        >>> sim.owned()
        {'a': (TopicPartition(topic='t', partition=0), TopicPartition(topic='t', partition=1)), \
'b': (TopicPartition(topic='t', partition=2), TopicPartition(topic='t', partition=3))}

    A member whose assignors are ``["consumer"]`` (``group.protocol=consumer``), ``["uniform"]``
    or ``["consumer-range"]`` (also ``group.remote.assignor``) speaks KIP-848's consumer
    protocol: from its event on, the group runs on
    :class:`~assignors.consumer_group.ConsumerGroupSimulator` (:attr:`consumer_group`), which
    replays the earlier events, upgrades the classic group online and reconciles heartbeat by
    heartbeat; :attr:`timeline` then holds its steps as notes.

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
            raise ConfigurationError(msg)
        cluster = partitions if isinstance(partitions, Cluster) else Cluster(partitions)
        self.session_timeout_s = float(session_timeout_s)
        self.now = -math.inf
        self.timeline = Timeline()
        self._group = ClassicGroup(cluster, max_rounds=max_rounds)
        self._members = self._group.members  # by handle
        self._timers: list[tuple[float, int, _Timer, str, int]] = []  # (due, order, kind, handle, down token)
        self._tokens = itertools.count()
        self._created = cluster  # as created (racks included): the consumer model replays from here
        self._applied: list[Event] = []
        self._consumer: ConsumerDelegate | None = None

    # -- state ---------------------------------------------------------------------------

    @property
    def cluster(self) -> Cluster:
        return self._group.cluster

    @property
    def generation(self) -> int:
        """The classic group's generation (0: no rebalance yet)."""
        return self._group.generation

    @property
    def max_rounds(self) -> int:
        return self._group.max_rounds

    @property
    def consumer_group(self) -> ConsumerGroupSimulator | None:
        """The consumer-protocol model running the group since a member spoke KIP-848's protocol, else None."""
        return None if self._consumer is None else self._consumer.model

    def members(self) -> list[MemberId]:
        """Member ids of the group, oldest first (the first is the leader); handles once it speaks KIP-848."""
        if self._consumer is not None:
            return list(self._consumer.owned())
        return [m.member_id for m in self._ordered()]

    def owned(self) -> dict[MemberId, tuple[TopicPartition, ...]]:
        """What each member owns now, by member id (by handle once the group speaks KIP-848)."""
        if self._consumer is not None:
            return self._consumer.owned()
        return {m.member_id: m.owned for m in self._ordered()}

    def _ordered(self) -> list[GroupMember]:
        return self._group.ordered()

    def _member(self, handle: str) -> GroupMember:
        found = self._members.get(handle)
        if found is None:
            msg = f"member {handle!r} is not in the group (at t={self.now:g}s)"
            raise SimulationError(msg)
        return found

    # -- driving -------------------------------------------------------------------------

    def run(self, events: Iterable[Event]) -> Timeline:
        """Apply every event in order, then let pending timers fire; returns the timeline.

        A consumer-protocol group heartbeats forever: it runs until two session timeouts after the
        last event or restarted member's return.
        """
        for event in events:
            self.apply(event)
        if self._consumer is not None:
            self.advance(self._consumer.model.settled_by(self._applied))
        else:
            self.advance(math.inf)
        return self.timeline

    def apply(self, event: Event) -> SimulatedRebalance | None:
        """Advance to ``event.at`` (timers due before it fire first) and apply it.

        Returns the rebalance the event caused, if any.

        Raises:
            SimulationError: the event refers to an unknown member, goes back in time,
                or is otherwise not possible; the event changes nothing (time still advances to it).
            AssignorError: from the assignors (an inconsistent group protocol, a cooperative violation).
        """
        if not isinstance(cast("object", event), Join | Leave | Crash | Restart | Subscribe | AddPartitions):
            msg = f"{event!r} is not a simulator event"
            raise SimulationError(msg)
        if not isinstance(event.at, int | float) or math.isnan(event.at):
            msg = f"{type(event).__name__}.at={event.at!r} must be a number"
            raise SimulationError(msg)
        if event.at < self.now:
            msg = f"{type(event).__name__} at t={event.at:g}s comes before the current time t={self.now:g}s"
            raise SimulationError(msg)
        self.advance(event.at)
        if self._consumer is None and speaks_consumer_protocol(event):
            self._consumer = ConsumerDelegate(self._created, self.session_timeout_s, self._applied, self.timeline)
        if self._consumer is not None:
            self._consumer.apply(event)
            self._applied.append(event)
            return None
        result = self._apply_classic(event)
        self._applied.append(event)
        return result

    def _apply_classic(self, event: Event) -> SimulatedRebalance | None:
        match event:
            case Join():
                return self._join(event)
            case Leave():
                leaving = self._member(event.member)
                leaving.down = None  # gone for good, even if it was down
                revokes = f" (revokes {compact(leaving.owned)})" if leaving.owned else ""
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
        if self._consumer is not None:
            self._consumer.advance(to)
            self.now = max(self.now, to)
            return []
        done: list[SimulatedRebalance] = []
        while self._timers and self._timers[0][0] <= to:
            due, _, kind, handle, token = heapq.heappop(self._timers)
            self.now = max(self.now, due)
            member = self._members.get(handle)
            result: SimulatedRebalance | None = None
            if kind is _Timer.SESSION_TIMEOUT and member is not None and member.down == token:
                result = self._remove(handle, f"session timeout of {member.member_id}")
            elif kind is _Timer.BACK:
                result = self._back(handle, token)
            if result is not None:
                done.append(result)
        if to != math.inf:
            self.now = max(self.now, to)
        return done

    def _schedule(self, due: float, kind: _Timer, handle: str, token: int) -> None:
        heapq.heappush(self._timers, (due, next(self._tokens), kind, handle, token))

    def _go_down(self, member: GroupMember) -> int:
        if member.down is not None:
            msg = f"member {member.handle!r} is already down"
            raise SimulationError(msg)
        member.down = next(self._tokens)
        return member.down

    # -- events ----------------------------------------------------------------------------

    def _join(self, event: Join) -> SimulatedRebalance | None:
        if event.member in self._members:
            msg = f"member {event.member!r} is already in the group"
            raise SimulationError(msg)
        if event.instance_id is not None and any(m.instance_id == event.instance_id for m in self._members.values()):
            msg = f"group_instance_id {event.instance_id!r} is already used by a member (FENCED_INSTANCE_ID)"
            raise SimulationError(msg)
        member = self._group.new_member(
            event.member, event.topics, event.assignors, instance_id=event.instance_id, rack=event.rack
        )
        self._group.away.pop(event.member, None)  # a new process under the old name: the old one never comes back
        if not self._accepts(member, "join"):
            return None
        self._members[event.member] = member
        return self._rebalance(f"{member.member_id} joins")

    def _accepts(self, member: GroupMember, what: str) -> bool:
        """The coordinator's check of a joining member's assignors against the group's (a Note if refused)."""
        offered = self._group.refusal(member)
        if offered is not None:
            self.timeline.entries.append(
                Note(
                    self.now,
                    f"{member.member_id}'s {what} is refused (INCONSISTENT_GROUP_PROTOCOL): it offers "
                    f"{list(member.names)}, the group {offered}",
                )
            )
            return False
        return True

    def _remove(self, handle: str, cause: str) -> SimulatedRebalance | None:
        self._group.remove(handle)
        if not self._members:
            self.timeline.entries.append(Note(self.now, f"{cause}; the group is empty"))
            return None
        return self._rebalance(cause)

    def _crash(self, event: Crash) -> None:
        member = self._member(event.member)
        token = self._go_down(member)
        self._schedule(event.at + self.session_timeout_s, _Timer.SESSION_TIMEOUT, event.member, token)
        self.timeline.entries.append(
            Note(
                event.at,
                f"{member.member_id} crashes; {compact(member.owned) or 'nothing'} without a consumer until "
                f"t={event.at + self.session_timeout_s:g}s",
            )
        )

    def _restart(self, event: Restart) -> SimulatedRebalance | None:
        member = self._member(event.member)
        if not (isinstance(event.downtime_s, int | float) and event.downtime_s >= 0):
            msg = f"Restart.downtime_s={event.downtime_s!r} must be a number >= 0"
            raise SimulationError(msg)
        if event.topics is not None:
            Subscription(event.topics)  # validates
        member_assignors(event.member, event.assignors if event.assignors is not None else member.specs)  # validates
        token = self._go_down(member)
        member.comes_back_with = event
        self._schedule(event.at + event.downtime_s, _Timer.BACK, event.member, token)
        if member.instance_id is None:  # a dynamic member leaves on close and joins as a new member
            member.owned = ()
            return self._remove(event.member, f"{member.member_id} restarts (dynamic: leaves the group)")
        self._schedule(event.at + self.session_timeout_s, _Timer.SESSION_TIMEOUT, event.member, token)
        self.timeline.entries.append(
            Note(event.at, f"{member.member_id} restarts; {compact(member.owned) or 'nothing'} without a consumer")
        )
        return None

    def _back(self, handle: str, token: int) -> SimulatedRebalance | None:
        member = self._members.get(handle)
        if member is None or member.down != token:
            away = self._group.away.get(handle)
            if away is None or away.down != token:
                return None  # it left or joined anew meanwhile
            del self._group.away[handle]
            return self._rejoin_as_new(away)
        # A static member still in the group: back within the session timeout.
        member.down = None
        member.incarnation += 1
        old = member.member_id
        member.member_id = f"{handle}~{member.incarnation}"
        before = (member.names, member.topics)
        self._group.restarted(member)
        if (member.names, member.topics) != before:
            if not self._accepts(member, "rejoin"):
                member.down = next(self._tokens)  # out of the group for good
                return self._remove(handle, f"{member.member_id} is refused")
            return self._rebalance(f"{old} is back as {member.member_id} with a new configuration")
        selected = self._group.selected
        if selected is not None and selected in member.assignors:
            # The coordinator hands the new process its current assignment.
            member.assignors[selected].on_assignment(Assignment(member.owned), member.generation)
        self.timeline.entries.append(
            Note(
                self.now,
                f"{old} is back as {member.member_id} (static, within the session timeout): keeps "
                f"{compact(member.owned) or 'nothing'}, no rebalance",
            )
        )
        return None

    def _rejoin_as_new(self, member: GroupMember) -> SimulatedRebalance | None:
        self._group.restarted(member)
        member.incarnation += 1
        member.member_id = f"{member.handle}~{member.incarnation}"
        self._group.anew(member)
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
        current = self.cluster.partitions_per_topic.get(event.topic, 0)
        if type(event.count) is not int or event.count < current:
            msg = (
                f"topic {event.topic!r} has {current} partitions; AddPartitions.count={event.count!r} must not be fewer"
            )
            raise SimulationError(msg)
        counts = dict(self.cluster.partitions_per_topic)
        counts[event.topic] = event.count
        self._group.cluster = Cluster(counts, partition_racks=self.cluster.partition_racks)
        subscribed = any(event.topic in m.topics for m in self._members.values())
        if not subscribed or event.count == current:
            self.timeline.entries.append(Note(event.at, f"{event.topic} has {event.count} partitions"))
            return None
        return self._rebalance(f"{event.topic} grows from {current} to {event.count} partitions")

    # -- the rebalance -----------------------------------------------------------------------

    def _rebalance(self, cause: str) -> SimulatedRebalance:
        dropped, rounds = self._group.rebalance()
        if dropped:
            cause += f"; {', '.join(m.member_id for m in dropped)} down, dropped from the group"
        result = SimulatedRebalance(self.now, cause, rounds)
        self.timeline.entries.append(result)
        return result
