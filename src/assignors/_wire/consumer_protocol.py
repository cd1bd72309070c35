"""Kafka's ``ConsumerProtocol`` codec; :mod:`assignors.consumer_protocol` re-exports it (see its docs)."""

from __future__ import annotations

from collections import Counter, OrderedDict
from contextlib import suppress
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Generic, TypeVar

from assignors._core.errors import EncodingError, ProtocolError
from assignors._core.model import (
    DEFAULT_GENERATION,
    Assignment,
    Subscription,
    TopicPartition,
    unchecked_assignment,
    unchecked_tp,
)
from assignors._core.util import java_sorted, java_sorted_partitions
from assignors._wire.buffers import Reader as _Reader
from assignors._wire.buffers import Writer as _Writer

if TYPE_CHECKING:
    from collections.abc import Iterable

_K = TypeVar("_K")
_V = TypeVar("_V")

__all__ = [
    "HIGHEST_VERSION",
    "StickyUserData",
    "decode_assignment",
    "decode_cooperative_user_data",
    "decode_sticky_user_data",
    "decode_subscription",
    "encode_assignment",
    "encode_cooperative_user_data",
    "encode_sticky_user_data",
    "encode_subscription",
]

HIGHEST_VERSION = 3
"""The newest ConsumerProtocol version for both Subscription and Assignment."""


def _read_topic_partitions(reader: _Reader, field: str, *, unique: bool = False) -> list[TopicPartition]:
    """``[topic: STRING, partitions: [INT32]]`` (the smallest element is 2 + 4 bytes).

    With ``unique``, a partition listed twice is a ProtocolError at the array's offset.
    """
    field_start = reader.offset
    result: list[TopicPartition] = []
    for _ in range(reader.array_length(field, 6)):
        topic_start = reader.offset
        topic = reader.string(f"{field}.topic")
        if not topic:  # TopicPartition refuses it too
            msg = f"{field}.topic: empty topic name at offset {topic_start}"
            raise ProtocolError(msg, field=f"{field}.topic", offset=topic_start)
        count = reader.array_length(f"{field}.partitions", 4)
        result.extend(map(unchecked_tp, repeat(topic, count), reader.partitions(count, f"{field}.partitions")))
    if unique and len(set(result)) != len(result):
        twice = next(tp for tp, count in Counter(result).items() if count > 1)
        msg = f"{field} at offset {field_start}: lists partition {str(twice)!r} twice"
        raise ProtocolError(msg, field=field, offset=field_start)
    return result


