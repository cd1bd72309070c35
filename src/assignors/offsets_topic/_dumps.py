"""Read the text dumps operators make of ``__consumer_offsets``.

- ``kafka-dump-log.sh --offsets-decoder --files SEGMENT`` (Kafka 3.8+): one line per record,
  ``| offset: N CreateTime: T ... key: {"type":"2","data":{...}} payload: {...}``, with
  ``type``/``version`` as JSON strings, a consumer group's subscription and assignment
  printed as decoded JSON (base64 when Kafka could not decode them), and ``payload:
  <DELETE>`` for a tombstone. It carries each record's offset and CreateTime.
- ``kafka-console-consumer --formatter org.apache.kafka.tools.consumer.GroupMetadataMessageFormatter``
  (3.9+): JSON objects concatenated without newlines, ``{"key":{"version":2,...}}`` in 3.9
  and ``{"key":{"type":2,...}}`` in 4.x, subscription and assignment as base64 of the raw
  bytes, no timestamps (a snapshot then takes ``currentStateTimestamp``).

Each entry becomes a :class:`DumpEntry`; one that does not parse carries ``error`` instead
of a record, so one bad line does not stop a dump.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assignors._core.errors import AssignorError, ProtocolError
from assignors._core.model import Assignment, Subscription, TopicPartition
from assignors._wire.consumer_protocol import decode_assignment, decode_subscription
from assignors.offsets_topic._records import (
    ConsumerGroupCurrentMemberAssignment,
    ConsumerGroupMemberMetadata,
    ConsumerGroupMetadata,
    ConsumerGroupPartitionMetadata,
    ConsumerGroupRecordTombstone,
    ConsumerGroupRegularExpression,
    ConsumerGroupTargetAssignmentMember,
    ConsumerGroupTargetAssignmentMetadata,
    GroupMetadata,
    GroupTombstone,
    MemberMetadata,
    OffsetCommit,
    Record,
    TopicIdPartitions,
    TopicMetadata,
    UnknownRecord,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

__all__ = ["DumpEntry", "read_dump_log", "read_formatter_output", "record_from_json"]

_OFFSET = re.compile(r"\boffset: (\d+)")
_CREATE_TIME = re.compile(r"\bCreateTime: (-?\d+)")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class DumpEntry:
    """One record of a dump: the record (or the reason it did not parse), its CreateTime and offset when known."""

    record: Record | None
    timestamp_ms: int | None
    offset: int | None
    where: str
    error: str | None = None
    line: int | None = None
    """The dump's line where the record starts (1-based), when known."""


def read_dump_log(lines: Iterable[str]) -> Iterator[DumpEntry]:
    """The records of ``kafka-dump-log.sh --offsets-decoder`` output (batch header lines are skipped)."""
    for number, line in enumerate(lines, 1):
        at = line.find(" key: ")
        if at < 0:
            continue
        where = f"line {number}"
        offset_match, time_match = _OFFSET.search(line), _CREATE_TIME.search(line)
        offset = int(offset_match.group(1)) if offset_match else None
        timestamp = int(time_match.group(1)) if time_match else None
        try:
            key, end = _DECODER.raw_decode(line, at + len(" key: "))
            rest = line[end:].lstrip()
            if not rest.startswith("payload:"):
                _fail(where, "no 'payload:' after the key")
            rest = rest[len("payload:") :].strip()
            value = None if rest == "<DELETE>" else _DECODER.raw_decode(rest)[0]
            record = record_from_json(key, value, where)
        except json.JSONDecodeError as error:
            problem = f"{where}: invalid JSON at column {error.pos}: {error.msg}"
            yield DumpEntry(None, timestamp, offset, where, problem, number)
        except AssignorError as error:
            yield DumpEntry(None, timestamp, offset, where, str(error), number)
        else:
            yield DumpEntry(record, timestamp, offset, where, None, number)


def read_formatter_output(text: str) -> Iterator[DumpEntry]:
    """The records of ``GroupMetadataMessageFormatter`` output: concatenated JSON objects, no timestamps."""
    position, count = 0, 0
    line, counted = 1, 0  # the line of ``position``, counted incrementally up to ``counted``
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return
        count += 1
        line += text.count("\n", counted, position)
        counted = position
        where = f"object {count} at character {position}"
        try:
            entry, position = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError as error:
            problem = f"{where}: invalid JSON at character {error.pos}: {error.msg}"
            yield DumpEntry(None, None, None, where, problem, line)
            return
        try:
            if not isinstance(entry, dict) or not isinstance(entry.get("key"), dict):
                _fail(where, "not an object with a 'key' object")
            record = record_from_json(entry["key"], entry.get("value"), where)
        except AssignorError as error:
            yield DumpEntry(None, None, None, where, str(error), line)
        else:
            yield DumpEntry(record, None, None, where, None, line)


