"""``encode_record(record)``: the key and value bytes Kafka writes for a record (the inverse of decode_record).

Used to build test fixtures and to replay records into a topic; ``decode_record(*encode_record(r))``
gives ``r`` back. Tagged fields are never written (Kafka writes none by default).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assignors._core.errors import EncodingError
from assignors._wire.consumer_protocol import encode_assignment, encode_subscription
from assignors._wire.flex import FlexWriter
from assignors.offsets_topic._decode import GROUP_METADATA_VERSIONS
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
    UnknownRecord,
)

__all__ = ["encode_record"]

_FIRST_FLEXIBLE = 4


def encode_record(record: Record) -> tuple[bytes, bytes | None]:
    """The (key, value) bytes of ``record``; value None for tombstones.

    A :class:`GroupMetadata` is written in its ``version`` (0-4). A member's raw
    ``subscription_bytes``/``assignment_bytes`` are written when set, else its decoded
    ``subscription``/``assignment`` encoded as ConsumerProtocol v3 (an assignment without
    partitions as 0 bytes, as Kafka fills members the leader left out). An
    :class:`OffsetCommit` is written as key version 1 with an OffsetCommitValue v3 that
    holds only the offset (or a tombstone when ``offset`` is None).

    Raises:
        EncodingError: the record cannot be written (a version Kafka lacks, a
            legacy or unknown record, a value that does not fit its wire type).
    """
    key = FlexWriter()
    if isinstance(record, OffsetCommit):
        key.int16(1)
        key.string(record.group_id, "group")
        key.string(record.topic, "topic")
        key.int32(record.partition, "partition")
        return key.getvalue(), None if record.offset is None else _offset_value(record.offset)
    if isinstance(record, GroupTombstone | GroupMetadata):
        key.int16(2)
        key.string(record.group_id, "group")
        return key.getvalue(), None if isinstance(record, GroupTombstone) else _group_metadata(record)
    if isinstance(record, ConsumerGroupRecordTombstone):
        record_type = record.record_type
    else:
        record_type = _CONSUMER_GROUP_ENCODERS[type(record)][0] if type(record) in _CONSUMER_GROUP_ENCODERS else -1
    if record_type < 0 or isinstance(record, LegacyConsumerGroupRecord | UnknownRecord):
        msg = f"{type(record).__name__} has no wire form to write"
        raise EncodingError(msg)
    key.int16(record_type)
    key.string(record.group_id, "groupId")
    member = getattr(record, "member_id", None)
    if record_type in (5, 7, 8):
        key.string(member or "", "memberId")
    if record_type == 16:  # noqa: PLR2004 - ConsumerGroupRegularExpressionKey
        key.string(getattr(record, "regular_expression", None) or "", "regularExpression")
    if isinstance(record, ConsumerGroupRecordTombstone):
        return key.getvalue(), None
    return key.getvalue(), _consumer_group_value(record)


def _offset_value(offset: int) -> bytes:
    """OffsetCommitValue v3: offset, leaderEpoch -1, metadata "", commitTimestamp 0."""
    writer = FlexWriter()
    writer.int16(3)
    writer.int64(offset)
    writer.int32(-1)
    writer.string("")
    writer.int64(0)
    return writer.getvalue()


def _group_metadata(record: GroupMetadata) -> bytes:
    version = record.version
    if version not in GROUP_METADATA_VERSIONS:
        msg = f"GroupMetadataValue version={version} of group {record.group_id!r} is not one of 0-4"
        raise EncodingError(msg)
    flexible = version >= _FIRST_FLEXIBLE
    writer = FlexWriter()
    string = writer.compact_nullable_string if flexible else writer.nullable_string
    writer.int16(version)
    string(record.protocol_type, "protocolType")
    writer.int32(record.generation, "generation")
    string(record.protocol, "protocol")
    string(record.leader, "leader")
    if version >= 2:  # noqa: PLR2004 - currentStateTimestamp from v2
        writer.int64(record.current_state_timestamp)
    if flexible:
        writer.compact_array_length(len(record.members))
    else:
        writer.int32(len(record.members))
    for member in record.members:
        _member(writer, member, version)
    if flexible:
        writer.no_tagged_fields()
    return writer.getvalue()


def _member(writer: FlexWriter, member: MemberMetadata, version: int) -> None:
    flexible = version >= _FIRST_FLEXIBLE
    string = writer.compact_nullable_string if flexible else writer.nullable_string
    blob = writer.compact_bytes if flexible else writer.bytes_
    string(member.member_id, "memberId")
    if version >= 3:  # noqa: PLR2004 - groupInstanceId from v3
        string(member.group_instance_id, "groupInstanceId")
    string(member.client_id, "clientId")
    string(member.client_host, "clientHost")
    if version >= 1:
        writer.int32(member.rebalance_timeout_ms, "rebalanceTimeout")
    writer.int32(member.session_timeout_ms, "sessionTimeout")
    subscription = member.subscription_bytes
    if not subscription and member.subscription is not None:
        subscription = encode_subscription(member.subscription)
    assignment = member.assignment_bytes
    if not assignment and member.assignment is not None and member.assignment.partitions:
        assignment = encode_assignment(member.assignment)
    blob(subscription)
    blob(assignment)
    if flexible:
        writer.no_tagged_fields()


def _topic_partitions(writer: FlexWriter, entries: tuple[TopicIdPartitions, ...]) -> None:
    writer.compact_array_length(len(entries))
    for entry in entries:
        writer.uuid(entry.topic_id)
        writer.compact_array_length(len(entry.partitions))
        for partition in entry.partitions:
            writer.int32(partition, "partition")
        writer.no_tagged_fields()


def _strings(writer: FlexWriter, values: tuple[str, ...]) -> None:
    writer.compact_array_length(len(values))
    for value in values:
        writer.compact_nullable_string(value)


def _write_metadata(writer: FlexWriter, record: ConsumerGroupMetadata) -> None:
    writer.int32(record.epoch, "epoch")


def _write_partition_metadata(writer: FlexWriter, record: ConsumerGroupPartitionMetadata) -> None:
    writer.compact_array_length(len(record.topics))
    for topic in record.topics:
        writer.uuid(topic.topic_id)
        writer.compact_nullable_string(topic.topic_name, "topicName")
        writer.int32(topic.num_partitions, "numPartitions")
        writer.compact_array_length(0)  # partitionMetadata: unused after 4.0
        writer.no_tagged_fields()


def _write_member_metadata(writer: FlexWriter, record: ConsumerGroupMemberMetadata) -> None:
    writer.compact_nullable_string(record.instance_id, "instanceId")
    writer.compact_nullable_string(record.rack_id, "rackId")
    writer.compact_nullable_string(record.client_id, "clientId")
    writer.compact_nullable_string(record.client_host, "clientHost")
    _strings(writer, record.subscribed_topic_names)
    writer.compact_nullable_string(record.subscribed_topic_regex, "subscribedTopicRegex")
    writer.int32(record.rebalance_timeout_ms, "rebalanceTimeoutMs")
    writer.compact_nullable_string(record.server_assignor, "serverAssignor")


def _write_target_metadata(writer: FlexWriter, record: ConsumerGroupTargetAssignmentMetadata) -> None:
    writer.int32(record.assignment_epoch, "assignmentEpoch")


def _write_target_member(writer: FlexWriter, record: ConsumerGroupTargetAssignmentMember) -> None:
    _topic_partitions(writer, record.partitions)


def _write_current_assignment(writer: FlexWriter, record: ConsumerGroupCurrentMemberAssignment) -> None:
    writer.int32(record.member_epoch, "memberEpoch")
    writer.int32(record.previous_member_epoch, "previousMemberEpoch")
    writer.int8(record.state)
    _topic_partitions(writer, record.assigned_partitions)
    _topic_partitions(writer, record.partitions_pending_revocation)


def _write_regular_expression(writer: FlexWriter, record: ConsumerGroupRegularExpression) -> None:
    _strings(writer, record.topics)
    writer.int64(record.version)
    writer.int64(record.timestamp)


_CONSUMER_GROUP_ENCODERS: dict[type[Record], tuple[int, Callable[[FlexWriter, Any], None]]] = {
    ConsumerGroupMetadata: (3, _write_metadata),
    ConsumerGroupPartitionMetadata: (4, _write_partition_metadata),
    ConsumerGroupMemberMetadata: (5, _write_member_metadata),
    ConsumerGroupTargetAssignmentMetadata: (6, _write_target_metadata),
    ConsumerGroupTargetAssignmentMember: (7, _write_target_member),
    ConsumerGroupCurrentMemberAssignment: (8, _write_current_assignment),
    ConsumerGroupRegularExpression: (16, _write_regular_expression),
}
"""Each KIP-848 record's key type and value writer (version 0), as the decoder's ``_CONSUMER_GROUP_DECODERS``."""


def _consumer_group_value(record: Record) -> bytes:
    writer = FlexWriter()
    writer.int16(0)
    _CONSUMER_GROUP_ENCODERS[type(record)][1](writer, record)
    writer.no_tagged_fields()
    return writer.getvalue()
