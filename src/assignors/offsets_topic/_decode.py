"""``decode_record(key, value)``: one ``__consumer_offsets`` record, from its key and value bytes.

The key's leading INT16 selects the record type (Kafka's ``GroupMetadataManager.readMessageKey``
up to 3.x, ``CoordinatorRecordSerde`` from 3.7): 0/1 offset commit, 2 classic group
metadata, 3-8 and 16 KIP-848 consumer-group records. The value is an INT16 version and the
value struct, or None for a tombstone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from assignors._core.errors import ProtocolError
from assignors._core.model import Assignment
from assignors._wire.consumer_protocol import decode_assignment, decode_subscription
from assignors._wire.flex import FlexReader
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
    LegacyConsumerGroupRecord,
    MemberMetadata,
    OffsetCommit,
    Record,
    TopicIdPartitions,
    TopicMetadata,
    UnknownRecord,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from assignors._core.model import Subscription

__all__ = ["CONSUMER_GROUP_TYPES", "GROUP_METADATA_VERSIONS", "decode_record"]

GROUP_METADATA_VERSIONS = range(5)
"""GroupMetadataValue versions read: 0-3 classic, 4 flexible (Kafka reads v4 but writes v3)."""
_FIRST_FLEXIBLE = 4
CONSUMER_GROUP_TYPES = frozenset({3, 4, 5, 6, 7, 8, 16})
"""The KIP-848 record types decoded (Kafka 3.8+ layouts)."""
_MEMBER_KEYED = frozenset({5, 7, 8})
_T = TypeVar("_T")


def decode_record(key: bytes, value: bytes | None) -> Record:
    """Decode one record of ``__consumer_offsets``.

    >>> key = bytes.fromhex("0002") + b"\\x00\\x01g"
    >>> decode_record(key, None)
    GroupTombstone(group_id='g')

    Raises:
        ProtocolError: the key or value does not decode; ``field`` starts with ``key.`` or
            ``value.`` and ``offset`` is the byte offset within that blob.
    """
    reader = FlexReader(bytes(key))
    record_type = reader.int16("key.type")
    if record_type < 0:
        msg = f"key.type: negative record type {record_type} at offset 0"
        raise ProtocolError(msg, field="key.type", offset=0)
    if record_type in (0, 1):
        group, topic = reader.string("key.group"), reader.string("key.topic")
        partition = reader.int32("key.partition")
        reader.expect_end("key")
        return OffsetCommit(group, topic, partition, _committed_offset(value))
    if record_type == 2:  # noqa: PLR2004 - GroupMetadataKey
        group = reader.string("key.group")
        reader.expect_end("key")
        return GroupTombstone(group) if value is None else _group_metadata(group, bytes(value))
    if record_type not in CONSUMER_GROUP_TYPES:
        return UnknownRecord(record_type)
    group = reader.string("key.groupId")
    member = reader.string("key.memberId") if record_type in _MEMBER_KEYED else None
    regex = reader.string("key.regularExpression") if record_type == 16 else None  # noqa: PLR2004
    reader.expect_end("key")
    if value is None:
        return ConsumerGroupRecordTombstone(record_type, group, member, regex)
    return _consumer_group_value(record_type, group, member, regex, bytes(value))


def _committed_offset(value: bytes | None) -> int | None:
    """OffsetCommitValue's first field is the offset (INT64) in every version 0-4."""
    if value is None:
        return None
    reader = FlexReader(bytes(value))
    reader.int16("value.version")
    return reader.int64("value.offset")