def _fail(where: str, message: str) -> Any:
    msg = f"{where}: {message}"
    raise ProtocolError(msg, field=where, offset=-1)


def _get(data: Any, name: str, where: str, kind: type | tuple[type, ...], *, nullable: bool = False) -> Any:
    if not isinstance(data, dict):
        return _fail(where, f"expected an object holding {name!r}")
    value = data.get(name)
    if value is None and nullable:
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        return _fail(where, f"field {name!r} is {value!r}, expected {getattr(kind, '__name__', kind)}")
    return value


def _int(value: Any, name: str, where: str) -> int:
    """An integer the formatter printed as a number or (dump-log's ``type``/``version``) as a string."""
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,19}", value):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(_fail(where, f"{name} is {value!r}, expected an integer"))


def record_from_json(key: Any, value: Any, where: str) -> Record:
    """A record from the JSON the Kafka tools print for its key and value (value None for a tombstone)."""
    record_type = _int(key.get("type", key.get("version")) if isinstance(key, dict) else None, "key type", where)
    data = _get(key, "data", where, dict)
    if record_type in (0, 1):
        partition = _int(data.get("partition"), "partition", where)
        offset = None if value is None else _int(_get(value, "data", where, dict).get("offset"), "offset", where)
        return OffsetCommit(_get(data, "group", where, str), _get(data, "topic", where, str), partition, offset)
    if record_type == 2:  # noqa: PLR2004 - GroupMetadataKey
        group = _get(data, "group", where, str)
        if value is None:
            return GroupTombstone(group)
        version = _int(_get(value, "version", where, (int, str)), "value version", where)
        return _group_metadata(group, version, _get(value, "data", where, dict), where)
    builder = _CONSUMER_GROUP_BUILDERS.get(record_type)
    if builder is None:
        return UnknownRecord(record_type)
    group = _get(data, "groupId", where, str)
    member = _get(data, "memberId", where, str) if record_type in (5, 7, 8) else None
    regex = _get(data, "regularExpression", where, str) if record_type == 16 else None  # noqa: PLR2004
    if value is None:
        return ConsumerGroupRecordTombstone(record_type, group, member, regex)
    fields = _get(value, "data", where, dict)
    return builder(group, member or "", regex or "", fields, where)


