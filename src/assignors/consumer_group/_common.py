"""What the server-side assignors share: validation, member order, and the previous target read from the input."""

from __future__ import annotations

import abc
from bisect import bisect_left
from collections.abc import Mapping
from itertools import chain, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, ClassVar, Final

from assignors._base import validate_group
from assignors._model import Assignment, Cluster, MemberId, RebalanceProtocol, Subscription, Topic, TopicPartition
from assignors._util import gc_paused, java_sorted

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

__all__ = [
    "CONSUMER_PROTOCOL",
    "ServerAssignor",
    "make_partitions",
    "previous_targets",
]

CONSUMER_PROTOCOL: Final = "CONSUMER"
"""The label of KIP-848's consumer group protocol (``group.protocol=consumer``) in reports."""

_new_tuple = tuple.__new__


def make_partitions(topic: Topic, partitions: Sequence[int] | range) -> list[TopicPartition]:
    """``TopicPartition(topic, p)`` for each ``p``, built in one C-level pass (the numbers are known valid)."""
    size = len(partitions)
    return list(map(_new_tuple, repeat(TopicPartition, size), zip(repeat(topic, size), partitions, strict=True)))


class ServerAssignor(abc.ABC):
    """Base of the server-side (KIP-848) assignors.

    They satisfy :class:`assignors.ConsumerPartitionAssignor`, so the test kit and the
    metrics take them, but no client runs them: ``supported_protocols`` is empty, since a
    server assignor belongs to neither client-side rebalance protocol. The group protocol
    they belong to is :data:`group_protocol` (``"CONSUMER"``).
    """

    name: ClassVar[str]
    version: ClassVar[int] = 0
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = ()
    group_protocol: ClassVar[str] = CONSUMER_PROTOCOL

    def assign(self, cluster: Cluster, subscriptions: Mapping[MemberId, Subscription]) -> dict[MemberId, Assignment]:
        """The new target assignment of every member.

        Args:
            cluster: topic metadata; topics without metadata are not assigned.
            subscriptions: each member's subscription; ``owned_partitions`` is the member's
                current *target* assignment (what the coordinator computed last time), not
                what the member holds.

        Returns:
            One Assignment per member, in sorted member-id order, each sorted, empty ones included.

        Raises:
            InvalidSubscriptionError: malformed arguments; nothing is assigned.
        """
        counts = validate_group(cluster, subscriptions)
        if not subscriptions:
            return {}
        order = java_sorted(subscriptions)
        with gc_paused():
            lists = self._targets(order, counts, subscriptions)
            trusted = Assignment._trusted  # noqa: SLF001 - the lists are valid by construction
            result = {}
            for member, partitions in zip(order, lists, strict=True):
                partitions.sort()
                result[member] = trusted(tuple(partitions))
            return {member: result[member] for member in sorted(result)}

    @abc.abstractmethod
    def _targets(
        self, order: list[MemberId], counts: Mapping[Topic, int], subscriptions: Mapping[MemberId, Subscription]
    ) -> list[list[TopicPartition]]:
        """The algorithm: one list per member of ``order``, in that order."""

    def subscription_user_data(self, topics: Collection[str]) -> bytes | None:  # noqa: ARG002 - interface
        """Server assignors read no user data."""
        return None

    def on_assignment(self, assignment: Assignment, generation_id: int) -> None:  # noqa: B027 - optional hook
        """Nothing to remember: the coordinator keeps the target."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


Runs = list[tuple[Topic, list[TopicPartition]]]


def _runs(owned: tuple[TopicPartition, ...], topics: Collection[Topic], counts: Mapping[Topic, int]) -> Runs:
    """``owned`` (sorted) cut into per-topic runs, keeping subscribed topics and existing partitions only."""
    if not owned:
        return []
    present = set(map(itemgetter(0), owned))
    runs: Runs = []
    for topic in sorted(present):
        count = counts.get(topic, 0)
        if count == 0 or topic not in topics:
            continue
        start = bisect_left(owned, (topic,))
        end = bisect_left(owned, (topic, count), start)
        if end > start:
            runs.append((topic, list(owned[start:end])))
    return runs


def previous_targets(
    order: Sequence[MemberId], counts: Mapping[Topic, int], subscriptions: Mapping[MemberId, Subscription]
) -> list[Runs]:
    """Each member's previous target (its ``owned_partitions``), as the assignor may start from it.

    Per member in ``order``: runs of ``(topic, partitions)`` in topic order, partitions
    ascending, keeping only topics the member subscribes to that have metadata, and
    partitions that exist. Kafka's targets never overlap; when the input claims a partition
    for two members anyway, the first in ``order`` keeps it.
    """
    runs = [_runs(subscriptions[m].owned_partitions, subscriptions[m].topics, counts) for m in order]
    claimed = list(chain.from_iterable(partitions for member in runs for _, partitions in member))
    if len(set(claimed)) == len(claimed):
        return runs
    seen: set[TopicPartition] = set()
    cleaned: list[Runs] = []
    for member in runs:
        kept: Runs = []
        for topic, partitions in member:
            fresh = [tp for tp in partitions if tp not in seen]
            seen.update(fresh)
            if fresh:
                kept.append((topic, fresh))
        cleaned.append(kept)
    return cleaned