def _group_metadata(group: str, value: bytes) -> GroupMetadata:
    reader = FlexReader(value)
    version = reader.int16("value.version")
    if version not in GROUP_METADATA_VERSIONS:
        msg = f"value.version: GroupMetadataValue version {version} at offset 0 is not one of 0-4"
        raise ProtocolError(msg, field="value.version", offset=0)
    flexible = version >= _FIRST_FLEXIBLE
    string, nullable = (
        (reader.compact_string, reader.compact_nullable_string) if flexible else (reader.string, reader.nullable_string)
    )
    protocol_type = string("value.protocolType")
    generation = reader.int32("value.generation")
    protocol = nullable("value.protocol")
    leader = nullable("value.leader")
    timestamp = reader.int64("value.currentStateTimestamp") if version >= 2 else -1  # noqa: PLR2004
    count = reader.compact_array_length("value.members", 8) if flexible else reader.array_length("value.members", 16)
    members = tuple(_member(reader, version, f"value.members[{i}]", protocol_type) for i in range(count))
    if flexible:
        reader.tagged_fields("value")
    reader.expect_end("value")
    return GroupMetadata(group, generation, protocol_type, protocol, leader, timestamp, members, version)


def _member(reader: FlexReader, version: int, field: str, protocol_type: str) -> MemberMetadata:
    flexible = version >= _FIRST_FLEXIBLE
    string, nullable, blob = (
        (reader.compact_string, reader.compact_nullable_string, reader.compact_bytes)
        if flexible
        else (reader.string, reader.nullable_string, reader.bytes_)
    )
    member_id = string(f"{field}.memberId")
    instance = nullable(f"{field}.groupInstanceId") if version >= 3 else None  # noqa: PLR2004
    client_id = string(f"{field}.clientId")
    client_host = string(f"{field}.clientHost")
    rebalance = reader.int32(f"{field}.rebalanceTimeout") if version >= 1 else None
    session = reader.int32(f"{field}.sessionTimeout")
    sub_bytes = blob(f"{field}.subscription")
    sub_start = reader.offset - len(sub_bytes)
    assign_bytes = blob(f"{field}.assignment")
    assign_start = reader.offset - len(assign_bytes)
    if flexible:
        reader.tagged_fields(field)
    subscription: Subscription | None = None
    assignment: Assignment | None = None
    error = None
    if protocol_type == "consumer":
        try:
            if sub_bytes:
                subscription = _embedded(
                    lambda b: decode_subscription(b, group_instance_id=instance),
                    sub_bytes,
                    f"{field}.subscription",
                    sub_start,
                )
            assignment = (
                _embedded(decode_assignment, assign_bytes, f"{field}.assignment", assign_start)
                if assign_bytes
                else Assignment(())
            )
        except ProtocolError as embedded:
            subscription, assignment, error = None, None, str(embedded)
    return MemberMetadata(
        member_id,
        instance,
        client_id,
        client_host,
        session if rebalance is None else rebalance,
        session,
        subscription,
        assignment,
        sub_bytes,
        assign_bytes,
        error,
    )


def _embedded(decode: Callable[[bytes], _T], data: bytes, field: str, start: int) -> _T:
    """Decode ConsumerProtocol bytes found at ``start``; an error names the outer field and absolute offset."""
    try:
        return decode(data)
    except ProtocolError as error:
        offset = start + max(error.offset, 0)
        msg = f"{field}.{error.field} at offset {offset}: {error}"
        raise ProtocolError(msg, field=f"{field}.{error.field}", offset=offset) from None


def _consumer_group_value(record_type: int, group: str, member: str | None, regex: str | None, value: bytes) -> Record:
    reader = FlexReader(value)
    version = reader.int16("value.version")
    if version != 0:
        msg = f"value.version: version {version} of record type {record_type} at offset 0; only version 0 exists"
        raise ProtocolError(msg, field="value.version", offset=0)
    try:
        record = _CONSUMER_GROUP_DECODERS[record_type](reader, group, member or "", regex or "")
        reader.tagged_fields("value")
        reader.expect_end("value")
    except ProtocolError as error:
        return LegacyConsumerGroupRecord(record_type, group, member, str(error))
    return record


