"""What the server-side assignors share: validation, member order, and the previous target read from the input."""

from __future__ import annotations

import abc
import re
from collections import deque
from collections.abc import Mapping
from itertools import repeat
from operator import itemgetter, setitem
from typing import TYPE_CHECKING, ClassVar, Final

from assignors._core.base import validate_group_topics
from assignors._core.errors import ConfigurationError
from assignors._core.model import (
    Assignment,
    Cluster,
    MemberId,
    RebalanceProtocol,
    Subscription,
    Topic,
    TopicPartition,
    unchecked_assignment,
)
from assignors._core.util import gc_paused, java_sorted

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from assignors.consumer_group._java_order import CoordinatorTable

__all__ = [
    "CONSUMER_PROTOCOL",
    "KAFKA_VERSION",
    "ServerAssignor",
    "cached_partitions",
    "free_partitions",
    "kafka_version_tuple",
    "make_partitions",
    "previous_targets",
]

CONSUMER_PROTOCOL: Final = "CONSUMER"
"""The label of KIP-848's consumer group protocol (``group.protocol=consumer``) in reports."""

KAFKA_VERSION: Final = "4.4.0"
"""The Kafka version whose broker assignors the server assignors replay by default: the project's pinned Kafka
(``assignors.testing.DEFAULT_KAFKA_VERSION``, the broker of the integration tests and the Java oracle)."""

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def kafka_version_tuple(version: str) -> tuple[int, int, int]:
    """``"4.0.1"`` as ``(4, 0, 1)``; ``"3.9"`` as ``(3, 9, 0)``; a suffix such as ``-SNAPSHOT`` or ``-rc1`` is ignored.

    Raises:
        ConfigurationError: not a version number.
    """
    match = _VERSION.match(version) if isinstance(version, str) else None
    if match is None or (match.end() < len(version) and version[match.end()] not in "-+"):
        msg = f"kafka_version={version!r} must be a Kafka version number such as {KAFKA_VERSION!r}"
        raise ConfigurationError(msg)
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


_new_tuple = tuple.__new__

_PARTITIONS: dict[Topic, tuple[TopicPartition, ...]] = {}
_PARTITIONS_HELD = [0]
_PARTITIONS_CEILING: Final = 1 << 21
"""At most this many cached TopicPartitions (about 150 MB at the ceiling): past it the cache starts over."""


