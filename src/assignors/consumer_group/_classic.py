"""The classic side of a group that upgrades to (or downgrades from) the consumer protocol."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assignors._builtin.registry import get_assignor
from assignors._classic.rounds import RoundMember, run_rounds
from assignors._classic.rules import choose_protocol
from assignors._core.model import DEFAULT_GENERATION, RebalanceProtocol

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from assignors._core.interface import ConsumerPartitionAssignor
    from assignors._core.model import Cluster, MemberId, TopicPartition

__all__ = ["ClassicGroup", "ClassicMember", "classic_protocol"]


def _instance(spec: str | ConsumerPartitionAssignor) -> ConsumerPartitionAssignor:
    return get_assignor(spec) if isinstance(spec, str) else copy.deepcopy(spec)


def _name(spec: str | ConsumerPartitionAssignor) -> str:
    return spec if isinstance(spec, str) else spec.name


def classic_protocol(specs: Iterable[str | ConsumerPartitionAssignor]) -> RebalanceProtocol:
    """The rebalance protocol of a classic member configured with ``specs`` (the highest all of them support)."""
    return choose_protocol([_instance(s) for s in specs])


@dataclass(slots=True)
class ClassicMember:
    """A member of a classic group: its configuration and what its last rebalance gave it (at ``generation``)."""

    member_id: MemberId
    handle: str
    topics: tuple[str, ...]
    instance_id: str | None
    specs: tuple[str | ConsumerPartitionAssignor, ...]
    rack: str | None = None
    assignment: frozenset[TopicPartition] = frozenset()
    generation: int = DEFAULT_GENERATION


@dataclass(slots=True)
class ClassicGroup:
    """A classic group: its generation and members; each change is one whole rebalance (JoinGroup/SyncGroup rounds)."""

    generation: int = -1
    members: dict[MemberId, ClassicMember] = field(default_factory=dict)

    def add(  # noqa: PLR0913 - a member's configuration
        self,
        member_id: MemberId,
        handle: str,
        topics: Iterable[str],
        instance_id: str | None,
        specs: Iterable[str | ConsumerPartitionAssignor],
        *,
        rack: str | None = None,
        assignment: frozenset[TopicPartition] = frozenset(),
        generation: int = DEFAULT_GENERATION,
    ) -> None:
        """Add a member: a new one (nothing yet, at generation -1), or one that kept its ``assignment``."""
        self.members[member_id] = ClassicMember(
            member_id, handle, tuple(sorted(set(topics))), instance_id, tuple(specs), rack, assignment, generation
        )

    def drop(self, running: Callable[[ClassicMember], bool]) -> list[ClassicMember]:
        """Remove the members that are not ``running`` (in member-id order) and return them.

        A member that is down (crashed, or static and restarting) cannot rejoin: Kafka's group coordinator removes
        a member that has not rejoined when the join phase ends, so the rebalance goes on without it and its
        partitions are free for the others.
        """
        return [self.members.pop(m) for m in sorted(self.members) if not running(self.members[m])]

    def static(self, instance_id: str) -> ClassicMember | None:
        return next((m for m in self.members.values() if m.instance_id == instance_id), None)

    def join(  # noqa: PLR0913 - a member's configuration
        self,
        member_id: MemberId,
        handle: str,
        topics: Iterable[str],
        instance_id: str | None,
        specs: Iterable[str | ConsumerPartitionAssignor],
        *,
        rack: str | None = None,
    ) -> ClassicMember | None:
        """A member joins (or a static member comes back under a new member id, replacing its old one).

        Returns it when it is a static member back within its session timeout with the same configuration: it keeps
        its assignment and the group does not rebalance (KIP-345). None: the group must rebalance.
        """
        back = self.members.get(member_id)
        if back is None and instance_id is not None:
            back = self.static(instance_id)
        if back is not None:
            self.members.pop(back.member_id)
        self.add(member_id, handle, topics, instance_id, specs, rack=rack)
        joined = self.members[member_id]
        if back is None or (back.topics, back.specs) != (joined.topics, joined.specs):  # topics: sorted, as a set
            return None
        joined.assignment, joined.generation = back.assignment, back.generation
        return joined

    def rebalance(
        self, cluster: Cluster
    ) -> list[tuple[int, dict[MemberId, tuple[TopicPartition, ...]], dict[MemberId, tuple[TopicPartition, ...]]]]:
        """Rebalance with the coordinator's choice of assignor; per round: the generation, what was revoked and gained.

        As Kafka's ``ConsumerCoordinator``: each member runs its own rebalance protocol (the highest all its assignors
        support: a COOPERATIVE member keeps its partitions beside an EAGER one) and sends its ``client.rack``
        (KIP-881). The leader is the first member in member-id order; one fresh instance per assignor name stands for
        every member's own (told each member's last assignment before it writes that member's user data).
        """
        if not self.members:
            return []
        order = sorted(self.members)
        shared: dict[str, ConsumerPartitionAssignor] = {}
        for m in order:
            for spec in self.members[m].specs:
                if _name(spec) not in shared:
                    shared[_name(spec)] = _instance(spec)
        members: list[RoundMember] = []
        for m in order:
            member = self.members[m]
            assignors = {_name(s): shared[_name(s)] for s in member.specs}
            members.append(
                RoundMember(
                    member_id=m,
                    topics=member.topics,
                    assignors=assignors,
                    protocol=choose_protocol(assignors.values()),
                    owned=tuple(sorted(member.assignment)),
                    generation=member.generation,
                    rack=member.rack,
                    instance_id=member.instance_id,
                )
            )
        rounds = run_rounds(members, cluster, self.generation, wire=False, shared_instance=True)
        for r in members:
            self.members[r.member_id].assignment = frozenset(r.owned)
            self.members[r.member_id].generation = r.generation
        self.generation = rounds[-1].generation
        return [
            (
                r.generation,
                {m: p for m, p in sorted(r.revoked.items()) if p},
                {m: p for m, p in sorted(r.added.items()) if p},
            )
            for r in rounds
        ]
