"""assignors.consumer_protocol: Kafka's bytes, golden vectors, round trips, untrusted input."""

from __future__ import annotations

import struct
from collections.abc import Callable

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from assignors import Assignment, EncodingError, InvalidSubscriptionError, ProtocolError, Subscription, TopicPartition
from assignors._wire import consumer_protocol
from assignors.consumer_protocol import (
    decode_assignment,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)
from assignors.testing import assignments, subscriptions

TP = TopicPartition
OWNED = [TP("bar", 0), TP("foo", 0), TP("foo", 1)]
V1 = (
    "00010000000200036261720003666f6f0000000568656c6c6f"
    "00000002000362617200000001000000000003666f6f000000020000000000000001"
)

# Bytes written by Kafka's own serializers (ConsumerProtocol and the sticky assignor's user data).
SUBSCRIPTION_GOLDEN = [
    (Subscription(["foo", "bar"], user_data=b"hello"), 0, "00000000000200036261720003666f6f0000000568656c6c6f"),
    (Subscription(["foo", "bar"], user_data=b"hello", owned_partitions=OWNED), 1, V1),
    (
        Subscription(["foo", "bar"], user_data=b"hello", owned_partitions=OWNED, generation_id=1),
        2,
        "0002" + V1[4:] + "00000001",
    ),
    (
        Subscription(["foo", "bar"], user_data=b"hello", owned_partitions=OWNED, generation_id=1, rack_id="rack-a"),
        3,
        "0003" + V1[4:] + "0000000100067261636b2d61",
    ),
    (Subscription(["t"]), 3, "000300000001000174ffffffff00000000ffffffffffff"),
]
ASSIGNMENT_BODY = "000000020003666f6f000000010000000100036261720000000100000002"


@pytest.mark.parametrize(("subscription", "version", "golden"), SUBSCRIPTION_GOLDEN)
def test_subscription_golden_vectors(subscription: Subscription, version: int, golden: str) -> None:
    """Encoding gives Kafka's bytes exactly, and Kafka's bytes decode to the subscription."""
    assert encode_subscription(subscription, version).hex() == golden
    assert decode_subscription(bytes.fromhex(golden)) == subscription


def test_assignment_golden_vectors() -> None:
    """Partitions grouped per topic in first-appearance order; v1-v3 differ only in the version prefix."""
    partitions = [TP("foo", 1), TP("bar", 2)]
    assert encode_assignment(Assignment(partitions), 0).hex() == "0000" + ASSIGNMENT_BODY + "ffffffff"
    for version in (1, 2, 3):
        golden = f"000{version}" + ASSIGNMENT_BODY + "0000000568656c6c6f"
        assert encode_assignment(Assignment(partitions, user_data=b"hello"), version).hex() == golden
        assert decode_assignment(bytes.fromhex(golden)) == Assignment(partitions, user_data=b"hello")


def test_user_data_golden_vectors() -> None:
    """Sticky V1/V0 and cooperative-sticky user data, both ways."""
    previous = [TP("t1", 0), TP("t1", 2), TP("t2", 1)]
    v1 = "000000020002743100000002000000000000000200027432000000010000000100000005"
    v0 = "0000000200027431000000020000000000000002000274320000000100000001"
    assert encode_sticky_user_data(previous, 5).hex() == v1
    assert encode_sticky_user_data([], 7).hex() == "0000000000000007"
    assert encode_sticky_user_data(previous, None).hex() == v0
    assert decode_sticky_user_data(bytes.fromhex(v1)).generation == 5
    assert decode_sticky_user_data(bytes.fromhex(v0)).partitions == tuple(previous)
    assert decode_sticky_user_data(bytes.fromhex(v0)).generation is None
    assert (encode_cooperative_user_data(-1).hex(), encode_cooperative_user_data(10).hex()) == ("ffffffff", "0000000a")
    assert decode_cooperative_user_data(bytes.fromhex("0000000a")) == 10


def test_serializer_sorts_topics_and_owned_partitions() -> None:
    """Kafka's serializer writes topics and owned partitions sorted, whatever the input order."""
    shuffled = Subscription(["foo", "bar"], user_data=b"hello", owned_partitions=[OWNED[2], OWNED[0], OWNED[1]])
    assert encode_subscription(shuffled, 1).hex() == V1


def test_older_versions_drop_newer_fields() -> None:
    """Written as v0 a subscription loses owned partitions, generation and rack; v1 keeps owned only."""
    full = Subscription(["t"], owned_partitions=[TP("t", 0)], generation_id=4, rack_id="r", group_instance_id="i")
    assert decode_subscription(encode_subscription(full, 0)) == Subscription(["t"])
    assert decode_subscription(encode_subscription(full, 1)) == Subscription(["t"], owned_partitions=[TP("t", 0)])
    assert decode_subscription(encode_subscription(full, 3), group_instance_id="i") == full


