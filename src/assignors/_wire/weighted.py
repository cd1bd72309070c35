"""The user data of the ``weighted-sticky`` assignor: loads in subscriptions, hand-overs in assignments.

Subscription user data, version 1 (big-endian, Kafka's classic types)::

    version      INT16    1; a newer version appends fields, which version 1 readers skip
    unit         INT16    0: records/s, 1: bytes/s
    generation   INT32    the generation of the member's last assignment (-1: none)
    window_ms    INT32    the window the loads were measured over (0: not measured)
    owned        ARRAY    [topic STRING, count INT32, count x partition INT32, count x load FLOAT64]
    released     ARRAY    the same, for partitions it gave up within the window (their loads, for the leader
                          of the round that hands them over; never claims)
    promised     ARRAY    [topic STRING, [partition INT32]]: what the leader handed over to this member
                          in its last assignment, after their owners revoke them (see the assignment)

A load is the partition's consumption rate, finite and >= 0, or -1.0 for a partition the member
owns but has not measured yet. Under EAGER the member has revoked everything when it joins, so
``owned`` is also its previous assignment (as in Kafka's sticky user data).

Assignment user data, version 1::

    version      INT16    1
    promised     ARRAY    [topic STRING, [partition INT32]]

Both decoders read untrusted bytes: every length is checked against the bytes left before
anything is allocated, and anything malformed raises :class:`~assignors.ProtocolError` naming
the field and its byte offset.
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from itertools import repeat
from typing import TYPE_CHECKING

from assignors._core.errors import ProtocolError
from assignors._core.model import DEFAULT_GENERATION, TopicPartition, unchecked_tp
from assignors._wire.buffers import Reader, Writer

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "UNMEASURED",
    "WEIGHTED_USER_DATA_VERSION",
    "LoadUnit",
    "WeightedAssignmentData",
    "WeightedUserData",
    "decode_weighted_assignment_data",
    "decode_weighted_user_data",
    "encode_weighted_assignment_data",
    "encode_weighted_user_data",
]

WEIGHTED_USER_DATA_VERSION = 1
UNMEASURED = -1.0
"""The load written for a partition its member owns but has not measured yet."""


class LoadUnit(IntEnum):
    """What a reported load counts, per second of consumption."""

    RECORDS = 0
    BYTES = 1


@dataclass(frozen=True, slots=True)
class WeightedUserData:
    """A member's subscription user data: its partitions with their loads (None: not measured)."""

    unit: LoadUnit
    generation: int
    window_ms: int
    loads: tuple[tuple[TopicPartition, float | None], ...]
    promised: tuple[TopicPartition, ...] = ()
    released: tuple[tuple[TopicPartition, float], ...] = ()

    @property
    def partitions(self) -> tuple[TopicPartition, ...]:
        """The partitions the member owned (its previous assignment)."""
        return tuple(tp for tp, _ in self.loads)


@dataclass(frozen=True, slots=True)
class WeightedAssignmentData:
    """An assignment's user data: partitions handed to this member once their owners revoked them."""

    promised: tuple[TopicPartition, ...]


