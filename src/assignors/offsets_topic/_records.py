"""The record types of ``__consumer_offsets`` that :func:`decode_record` returns (frozen dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from assignors._core.model import Assignment, Subscription

__all__ = [
    "ConsumerGroupCurrentMemberAssignment",
    "ConsumerGroupMemberMetadata",
    "ConsumerGroupMetadata",
    "ConsumerGroupPartitionMetadata",
    "ConsumerGroupRecordTombstone",
    "ConsumerGroupRegularExpression",
    "ConsumerGroupTargetAssignmentMember",
    "ConsumerGroupTargetAssignmentMetadata",
    "GroupMetadata",
    "GroupTombstone",
    "LegacyConsumerGroupRecord",
    "MemberMetadata",
    "OffsetCommit",
    "Record",
    "TopicIdPartitions",
    "TopicMetadata",
    "UnknownRecord",
]


@dataclass(frozen=True, slots=True)
class MemberMetadata:
    """One member of a classic group's GroupMetadataValue.

    ``subscription`` and ``assignment`` are the decoded ConsumerProtocol bytes when the
    group's protocol type is ``consumer``, else None; a 0-length assignment (a member the
    leader left out) decodes as an empty :class:`~assignors.Assignment`. The raw bytes are
    kept in ``subscription_bytes`` and ``assignment_bytes``. Embedded bytes that do not
    decode leave ``subscription``/``assignment`` None and say why in ``error`` (the field
    and absolute byte offset), as ``kafka-dump-log.sh`` keeps such bytes undecoded. Fields a value version lacks
    take Kafka's defaults: ``group_instance_id`` None before v3, ``rebalance_timeout_ms`` =
    ``session_timeout_ms`` in v0 (as Kafka's loader does).
    """

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: Subscription | None
    assignment: Assignment | None
    subscription_bytes: bytes = b""
    assignment_bytes: bytes = b""
    error: str | None = None


@dataclass(frozen=True, slots=True)
class GroupMetadata:
    """A classic group's state after a generation (key type 2, GroupMetadataValue v0-v4).

    ``current_state_timestamp`` is -1 when the version (v0, v1) lacks it. An Empty group is
    written with no members and a null protocol and leader.
    """

    group_id: str
    generation: int
    protocol_type: str
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: tuple[MemberMetadata, ...]
    version: int = 3


@dataclass(frozen=True, slots=True)
class GroupTombstone:
    """A classic group's metadata deleted (key type 2 with a null value)."""

    group_id: str


@dataclass(frozen=True, slots=True)
class OffsetCommit:
    """A committed offset (key type 0 or 1); ``offset`` is None for a tombstone."""

    group_id: str
    topic: str
    partition: int
    offset: int | None = None


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """A topic of a consumer group's subscription metadata; ``topic_id`` prints as Kafka's tools do."""

    topic_id: str
    topic_name: str
    num_partitions: int


@dataclass(frozen=True, slots=True)
class TopicIdPartitions:
    """Partitions of one topic, named by its id (KIP-848 assignments)."""

    topic_id: str
    partitions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadata:
    """Type 3: a KIP-848 group's epoch."""

    group_id: str
    epoch: int


@dataclass(frozen=True, slots=True)
class ConsumerGroupPartitionMetadata:
    """Type 4: the topics a KIP-848 group subscribes to, with ids, names and partition counts."""

    group_id: str
    topics: tuple[TopicMetadata, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupMemberMetadata:
    """Type 5: a KIP-848 member's subscription."""

    group_id: str
    member_id: str
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMetadata:
    """Type 6: the epoch of a KIP-848 group's new target assignment (written after its type-7 deltas)."""

    group_id: str
    assignment_epoch: int


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMember:
    """Type 7: a member's target assignment, as the server-side assignor computed it."""

    group_id: str
    member_id: str
    partitions: tuple[TopicIdPartitions, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupCurrentMemberAssignment:
    """Type 8: what a KIP-848 member holds at its epoch; ``state`` 0 STABLE, 1 UNREVOKED, 2 UNRELEASED."""

    group_id: str
    member_id: str
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned_partitions: tuple[TopicIdPartitions, ...]
    partitions_pending_revocation: tuple[TopicIdPartitions, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupRegularExpression:
    """Type 16: the topics a KIP-848 group's subscribed regular expression resolved to."""

    group_id: str
    regular_expression: str
    topics: tuple[str, ...]
    version: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class ConsumerGroupRecordTombstone:
    """A KIP-848 record deleted (types 3-8 and 16 with a null value): a member left, or the group was deleted."""

    record_type: int
    group_id: str
    member_id: str | None = None
    regular_expression: str | None = None


@dataclass(frozen=True, slots=True)
class LegacyConsumerGroupRecord:
    """A KIP-848 value that does not decode with the Kafka 3.8+ layout.

    Kafka 3.7's early-access KIP-848 wrote the same record types and value version 0 with
    other fields, so such a value is reported (``reason`` says where the 3.8+ layout broke)
    rather than guessed at; the tables skip it and count it.
    """

    record_type: int
    group_id: str
    member_id: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class UnknownRecord:
    """A key type this decoder does not read (share groups 9-15, streams groups 17+); Kafka's tools skip them too."""

    record_type: int


Record: TypeAlias = (
    GroupMetadata
    | GroupTombstone
    | OffsetCommit
    | ConsumerGroupMetadata
    | ConsumerGroupPartitionMetadata
    | ConsumerGroupMemberMetadata
    | ConsumerGroupTargetAssignmentMetadata
    | ConsumerGroupTargetAssignmentMember
    | ConsumerGroupCurrentMemberAssignment
    | ConsumerGroupRegularExpression
    | ConsumerGroupRecordTombstone
    | LegacyConsumerGroupRecord
    | UnknownRecord
)
