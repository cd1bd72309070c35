"""Java's String order (UTF-16 code units) wherever Kafka's Java code sorts names: topics and owned partitions on
the wire, member order in range and roundrobin.

Python compares code points, Java UTF-16 code units: a name beyond the Basic Multilingual Plane (an emoji,
encoded as a surrogate pair 0xD800-0xDFFF) sorts after U+E000-U+FFFF in Python and before it in Java. The
reference order here is computed from the code units by hand, independently of the library's sort key.
"""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from assignors import Cluster, RangeAssignor, RoundRobinAssignor, Subscription, TopicPartition
from assignors._core.util import java_sorted, java_sorted_partitions, kafka_member_order
from assignors.consumer_protocol import decode_subscription, encode_subscription

EMOJI = "\U0001f600"  # beyond the BMP: a surrogate pair in UTF-16
PRIVATE = "\ue000"  # the first code point after the surrogates


def utf16_units(text: str) -> list[int]:
    """The UTF-16 code units of ``text``, as Java's ``String.charAt`` sees them."""
    units: list[int] = []
    for char in text:
        point = ord(char)
        if point < 0x10000:
            units.append(point)
        else:
            offset = point - 0x10000
            units += [0xD800 + (offset >> 10), 0xDC00 + (offset & 0x3FF)]
    return units


# Names where the two orders differ are common: a small alphabet around the surrogates (ASCII, U+E000-U+FFFF,
# the supplementary planes), and any other text beside.
_NEAR_SURROGATES = ["a", "b", PRIVATE, "\uffff", "\U00010000", EMOJI, "\U0010ffff"]
names = st.one_of(
    st.text(st.sampled_from(_NEAR_SURROGATES), min_size=1, max_size=3),
    st.text(
        st.one_of(
            st.characters(min_codepoint=0xE000, max_codepoint=0xFFFF),
            st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF),
            st.characters(codec="utf-8"),
        ),
        min_size=1,
        max_size=4,
    ),
)


def _wire_topics_and_owned(data: bytes) -> tuple[list[str], list[tuple[str, list[int]]]]:
    """The topic list and the owned-partition groups of a version-1+ subscription, in the order of the bytes."""
    offset = 2  # the version
    (count,) = struct.unpack_from(">i", data, offset)
    offset += 4

    def string() -> str:
        nonlocal offset
        (size,) = struct.unpack_from(">h", data, offset)
        text = data[offset + 2 : offset + 2 + size].decode()
        offset += 2 + size
        return text

    topics = [string() for _ in range(count)]
    (size,) = struct.unpack_from(">i", data, offset)  # user data, null here
    offset += 4 + max(size, 0)
    (groups,) = struct.unpack_from(">i", data, offset)
    offset += 4
    owned = []
    for _ in range(groups):
        topic = string()
        (numbers,) = struct.unpack_from(">i", data, offset)
        owned.append((topic, list(struct.unpack_from(f">{numbers}i", data, offset + 4))))
        offset += 4 + 4 * numbers
    return topics, owned


def test_the_orders_differ_beyond_the_bmp() -> None:
    """Pinned: Python puts U+E000 first, Java the emoji; the subscription's bytes follow Java."""
    assert sorted([PRIVATE, EMOJI]) == [PRIVATE, EMOJI]
    assert java_sorted([PRIVATE, EMOJI]) == [EMOJI, PRIVATE]
    subscription = Subscription(
        [PRIVATE, EMOJI], owned_partitions=[TopicPartition(PRIVATE, 0), TopicPartition(EMOJI, 1)]
    )
    data = encode_subscription(subscription, version=1)
    assert data.hex() == (
        "0001" "00000002" "0004f09f9880" "0003ee8080" "ffffffff"
        "00000002" "0004f09f9880" "00000001" "00000001" "0003ee8080" "00000001" "00000000"
    )  # fmt: skip
    assert decode_subscription(data) == subscription