def _by_topic(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    topics: dict[str, list[int]] = {}
    for topic, number in partitions:
        topics.setdefault(topic, []).append(number)
    return topics


def _write_partitions(writer: Writer, partitions: Iterable[TopicPartition]) -> None:
    topics = _by_topic(partitions)
    writer.int32(len(topics), "promised")
    for topic, numbers in topics.items():
        writer.string(topic, "topic")
        writer.int32(len(numbers), "partitions")
        writer.int32s(numbers, "partition")


def encode_weighted_user_data(  # noqa: PLR0913 - the fields, keyword-only
    loads: Mapping[TopicPartition, float | None] | Iterable[tuple[TopicPartition, float | None]],
    *,
    generation: int = DEFAULT_GENERATION,
    unit: LoadUnit = LoadUnit.RECORDS,
    window_ms: int = 0,
    promised: Iterable[TopicPartition] = (),
    released: Mapping[TopicPartition, float] | Iterable[tuple[TopicPartition, float]] = (),
) -> bytes:
    """Version 1 subscription user data; a load of None is written as not measured.

    >>> from assignors import TopicPartition as TP
    >>> data = encode_weighted_user_data({TP("t", 0): 12.5, TP("t", 1): None}, generation=3, window_ms=30000)
    >>> decode_weighted_user_data(data).loads
    ((TopicPartition(topic='t', partition=0), 12.5), (TopicPartition(topic='t', partition=1), None))
    """
    writer = Writer()
    writer.int16(WEIGHTED_USER_DATA_VERSION)
    writer.int16(int(unit))
    writer.int32(generation, "generation")
    writer.int32(window_ms, "window_ms")
    _write_loads(writer, list(loads.items()) if isinstance(loads, Mapping) else list(loads), "owned")
    _write_loads(writer, list(released.items()) if isinstance(released, Mapping) else list(released), "released")
    _write_partitions(writer, promised)
    return writer.getvalue()


def _write_loads(writer: Writer, items: list[tuple[TopicPartition, float | None]], field: str) -> None:
    topics: dict[str, list[tuple[int, float]]] = {}
    for tp, load in items:
        value = UNMEASURED if load is None else float(load)
        topics.setdefault(tp[0], []).append((tp[1], value))
    writer.int32(len(topics), field)
    for topic, entries in topics.items():
        writer.string(topic, "topic")
        writer.int32(len(entries), "partitions")
        writer.int32s([number for number, _ in entries], "partition")
        writer.parts.append(struct.pack(f">{len(entries)}d", *(value for _, value in entries)))


def _topic(reader: Reader, field: str) -> str:
    start = reader.offset
    topic = reader.string(field)
    if not topic:
        msg = f"{field}: empty topic name at offset {start}"
        raise ProtocolError(msg, field=field, offset=start)
    return topic


def _read_partitions(reader: Reader, field: str) -> tuple[TopicPartition, ...]:
    result: list[TopicPartition] = []
    for _ in range(reader.array_length(field, 6)):
        topic = _topic(reader, f"{field}.topic")
        count = reader.array_length(f"{field}.partitions", 4)
        result.extend(map(unchecked_tp, repeat(topic, count), reader.partitions(count, f"{field}.partitions")))
    return tuple(result)


def _unique(partitions: Iterable[TopicPartition], field: str, offset: int) -> None:
    counted = Counter(partitions)
    if len(counted) != sum(counted.values()):
        twice = next(tp for tp, count in counted.items() if count > 1)
        msg = f"{field} at offset {offset}: lists partition {str(twice)!r} twice"
        raise ProtocolError(msg, field=field, offset=offset)


def _version(reader: Reader, what: str) -> None:
    start = reader.offset
    version = reader.int16(f"{what}.version")
    if version < WEIGHTED_USER_DATA_VERSION:
        msg = f"{what}.version: {version} at offset {start}; the first version is {WEIGHTED_USER_DATA_VERSION}"
        raise ProtocolError(msg, field=f"{what}.version", offset=start)


def decode_weighted_user_data(data: bytes) -> WeightedUserData:
    """Decode subscription user data of version 1 or newer (a newer version's extra fields are skipped).

    Raises:
        ProtocolError: the bytes end early, a length lies, an unknown unit, a negative partition, a
            partition listed twice, or a load that is neither finite and >= 0 nor -1.0; the message
            names the field and its offset.

    >>> decode_weighted_user_data(b"\\x00\\x01\\x00\\x07")
    Traceback (most recent call last):
    ...
    assignors._core.errors.ProtocolError: weighted user data.unit: 7 at offset 2 is not 0 (records/s) or 1 (bytes/s)
    """
    what = "weighted user data"
    reader = Reader(bytes(data))
    _version(reader, what)
    unit_at = reader.offset
    unit = reader.int16(f"{what}.unit")
    if unit not in (LoadUnit.RECORDS, LoadUnit.BYTES):
        msg = f"{what}.unit: {unit} at offset {unit_at} is not 0 (records/s) or 1 (bytes/s)"
        raise ProtocolError(msg, field=f"{what}.unit", offset=unit_at)
    generation = reader.int32(f"{what}.generation")
    window_at = reader.offset
    window_ms = reader.int32(f"{what}.window_ms")
    if window_ms < 0:
        msg = f"{what}.window_ms: {window_ms} at offset {window_at} is negative"
        raise ProtocolError(msg, field=f"{what}.window_ms", offset=window_at)
    loads = _read_loads(reader, "owned")
    released = tuple((tp, load) for tp, load in _read_loads(reader, "released") if load is not None)
    promised_at = reader.offset
    promised = _read_partitions(reader, "promised")
    _unique(promised, "promised", promised_at)
    return WeightedUserData(LoadUnit(unit), generation, window_ms, loads, promised, released)


def _read_loads(reader: Reader, field: str) -> tuple[tuple[TopicPartition, float | None], ...]:
    """``[topic, count, count x partition, count x load]``; a load of -1.0 is None (not measured)."""
    field_at = reader.offset
    loads: list[tuple[TopicPartition, float | None]] = []
    for _ in range(reader.array_length(field, 6)):
        topic = _topic(reader, f"{field}.topic")
        count = reader.array_length(f"{field}.partitions", 12)
        numbers = reader.partitions(count, f"{field}.partitions")
        start = reader._take(8 * count, f"{field}.loads")  # noqa: SLF001 - the FLOAT64 arrays of the format
        values: tuple[float, ...] = struct.unpack_from(f">{count}d", reader.data, start)
        for index, value in enumerate(values):
            if value == UNMEASURED:
                loads.append((unchecked_tp(topic, numbers[index]), None))
            elif math.isfinite(value) and value >= 0:
                loads.append((unchecked_tp(topic, numbers[index]), value))
            else:
                at = start + 8 * index
                msg = f"{field}.loads: load {value!r} at offset {at} is not a finite number >= 0 (nor -1.0)"
                raise ProtocolError(msg, field=f"{field}.loads", offset=at)
    _unique((tp for tp, _ in loads), field, field_at)
    return tuple(loads)


def encode_weighted_assignment_data(promised: Iterable[TopicPartition]) -> bytes:
    """Version 1 assignment user data: what this member is promised once its owners revoke it.

    >>> from assignors import TopicPartition as TP
    >>> encode_weighted_assignment_data([TP("t", 2)]).hex()
    '0001000000010001740000000100000002'
    """
    writer = Writer()
    writer.int16(WEIGHTED_USER_DATA_VERSION)
    _write_partitions(writer, promised)
    return writer.getvalue()


def decode_weighted_assignment_data(data: bytes) -> WeightedAssignmentData:
    """Decode assignment user data of version 1 or newer.

    Raises:
        ProtocolError: malformed bytes, naming the field and its offset.
    """
    reader = Reader(bytes(data))
    _version(reader, "weighted assignment data")
    at = reader.offset
    promised = _read_partitions(reader, "promised")
    _unique(promised, "promised", at)
    return WeightedAssignmentData(promised)