def test_newer_version_parses_as_v3_and_ignores_extra_fields() -> None:
    """A v100 blob with a field Kafka does not know yet still parses; v100 writes v3."""
    v3 = bytes.fromhex(SUBSCRIPTION_GOLDEN[3][2])
    future = (100).to_bytes(2, "big") + v3[2:] + bytes.fromhex("00000007cafe")
    assert decode_subscription(future) == SUBSCRIPTION_GOLDEN[3][0]
    assert encode_subscription(SUBSCRIPTION_GOLDEN[3][0], 100) == v3
    assert decode_assignment((100).to_bytes(2, "big") + bytes.fromhex(ASSIGNMENT_BODY + "ffffffff99")) == (
        Assignment([TP("foo", 1), TP("bar", 2)])
    )


def test_empty_rack_is_no_rack() -> None:
    """An empty RackId on the wire means no rack, as Kafka's Optional.empty()."""
    blob = bytes.fromhex("000300000001000174ffffffff00000000ffffffff0000")
    assert decode_subscription(blob).rack_id is None


@pytest.mark.parametrize(
    ("hex_bytes", "field", "offset"),
    [
        ("", "subscription.version", 0),
        ("ffff00000000ffffffff", "subscription.version", 0),
        ("0003", "topics", 2),
        ("00037fffffff", "topics", 2),  # two billion topics in four bytes: refused before allocating
        ("000300000001ffff", "topics", 6),
        ("0003000000010002c328", "topics", 8),  # invalid UTF-8
        ("00030000000100000000000000000000", "topics", 6),  # an empty topic name
        ("000300000001000174fffffffe", "user_data", 9),
        ("00030000000100017400000010abcd", "user_data", 9),
        ("000300000001000174ffffffff0000000100017400000001ffffffff", "owned_partitions.partitions", 24),
        ("000300000001000174ffffffff00000002000174000000010000000000017400000001000000000", "owned_partitions", 13),
        ("000300000001000174ffffffff00000000ffff", "generation_id", 17),
        ("000300000001000174ffffffff00000000fffffffffffe", "rack_id", 21),
    ],
)
def test_bad_subscription_bytes_name_field_and_offset(hex_bytes: str, field: str, offset: int) -> None:
    """Truncated, negative, oversized, non-UTF-8 or duplicate content: ProtocolError at the right place."""
    data = bytes.fromhex(hex_bytes if len(hex_bytes) % 2 == 0 else hex_bytes + "0")
    with pytest.raises(ProtocolError) as caught:
        decode_subscription(data)
    assert (caught.value.field, caught.value.offset) == (field, offset)
    assert f"offset {offset}" in str(caught.value)


def test_bad_assignment_bytes() -> None:
    """A partition listed twice, a negative partition or missing user data: ProtocolError with the offset."""
    twice = "0003000000010001740000000200000001000000010000ffffffff"
    with pytest.raises(ProtocolError, match=r"assigned_partitions at offset 2: lists partition .t-1. twice"):
        decode_assignment(bytes.fromhex(twice.replace("0000ffffffff", "ffffffff")))
    with pytest.raises(ProtocolError, match="negative partition -1 at offset 13"):
        decode_assignment(bytes.fromhex("00030000000100017400000001ffffffffffffffff"))
    with pytest.raises(ProtocolError, match="user_data: needs 4 bytes at offset 17"):
        decode_assignment(bytes.fromhex("0003000000010001740000000100000001"))


def test_encoding_refuses_what_the_wire_cannot_hold() -> None:
    """Negative versions, names over 32,767 bytes and numbers beyond INT32 are input errors, named.

    What the encoder refuses is an EncodingError, still an InvalidSubscriptionError for older callers.
    """
    assert issubclass(EncodingError, InvalidSubscriptionError)
    with pytest.raises(EncodingError, match="version=-1"):
        encode_subscription(Subscription(["t"]), -1)
    with pytest.raises(EncodingError, match="version=-2"):
        encode_assignment(Assignment([]), -2)
    with pytest.raises(EncodingError, match="topic 'xxx"):
        encode_subscription(Subscription(["x" * 40_000]))
    # Numbers beyond INT32 are refused when the value is built, before anything reaches the encoder.
    with pytest.raises(InvalidSubscriptionError, match=r"partition=2147483648 of topic='t' .*INT32"):
        encode_assignment(Assignment([TP("t", 2**31)]))
    with pytest.raises(InvalidSubscriptionError, match=r"generation_id=2147483648 .*INT32"):
        encode_subscription(Subscription(["t"], generation_id=2**31))
    assert decode_assignment(encode_assignment(Assignment([TP("t", 2**31 - 1)]))).partitions == (TP("t", 2**31 - 1),)


