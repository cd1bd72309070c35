"""The assignor interface: a ``typing.Protocol``, so user classes plug in without subclassing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from assignors._core.model import Assignment, Cluster, MemberId, RebalanceProtocol, Subscription

__all__ = ["ConsumerPartitionAssignor"]


@runtime_checkable
class ConsumerPartitionAssignor(Protocol):
    """What Kafka's ``ConsumerPartitionAssignor`` is, in Python.

    Any object with these members is an assignor: the built-ins, or a user's own class
    (plain attributes satisfy the read-only properties).

    Attributes:
        name: the unique name, sent in JoinGroup as the protocol name.
        version: the assignor's version (unused by the built-ins; Kafka's default is 0).
        supported_protocols: the rebalance protocols this assignor supports, preferred first.
    """

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> int: ...

    @property
    def supported_protocols(self) -> tuple[RebalanceProtocol, ...]: ...

    def assign(self, cluster: Cluster, subscriptions: Mapping[MemberId, Subscription]) -> dict[MemberId, Assignment]:
        """Assign the partitions of the subscribed topics; one entry for every member, empty ones included."""
        ...

    def subscription_user_data(self, topics: Collection[str]) -> bytes | None:
        """The ``user_data`` this member sends in its Subscription (None for none)."""
        ...

    def on_assignment(self, assignment: Assignment, generation_id: int) -> None:
        """Called on every member once the leader's assignment for ``generation_id`` arrives."""
        ...
