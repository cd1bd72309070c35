"""The ``__consumer_offsets`` decoder: golden bytes built field by field, round trips, fuzzing.

The golden values follow Kafka's schemas: ``GroupMetadataKey``/``GroupMetadataValue`` v0-v4
(``group-coordinator/src/main/resources/common/message/``, the v0-v3 layouts also in the
hand-written schemas of Kafka 2.7's ``GroupMetadataManager.scala``), ``OffsetCommitKey``,
and the KIP-848 records of types 3-8 and 16 (Kafka 3.8+ layouts). The member of the v3
example is the one of Kafka's ``GroupMetadataMessageFormatterTest``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import struct
import tracemalloc
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import Assignment, EncodingError, ProtocolError, Subscription, TopicPartition
from assignors.consumer_protocol import encode_assignment, encode_subscription
from assignors.offsets_topic import (
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
    decode_record,
    encode_record,
)

# --- Kafka's primitive types, written out by hand --------------------------------------


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def s(v: str | None) -> bytes:
    """STRING / NULLABLE_STRING: INT16 length (-1 = null) + UTF-8."""
    return i16(-1) if v is None else i16(len(v.encode())) + v.encode()


def b(v: bytes) -> bytes:
    """BYTES: INT32 length + bytes."""
    return i32(len(v)) + v


def uv(v: int) -> bytes:
    """UNSIGNED_VARINT."""
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def cs(v: str | None) -> bytes:
    """COMPACT_(NULLABLE_)STRING: UNSIGNED_VARINT length + 1 (0 = null) + UTF-8."""
    return uv(0) if v is None else uv(len(v.encode()) + 1) + v.encode()


def cb(v: bytes) -> bytes:
    """COMPACT_BYTES."""
    return uv(len(v) + 1) + v


NO_TAGS = uv(0)
TOPIC_ID = bytes(15) + b"\x01"  # printed AAAAAAAAAAAAAAAAAAAAAQ
TOPIC_ID_TEXT = "AAAAAAAAAAAAAAAAAAAAAQ"

GROUP_KEY = i16(2) + s("group-id")


def sub_v3(topics: list[str], owned: dict[str, list[int]], generation: int, rack: str | None) -> bytes:
    """ConsumerProtocolSubscription v3: topics, userData (null), ownedPartitions, generationId, rackId."""
    body = i16(3) + i32(len(topics)) + b"".join(s(t) for t in topics) + i32(-1)
    body += i32(len(owned)) + b"".join(s(t) + i32(len(ps)) + b"".join(i32(p) for p in ps) for t, ps in owned.items())
    return body + i32(generation) + s(rack)


def assign_v3(assigned: dict[str, list[int]]) -> bytes:
    """ConsumerProtocolAssignment v3: assignedPartitions, userData (null)."""
    body = i16(3) + i32(len(assigned))
    body += b"".join(s(t) + i32(len(ps)) + b"".join(i32(p) for p in ps) for t, ps in assigned.items())
    return body + i32(-1)


SUB = sub_v3(["foo"], {"foo": [0]}, 0, "rack")
ASSIGN = assign_v3({"foo": [0, 1]})


def classic_value(version: int, sub: bytes = SUB, assign: bytes = ASSIGN) -> bytes:
    """GroupMetadataValue of one member, in ``version``'s layout."""
    if version == 4:  # flexible: compact strings/bytes/arrays and tagged-field sections
        member = cs("member-1") + cs("group-instance-1") + cs("client-1") + cs("host-1")
        member += i32(1000) + i32(1500) + cb(sub) + cb(assign) + NO_TAGS
        return i16(4) + cs("consumer") + i32(1) + cs("range") + cs("leader") + i64(1234) + uv(2) + member + NO_TAGS
    member = s("member-1")
    if version >= 3:
        member += s("group-instance-1")
    member += s("client-1") + s("host-1")
    if version >= 1:
        member += i32(1000)
    member += i32(1500) + b(sub) + b(assign)
    value = i16(version) + s("consumer") + i32(1) + s("range") + s("leader")
    if version >= 2:
        value += i64(1234)
    return value + i32(1) + member