@given(subscriptions(), st.integers(0, 3))
def test_subscription_round_trip(subscription: Subscription, version: int) -> None:
    """decode(encode(s)) == s, with the fields the version lacks defaulted (instance id is not on the wire)."""
    decoded = decode_subscription(
        encode_subscription(subscription, version), group_instance_id=subscription.group_instance_id
    )
    expected = Subscription(
        subscription.topics,
        user_data=subscription.user_data,
        owned_partitions=subscription.owned_partitions if version >= 1 else (),
        generation_id=subscription.generation_id if version >= 2 else -1,
        rack_id=subscription.rack_id if version >= 3 else None,
        group_instance_id=subscription.group_instance_id,
    )
    assert decoded == expected


@given(assignments(), st.integers(0, 3))
def test_assignment_round_trip(assignment: Assignment, version: int) -> None:
    """decode(encode(a)) holds a's partitions grouped per topic (first appearance, order kept) and its user data."""
    grouped: dict[str, list[TopicPartition]] = {}
    for tp in assignment.partitions:
        grouped.setdefault(tp.topic, []).append(tp)
    decoded = decode_assignment(encode_assignment(assignment, version))
    assert decoded.partitions == tuple(tp for tps in grouped.values() for tp in tps)
    assert decoded.user_data == assignment.user_data


@given(st.lists(st.builds(TP, st.text(min_size=1, max_size=5), st.integers(0, 2**31 - 1)), unique=True),
       st.none() | st.integers(-1, 2**31 - 1))  # fmt: skip
def test_sticky_user_data_round_trip(partitions: list[TopicPartition], generation: int | None) -> None:
    """V1 and V0 sticky user data decode to what was encoded (grouped per topic)."""
    decoded = decode_sticky_user_data(encode_sticky_user_data(partitions, generation))
    assert sorted(decoded.partitions) == sorted(partitions)
    assert decoded.generation == generation


def _protocol_error(decode: Callable[[bytes], object], data: bytes) -> ProtocolError | None:
    """Decode; the ProtocolError if it raised one (any other exception propagates and fails the test)."""
    try:
        decode(data)
    except ProtocolError as error:
        return error
    return None


def _well_placed(error: ProtocolError | None, data: bytes | bytearray) -> bool:
    return error is None or (0 <= error.offset <= len(data) and bool(error.field))


DECODERS = [decode_subscription, decode_assignment, decode_sticky_user_data, decode_cooperative_user_data]


@pytest.mark.parametrize("decode", DECODERS)
@given(data=st.binary(max_size=64))
@example(data=b"\x00\x03\x7f\xff\xff\xff")
def test_random_bytes_raise_only_protocol_error(decode: Callable[[bytes], object], data: bytes) -> None:
    """Random bytes decode or raise ProtocolError naming a field and an offset inside the input."""
    assert _well_placed(_protocol_error(decode, data), data)


@given(subscriptions(), st.integers(0, 3), st.data())
def test_mutated_subscriptions_raise_only_protocol_error(
    subscription: Subscription, version: int, data: st.DataObject
) -> None:
    """Valid bytes with flipped, cut or inserted bytes decode or raise ProtocolError (never hang or allocate)."""
    blob = bytearray(encode_subscription(subscription, version))
    for _ in range(data.draw(st.integers(1, 4))):
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        position = data.draw(st.integers(0, len(blob)))
        if action == "flip" and position < len(blob):
            blob[position] = data.draw(st.integers(0, 255))
        elif action == "cut":
            del blob[position:]
        else:
            blob[position:position] = data.draw(st.binary(min_size=1, max_size=4))
    assert _well_placed(_protocol_error(decode_subscription, bytes(blob)), blob)


@given(assignments(), st.data())
def test_mutated_assignments_raise_only_protocol_error(assignment: Assignment, data: st.DataObject) -> None:
    """The same for assignments."""
    blob = bytearray(encode_assignment(assignment))
    position = data.draw(st.integers(0, max(len(blob) - 1, 0)))
    if blob:
        blob[position] = data.draw(st.integers(0, 255))
    assert _well_placed(_protocol_error(decode_assignment, bytes(blob)), blob)


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def _owned(topic: str) -> bytes:
    """``[topic, [0]]``: one topic-partitions element."""
    return struct.pack(">i", 1) + _string(topic) + struct.pack(">ii", 1, 0)


