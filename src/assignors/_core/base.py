"""The private base of the built-in assignors: validation in, pure algorithm, assignments out."""

from __future__ import annotations

import abc
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from assignors._core.errors import InvalidSubscriptionError
from assignors._core.limits import check_group_size
from assignors._core.model import Assignment, Cluster, RebalanceProtocol, Subscription, unchecked_assignment
from assignors._core.util import gc_paused

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from assignors._core.model import MemberId, Topic, TopicPartition

logger = logging.getLogger(__name__)


def validate_group(cluster: object, subscriptions: object) -> dict[Topic, int]:
    """Check the arguments of ``assign`` and return the partition counts it works on: :func:`validate_group_topics`."""
    return validate_group_topics(cluster, subscriptions)[0]


def validate_group_topics(cluster: object, subscriptions: object) -> tuple[dict[Topic, int], set[tuple[str, ...]]]:
    """Check the arguments of ``assign``; return the partition counts it works on and the distinct topic lists.

    The result maps every subscribed topic that has metadata and at least one partition
    to its partition count, in sorted topic order. Topics without metadata are skipped,
    as Kafka's ``AbstractPartitionAssignor`` does.

    Raises:
        InvalidSubscriptionError: ``cluster`` is not a Cluster, ``subscriptions`` not a
            mapping of non-empty string member ids to Subscription objects.
        GroupTooLargeError: more partitions or members than the ceiling (:func:`assignors.size_limits`).
    """
    if not isinstance(cluster, Cluster):
        msg = f"cluster must be an assignors.Cluster, got {type(cluster).__name__}"
        raise InvalidSubscriptionError(msg)
    if not isinstance(subscriptions, Mapping):
        msg = f"subscriptions must be a mapping of member id to Subscription, got {type(subscriptions).__name__}"
        raise InvalidSubscriptionError(msg)
    distinct_topic_lists: set[tuple[str, ...]] = set()
    last: tuple[str, ...] | None = None  # members' equal topic lists are mostly one object: hashed once, not each
    for member, subscription in subscriptions.items():
        if type(member) is not str or not member:
            msg = f"member id {member!r} must be a non-empty string"
            raise InvalidSubscriptionError(msg)
        if not isinstance(subscription, Subscription):
            kind = type(subscription).__name__
            msg = f"subscription of member={member!r} must be an assignors.Subscription, got {kind}"
            raise InvalidSubscriptionError(msg)
        if subscription.topics is not last:
            last = subscription.topics
            distinct_topic_lists.add(last)
    subscribed: set[str] = set().union(*distinct_topic_lists)
    counts = cluster.partitions_per_topic
    partitions_per_topic: dict[Topic, int] = {}
    for topic in sorted(subscribed):
        count = counts.get(topic, 0)
        if count > 0:
            partitions_per_topic[topic] = count
        elif logger.isEnabledFor(logging.DEBUG):
            logger.debug("skipping topic %r: the cluster has no partitions for it", topic)
    check_group_size(sum(partitions_per_topic.values()), len(subscriptions))
    return partitions_per_topic, distinct_topic_lists


class AbstractPartitionAssignor(abc.ABC):
    """Base of the built-in assignors (private: users implement the Protocol instead).

    ``assign`` validates its arguments, computes the partition counts of the subscribed
    topics and calls the algorithm ``_assign_partitions``, which returns one list per
    member; the lists become immutable Assignments.
    """

    name: ClassVar[str]
    version: ClassVar[int] = 0
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (RebalanceProtocol.EAGER,)

    def assign(self, cluster: Cluster, subscriptions: Mapping[MemberId, Subscription]) -> dict[MemberId, Assignment]:
        """Assign the partitions of every subscribed topic with metadata to the members.

        Args:
            cluster: topic metadata (partition counts, optionally replica racks).
            subscriptions: each member's subscription, keyed by member id.

        Returns:
            One Assignment per member, in sorted member-id order, empty ones included.

        Raises:
            InvalidSubscriptionError: malformed arguments; nothing is assigned.
        """
        partitions_per_topic = validate_group(cluster, subscriptions)
        if not subscriptions:
            return {}
        with gc_paused():
            lists = self._assign_partitions(cluster, partitions_per_topic, subscriptions)
            # Our own lists are valid by construction.
            return {member: unchecked_assignment(tuple(lists[member])) for member in sorted(subscriptions)}

    @abc.abstractmethod
    def _assign_partitions(
        self,
        cluster: Cluster,
        partitions_per_topic: Mapping[Topic, int],
        subscriptions: Mapping[MemberId, Subscription],
    ) -> Mapping[MemberId, Sequence[TopicPartition]]:
        """The algorithm: one list (or tuple) for every member of ``subscriptions``."""

    def subscription_user_data(self, topics: Collection[str]) -> bytes | None:  # noqa: ARG002 - interface
        """No user data by default."""
        return None

    def on_assignment(self, assignment: Assignment, generation_id: int) -> None:  # noqa: B027 - optional hook
        """Nothing to remember by default."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def subscriber_positions(
    partitions_per_topic: Mapping[Topic, int],
    subscriptions: Mapping[MemberId, Subscription],
    order: list[MemberId],
) -> dict[Topic, tuple[tuple[int, ...], tuple[int, ...]]]:
    """For each topic, its subscribers as ascending positions in ``order`` (see :func:`topic_positions`)."""
    return topic_positions(partitions_per_topic, [subscriptions[member].topics for member in order])


def topic_positions(
    partitions_per_topic: Mapping[Topic, int], topic_sets: Sequence[tuple[Topic, ...] | frozenset[Topic]]
) -> dict[Topic, tuple[tuple[int, ...], tuple[int, ...]]]:
    """For each topic of ``partitions_per_topic``, the ascending positions of the sets in ``topic_sets`` holding it.

    Equal topic sets form one class, so a group of 2,000 members all subscribed to 1,000 topics
    costs one pass over 1,000 topics, not two million membership tests. Returns ``topic ->
    (class key, positions)``; topics with the same class key share one positions tuple, and a
    topic nobody holds is absent.
    """
    classes: dict[tuple[Topic, ...] | frozenset[Topic], list[int]] = {}
    for position, topics in enumerate(topic_sets):
        classes.setdefault(topics, []).append(position)
    class_positions = list(classes.values())
    topic_classes: dict[Topic, list[int]] = {}
    for index, topics in enumerate(classes):
        for topic in topics:
            if topic in partitions_per_topic:
                topic_classes.setdefault(topic, []).append(index)
    merged: dict[tuple[int, ...], tuple[int, ...]] = {}
    result: dict[Topic, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    for topic, indexes in topic_classes.items():
        key = tuple(indexes)
        positions = merged.get(key)
        if positions is None:
            if len(key) == 1:
                positions = tuple(class_positions[key[0]])
            else:
                positions = tuple(sorted(p for k in key for p in class_positions[k]))
            merged[key] = positions
        result[topic] = (key, positions)
    return result