EXPECTED_SUB = Subscription(
    ["foo"],
    owned_partitions=[TopicPartition("foo", 0)],
    generation_id=0,
    rack_id="rack",
    group_instance_id="group-instance-1",
)


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_group_metadata_every_value_version(version: int) -> None:
    record = decode_record(GROUP_KEY, classic_value(version))
    assert isinstance(record, GroupMetadata)
    assert (record.group_id, record.generation, record.protocol_type) == ("group-id", 1, "consumer")
    assert (record.protocol, record.leader, record.version) == ("range", "leader", version)
    assert record.current_state_timestamp == (1234 if version >= 2 else -1)
    (member,) = record.members
    instance = "group-instance-1" if version >= 3 else None
    assert member.member_id == "member-1"
    assert member.group_instance_id == instance
    assert (member.client_id, member.client_host) == ("client-1", "host-1")
    # v0 has no rebalance timeout; Kafka's loader uses the session timeout.
    assert member.rebalance_timeout_ms == (1000 if version >= 1 else 1500)
    assert member.session_timeout_ms == 1500
    assert member.subscription == dataclasses.replace(EXPECTED_SUB, group_instance_id=instance)
    assert member.assignment == Assignment([TopicPartition("foo", 0), TopicPartition("foo", 1)])
    assert (member.subscription_bytes, member.assignment_bytes, member.error) == (SUB, ASSIGN, None)
    assert encode_record(record) == (GROUP_KEY, classic_value(version))


def test_v4_tagged_fields_are_skipped_by_their_size() -> None:
    """GroupMetadataValue v4 defines no tags yet; unknown ones, on a member and at the top level, are skipped."""
    member = cs("member-1") + cs("group-instance-1") + cs("client-1") + cs("host-1")
    member += i32(1000) + i32(1500) + cb(SUB) + cb(ASSIGN)
    member += uv(2) + uv(0) + uv(3) + b"abc" + uv(7) + uv(0)  # two tagged fields: 3 bytes, then none
    value = i16(4) + cs("consumer") + i32(1) + cs("range") + cs("leader") + i64(1234) + uv(2) + member
    value += uv(1) + uv(200) + uv(2) + b"\x01\x02"  # tag 200 (a two-byte varint), 2 bytes
    record = decode_record(GROUP_KEY, value)
    assert record == decode_record(GROUP_KEY, classic_value(4))
    with pytest.raises(ProtocolError) as caught:  # a tagged field longer than what is left
        decode_record(GROUP_KEY, value[:-1])
    assert (caught.value.field, caught.value.offset) == ("value.taggedFields[200]", len(value) - 3)


def test_formatter_test_member_keeps_undecodable_embedded_bytes() -> None:
    """Kafka's GroupMetadataMessageFormatterTest member has subscription {0,1} and assignment {1,2}."""
    record = decode_record(GROUP_KEY, classic_value(3, b"\x00\x01", b"\x01\x02"))
    assert isinstance(record, GroupMetadata)
    (member,) = record.members
    assert member.subscription is None
    assert member.assignment is None
    assert (member.subscription_bytes, member.assignment_bytes) == (b"\x00\x01", b"\x01\x02")
    # the value ends with the subscription's 2 bytes, the assignment's INT32 length and 2 bytes
    start = len(classic_value(3, b"\x00\x01", b"\x01\x02")) - 2 - 4 - 2
    assert member.error is not None
    assert f"members[0].subscription.topics at offset {start + 2}" in member.error


def test_zero_length_assignment_is_an_empty_assignment() -> None:
    """Kafka fills members the leader left out with empty assignment bytes (GroupCoordinator.doSyncGroup)."""
    record = decode_record(GROUP_KEY, classic_value(3, SUB, b""))
    assert isinstance(record, GroupMetadata)
    assert record.members[0].assignment == Assignment(())
    assert record.members[0].error is None


def test_non_consumer_protocol_type_is_not_decoded() -> None:
    value = i16(3) + s("connect") + i32(4) + s("sessioned") + s("m") + i64(5) + i32(1)
    value += s("m") + s(None) + s("c") + s("h") + i32(1) + i32(2) + b(b"\x09") + b(b"\x08")
    record = decode_record(GROUP_KEY, value)
    assert isinstance(record, GroupMetadata)
    assert record.protocol_type == "connect"
    member = record.members[0]
    assert (member.subscription, member.assignment, member.subscription_bytes) == (None, None, b"\x09")


def test_empty_group_record() -> None:
    """An Empty group: generation bumped, null protocol and leader, no members (GroupCoordinator.onCompleteJoin)."""
    value = i16(3) + s("consumer") + i32(7) + s(None) + s(None) + i64(99) + i32(0)
    assert decode_record(GROUP_KEY, value) == GroupMetadata("group-id", 7, "consumer", None, None, 99, (), 3)


