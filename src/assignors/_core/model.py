"""The domain model: topic partitions, subscriptions, assignments, cluster metadata.

All types are immutable. ``TopicPartition`` is a tuple subclass because a million of
them is a normal input: it hashes, compares and sorts in C. Constructors validate
their arguments and raise :class:`~assignors.InvalidSubscriptionError` naming the
field and the value; the assignors build their outputs through private trusted
constructors that skip the checks they have already made.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise, repeat
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, NamedTuple, Self, TypeAlias, TypeGuard

from assignors._core.errors import InvalidSubscriptionError

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = [
    "COOPERATIVE_STICKY_ASSIGNOR_NAME",
    "DEFAULT_GENERATION",
    "RANGE_ASSIGNOR_NAME",
    "ROUNDROBIN_ASSIGNOR_NAME",
    "STICKY_ASSIGNOR_NAME",
    "Assignment",
    "Cluster",
    "MemberId",
    "RebalanceProtocol",
    "Subscription",
    "Topic",
    "TopicPartition",
]

MemberId: TypeAlias = str
Topic: TypeAlias = str

RANGE_ASSIGNOR_NAME: Final = "range"
ROUNDROBIN_ASSIGNOR_NAME: Final = "roundrobin"
STICKY_ASSIGNOR_NAME: Final = "sticky"
COOPERATIVE_STICKY_ASSIGNOR_NAME: Final = "cooperative-sticky"

DEFAULT_GENERATION: Final = -1
"""The generation of a member that has none (Kafka's ``AbstractStickyAssignor.DEFAULT_GENERATION``)."""

INT32_MAX: Final = 2**31 - 1
"""The largest partition number, partition count and generation: Kafka carries them as INT32."""


class RebalanceProtocol(enum.IntEnum):
    """Kafka's client-side rebalance protocols; a higher value is the more capable protocol."""

    EAGER = 0
    COOPERATIVE = 1


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_partition_count(value: object) -> TypeGuard[int]:
    """Whether ``value`` can be a topic's partition count: an int (not a bool) in 0..INT32_MAX."""
    return _is_int(value) and 0 <= value <= INT32_MAX  # type: ignore[operator] # an int, checked first


class _TopicPartitionFields(NamedTuple):
    topic: str
    partition: int


class TopicPartition(_TopicPartitionFields):
    """A partition of a topic; ordered by ``(topic, partition)``.

    Examples:
        >>> tp = TopicPartition("orders", 3)
        >>> str(tp), tp.topic, tp.partition
        ('orders-3', 'orders', 3)
        >>> [str(tp) for tp in sorted([TopicPartition("b", 0), TopicPartition("a", 10), TopicPartition("a", 2)])]
        ['a-2', 'a-10', 'b-0']
    """

    __slots__ = ()

    def __new__(cls, topic: str, partition: int) -> Self:
        if type(topic) is not str or not topic:
            msg = f"topic={topic!r} must be a non-empty string"
            raise InvalidSubscriptionError(msg)
        if not _is_int(partition) or not 0 <= partition <= INT32_MAX:
            msg = f"partition={partition!r} of topic={topic!r} must be an integer in 0..{INT32_MAX} (Kafka's INT32)"
            raise InvalidSubscriptionError(msg)
        return tuple.__new__(cls, (topic, partition))

    def __str__(self) -> str:
        return f"{self[0]}-{self[1]}"


_tuple_new = tuple.__new__


_NO_RACKS: frozenset[str] = frozenset()
_TOPIC_ID: Final = re.compile(r"[A-Za-z0-9_-]{21}[AQgw]")
"""Kafka's ``Uuid.toString()``: 16 bytes in URL-safe base64 without padding (the last character holds 2 bits)."""


def is_topic_id(value: object) -> TypeGuard[str]:
    """Whether ``value`` is a Kafka topic id as Kafka prints it (``Uuid.toString()``: 22 characters).

    >>> is_topic_id("AAAAAAAAAAEAAAAAAAAAAg"), is_topic_id("AAAAAAAAAAEAAAAAAAAAAh"), is_topic_id(7)
    (True, False, False)
    """
    return type(value) is str and _TOPIC_ID.fullmatch(value) is not None


def unchecked_tp(topic: str, partition: int) -> TopicPartition:
    """Build a TopicPartition without validation (arguments already checked)."""
    return _tuple_new(TopicPartition, (topic, partition))


def topic_partitions(topic: str, count: int, start: int = 0) -> list[TopicPartition]:
    """Partitions ``start..count-1`` of ``topic``, built without validation in one C-level pass."""
    size = count - start
    return list(
        map(_tuple_new, repeat(TopicPartition, size), zip(repeat(topic, size), range(start, count), strict=True))
    )


def partition_of_each(topics: Sequence[str], partition: int) -> list[TopicPartition]:
    """Partition ``partition`` of every topic in ``topics``, in that order, unvalidated, in one C-level pass."""
    size = len(topics)
    return list(map(_tuple_new, repeat(TopicPartition, size), zip(topics, repeat(partition, size), strict=True)))


def parse_topic_partition(text: str) -> TopicPartition:
    """Parse ``"topic-partition"`` (the ``str()`` form) back into a TopicPartition.

    The partition number is what follows the last ``-``, so topics may contain dashes.

    >>> parse_topic_partition("my-topic-12")
    TopicPartition(topic='my-topic', partition=12)

    Raises:
        InvalidSubscriptionError: the text has no ``-<number>`` suffix.
    """
    topic, sep, number = text.rpartition("-")
    if not sep or not topic or not number.isdigit() or not number.isascii():
        msg = f"partition {text!r} must look like 'topic-<partition number>'"
        raise InvalidSubscriptionError(msg)
    return TopicPartition(topic, int(number))


def _as_topic_partition(item: object, field: str) -> TopicPartition:
    if type(item) is TopicPartition:
        return item
    if isinstance(item, tuple) and len(item) == 2:  # noqa: PLR2004 - a (topic, partition) pair
        return TopicPartition(item[0], item[1])
    msg = f"{field} must hold TopicPartition values, got {item!r}"
    raise InvalidSubscriptionError(msg)


def _check_generation(generation_id: int) -> None:
    if not _is_int(generation_id) or generation_id > INT32_MAX:
        msg = f"generation_id={generation_id!r} must be an integer <= {INT32_MAX} (Kafka's INT32; negative means none)"
        raise InvalidSubscriptionError(msg)


def _optional_str(value: object, field: str) -> str | None:
    if value is None or value == "":
        return None
    if type(value) is not str:
        msg = f"{field}={value!r} must be a string or None"
        raise InvalidSubscriptionError(msg)
    return value


def _optional_bytes(value: object, field: str) -> bytes | None:
    if value is None or type(value) is bytes:
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    msg = f"{field} must be bytes or None, got {type(value).__name__}"
    raise InvalidSubscriptionError(msg)


def _items(values: object, field: str, what: str) -> list[object]:
    """The items of an iterable argument, or InvalidSubscriptionError naming ``field``."""
    if isinstance(values, str | bytes):
        msg = f"{field}={values!r} must be an iterable of {what}, not a single string"
        raise InvalidSubscriptionError(msg)
    try:
        return list(values)  # type: ignore[call-overload,no-any-return]
    except TypeError:
        msg = f"{field} must be an iterable of {what}, got {values!r}"
        raise InvalidSubscriptionError(msg) from None


_TOPIC_LISTS: dict[tuple[str, ...], tuple[str, ...]] = {}
_TOPIC_LISTS_KEPT: Final = 256
"""At most this many distinct topic lists are shared (then the table starts again): a group has a handful."""


def _shared_topics(topics: tuple[str, ...]) -> tuple[str, ...]:
    """One tuple object for equal topic lists, so ``assign`` tells members' lists apart by identity.

    A group of 2,000 members on 500 topics otherwise hashes 2,000 tuples of 500 names (twice, some
    7 ms each time); with one shared object it compares pointers. The tuples are immutable, so
    sharing them is invisible.
    """
    shared = _TOPIC_LISTS.get(topics)
    if shared is None:
        if len(_TOPIC_LISTS) >= _TOPIC_LISTS_KEPT:
            _TOPIC_LISTS.clear()
        _TOPIC_LISTS[topics] = shared = topics
    return shared


def _sorted_unique_topics(topics: Iterable[str]) -> tuple[str, ...]:
    items = _items(topics, "topics", "topic names")
    if set(map(type, items)) <= {str} and all(items):  # the common case, checked in C
        return _shared_topics(tuple(sorted(set(items))))  # type: ignore[arg-type] # all str
    for topic in items:
        if type(topic) is not str or not topic:
            msg = f"topics must be non-empty strings, got {topic!r}"
            raise InvalidSubscriptionError(msg)
    return _shared_topics(tuple(sorted(set(items))))  # type: ignore[arg-type] # checked to be str above


def _sorted_partitions(partitions: Iterable[object], field: str) -> tuple[TopicPartition, ...]:
    given = _items(partitions, field, "TopicPartition")
    if set(map(type, given)) <= {TopicPartition} and len(set(given)) == len(given):  # the common case, in C
        return tuple(sorted(given))  # type: ignore[arg-type] # all TopicPartition
    items = sorted(_as_topic_partition(item, field) for item in given)
    for previous, current in pairwise(items):
        if previous == current:
            msg = f"{field} lists partition {str(current)!r} twice"
            raise InvalidSubscriptionError(msg)
    return tuple(items)


@dataclass(frozen=True, slots=True, init=False)
class Subscription:
    """What one member sends when it joins: its topics and what it owns.

    ``topics`` is kept sorted and without duplicates and ``owned_partitions`` sorted,
    as Kafka's serializer writes them, so a subscription survives an encode/decode
    round trip unchanged. A negative ``generation_id`` means "no generation" and is
    stored as ``-1``; an empty ``rack_id`` means "no rack" and is stored as None.

    >>> s = Subscription(["b", "a", "b"], owned_partitions=[TopicPartition("a", 1)], generation_id=4)
    >>> s.topics, s.owned_partitions, s.generation_id
    (('a', 'b'), (TopicPartition(topic='a', partition=1),), 4)
    """

    topics: tuple[str, ...]
    user_data: bytes | None
    owned_partitions: tuple[TopicPartition, ...]
    generation_id: int
    rack_id: str | None
    group_instance_id: str | None

    def __init__(  # noqa: PLR0913 - Kafka's Subscription has these fields
        self,
        topics: Iterable[str],
        *,
        user_data: bytes | None = None,
        owned_partitions: Iterable[TopicPartition] = (),
        generation_id: int = DEFAULT_GENERATION,
        rack_id: str | None = None,
        group_instance_id: str | None = None,
    ) -> None:
        _check_generation(generation_id)
        if group_instance_id == "":
            msg = "group_instance_id='' must be a non-empty string or None"
            raise InvalidSubscriptionError(msg)
        setattr_ = object.__setattr__
        setattr_(self, "topics", _sorted_unique_topics(topics))
        setattr_(self, "user_data", _optional_bytes(user_data, "user_data"))
        setattr_(self, "owned_partitions", _sorted_partitions(owned_partitions, "owned_partitions"))
        setattr_(self, "generation_id", max(generation_id, DEFAULT_GENERATION))
        setattr_(self, "rack_id", _optional_str(rack_id, "rack_id"))
        setattr_(self, "group_instance_id", _optional_str(group_instance_id, "group_instance_id"))


def rejoined_subscription(
    subscription: Subscription,
    *,
    user_data: bytes | None,
    owned_partitions: Iterable[TopicPartition],
    generation_id: int,
) -> Subscription:
    """``subscription`` as its member sends it when it (re)joins: new user data, owned partitions and generation.

    Cheaper than building it again: topics, rack and instance id were validated with ``subscription``;
    the three new fields are checked here.
    """
    _check_generation(generation_id)
    copy = object.__new__(Subscription)
    setattr_ = object.__setattr__
    setattr_(copy, "topics", subscription.topics)
    setattr_(copy, "user_data", _optional_bytes(user_data, "user_data"))
    owned = _sorted_partitions(owned_partitions, "owned_partitions") if owned_partitions != () else ()
    setattr_(copy, "owned_partitions", owned)
    setattr_(copy, "generation_id", max(generation_id, DEFAULT_GENERATION))
    setattr_(copy, "rack_id", subscription.rack_id)
    setattr_(copy, "group_instance_id", subscription.group_instance_id)
    return copy


def unchecked_subscription(
    template: Subscription, user_data: bytes | None, owned_partitions: tuple[TopicPartition, ...], generation_id: int
) -> Subscription:
    """:func:`rejoined_subscription` without its checks: for values this library built itself.

    ``user_data`` must be bytes or None, ``owned_partitions`` sorted and unique, ``generation_id`` an int
    in Kafka's INT32 range (negative: none).
    """
    copy = object.__new__(Subscription)
    setattr_ = object.__setattr__
    setattr_(copy, "topics", template.topics)
    setattr_(copy, "user_data", user_data)
    setattr_(copy, "owned_partitions", owned_partitions)
    setattr_(copy, "generation_id", max(generation_id, DEFAULT_GENERATION))
    setattr_(copy, "rack_id", template.rack_id)
    setattr_(copy, "group_instance_id", template.group_instance_id)
    return copy


@dataclass(frozen=True, slots=True, init=False)
class Assignment:
    """The partitions the leader gives one member, in the assignor's order.

    >>> Assignment([TopicPartition("t", 0), TopicPartition("t", 2)]).partitions
    (TopicPartition(topic='t', partition=0), TopicPartition(topic='t', partition=2))
    """

    partitions: tuple[TopicPartition, ...]
    user_data: bytes | None

    def __init__(self, partitions: Iterable[TopicPartition], *, user_data: bytes | None = None) -> None:
        given = _items(partitions, "partitions", "TopicPartition")
        if set(map(type, given)) <= {TopicPartition}:  # the common case, checked in C
            items: tuple[TopicPartition, ...] = tuple(given)  # type: ignore[arg-type] # all TopicPartition
        else:
            items = tuple(_as_topic_partition(item, "partitions") for item in given)
        if len(set(items)) != len(items):
            seen: set[TopicPartition] = set()
            for tp in items:
                if tp in seen:
                    msg = f"partitions lists {str(tp)!r} twice"
                    raise InvalidSubscriptionError(msg)
                seen.add(tp)
        object.__setattr__(self, "partitions", items)
        object.__setattr__(self, "user_data", _optional_bytes(user_data, "user_data"))


def unchecked_assignment(partitions: tuple[TopicPartition, ...], user_data: bytes | None = None) -> Assignment:
    """Build an Assignment without validation: for output that is valid by construction (sorted, unique)."""
    assignment = object.__new__(Assignment)
    object.__setattr__(assignment, "partitions", partitions)
    object.__setattr__(assignment, "user_data", user_data)
    return assignment


class Cluster:
    """Topic metadata for an assignment: partition counts and, optionally, replica racks and topic ids.

    A topic with zero partitions is treated like a topic without metadata. The racks
    of a partition are the racks of all of its replicas (KIP-881); empty rack names are
    dropped. ``topic_ids`` are the cluster's topic ids as Kafka prints them (22 characters
    of URL-safe base64, ``kafka-topics --describe``'s ``TopicId``): KIP-848's server
    assignors iterate topics in the Java ``HashSet`` order of their ids, so with them the
    ``uniform`` replay orders topics as the broker does (without them, by name).

    >>> c = Cluster({"t": 3}, partition_racks={TopicPartition("t", 0): ["r1", "r2"]})
    >>> c.partition_count("t"), c.partition_count("missing"), sorted(c.racks_of(TopicPartition("t", 0)))
    (3, None, ['r1', 'r2'])
    """

    __slots__ = ("_joined", "_partition_racks", "_partitions_per_topic", "_racks_by_partition", "_topic_ids")

    def __init__(
        self,
        partitions_per_topic: Mapping[str, int],
        *,
        partition_racks: Mapping[TopicPartition, Iterable[str]] | None = None,
        topic_ids: Mapping[str, str] | None = None,
    ) -> None:
        given: object = partitions_per_topic  # checked at run time whatever the annotation says
        if not isinstance(given, Mapping):
            msg = f"partitions_per_topic must be a mapping of topic to partition count, got {partitions_per_topic!r}"
            raise InvalidSubscriptionError(msg)
        counts: dict[str, int] = {}
        for topic, count in partitions_per_topic.items():
            if type(topic) is not str or not topic:
                msg = f"topic={topic!r} in partitions_per_topic must be a non-empty string"
                raise InvalidSubscriptionError(msg)
            if not is_partition_count(count):
                msg = f"partition count {count!r} of topic={topic!r} must be an integer in 0..{INT32_MAX} (INT32)"
                raise InvalidSubscriptionError(msg)
            counts[topic] = int(count)
        self._partitions_per_topic: Mapping[str, int] = MappingProxyType(counts)
        # The plain dict is for the assignors' hot loops; the public view is read-only.
        self._racks_by_partition = self._validated_racks(counts, partition_racks or {})
        self._partition_racks: Mapping[TopicPartition, frozenset[str]] = MappingProxyType(self._racks_by_partition)
        self._topic_ids: Mapping[str, str] = MappingProxyType(self._validated_ids(counts, topic_ids or {}))
        # The cache of reused_partitions (not part of the value: equality and hash ignore it).
        self._joined: tuple[tuple[str, ...], tuple[TopicPartition, ...] | None] | None = None

    @staticmethod
    def _validated_racks(
        counts: Mapping[str, int], partition_racks: Mapping[TopicPartition, Iterable[str]]
    ) -> dict[TopicPartition, frozenset[str]]:
        racks_by_partition: dict[TopicPartition, frozenset[str]] = {}
        for key, racks in partition_racks.items():
            tp = _as_topic_partition(key, "partition_racks")
            count = counts.get(tp.topic)
            if count is None or tp.partition >= count:
                msg = (
                    f"partition_racks names partition {str(tp)!r}, but topic={tp.topic!r} "
                    f"has {'no metadata' if count is None else f'{count} partitions'}"
                )
                raise InvalidSubscriptionError(msg)
            names: set[str] = set()
            for rack in _items(racks, f"racks of partition {str(tp)!r}", "rack names"):
                if rack is None or rack == "":
                    continue
                if type(rack) is not str:
                    msg = f"rack {rack!r} of partition {str(tp)!r} must be a string"
                    raise InvalidSubscriptionError(msg)
                names.add(rack)
            if names:
                racks_by_partition[tp] = frozenset(names)
        return racks_by_partition

    @staticmethod
    def _validated_ids(counts: Mapping[str, int], topic_ids: Mapping[str, str]) -> dict[str, str]:
        given: object = topic_ids  # checked at run time whatever the annotation says
        if not isinstance(given, Mapping):
            msg = f"topic_ids must be a mapping of topic to its Kafka topic id, got {topic_ids!r}"
            raise InvalidSubscriptionError(msg)
        ids: dict[str, str] = {}
        for topic, topic_id in topic_ids.items():
            if topic not in counts:
                msg = f"topic_ids names topic={topic!r}, which has no partition count in partitions_per_topic"
                raise InvalidSubscriptionError(msg)
            if not is_topic_id(topic_id):
                msg = (
                    f"topic id {topic_id!r} of topic={topic!r} must be a Kafka Uuid as Kafka prints it "
                    "(22 characters of URL-safe base64)"
                )
                raise InvalidSubscriptionError(msg)
            ids[topic] = topic_id
        if len(set(ids.values())) != len(ids):
            seen: dict[str, str] = {}
            for topic, topic_id in sorted(ids.items()):
                if topic_id in seen:
                    msg = f"topic_ids gives topic={seen[topic_id]!r} and topic={topic!r} the same id {topic_id!r}"
                    raise InvalidSubscriptionError(msg)
                seen[topic_id] = topic
        return ids

    @property
    def topic_ids(self) -> Mapping[str, str]:
        """Read-only mapping of topic to its Kafka topic id (topics without a known id absent)."""
        return self._topic_ids

    @property
    def partitions_per_topic(self) -> Mapping[str, int]:
        """Read-only mapping of topic to partition count."""
        return self._partitions_per_topic

    @property
    def partition_racks(self) -> Mapping[TopicPartition, frozenset[str]]:
        """Read-only mapping of partition to the racks of its replicas (partitions without racks absent)."""
        return self._partition_racks

    @property
    def topics(self) -> tuple[str, ...]:
        """The topics with metadata, sorted."""
        return tuple(sorted(self._partitions_per_topic))

    def partition_count(self, topic: str) -> int | None:
        """The number of partitions of ``topic``, or None when the cluster has no metadata for it."""
        return self._partitions_per_topic.get(topic)

    def racks_of(self, partition: TopicPartition) -> frozenset[str]:
        """The racks of the replicas of ``partition`` (empty when unknown)."""
        return self._racks_by_partition.get(partition, _NO_RACKS)

    def partitions(self, topic: str) -> Iterator[TopicPartition]:
        """The partitions of ``topic`` in partition order (none when it has no metadata)."""
        return (unchecked_tp(topic, p) for p in range(self._partitions_per_topic.get(topic, 0)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cluster):
            return NotImplemented
        return (
            self._partitions_per_topic == other._partitions_per_topic
            and self._partition_racks == other._partition_racks
            and self._topic_ids == other._topic_ids
        )

    def __hash__(self) -> int:
        return hash(frozenset(self._partitions_per_topic.items()))

    def __repr__(self) -> str:
        racks = f", partition_racks={dict(self._partition_racks)!r}" if self._partition_racks else ""
        ids = f", topic_ids={dict(self._topic_ids)!r}" if self._topic_ids else ""
        return f"Cluster({dict(self._partitions_per_topic)!r}{racks}{ids})"


def reused_partitions(cluster: Cluster, topics: tuple[str, ...]) -> tuple[TopicPartition, ...] | None:
    """Every partition of ``topics`` in ``cluster``, topic after topic in the given order, when asked for again.

    The first request for ``topics`` on a Cluster returns None (build them yourself, as a one-shot
    caller best does) and is remembered; the next one builds the tuple and keeps it on the Cluster
    for every later one, so a group assigned again on the same metadata (a replay, a simulation, a
    service reassigning) slices them instead of allocating a TopicPartition per partition again:
    a million take some 120 ms to build and about as long to free, a strided slice of them for
    each of 2,000 members some 10. Built on the first request, they would cost a one-shot caller
    that much more: freed after the results that share them, they are freed out of order, not
    one member's after another's. One entry: a new ``topics`` replaces it. The partitions are
    immutable, so results that share them are independent values all the same.
    """
    joined = cluster._joined  # noqa: SLF001 - the Cluster's own cache, kept by this module
    if joined is None or joined[0] != topics:
        cluster._joined = (topics, None)  # noqa: SLF001
        return None
    if joined[1] is not None:
        return joined[1]
    counts = cluster._partitions_per_topic  # noqa: SLF001
    numbers = list(range(max(map(counts.get, topics, repeat(0)), default=0)))  # one int object per number
    topic_column: list[str] = []
    number_column: list[int] = []
    for topic in topics:
        count = counts.get(topic, 0)
        topic_column += repeat(topic, count)
        number_column += numbers[:count]
    pairs = zip(topic_column, number_column, strict=True)
    result = tuple(map(_tuple_new, repeat(TopicPartition, len(topic_column)), pairs))
    cluster._joined = (topics, result)  # noqa: SLF001
    return result
