"""The events that drive :class:`~assignors.rebalance.GroupSimulator`.

Exported from :mod:`assignors.rebalance`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from assignors._core.interface import ConsumerPartitionAssignor
from assignors._core.model import RANGE_ASSIGNOR_NAME

__all__ = ["AddPartitions", "AssignorSpec", "Crash", "Event", "Join", "Leave", "Restart", "Subscribe"]

AssignorSpec: TypeAlias = str | ConsumerPartitionAssignor
"""A member's assignor: a built-in's name (each member gets its own instance) or an object."""


@dataclass(frozen=True, slots=True)
class Join:
    """A new consumer joins. ``member`` names it in the timeline (its first member id).

    ``assignors`` is its ``partition.assignment.strategy``, preferred first: names of
    built-in assignors or assignor objects (each member gets its own instances of names);
    Kafka's default is range.
    """

    at: float
    member: str
    topics: tuple[str, ...]
    assignors: tuple[AssignorSpec, ...] = (RANGE_ASSIGNOR_NAME,)
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
