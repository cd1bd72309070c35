"""The cluster's own history: decode ``__consumer_offsets`` records into group snapshots and tables.

Every completed generation of a classic consumer group is written to ``__consumer_offsets``
as a GroupMetadata record (key type 2) holding the selected assignor, the leader, and each
member's JoinGroup subscription and SyncGroup assignment bytes; KIP-848 groups write their
members, target and current assignments as record types 3-8 and 16. This package reads
them with the standard library only:

- :func:`decode_record` turns one record's key and value bytes into a record object
  (:class:`GroupMetadata`, :class:`GroupTombstone`, :class:`OffsetCommit`, the KIP-848
  types); :func:`encode_record` writes them back byte for byte.
- :class:`HistoryBuilder` folds records, in offset order per partition, into the three
  tables the evaluation reads: ``membership``, ``actual`` (what the cluster assigned) and
  ``topics`` (partition counts the records reveal).
- :func:`read_dump_log` and :func:`read_formatter_output` read the text output of
  ``kafka-dump-log.sh --offsets-decoder`` and of the console consumer's
  ``GroupMetadataMessageFormatter``.

Untrusted bytes raise :class:`~assignors.ProtocolError` naming the field and byte offset,
and no length prefix allocates beyond the input.
"""

from assignors._core.tables import ACTUAL_COLUMNS
from assignors.offsets_topic._decode import decode_record
from assignors.offsets_topic._dumps import DumpEntry, read_dump_log, read_formatter_output, record_from_json
from assignors.offsets_topic._encode import encode_record
from assignors.offsets_topic._history import HistoryBuilder, TopicCounts, timestamp_of
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

__all__ = [
    "ACTUAL_COLUMNS",
    "ConsumerGroupCurrentMemberAssignment",
    "ConsumerGroupMemberMetadata",
    "ConsumerGroupMetadata",
    "ConsumerGroupPartitionMetadata",
    "ConsumerGroupRecordTombstone",
    "ConsumerGroupRegularExpression",
    "ConsumerGroupTargetAssignmentMember",
    "ConsumerGroupTargetAssignmentMetadata",
    "DumpEntry",
    "GroupMetadata",
    "GroupTombstone",
    "HistoryBuilder",
    "LegacyConsumerGroupRecord",
    "MemberMetadata",
    "OffsetCommit",
    "Record",
    "TopicCounts",
    "TopicIdPartitions",
    "TopicMetadata",
    "UnknownRecord",
    "decode_record",
    "encode_record",
    "read_dump_log",
    "read_formatter_output",
    "record_from_json",
    "timestamp_of",
]
