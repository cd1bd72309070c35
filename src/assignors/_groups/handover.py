""":class:`~assignors.rebalance.GroupSimulator`'s consumer-protocol side (KIP-848).

When a member joins or restarts with ``group.protocol=consumer`` (its assignors are
``["consumer"]``, ``["uniform"]``, ``["consumer-range"]`` or a server assignor object), the
classic JoinGroup/SyncGroup model no longer describes the group: from then on the simulator
hands every event to :class:`~assignors.consumer_group.ConsumerGroupSimulator`, which runs the
events applied so far again from an empty group (the classic part as classic rebalances, then
the online upgrade, heartbeat by heartbeat). The classic :class:`Timeline` then mirrors the
delegate's steps as notes, so a caller of ``GroupSimulator.run`` reads the whole story either way.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from assignors._classic.events import Event, Join, Restart
from assignors._classic.timeline import Note, Timeline, compact
from assignors.consumer_group._simulator import ConsumerGroupSimulator
from assignors.consumer_group._timeline import remote_assignor

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from assignors._core.model import Cluster, MemberId, TopicPartition

__all__ = ["ConsumerDelegate", "speaks_consumer_protocol"]

logger = logging.getLogger(__name__)


def speaks_consumer_protocol(event: Event) -> bool:
    """Whether ``event`` starts a member with ``group.protocol=consumer``."""
    if isinstance(event, Join | Restart) and event.assignors is not None:
        return remote_assignor(event.assignors)[0]
    return False


class ConsumerDelegate:
    """The consumer-protocol model a :class:`GroupSimulator` hands its group to, and the mirrored timeline."""

    def __init__(
        self,
        partitions: Mapping[str, int] | Cluster,
        session_timeout_s: float,
        earlier: Sequence[Event],
        timeline: Timeline,
    ) -> None:
        self.model: ConsumerGroupSimulator = ConsumerGroupSimulator(partitions, session_timeout_s=session_timeout_s)
        self.timeline = timeline
        logger.debug("a member speaks the consumer protocol: replaying %d events on the KIP-848 model", len(earlier))
        for event in earlier:
            self.model.apply(event)
        self.sync()

    def apply(self, event: Event) -> None:
        self.model.apply(event)
        self.sync()

    def advance(self, to: float) -> None:
        self.model.advance(to)
        self.sync()

    def sync(self) -> None:
        """The delegate's steps as the classic timeline's notes (in place: callers may hold the timeline)."""
        self.timeline.entries[:] = [
            Note(i.at, f"{i.member + ': ' if i.member else ''}{i.text}{_changes(i.revoked, i.added)}")
            for i in self.model.timeline.instants
        ]

    def owned(self) -> dict[MemberId, tuple[TopicPartition, ...]]:
        """What each running member consumes, by its handle."""
        return {handle: tuple(sorted(partitions)) for handle, partitions in self.model.owned().items()}


def _changes(revoked: Sequence[TopicPartition], added: Sequence[TopicPartition]) -> str:
    return "".join(f" {sign}{compact(tps)}" for sign, tps in (("-", revoked), ("+", added)) if tps)