def cached_partitions(topic: Topic, count: int) -> tuple[TopicPartition, ...]:
    """``TopicPartition(topic, p)`` for ``p`` in ``range(count)`` (or more), built once and shared.

    A target is dealt from these by slicing; the same topics come back round after round (a replay, a
    coordinator's next target), so a million partitions are not built, nor freed, again each time. The objects
    are immutable values: sharing them between results is invisible to callers.
    """
    cached = _PARTITIONS.get(topic)
    if cached is not None and len(cached) >= count:
        return cached
    if _PARTITIONS_HELD[0] + count > _PARTITIONS_CEILING:
        _PARTITIONS.clear()
        _PARTITIONS_HELD[0] = 0
        cached = None
    built = tuple(make_partitions(topic, range(count)))
    _PARTITIONS_HELD[0] += count - (len(cached) if cached is not None else 0)
    _PARTITIONS[topic] = built
    return built


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

    def assign(
        self,
        cluster: Cluster,
        subscriptions: Mapping[MemberId, Subscription],
        *,
        coordinator: CoordinatorTable | None = None,
    ) -> dict[MemberId, Assignment]:
        """The new target assignment of every member.

        Args:
            cluster: topic metadata; topics without metadata are not assigned.
            subscriptions: each member's subscription; ``owned_partitions`` is the member's
                current *target* assignment (what the coordinator computed last time), not
                what the member holds.
            coordinator: the group's members as the coordinator holds them before this computation
                (:class:`~assignors.consumer_group.CoordinatorTable`, not changed here): the order in which the
                coordinator hands the members over, where the assignor depends on it (``uniform``); None: a
                table holding exactly these members, added in Java's string order
                (:func:`~assignors.consumer_group.coordinator_member_order`'s default).

        Returns:
            One Assignment per member, in sorted member-id order, each sorted, empty ones included.

        Raises:
            InvalidSubscriptionError: malformed arguments; nothing is assigned.
        """
        counts, distinct = validate_group_topics(cluster, subscriptions)
        if not subscriptions:
            return {}
        order = self._member_order(subscriptions, coordinator)
        with gc_paused():
            lists = self._targets(
                order, counts, subscriptions, identical=len(distinct) == 1, topic_ids=cluster.topic_ids
            )
            result = {}
            for member, partitions in zip(order, lists, strict=True):
                if type(partitions) is tuple:  # sorted already (e.g. a previous target handed back as it is)
                    result[member] = unchecked_assignment(partitions)
                    continue
                partitions.sort()  # type: ignore[union-attr] # a list
                result[member] = unchecked_assignment(tuple(partitions))  # valid by construction
            if order == sorted(order):
                return result
            return {member: result[member] for member in sorted(result)}

    def _member_order(
        self,
        subscriptions: Mapping[MemberId, Subscription],
        coordinator: CoordinatorTable | None,  # noqa: ARG002 - an assignor that sorts its members ignores it
    ) -> list[MemberId]:
        """The order in which the algorithm goes through the members: Java's string order of their ids."""
        return java_sorted(subscriptions)

    @abc.abstractmethod
    def _targets(
        self,
        order: list[MemberId],
        counts: Mapping[Topic, int],
        subscriptions: Mapping[MemberId, Subscription],
        *,
        identical: bool,
        topic_ids: Mapping[Topic, str],
    ) -> list[list[TopicPartition]] | list[list[TopicPartition] | tuple[TopicPartition, ...]]:
        """The algorithm: one list per member of ``order``, in that order; a tuple is a sorted target as it is.

        ``identical``: every member subscribes to the same topics (Kafka's ``SubscriptionType.HOMOGENEOUS``).
        ``topic_ids``: the cluster's topic ids that are known (:attr:`assignors.Cluster.topic_ids`).
        """

    def subscription_user_data(self, topics: Collection[str]) -> bytes | None:  # noqa: ARG002 - interface
        """Server assignors read no user data."""
        return None

    def on_assignment(self, assignment: Assignment, generation_id: int) -> None:  # noqa: B027 - optional hook
        """Nothing to remember: the coordinator keeps the target."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def previous_targets(
    order: Sequence[MemberId], counts: Mapping[Topic, int], subscriptions: Mapping[MemberId, Subscription]
) -> tuple[list[tuple[TopicPartition, ...]], dict[Topic, list[int]]]:
    """Each member's previous target (its ``owned_partitions``), as the assignor may start from it.

    Returns, per member in ``order``, its previous partitions sorted, keeping only topics
    the member subscribes to that have metadata and partitions that exist (a valid target is
    its ``owned_partitions`` tuple itself, not a copy); and per topic of ``counts`` the owner
    of each partition as a position in ``order`` (-1 for none). Kafka's targets never overlap;
    when the input claims a partition for two members anyway, the first in ``order`` keeps it.
    """
    owners = {topic: [-1] * count for topic, count in counts.items()}
    current: list[tuple[TopicPartition, ...]] = []
    # Per distinct subscription: at its first member its topics as a set (cheap when each member has its own, as in
    # KIP-1263's shape), from its second on a view of the owners arrays it may write (its members' partitions then
    # checked by the writes themselves, with no pass of their own).
    seen: dict[int, frozenset[Topic] | dict[Topic, list[int] | None]] = {}  # by id(topics), alive: no hashing
    for index, member in enumerate(order):
        subscription = subscriptions[member]
        owned = subscription.owned_partitions
        if not owned:  # a new member, or a fresh group
            current.append(owned)
            continue
        topics = subscription.topics
        known = seen.get(id(topics))
        if known is None:
            known = seen[id(topics)] = frozenset(topics)
            view: Mapping[Topic, list[int] | None] = owners if known.issuperset(map(itemgetter(0), owned)) else {}
        elif type(known) is frozenset:  # None for a topic without metadata, built at C speed
            view = seen[id(topics)] = dict(zip(topics, map(owners.get, topics), strict=True))
        else:
            view = known  # type: ignore[assignment] # the dict
        try:  # the common case, all valid, at C speed: an unsubscribed topic, one without metadata or a partition
            # past its count raises
            _own(view, owned, index)  # type: ignore[arg-type] # None raises TypeError, handled below
            current.append(owned)
        except (KeyError, TypeError, IndexError):
            mine = tuple(tp for tp in owned if tp[0] in known and tp[0] in owners and tp[1] < counts[tp[0]])
            _own(owners, mine, index)
            current.append(mine)
    listed = sum(map(len, current))
    if listed == sum(len(o) - o.count(-1) for o in owners.values()):
        return current, owners
    for index in reversed(range(len(current))):  # double claims: the first member in order wins
        _own(owners, current[index], index)
    for index, mine in enumerate(current):
        if any(owners[tp[0]][tp[1]] != index for tp in mine):
            current[index] = tuple(tp for tp in mine if owners[tp[0]][tp[1]] == index)
    return current, owners


def _own(owners: Mapping[Topic, list[int]], partitions: Sequence[TopicPartition], index: int) -> None:
    """``owners[topic][partition] = index`` for each of ``partitions``, at C speed."""
    arrays = map(owners.__getitem__, map(itemgetter(0), partitions))
    deque(map(setitem, arrays, map(itemgetter(1), partitions), repeat(index)), maxlen=0)


def free_partitions(owner: list[int]) -> list[int] | range:
    """The partitions of a topic that nobody owns, ascending."""
    missing = owner.count(-1)
    if missing == len(owner):
        return range(len(owner))
    if missing == 0:
        return []
    if missing * 8 > len(owner):
        return [p for p, o in enumerate(owner) if o < 0]
    free = [owner.index(-1)]  # a few: found at C speed
    for _ in range(missing - 1):
        free.append(owner.index(-1, free[-1] + 1))
    return free
