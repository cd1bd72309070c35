"""What :class:`~assignors.consumer_group.ConsumerGroupSimulator` keeps of each client process, and reads of a
scenario."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from assignors._core.model import RebalanceProtocol
from assignors.consumer_group._classic import classic_protocol
from assignors.consumer_group._timeline import remote_assignor

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assignors._core.interface import ConsumerPartitionAssignor
    from assignors._core.model import TopicPartition
    from assignors.consumer_group._reconcile import MemberAssignmentState

__all__ = ["Client", "ScenarioLike", "describe"]


class ScenarioLike(Protocol):
    """What :meth:`~assignors.consumer_group.ConsumerGroupSimulator.from_scenario` reads of a
    :class:`~assignors.rebalance.Scenario`."""

    @property
    def partitions(self) -> Mapping[str, int]: ...

    @property
    def session_timeout_s(self) -> float: ...


@dataclass(slots=True)
class Client:
    """A member's client process as the simulator tracks it: its configuration, what it consumes, its life."""

    handle: str
    member_id: str
    topics: tuple[str, ...]
    instance_id: str | None
    specs: tuple[str | ConsumerPartitionAssignor, ...]
    owned: frozenset[TopicPartition] = frozenset()
    joined_specs: tuple[str | ConsumerPartitionAssignor, ...] = ()
    up: bool = True
    token: int = 0
    restarts: int = 0
    rack: str | None = None  # client.rack

    @property
    def consumer(self) -> bool:
        return remote_assignor(self.joined_specs or self.specs)[0]

    @property
    def eager(self) -> bool:
        """A classic member whose assignors make it EAGER: it revokes everything at every rebalance."""
        return not self.consumer and classic_protocol(self.joined_specs) is RebalanceProtocol.EAGER


def describe(state: MemberAssignmentState) -> str:
    return f"epoch {state.member_epoch} {state.state.name}"