def test_tombstone_and_offset_commit_keys() -> None:
    assert decode_record(GROUP_KEY, None) == GroupTombstone("group-id")
    for key_version in (0, 1):
        key = i16(key_version) + s("g") + s("orders") + i32(3)
        value = i16(3) + i64(42) + i32(-1) + s("") + i64(0)
        assert decode_record(key, value) == OffsetCommit("g", "orders", 3, 42)
        assert decode_record(key, None) == OffsetCommit("g", "orders", 3, None)
    assert decode_record(i16(12) + s("share"), b"\x00") == UnknownRecord(12)


# --- KIP-848 ----------------------------------------------------------------------------


def tp_struct(partitions: list[int]) -> bytes:
    """TopicPartitions: TopicId (uuid), Partitions (compact []int32), tagged fields."""
    return TOPIC_ID + uv(len(partitions) + 1) + b"".join(i32(p) for p in partitions) + NO_TAGS


KIP848_GOLDEN: list[tuple[bytes, bytes, Record]] = [
    (i16(3) + s("g"), i16(0) + i32(5) + NO_TAGS, ConsumerGroupMetadata("g", 5)),
    (
        i16(4) + s("g"),
        # Topics = one entry of TopicId, TopicName, NumPartitions and a PartitionMetadata entry of Partition, Racks
        i16(0)
        + uv(2)
        + TOPIC_ID
        + cs("foo")
        + i32(3)
        + uv(2)
        + i32(0)
        + uv(2)
        + cs("r1")
        + NO_TAGS
        + NO_TAGS
        + NO_TAGS,
        ConsumerGroupPartitionMetadata("g", (TopicMetadata(TOPIC_ID_TEXT, "foo", 3),)),
    ),
    (
        i16(5) + s("g") + s("m1"),
        i16(0)
        + cs("i1")
        + cs("rack-a")
        + cs("client")
        + cs("host")
        + uv(3)
        + cs("bar")
        + cs("foo")
        + cs(None)
        # a tagged ClassicMemberMetadata (tag 0) is skipped by its size
        + i32(45000)
        + cs("range")
        + uv(1)
        + uv(0)
        + uv(3)
        + b"\x01\x01\x00",
        ConsumerGroupMemberMetadata("g", "m1", "i1", "rack-a", "client", "host", ("bar", "foo"), None, 45000, "range"),
    ),
    (i16(6) + s("g"), i16(0) + i32(9) + NO_TAGS, ConsumerGroupTargetAssignmentMetadata("g", 9)),
    (
        i16(7) + s("g") + s("m1"),
        i16(0) + uv(2) + tp_struct([0, 2]) + NO_TAGS,
        ConsumerGroupTargetAssignmentMember("g", "m1", (TopicIdPartitions(TOPIC_ID_TEXT, (0, 2)),)),
    ),
    (
        i16(8) + s("g") + s("m1"),
        i16(0) + i32(9) + i32(8) + i8(1) + uv(2) + tp_struct([0, 1]) + uv(2) + tp_struct([2]) + NO_TAGS,
        ConsumerGroupCurrentMemberAssignment(
            "g",
            "m1",
            9,
            8,
            1,
            (TopicIdPartitions(TOPIC_ID_TEXT, (0, 1)),),
            (TopicIdPartitions(TOPIC_ID_TEXT, (2,)),),
        ),
    ),
    (
        i16(16) + s("g") + s("foo.*"),
        i16(0) + uv(3) + cs("foo1") + cs("foo2") + i64(4) + i64(1700) + NO_TAGS,
        ConsumerGroupRegularExpression("g", "foo.*", ("foo1", "foo2"), 4, 1700),
    ),
]


@pytest.mark.parametrize(("key", "value", "expected"), KIP848_GOLDEN, ids=lambda x: getattr(x, "__name__", ""))
def test_kip848_records(key: bytes, value: bytes, expected: Record) -> None:
    assert decode_record(key, value) == expected
    again = encode_record(expected)
    assert decode_record(*again) == expected
    assert decode_record(key, None) == ConsumerGroupRecordTombstone(
        struct.unpack(">h", key[:2])[0],
        "g",
        getattr(expected, "member_id", None),
        getattr(expected, "regular_expression", None),
    )