def _write_topic_partitions(writer: _Writer, partitions: Iterable[TopicPartition]) -> None:
    """Grouped per topic in first-appearance order, partition order kept (Kafka's groupPartitionsByTopic)."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    writer.int32(len(by_topic))
    for topic, numbers in by_topic.items():
        writer.string(topic, "topic")
        writer.int32(len(numbers))
        writer.int32s(numbers, f"partition of {topic!r}")


@dataclass(frozen=True, slots=True)
class StickyUserData:
    """What a ``StickyAssignor`` member reports: its previous assignment and, from V1 on, its generation.

    Attributes:
        partitions: the previous assignment.
        generation: the generation of that assignment, or None when the data is V0.
    """

    partitions: tuple[TopicPartition, ...]
    generation: int | None


def encode_sticky_user_data(partitions: Iterable[TopicPartition], generation: int | None = DEFAULT_GENERATION) -> bytes:
    """Kafka's sticky user data: V1 with a generation, V0 when ``generation`` is None.

    >>> from assignors import TopicPartition as TP
    >>> encode_sticky_user_data([TP("t1", 0), TP("t1", 2), TP("t2", 1)], 5).hex()
    '000000020002743100000002000000000000000200027432000000010000000100000005'
    """
    key = _encoding_key(partitions)
    prefix = None if key is None else _V1_ENCODED.get(key)
    if prefix is None:
        writer = _Writer()
        _write_topic_partitions(writer, partitions)
        prefix = writer.getvalue()
        if key is not None and len(prefix) <= _V1_CACHED_BYTES:
            _V1_ENCODED.put(key, prefix)
    if generation is None:
        return prefix
    writer = _Writer()
    writer.int32(generation, "generation")
    return prefix + writer.getvalue()


def _encoding_key(partitions: Iterable[TopicPartition]) -> tuple[TopicPartition, ...] | None:
    """``partitions`` when it is a tuple of TopicPartitions only: its bytes depend on its value alone, so equal
    tuples share one encoding (None: encode it as it comes)."""
    if type(partitions) is tuple and set(map(type, partitions)) <= _PLAIN_TP:
        return partitions
    return None


def _decode_sticky_exact(data: bytes, *, with_generation: bool) -> StickyUserData:
    reader = _Reader(data)
    partitions = _read_topic_partitions(reader, "previous_assignment")
    generation = reader.int32("generation") if with_generation else None
    reader.expect_end("sticky user data")
    return StickyUserData(tuple(partitions), generation)


class _Recent(Generic[_K, _V]):
    """A bounded least-recently-used map. Past ``limit`` entries the least recently used one goes, so a replay's
    working set stays while one-off entries pass through (a full map is never wiped whole)."""

    __slots__ = ("_entries", "limit")

    def __init__(self, limit: int) -> None:
        self._entries: OrderedDict[_K, _V] = OrderedDict()
        self.limit = limit

    def get(self, key: _K) -> _V | None:
        found = self._entries.get(key)
        if found is not None:
            with suppress(KeyError):  # another thread evicted it meanwhile
                self._entries.move_to_end(key)
        return found

    def put(self, key: _K, value: _V) -> None:
        self._entries[key] = value
        while len(self._entries) > self.limit:
            with suppress(KeyError):
                self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()

    def __contains__(self, key: _K) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)


_V1_ASSIGNMENTS: _Recent[bytes, tuple[TopicPartition, ...]] = _Recent(4096)
"""The previous assignments of V1 sticky user data decoded lately, by the bytes that precede the generation."""
_V1_ENCODED: _Recent[tuple[TopicPartition, ...], bytes] = _Recent(4096)
"""The reverse: the bytes of previous assignments encoded lately (all but the generation), by the assignment. A
member whose assignment stays sends the same bytes with each new generation (a replay's sticky members, round
after round)."""
_V1_CACHED_BYTES = 4096  # only small user data is remembered: 4,096 entries stay under ~16 MiB of keys
_PLAIN_TP = frozenset({TopicPartition})


def decode_sticky_user_data(data: bytes) -> StickyUserData:
    """Decode sticky user data written by Java (V1, V0) or kafka-python 3.x (a 2-byte version, then V1/V0).

    Versions are tried newest first, as Kafka does, and a version only matches when it
    consumes the blob exactly, which is what tells a kafka-python prefix apart.

    Raises:
        ProtocolError: no version decodes; the message is the V1 attempt's error.
    """
    cacheable = type(data) is bytes and len(data) <= _V1_CACHED_BYTES
    known = _V1_ASSIGNMENTS.get(data[:-4]) if cacheable else None  # what precedes V1's generation, decoded before
    if known is not None:
        return StickyUserData(known, int.from_bytes(data[-4:], "big", signed=True))
    attempts = [(data, True), (data, False)]
    if len(data) >= 2:  # noqa: PLR2004 - kafka-python's INT16 version prefix
        attempts += [(data[2:], True), (data[2:], False)]
    first_error: ProtocolError | None = None
    for blob, with_generation in attempts:
        try:
            decoded = _decode_sticky_exact(blob, with_generation=with_generation)
        except ProtocolError as error:
            first_error = first_error or error
        else:
            if (
                cacheable and blob is data and with_generation
            ):  # V1: a member whose assignment stays sends these bytes again
                _V1_ASSIGNMENTS.put(data[:-4], decoded.partitions)
            return decoded
    assert first_error is not None  # noqa: S101 - at least one attempt ran
    raise first_error


def encode_cooperative_user_data(generation: int) -> bytes:
    """Cooperative-sticky user data: the generation as a big-endian INT32.

    >>> encode_cooperative_user_data(10).hex(), encode_cooperative_user_data(-1).hex()
    ('0000000a', 'ffffffff')
    """
    writer = _Writer()
    writer.int32(generation, "generation")
    return writer.getvalue()


def decode_cooperative_user_data(data: bytes) -> int:
    """The generation in cooperative-sticky user data (trailing bytes are ignored, as Kafka's parser does).

    Raises:
        ProtocolError: fewer than 4 bytes.
    """
    return _Reader(data).int32("generation")


# --- ConsumerProtocol Subscription and Assignment ------------------------------------


def _check_version(version: int) -> int:
    """Kafka's ``checkSubscriptionVersion``: below 0 is an error, above 3 writes 3."""
    if type(version) is not int or version < 0:
        msg = f"version={version!r} must be an integer >= 0"
        raise EncodingError(msg)
    return min(version, HIGHEST_VERSION)


def encode_subscription(subscription: Subscription, version: int = HIGHEST_VERSION) -> bytes:
    """The JoinGroup metadata of ``subscription``, as Kafka's ``serializeSubscription`` writes it.

    Fields the version lacks are left out: owned partitions from v1, the generation from
    v2, the rack from v3. ``group_instance_id`` is never on the wire (the coordinator
    knows it from JoinGroup).

    Raises:
        EncodingError: ``version`` is negative (above 3 writes version 3), or a
            value does not fit its wire type (a name over 32,767 UTF-8 bytes, a number
            beyond INT32).
    """
    written = _check_version(version)
    writer = _Writer()
    writer.int16(written)
    writer.int32(len(subscription.topics))
    for topic in java_sorted(subscription.topics):  # Subscription sorts by code point; Java by UTF-16 unit
        writer.string(topic, "topic")
    writer.nullable_bytes(subscription.user_data)
    if written >= 1:
        _write_topic_partitions(writer, java_sorted_partitions(subscription.owned_partitions))
    if written >= 2:  # noqa: PLR2004 - protocol version
        writer.int32(subscription.generation_id, "generation_id")
    if written >= 3:  # noqa: PLR2004 - protocol version
        writer.nullable_string(subscription.rack_id, "rack_id")
    return writer.getvalue()


def _read_version(reader: _Reader, what: str) -> int:
    start = reader.offset
    version = reader.int16(f"{what}.version")
    if version < 0:
        msg = f"{what}.version: unsupported version {version} at offset {start}"
        raise ProtocolError(msg, field=f"{what}.version", offset=start)
    return min(version, HIGHEST_VERSION)


def decode_subscription(data: bytes, *, group_instance_id: str | None = None) -> Subscription:
    """Parse JoinGroup metadata written by any Kafka client (versions 0 to 3; newer ones read as 3).

    Fields the version lacks take their defaults (no owned partitions, generation -1, no
    rack); an empty rack means no rack. Trailing bytes after the known fields are ignored.

    Args:
        data: the bytes, untrusted.
        group_instance_id: the member's static id, which the coordinator reports beside
            the metadata.

    Raises:
        ProtocolError: the bytes do not decode; the message names the field and offset.
    """
    reader = _Reader(bytes(data))
    version = _read_version(reader, "subscription")
    topics: list[str] = []
    for _ in range(reader.array_length("topics", 2)):
        start = reader.offset
        topic = reader.string("topics")
        if not topic:
            msg = f"topics: empty topic name at offset {start}"
            raise ProtocolError(msg, field="topics", offset=start)
        topics.append(topic)
    user_data = reader.nullable_bytes("user_data")
    owned: list[TopicPartition] = []
    if version >= 1:
        owned = _read_topic_partitions(reader, "owned_partitions", unique=True)
    generation = reader.int32("generation_id") if version >= 2 else DEFAULT_GENERATION  # noqa: PLR2004
    rack = reader.nullable_string("rack_id") if version >= 3 else None  # noqa: PLR2004
    return Subscription(
        topics,
        user_data=user_data,
        owned_partitions=owned,
        generation_id=generation,
        rack_id=rack,
        group_instance_id=group_instance_id,
    )


def encode_assignment(assignment: Assignment, version: int = HIGHEST_VERSION) -> bytes:
    """The SyncGroup bytes of ``assignment``: partitions grouped per topic in first-appearance order.

    The layout is the same for versions 0 to 3 (only the version prefix differs).

    Raises:
        EncodingError: ``version`` is negative (above 3 writes version 3).
    """
    writer = _Writer()
    writer.int16(_check_version(version))
    _write_topic_partitions(writer, assignment.partitions)
    writer.nullable_bytes(assignment.user_data)
    return writer.getvalue()


def decode_assignment(data: bytes) -> Assignment:
    """Parse SyncGroup bytes written by any Kafka client (versions 0 to 3; newer ones read as 3).

    Raises:
        ProtocolError: the bytes do not decode, or list a partition twice; the message
            names the field and offset.
    """
    reader = _Reader(bytes(data))
    _read_version(reader, "assignment")
    partitions = _read_topic_partitions(reader, "assigned_partitions", unique=True)
    user_data = reader.nullable_bytes("user_data")
    return unchecked_assignment(tuple(partitions), user_data)  # checked while reading
