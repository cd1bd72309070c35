"""The one model of a classic group's members: who is in it, who leads, who is down, and each member's assignors.

Both simulators keep their classic members here: :class:`~assignors.rebalance.GroupSimulator` (its own events and
timers around it) and :class:`~assignors.consumer_group.ConsumerGroupSimulator` (the classic side of a group that
upgrades to, or downgrades from, KIP-848's consumer protocol). Each rebalance is :func:`run_rounds` over the members
as Kafka runs it:

- the leader is the longest-standing member (Kafka's coordinator keeps its leader while it stays in the group);
- each member has its own assignor instances (``partition.assignment.strategy``), kept across rebalances: an
  instance's memory travels only in that member's user data, as each Kafka consumer's does;
- each member runs its own rebalance protocol (``ConsumerCoordinator``: the highest all its assignors support), and
  sends its ``client.rack`` (KIP-881);
- a member that is down when the group rebalances cannot rejoin: the coordinator removes a member that has not
  rejoined when the join phase ends, so the rounds go on without it (it is kept aside, :attr:`ClassicGroup.away`,
  in case its process comes back).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assignors._builtin.registry import get_assignor
from assignors._classic.rounds import ReusingMember, Round, run_rounds
from assignors._classic.rules import choose_protocol, select_assignor
from assignors._core.errors import ConfigurationError, InconsistentGroupProtocolError
from assignors._core.model import DEFAULT_GENERATION, Subscription

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from assignors._classic.events import AssignorSpec, Restart
    from assignors._core.interface import ConsumerPartitionAssignor
    from assignors._core.model import Cluster

__all__ = ["ClassicGroup", "GroupMember", "member_assignors"]


def member_assignors(handle: str, specs: Sequence[AssignorSpec]) -> dict[str, ConsumerPartitionAssignor]:
    """A member's assignors by name, in preference order: fresh instances for names, objects as given.

    Raises:
        ConfigurationError: no assignors, or one name twice.
    """
    if not specs:
        msg = f"member {handle!r} has no assignors"
        raise ConfigurationError(msg)
    assignors: dict[str, ConsumerPartitionAssignor] = {}
    for spec in specs:
        assignor = get_assignor(spec) if isinstance(spec, str) else spec
        if assignor.name in assignors:
            msg = f"member {handle!r} lists assignor {assignor.name!r} twice"
            raise ConfigurationError(msg)
        assignors[assignor.name] = assignor
    return assignors


@dataclass(slots=True, kw_only=True)
class GroupMember(ReusingMember):
    """A consumer of a classic group: what a round needs, plus its process's life.

    Attributes:
        handle: the name events use for it (its process), whatever its member id.
        specs: its ``partition.assignment.strategy`` as configured.
        names: its assignors' names, preferred first.
        seniority: when it joined (lower: longer-standing; the lowest leads).
        down: the token of its current downtime; None while it runs.
        incarnation: how many processes it has had (a restart starts the next).
        comes_back_with: the restart its process is down for, if any.
    """

    handle: str
    specs: tuple[AssignorSpec, ...]
    names: tuple[str, ...]
    seniority: int
    down: int | None = None
    incarnation: int = 1
    comes_back_with: Restart | None = None


class ClassicGroup:
    """A classic group's members (by handle), its generation and metadata; each rebalance is whole rounds.

    Args:
        cluster: the topic metadata its leader sees (partition racks included).
        generation: the group's generation (0: a new group).
        max_rounds: a rebalance still needing rounds after this many raises.
    """

    def __init__(self, cluster: Cluster, *, generation: int = 0, max_rounds: int = 10) -> None:
        self.cluster = cluster
        self.generation = generation
        self.max_rounds = max_rounds
        self.members: dict[str, GroupMember] = {}  # by handle
        self.away: dict[str, GroupMember] = {}  # removed while down; may come back (a restart)
        self.selected: str | None = None  # the assignor of the last round
        self._seniority = itertools.count()

    def ordered(self) -> list[GroupMember]:
        """The members, longest-standing (the leader) first."""
        return sorted(self.members.values(), key=lambda m: m.seniority)

    def new_member(  # noqa: PLR0913 - a member's configuration
        self,
        handle: str,
        topics: Iterable[str],
        specs: Sequence[AssignorSpec],
        *,
        instance_id: str | None = None,
        rack: str | None = None,
        member_id: str | None = None,
    ) -> GroupMember:
        """A new member (not in the group yet): validated, with its own assignors, the youngest.

        Raises:
            InvalidSubscriptionError: bad topics, rack or instance id.
            ConfigurationError: bad assignors.
        """
        topics = tuple(topics)
        Subscription(topics, rack_id=rack, group_instance_id=instance_id)  # validates
        assignors = member_assignors(handle, specs)
        return GroupMember(
            handle=handle,
            member_id=handle if member_id is None else member_id,
            topics=tuple(sorted(set(topics))),
            specs=tuple(specs),
            names=tuple(assignors),
            assignors=assignors,
            protocol=choose_protocol(assignors.values()),
            instance_id=instance_id,
            rack=rack,
            seniority=next(self._seniority),
        )

    def refusal(self, member: GroupMember) -> list[str] | None:
        """None if the coordinator accepts ``member``'s assignors beside the others'; else the names every other
        member offers (it is refused: INCONSISTENT_GROUP_PROTOCOL)."""
        others = {m.member_id: m.names for m in self.members.values() if m.handle != member.handle}
        try:
            select_assignor({**others, member.member_id: member.names})
        except InconsistentGroupProtocolError:
            return sorted(set.intersection(*(set(n) for n in others.values()))) if others else []
        return None

    def remove(self, handle: str) -> GroupMember:
        """Take ``handle`` out of the group; a member that is down is kept aside in :attr:`away`."""
        member = self.members.pop(handle)
        if member.down is not None:
            self.away[handle] = member
        return member

    def restarted(self, member: GroupMember) -> None:
        """The member's new process: fresh assignor instances, maybe a new configuration (``comes_back_with``)."""
        restart = member.comes_back_with
        member.comes_back_with = None
        if restart is None:
            return
        if restart.assignors is not None:
            member.specs = restart.assignors
        member.assignors = member_assignors(member.handle, member.specs)
        member.names = tuple(member.assignors)
        member.protocol = choose_protocol(member.assignors.values())
        if restart.topics is not None:
            member.topics = tuple(sorted(set(restart.topics)))

    def anew(self, member: GroupMember) -> None:
        """``member`` joins again as a new member: nothing owned, no generation, the youngest."""
        member.down = None
        member.owned = ()
        member.generation = DEFAULT_GENERATION
        member.seniority = next(self._seniority)

    def rebalance(self) -> tuple[list[GroupMember], tuple[Round, ...]]:
        """One rebalance: the members that are down are dropped (and returned), the others run the rounds.

        Returns no rounds when no member is left.

        Raises:
            AssignorError: from the assignors, or still rejoining after ``max_rounds`` rounds.
        """
        dropped = [m for m in self.ordered() if m.down is not None]
        for member in dropped:  # a member that is down cannot rejoin: the round goes on without it
            del self.members[member.handle]
            self.away[member.handle] = member
        rounds: tuple[Round, ...] = ()
        if self.members:
            rounds = run_rounds(self.ordered(), self.cluster, self.generation, max_rounds=self.max_rounds)
            self.generation = rounds[-1].generation
            self.selected = rounds[-1].assignor
        return dropped, rounds