def test_kip848_tagged_fields_are_skipped() -> None:
    """Kafka 4.1 adds MetadataHash as tag 0 of ConsumerGroupMetadataValue; unknown tags are skipped by size."""
    value = i16(0) + i32(5) + uv(2) + uv(0) + uv(8) + i64(77) + uv(9) + uv(1) + b"\xff"
    assert decode_record(i16(3) + s("g"), value) == ConsumerGroupMetadata("g", 5)


def test_kafka_37_layout_is_flagged() -> None:
    """Kafka 3.7's ConsumerGroupPartitionMetadataValue starts with an Epoch: the 3.8+ layout cannot read it."""
    value = i16(0) + i32(3) + uv(2) + TOPIC_ID + cs("foo") + i32(3) + uv(1) + NO_TAGS + NO_TAGS
    record = decode_record(i16(4) + s("g"), value)
    assert isinstance(record, LegacyConsumerGroupRecord)
    assert (record.record_type, record.group_id) == (4, "g")
    assert "value." in record.reason


# --- untrusted bytes --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "field", "offset"),
    [
        (b"\x00", None, "key.type", 0),
        (i16(2) + i16(5) + b"ab", None, "key.group", 2),
        (i16(-3), None, "key.type", 0),
        (GROUP_KEY, i16(5), "value.version", 0),
        (GROUP_KEY, i16(3) + s("consumer") + i32(1) + s("r") + s("l") + i64(0) + i32(2**31 - 1), "value.members", 30),
        (GROUP_KEY, classic_value(3) + b"\x00", "value", len(classic_value(3))),
        (GROUP_KEY, i16(4) + uv(2**31) + b"xx", "value.protocolType", 2),
        (GROUP_KEY, i16(4) + b"\xff\xff\xff\xff\xff\x01", "value.protocolType", 2),
        (i16(3) + s("g"), i16(1) + i32(5) + NO_TAGS, "value.version", 0),
    ],
)
def test_bad_bytes_name_the_field_and_offset(key: bytes, value: bytes | None, field: str, offset: int) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode_record(key, value)
    assert caught.value.field == field
    assert caught.value.offset == offset


def _decodes_or_protocol_error(key: bytes, value: bytes | None) -> None:
    problem: ProtocolError | None = None
    try:
        record = decode_record(key, value)
    except ProtocolError as error:
        problem = error
    if problem is None:
        assert record is not None
    else:
        assert problem.field
        assert problem.offset >= 0


@given(st.integers(0, 20), st.binary(max_size=40), st.one_of(st.none(), st.binary(max_size=200)))
def test_random_bytes_decode_or_raise_protocol_error(record_type: int, key_rest: bytes, value: bytes | None) -> None:
    _decodes_or_protocol_error(i16(record_type) + key_rest, value)


_VALID = [(GROUP_KEY, classic_value(v)) for v in range(5)] + [(k, v) for k, v, _ in KIP848_GOLDEN]


@given(st.sampled_from(_VALID), st.data())
def test_mutated_records_decode_or_raise_protocol_error(valid: tuple[bytes, bytes], data: st.DataObject) -> None:
    key, value = valid
    blob = bytearray(value)
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        at = data.draw(st.integers(0, max(len(blob) - 1, 0)))
        if kind == "flip" and blob:
            blob[at] = data.draw(st.integers(0, 255))
        elif kind == "cut":
            del blob[at:]
        else:
            blob[at:at] = data.draw(st.binary(min_size=1, max_size=4))
    _decodes_or_protocol_error(key, bytes(blob))