def _topic_partitions(reader: FlexReader, field: str) -> tuple[TopicIdPartitions, ...]:
    result = []
    for i in range(reader.compact_array_length(field, 18)):
        topic_id = reader.uuid(f"{field}[{i}].topicId")
        partitions = []
        for _ in range(reader.compact_array_length(f"{field}[{i}].partitions", 4)):
            start = reader.offset
            partition = reader.int32(f"{field}[{i}].partitions")
            if partition < 0:
                msg = f"{field}[{i}].partitions: negative partition {partition} at offset {start}"
                raise ProtocolError(msg, field=f"{field}[{i}].partitions", offset=start)
            partitions.append(partition)
        reader.tagged_fields(f"{field}[{i}]")
        result.append(TopicIdPartitions(topic_id, tuple(partitions)))
    return tuple(result)


def _string_array(reader: FlexReader, field: str) -> tuple[str, ...]:
    return tuple(reader.compact_string(field) for _ in range(reader.compact_array_length(field, 1)))


def _type3(reader: FlexReader, group: str, _member: str, _regex: str) -> Record:
    return ConsumerGroupMetadata(group, reader.int32("value.epoch"))


def _type4(reader: FlexReader, group: str, _member: str, _regex: str) -> Record:
    topics = []
    for i in range(reader.compact_array_length("value.topics", 23)):
        field = f"value.topics[{i}]"
        topic_id = reader.uuid(f"{field}.topicId")
        name = reader.compact_string(f"{field}.topicName")
        count = reader.int32(f"{field}.numPartitions")
        for j in range(reader.compact_array_length(f"{field}.partitionMetadata", 6)):
            reader.int32(f"{field}.partitionMetadata[{j}].partition")
            _string_array(reader, f"{field}.partitionMetadata[{j}].racks")
            reader.tagged_fields(f"{field}.partitionMetadata[{j}]")
        reader.tagged_fields(field)
        topics.append(TopicMetadata(topic_id, name, count))
    return ConsumerGroupPartitionMetadata(group, tuple(topics))


def _type5(reader: FlexReader, group: str, member: str, _regex: str) -> Record:
    return ConsumerGroupMemberMetadata(
        group,
        member,
        instance_id=reader.compact_nullable_string("value.instanceId"),
        rack_id=reader.compact_nullable_string("value.rackId"),
        client_id=reader.compact_string("value.clientId"),
        client_host=reader.compact_string("value.clientHost"),
        subscribed_topic_names=_string_array(reader, "value.subscribedTopicNames"),
        subscribed_topic_regex=reader.compact_nullable_string("value.subscribedTopicRegex"),
        rebalance_timeout_ms=reader.int32("value.rebalanceTimeoutMs"),
        server_assignor=reader.compact_nullable_string("value.serverAssignor"),
    )


def _type6(reader: FlexReader, group: str, _member: str, _regex: str) -> Record:
    return ConsumerGroupTargetAssignmentMetadata(group, reader.int32("value.assignmentEpoch"))


def _type7(reader: FlexReader, group: str, member: str, _regex: str) -> Record:
    return ConsumerGroupTargetAssignmentMember(group, member, _topic_partitions(reader, "value.topicPartitions"))


def _type8(reader: FlexReader, group: str, member: str, _regex: str) -> Record:
    return ConsumerGroupCurrentMemberAssignment(
        group,
        member,
        member_epoch=reader.int32("value.memberEpoch"),
        previous_member_epoch=reader.int32("value.previousMemberEpoch"),
        state=reader.int8("value.state"),
        assigned_partitions=_topic_partitions(reader, "value.assignedPartitions"),
        partitions_pending_revocation=_topic_partitions(reader, "value.partitionsPendingRevocation"),
    )


def _type16(reader: FlexReader, group: str, _member: str, regex: str) -> Record:
    topics = _string_array(reader, "value.topics")
    return ConsumerGroupRegularExpression(
        group, regex, topics, reader.int64("value.version"), reader.int64("value.timestamp")
    )


_CONSUMER_GROUP_DECODERS: dict[int, Callable[[FlexReader, str, str, str], Record]] = {
    3: _type3,
    4: _type4,
    5: _type5,
    6: _type6,
    7: _type7,
    8: _type8,
    16: _type16,
}
