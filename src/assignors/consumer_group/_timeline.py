"""The consumer-group model's timeline, and which members speak the consumer protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assignors.consumer_group._common import ServerAssignor
from assignors.consumer_group._replay import STRATEGIES, server_strategy

if TYPE_CHECKING:
    from collections.abc import Iterable

    from assignors._core.interface import ConsumerPartitionAssignor
    from assignors._core.model import TopicPartition

__all__ = ["CONSUMER", "ConsumerTimeline", "Instant", "remote_assignor"]

CONSUMER = "consumer"
"""An assignor spec meaning ``group.protocol=consumer`` without ``group.remote.assignor``."""


def remote_assignor(specs: Iterable[str | ConsumerPartitionAssignor]) -> tuple[bool, str | None]:
    """Whether a member configured with ``specs`` speaks the consumer protocol, and its remote assignor.

    ``["consumer"]`` is ``group.protocol=consumer``; ``["uniform"]`` or ``["consumer-range"]``
    (or a server assignor object) also set ``group.remote.assignor``. Anything else is a
    classic member's ``partition.assignment.strategy``.
    """
    items = list(specs)
    if len(items) != 1:
        return False, None
    (spec,) = items
    if isinstance(spec, ServerAssignor):
        return True, server_strategy(spec)
    if spec == CONSUMER:
        return True, None
    if isinstance(spec, str) and spec in STRATEGIES:
        return True, spec
    return False, None


@dataclass(frozen=True, slots=True)
class Instant:
    """One step of the timeline and the group right after it.

    Attributes:
        at: the time, in seconds.
        member: the member (its handle) the step is about, if any.
        text: what happened.
        group_epoch: the group epoch (a classic group's generation).
        assignment_epoch: the target assignment epoch (a classic group's generation).
        revoked: what the member stopped consuming in this step.
        added: what it started consuming.
        owned: what every running member consumes after the step.
        stable: the group is stable (no target pending, every member reconciled, none down).
        unowned: partitions of topics that members of the group subscribe to that nobody consumes.
        protocol: ``"consumer"``, ``"classic"`` or ``"empty"``: the group's type after the step.
    """

    at: float
    member: str | None
    text: str
    group_epoch: int
    assignment_epoch: int
    revoked: tuple[TopicPartition, ...]
    added: tuple[TopicPartition, ...]
    owned: dict[str, frozenset[TopicPartition]]
    stable: bool
    unowned: tuple[TopicPartition, ...]
    protocol: str


@dataclass(slots=True)
class ConsumerTimeline:
    """Every step of a simulation, in time order."""

    instants: list[Instant] = field(default_factory=list)

    def to_json(self) -> list[dict[str, Any]]:
        """The timeline as JSON-ready objects (partitions as ``"topic-partition"`` strings), one per step."""
        return [
            {
                "at": i.at,
                "member": i.member,
                "event": i.text,
                "group_epoch": i.group_epoch,
                "assignment_epoch": i.assignment_epoch,
                "revoked": [str(tp) for tp in i.revoked],
                "added": [str(tp) for tp in i.added],
                "owns": {m: [str(tp) for tp in sorted(p)] for m, p in i.owned.items()},
                "stable": i.stable,
                "protocol": i.protocol,
            }
            for i in self.instants
        ]

    def render(self, *, heartbeats: bool = True) -> str:
        """One line per step (quiet heartbeats, which change nothing, are not recorded)."""
        lines = []
        for i in self.instants:
            if not heartbeats and i.text.startswith("heartbeat"):
                continue
            changes = "".join(
                f" {sign}[{', '.join(map(str, sorted(tps)))}]"
                for sign, tps in (("-", i.revoked), ("+", i.added))
                if tps
            )
            who = f" {i.member}:" if i.member else ""
            lines.append(f"t={i.at:g}{who} {i.text}{changes}")
        return "\n".join(lines)