def _peak_bytes(decode: Callable[[], object]) -> int:
    """The most memory ``decode`` held at once, in bytes (tracemalloc)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        with contextlib.suppress(ProtocolError):
            decode()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (GROUP_KEY, i16(3) + s("consumer") + i32(1) + s("r") + s("l") + i64(0) + i32(2**31 - 1)),  # members
        (GROUP_KEY, i16(4) + cs("consumer") + i32(1) + cs("r") + cs("l") + i64(0) + uv(2**31)),  # compact members
        (GROUP_KEY, i16(4) + uv(2**32 - 1) + b"x"),  # a compact string of 4 GiB
        (GROUP_KEY, classic_value(3)[: -len(ASSIGN) - 4] + i32(2**31 - 1)),  # assignment bytes of 2 GiB
        (GROUP_KEY, classic_value(4)[:-1] + uv(2**31)),  # 2**31 tagged fields
        (i16(4) + s("g"), i16(0) + uv(2**31)),  # KIP-848 topics
        (i16(7) + s("g") + s("m"), i16(0) + uv(2) + TOPIC_ID + uv(2**31)),  # KIP-848 partitions
        (i16(2) + i16(32767), None),  # a key's group id longer than the key
    ],
)
def test_declared_lengths_allocate_nothing_beyond_the_input(key: bytes, value: bytes | None) -> None:
    """A length or count prefix is checked against the bytes left before anything is allocated for it."""
    assert _peak_bytes(lambda: decode_record(key, value)) < 64 * 1024


@given(st.sampled_from(_VALID), st.data())
def test_mutated_records_allocate_at_most_a_bounded_multiple_of_the_input(
    valid: tuple[bytes, bytes], data: st.DataObject
) -> None:
    key, value = valid
    blob = bytearray(value)
    at = data.draw(st.integers(0, len(blob) - 4))
    blob[at : at + 4] = data.draw(st.sampled_from([b"\x7f\xff\xff\xff", b"\xff\xff\xff\x0f", b"\x00\x00\xff\xff"]))
    assert _peak_bytes(lambda: decode_record(key, bytes(blob))) < 64 * 1024 + 64 * len(blob)


# --- round trips ------------------------------------------------------------------------

names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=8)
topic_partitions = st.lists(
    st.builds(TopicPartition, st.sampled_from(["a", "b", "c-1"]), st.integers(0, 50)), unique=True
)


@st.composite
def members(draw: st.DrawFn, version: int) -> MemberMetadata:
    instance = draw(st.one_of(st.none(), names)) if version >= 3 else None
    subscription = Subscription(
        draw(st.lists(names, max_size=3)),
        owned_partitions=draw(topic_partitions),
        generation_id=draw(st.integers(-1, 10)),
        rack_id=draw(st.one_of(st.none(), names)),
        group_instance_id=instance,
    )
    assignment = Assignment(sorted(set(draw(topic_partitions))))
    assignment_bytes = encode_assignment(assignment) if assignment.partitions else b""
    session = draw(st.integers(0, 2**31 - 1))
    return MemberMetadata(
        draw(names),
        instance,
        draw(names),
        draw(names),
        draw(st.integers(0, 2**31 - 1)) if version >= 1 else session,
        session,
        subscription,
        assignment,
        encode_subscription(subscription),
        assignment_bytes,
    )


@st.composite
def group_metadata(draw: st.DrawFn) -> GroupMetadata:
    version = draw(st.integers(0, 4))
    return GroupMetadata(
        draw(names),
        draw(st.integers(0, 2**31 - 1)),
        "consumer",
        draw(st.one_of(st.none(), names)),
        draw(st.one_of(st.none(), names)),
        draw(st.integers(0, 2**62)) if version >= 2 else -1,
        tuple(draw(st.lists(members(version), max_size=3))),
        version,
    )


@given(group_metadata())
def test_group_metadata_round_trip(record: GroupMetadata) -> None:
    key, value = encode_record(record)
    assert decode_record(key, value) == record
    assert encode_record(decode_record(key, value)) == (key, value)


def test_records_the_wire_cannot_hold_are_encoding_errors() -> None:
    """Writing refuses a version Kafka lacks, a record with no wire form and an over-long STRING."""
    with pytest.raises(EncodingError, match="version=9 of group 'g' is not one of 0-4"):
        encode_record(GroupMetadata("g", 1, "consumer", None, None, 0, (), 9))
    with pytest.raises(EncodingError, match="UnknownRecord has no wire form"):
        encode_record(UnknownRecord(12))
    with pytest.raises(EncodingError, match="Kafka's STRING holds at most 32767"):
        encode_record(ConsumerGroupMetadata("g" * 40_000, 5))


def test_the_encoder_table_mirrors_the_decoder_table() -> None:
    """Every KIP-848 record type the decoder reads, the encoder writes, under the same key type (the goldens hold
    one record of each)."""
    from assignors.offsets_topic import _decode, _encode

    table = _encode._CONSUMER_GROUP_ENCODERS
    assert sorted(record_type for record_type, _ in table.values()) == sorted(_decode._CONSUMER_GROUP_DECODERS)
    assert {type(expected) for _, _, expected in KIP848_GOLDEN} == set(table)
    for key, _, expected in KIP848_GOLDEN:
        assert encode_record(expected)[0] == key
        assert table[type(expected)][0] == struct.unpack(">h", key[:2])[0]
