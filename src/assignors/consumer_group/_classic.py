"""The classic side of a group that upgrades to (or downgrades from) the consumer protocol."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assignors._builtin.registry import get_assignor
from assignors._classic.rebalance import rebalance
from assignors._classic.rules import choose_protocol, select_assignor
from assignors._core.model import Cluster, RebalanceProtocol, Subscription

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from assignors._core.interface import ConsumerPartitionAssignor
    from assignors._core.model import MemberId, TopicPartition

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
    """A member of a classic group: its configuration and what its last rebalance gave it."""

    member_id: MemberId
    handle: str
    topics: tuple[str, ...]
    instance_id: str | None
    specs: tuple[str | ConsumerPartitionAssignor, ...]
    assignment: frozenset[TopicPartition] = frozenset()


@dataclass(slots=True)
class ClassicGroup:
    """A classic group: its generation and members; each change is one whole rebalance (JoinGroup/SyncGroup rounds)."""

    generation: int = -1
    members: dict[MemberId, ClassicMember] = field(default_factory=dict)

    def add(
        self,
        member_id: MemberId,
        handle: str,
        topics: Iterable[str],
        instance_id: str | None,
        specs: Iterable[str | ConsumerPartitionAssignor],
    ) -> None:
        self.members[member_id] = ClassicMember(
            member_id, handle, tuple(sorted(set(topics))), instance_id, tuple(specs)
        )

    def static(self, instance_id: str) -> ClassicMember | None:
        return next((m for m in self.members.values() if m.instance_id == instance_id), None)

    def rebalance(
        self, partitions: Mapping[str, int]
    ) -> list[tuple[int, dict[MemberId, tuple[TopicPartition, ...]], dict[MemberId, tuple[TopicPartition, ...]]]]:
        """Rebalance with the coordinator's choice of assignor; per round: the generation, what was revoked and gained.

        The leader is the first member in member-id order; a group with an EAGER member rebalances EAGER.
        """
        if not self.members:
            return []
        order = sorted(self.members)
        name = select_assignor({m: [_name(s) for s in self.members[m].specs] for m in order})
        leader = next(s for m in order for s in self.members[m].specs if _name(s) == name)
        protocol = min(classic_protocol(self.members[m].specs) for m in order)
        subscriptions = {
            m: Subscription(self.members[m].topics, group_instance_id=self.members[m].instance_id) for m in order
        }
        owned = {m: sorted(self.members[m].assignment) for m in order}
        result = rebalance(
            _instance(leader), Cluster(partitions), subscriptions, owned, generation=self.generation, protocol=protocol
        )
        for m in order:
            self.members[m].assignment = frozenset(result.assignment[m].partitions)
        self.generation = result.generation
        return [
            (
                r.generation,
                {m: p for m, p in sorted(r.revoked.items()) if p},
                {m: p for m, p in sorted(r.added.items()) if p},
            )
            for r in result.rounds
        ]