def test_decoders_refuse_an_empty_topic_in_owned_and_assigned_partitions() -> None:
    """TopicPartition refuses an empty topic; the wire decoders now do too, naming the offset."""
    # Subscription v1: version, topics ["t"], user_data null, owned [("", [0])]
    subscription = struct.pack(">hi", 1, 1) + _string("t") + struct.pack(">i", -1) + _owned("")
    with pytest.raises(ProtocolError, match=r"owned_partitions\.topic: empty topic name at offset 17") as error:
        decode_subscription(subscription)
    assert error.value.offset == 17
    assignment = struct.pack(">h", 0) + _owned("") + struct.pack(">i", -1)
    with pytest.raises(ProtocolError, match=r"assigned_partitions\.topic: empty topic name at offset 6"):
        decode_assignment(assignment)
    good = struct.pack(">h", 0) + _owned("t") + struct.pack(">i", -1)
    assert decode_assignment(good).partitions == (TopicPartition("t", 0),)
    assert decode_assignment(encode_assignment(decode_assignment(good))) == decode_assignment(good)


@given(
    st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 9)), unique=True, max_size=6),
    st.integers(-1, 2**31 - 1),
    st.integers(-1, 2**31 - 1),
)
def test_sticky_user_data_decodes_the_same_when_its_assignment_was_seen_before(
    pairs: list[tuple[str, int]], first: int, second: int
) -> None:
    """A V1 blob whose assignment bytes were decoded before (with another generation) decodes as from scratch."""
    partitions = [TP(t, p) for t, p in pairs]
    consumer_protocol.decode_sticky_user_data(encode_sticky_user_data(partitions, first))
    again = consumer_protocol.decode_sticky_user_data(encode_sticky_user_data(partitions, second))
    consumer_protocol._V1_ASSIGNMENTS.clear()  # decode without what was seen
    fresh = consumer_protocol.decode_sticky_user_data(encode_sticky_user_data(partitions, second))
    assert again == fresh
    assert again.generation == second
    assert sorted(again.partitions) == sorted(partitions)


def test_the_decode_cache_forgets_the_least_recently_used_entry() -> None:
    """Past its limit the cache drops the entry used longest ago, never the whole map."""
    cache: consumer_protocol._Recent[bytes, tuple[TP, ...]] = consumer_protocol._Recent(2)
    a, b, c = (TP("a", 0),), (TP("b", 0),), (TP("c", 0),)
    cache.put(b"a", a)
    cache.put(b"b", b)
    assert cache.get(b"a") == a  # now b is the least recently used
    cache.put(b"c", c)
    assert (len(cache), b"a" in cache, b"b" in cache, b"c" in cache) == (2, True, False, True)
    assert cache.get(b"b") is None


@given(
    st.lists(st.tuples(st.sampled_from(["a", "bb", "c"]), st.integers(0, 40)), unique=True, max_size=8),
    st.none() | st.integers(-1, 2**31 - 1),
)
def test_sticky_user_data_encodes_the_same_from_the_cache(pairs: list[tuple[str, int]], generation: int | None) -> None:
    """A tuple of partitions encoded before (its bytes remembered, all but the generation) encodes to the bytes a
    list of the same partitions gives, which is never remembered, in any generation and in V0."""
    partitions = tuple(TP(t, p) for t, p in pairs)
    fresh = encode_sticky_user_data(list(partitions), generation)
    assert encode_sticky_user_data(partitions, 7) == encode_sticky_user_data(list(partitions), 7)
    assert encode_sticky_user_data(partitions, generation) == fresh  # from the cache
    assert encode_sticky_user_data(tuple(partitions), generation) == fresh  # an equal tuple: the same entry
    assert consumer_protocol._V1_ENCODED.get(partitions) is not None
    with pytest.raises(EncodingError):
        encode_sticky_user_data(partitions, 2**31)  # the generation is still checked


@given(st.lists(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 3)), unique=True, max_size=3), max_size=12))
def test_sticky_user_data_decodes_the_same_past_the_cache_limit(assignments: list[list[tuple[str, int]]]) -> None:
    """More distinct blobs than the cache holds: each decodes as from scratch, and the cache stays at its limit."""
    cache = consumer_protocol._V1_ASSIGNMENTS
    limit = cache.limit
    cache.clear()  # earlier tests in this process may have filled it: a hit puts nothing, so nothing is evicted
    cache.limit = 3
    try:
        for generation, pairs in enumerate(assignments * 2):
            partitions = [TP(t, p) for t, p in pairs]
            decoded = consumer_protocol.decode_sticky_user_data(encode_sticky_user_data(partitions, generation))
            assert (sorted(decoded.partitions), decoded.generation) == (sorted(partitions), generation)
            assert len(cache) <= 3
    finally:
        cache.clear()
        cache.limit = limit
