"""Kafka's consumer-protocol bytes: the sticky assignors' user data.

Decoding treats its input as untrusted: a truncated blob, a negative or oversized
length, or invalid UTF-8 raises :class:`~assignors.ProtocolError` naming the field and
its byte offset, and no length prefix makes the decoder allocate more than the input's
own size.

Sticky user data (Kafka's ``StickyAssignor``, not version-prefixed):
V0 = ``previous_assignment: [topic: STRING, partitions: [INT32]]``; V1 adds
``generation: INT32``. Cooperative-sticky user data is one ``generation: INT32``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assignors._errors import ProtocolError
from assignors._model import DEFAULT_GENERATION, TopicPartition, _tp

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "StickyUserData",
    "decode_cooperative_user_data",
    "decode_sticky_user_data",
    "encode_cooperative_user_data",
    "encode_sticky_user_data",
]

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


class _Reader:
    """A cursor over untrusted bytes; every read checks what is left."""

    __slots__ = ("data", "offset")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0

    def _take(self, size: int, field: str) -> int:
        start = self.offset
        if size > len(self.data) - start:
            msg = f"{field}: needs {size} bytes at offset {start}, only {len(self.data) - start} left"
            raise ProtocolError(msg, field=field, offset=start)
        self.offset = start + size
        return start

    def int16(self, field: str) -> int:
        value: int = _INT16.unpack_from(self.data, self._take(2, field))[0]
        return value

    def int32(self, field: str) -> int:
        value: int = _INT32.unpack_from(self.data, self._take(4, field))[0]
        return value

    def string(self, field: str) -> str:
        start = self.offset
        length = self.int16(field)
        if length < 0:
            msg = f"{field}: negative string length {length} at offset {start}"
            raise ProtocolError(msg, field=field, offset=start)
        begin = self._take(length, field)
        try:
            return self.data[begin : begin + length].decode("utf-8")
        except UnicodeDecodeError as error:
            msg = f"{field}: invalid UTF-8 at offset {begin + error.start}"
            raise ProtocolError(msg, field=field, offset=begin + error.start) from None

    def array_length(self, field: str, min_element_size: int) -> int:
        """An INT32 element count, checked against the bytes left (no allocation from a lying prefix)."""
        start = self.offset
        count = self.int32(field)
        if count < 0:
            msg = f"{field}: negative array length {count} at offset {start}"
            raise ProtocolError(msg, field=field, offset=start)
        if count * min_element_size > len(self.data) - self.offset:
            msg = (
                f"{field}: array of {count} elements at offset {start} needs at least "
                f"{count * min_element_size} bytes, only {len(self.data) - self.offset} left"
            )
            raise ProtocolError(msg, field=field, offset=start)
        return count

    def expect_end(self, what: str) -> None:
        if self.offset != len(self.data):
            msg = f"{what}: {len(self.data) - self.offset} unexpected trailing bytes at offset {self.offset}"
            raise ProtocolError(msg, field=what, offset=self.offset)


class _Writer:
    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int16(self, value: int) -> None:
        self.parts.append(_INT16.pack(value))

    def int32(self, value: int) -> None:
        self.parts.append(_INT32.pack(value))

    def string(self, value: str) -> None:
        encoded = value.encode("utf-8")
        self.int16(len(encoded))
        self.parts.append(encoded)

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


def _read_topic_partitions(reader: _Reader, field: str) -> list[TopicPartition]:
    """``[topic: STRING, partitions: [INT32]]`` (the smallest element is 2 + 4 bytes)."""
    result: list[TopicPartition] = []
    for _ in range(reader.array_length(field, 6)):
        topic = reader.string(f"{field}.topic")
        for _ in range(reader.array_length(f"{field}.partitions", 4)):
            start = reader.offset
            partition = reader.int32(f"{field}.partitions")
            if partition < 0:
                msg = f"{field}.partitions: negative partition {partition} at offset {start}"
                raise ProtocolError(msg, field=f"{field}.partitions", offset=start)
            result.append(_tp(topic, partition))
    return result


def _write_topic_partitions(writer: _Writer, partitions: Iterable[TopicPartition]) -> None:
    """Grouped per topic in first-appearance order, partition order kept (Kafka's groupPartitionsByTopic)."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    writer.int32(len(by_topic))
    for topic, numbers in by_topic.items():
        writer.string(topic)
        writer.int32(len(numbers))
        for number in numbers:
            writer.int32(number)


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
    writer = _Writer()
    _write_topic_partitions(writer, partitions)
    if generation is not None:
        writer.int32(generation)
    return writer.getvalue()


def _decode_sticky_exact(data: bytes, *, with_generation: bool) -> StickyUserData:
    reader = _Reader(data)
    partitions = _read_topic_partitions(reader, "previous_assignment")
    generation = reader.int32("generation") if with_generation else None
    reader.expect_end("sticky user data")
    return StickyUserData(tuple(partitions), generation)


def decode_sticky_user_data(data: bytes) -> StickyUserData:
    """Decode sticky user data written by Java (V1, V0) or kafka-python 3.x (a 2-byte version, then V1/V0).

    Versions are tried newest first, as Kafka does, and a version only matches when it
    consumes the blob exactly, which is what tells a kafka-python prefix apart.

    Raises:
        ProtocolError: no version decodes; the message is the V1 attempt's error.
    """
    attempts = [(data, True), (data, False)]
    if len(data) >= 2:  # noqa: PLR2004 - kafka-python's INT16 version prefix
        attempts += [(data[2:], True), (data[2:], False)]
    first_error: ProtocolError | None = None
    for blob, with_generation in attempts:
        try:
            return _decode_sticky_exact(blob, with_generation=with_generation)
        except ProtocolError as error:
            first_error = first_error or error
    assert first_error is not None  # noqa: S101 - at least one attempt ran
    raise first_error


def encode_cooperative_user_data(generation: int) -> bytes:
    """Cooperative-sticky user data: the generation as a big-endian INT32.

    >>> encode_cooperative_user_data(10).hex(), encode_cooperative_user_data(-1).hex()
    ('0000000a', 'ffffffff')
    """
    return _INT32.pack(generation)


def decode_cooperative_user_data(data: bytes) -> int:
    """The generation in cooperative-sticky user data (trailing bytes are ignored, as Kafka's parser does).

    Raises:
        ProtocolError: fewer than 4 bytes.
    """
    return _Reader(data).int32("generation")