@given(st.lists(names, max_size=12))
def test_java_sorted_is_utf16_order(items: list[str]) -> None:
    assert java_sorted(items) == sorted(items, key=utf16_units)


@given(st.lists(st.tuples(names, st.integers(0, 3)), max_size=12, unique=True))
def test_java_sorted_partitions_is_utf16_order_then_number(pairs: list[tuple[str, int]]) -> None:
    partitions = [TopicPartition(topic, number) for topic, number in pairs]
    expected = sorted(partitions, key=lambda tp: (utf16_units(tp.topic), tp.partition))
    assert java_sorted_partitions(partitions) == expected


@given(st.lists(names, min_size=1, max_size=8, unique=True), st.data())
def test_subscription_bytes_list_topics_and_owned_partitions_in_java_order(
    topics: list[str], data: st.DataObject
) -> None:
    owned_topics = data.draw(st.lists(st.sampled_from(topics), unique=True), label="owned topics")
    owned = [TopicPartition(t, p) for t in owned_topics for p in data.draw(st.sets(st.integers(0, 5), min_size=1))]
    subscription = Subscription(topics, owned_partitions=owned)
    encoded = encode_subscription(subscription)
    wire_topics, wire_owned = _wire_topics_and_owned(encoded)
    assert wire_topics == sorted(topics, key=utf16_units)
    assert wire_owned == [
        (topic, sorted(tp.partition for tp in owned if tp.topic == topic))
        for topic in sorted(owned_topics, key=utf16_units)
    ]
    assert decode_subscription(encoded) == subscription


members = st.dictionaries(names, st.one_of(st.none(), names), min_size=1, max_size=6)  # member id -> instance id


def _java_member_order(group: dict[str, str | None]) -> list[str]:
    """Kafka's MemberInfo order: static members by instance id, then dynamic ones by member id (UTF-16 order)."""
    static = sorted(
        (m for m in group if group[m] is not None), key=lambda m: (utf16_units(group[m] or ""), utf16_units(m))
    )
    dynamic = sorted((m for m in group if group[m] is None), key=utf16_units)
    return static + dynamic


@given(members)
def test_member_order_is_kafkas_in_java_order(group: dict[str, str | None]) -> None:
    subscriptions = {m: Subscription(["t"], group_instance_id=i) for m, i in group.items()}
    assert kafka_member_order(subscriptions) == _java_member_order(group)


@given(members, st.integers(0, 20))
def test_range_gives_the_ranges_in_java_member_order(group: dict[str, str | None], count: int) -> None:
    """One topic: members in MemberInfo order take consecutive ranges, the first ``count % n`` one more."""
    subscriptions = {m: Subscription(["t"], group_instance_id=i) for m, i in group.items()}
    result = RangeAssignor().assign(Cluster({"t": count}), subscriptions)
    expected: dict[str, list[TopicPartition]] = {}
    size, extra = divmod(count, len(group))
    start = 0
    for index, member in enumerate(_java_member_order(group)):
        end = start + size + (index < extra)
        expected[member] = [TopicPartition("t", p) for p in range(start, end)]
        start = end
    assert {m: list(a.partitions) for m, a in result.items()} == expected


@given(members, st.dictionaries(names, st.integers(0, 4), min_size=1, max_size=4))
def test_roundrobin_deals_in_java_topic_and_member_order(group: dict[str, str | None], counts: dict[str, int]) -> None:
    """Everyone on every topic: the k-th partition in (topic in Java order, number) order goes to member k mod n."""
    subscriptions = {m: Subscription(list(counts), group_instance_id=i) for m, i in group.items()}
    result = RoundRobinAssignor().assign(Cluster(counts), subscriptions)
    order = _java_member_order(group)
    expected: dict[str, list[TopicPartition]] = {m: [] for m in group}
    dealt = [TopicPartition(t, p) for t in sorted(counts, key=utf16_units) for p in range(counts[t])]
    for index, tp in enumerate(dealt):
        expected[order[index % len(order)]].append(tp)
    assert {m: list(a.partitions) for m, a in result.items()} == expected