def _blob(text: str, name: str, where: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return bytes(_fail(where, f"{name} {text[:40]!r} is not base64"))


def _partitions(entries: Any, name: str, where: str) -> list[TopicPartition]:
    return [
        TopicPartition(topic, _int(number, f"{name} partition", where))
        for entry in entries or ()
        for topic in (_get(entry, "topic", where, str),)
        for number in _get(entry, "partitions", where, list)
    ]


def _subscription(value: Any, instance: str | None, where: str) -> Subscription:
    if isinstance(value, str):
        return decode_subscription(_blob(value, "subscription", where), group_instance_id=instance)
    user_data = _get(value, "userData", where, str, nullable=True)
    return Subscription(
        _get(value, "topics", where, list),
        user_data=None if user_data is None else _blob(user_data, "userData", where),
        owned_partitions=_partitions(value.get("ownedPartitions"), "ownedPartitions", where),
        generation_id=_int(value.get("generationId", -1), "generationId", where),
        rack_id=_get(value, "rackId", where, str, nullable=True) or None,
        group_instance_id=instance,
    )


def _assignment(value: Any, where: str) -> Assignment:
    if isinstance(value, str):
        raw = _blob(value, "assignment", where)
        return decode_assignment(raw) if raw else Assignment(())
    user_data = _get(value, "userData", where, str, nullable=True)
    partitions = _partitions(value.get("assignedPartitions"), "assignedPartitions", where)
    return Assignment(partitions, user_data=None if user_data is None else _blob(user_data, "userData", where))


def _group_metadata(group: str, version: int, data: dict[str, Any], where: str) -> GroupMetadata:
    protocol_type = _get(data, "protocolType", where, str)
    members = []
    for i, item in enumerate(_get(data, "members", where, list)):
        at = f"{where} members[{i}]"
        instance = _get(item, "groupInstanceId", at, str, nullable=True)
        session = _int(item.get("sessionTimeout"), "sessionTimeout", at)
        sub_json, assign_json = item.get("subscription"), item.get("assignment")
        subscription: Subscription | None = None
        assignment: Assignment | None = None
        error = None
        if protocol_type == "consumer":
            try:
                if sub_json not in (None, ""):
                    subscription = _subscription(sub_json, instance, at)
                assignment = Assignment(()) if assign_json in (None, "") else _assignment(assign_json, at)
            except AssignorError as embedded:
                subscription, assignment, error = None, None, f"members[{i}]: {embedded}"
        members.append(
            MemberMetadata(
                _get(item, "memberId", at, str),
                instance,
                _get(item, "clientId", at, str),
                _get(item, "clientHost", at, str),
                _int(item.get("rebalanceTimeout", session), "rebalanceTimeout", at),
                session,
                subscription,
                assignment,
                _blob(sub_json, "subscription", at) if isinstance(sub_json, str) else b"",
                _blob(assign_json, "assignment", at) if isinstance(assign_json, str) else b"",
                error,
            )
        )
    return GroupMetadata(
        group,
        _int(data.get("generation"), "generation", where),
        protocol_type,
        _get(data, "protocol", where, str, nullable=True),
        _get(data, "leader", where, str, nullable=True),
        _int(data.get("currentStateTimestamp", -1), "currentStateTimestamp", where),
        tuple(members),
        version,
    )


def _id_partitions(entries: Any, where: str) -> tuple[TopicIdPartitions, ...]:
    return tuple(
        TopicIdPartitions(
            _get(entry, "topicId", where, str),
            tuple(_int(p, "partition", where) for p in _get(entry, "partitions", where, list)),
        )
        for entry in entries or ()
    )


def _strings(value: Any, name: str, where: str) -> tuple[str, ...]:
    items = value or []
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        _fail(where, f"{name} is {value!r}, expected a list of strings")
    return tuple(items)


_CONSUMER_GROUP_BUILDERS: dict[int, Callable[[str, str, str, dict[str, Any], str], Record]] = {
    3: lambda g, _m, _r, d, w: ConsumerGroupMetadata(g, _int(d.get("epoch"), "epoch", w)),
    4: lambda g, _m, _r, d, w: ConsumerGroupPartitionMetadata(
        g,
        tuple(
            TopicMetadata(
                _get(t, "topicId", w, str),
                _get(t, "topicName", w, str),
                _int(t.get("numPartitions") if isinstance(t, dict) else None, "numPartitions", w),
            )
            for t in _get(d, "topics", w, list)
        ),
    ),
    5: lambda g, m, _r, d, w: ConsumerGroupMemberMetadata(
        g,
        m,
        _get(d, "instanceId", w, str, nullable=True),
        _get(d, "rackId", w, str, nullable=True),
        _get(d, "clientId", w, str),
        _get(d, "clientHost", w, str),
        _strings(d.get("subscribedTopicNames"), "subscribedTopicNames", w),
        _get(d, "subscribedTopicRegex", w, str, nullable=True),
        _int(d.get("rebalanceTimeoutMs", -1), "rebalanceTimeoutMs", w),
        _get(d, "serverAssignor", w, str, nullable=True),
    ),
    6: lambda g, _m, _r, d, w: ConsumerGroupTargetAssignmentMetadata(
        g, _int(d.get("assignmentEpoch"), "assignmentEpoch", w)
    ),
    7: lambda g, m, _r, d, w: ConsumerGroupTargetAssignmentMember(g, m, _id_partitions(d.get("topicPartitions"), w)),
    8: lambda g, m, _r, d, w: ConsumerGroupCurrentMemberAssignment(
        g,
        m,
        _int(d.get("memberEpoch"), "memberEpoch", w),
        _int(d.get("previousMemberEpoch"), "previousMemberEpoch", w),
        _int(d.get("state", 0), "state", w),
        _id_partitions(d.get("assignedPartitions"), w),
        _id_partitions(d.get("partitionsPendingRevocation"), w),
    ),
    16: lambda g, _m, r, d, w: ConsumerGroupRegularExpression(
        g,
        r,
        _strings(d.get("topics"), "topics", w),
        _int(d.get("version", 0), "version", w),
        _int(d.get("timestamp", 0), "timestamp", w),
    ),
}
