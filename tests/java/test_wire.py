"""ConsumerProtocol bytes exactly Kafka's: ours equal Java's, and each side decodes what the other wrote.

Random subscriptions and assignments at every version (and versions above the newest, which write the newest;
a negative version is refused by both), then bytes mutated at random: whatever our decoder accepts, Java's reads
the same way.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assignors import Assignment, EncodingError, ProtocolError, Subscription, TopicPartition
from assignors.consumer_protocol import (
    HIGHEST_VERSION,
    decode_assignment,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
    encode_sticky_user_data,
    encode_subscription,
)
from assignors.testing import assignments, subscriptions
from helpers.java_oracle import JavaError, JavaOracle
from helpers.oracle_groups import EXAMPLES

VERSIONS = st.integers(0, HIGHEST_VERSION + 2)


def _on_the_wire(subscription: Subscription, version: int) -> Subscription:
    """What survives ``version``: owned partitions from v1, the generation from v2, the rack from v3."""
    return Subscription(
        subscription.topics,
        user_data=subscription.user_data,
        owned_partitions=subscription.owned_partitions if version >= 1 else (),
        generation_id=subscription.generation_id if version >= 2 else -1,
        rack_id=subscription.rack_id if version >= 3 else None,
    )


def _without_instance(subscription: Subscription) -> Subscription:
    return _on_the_wire(subscription, HIGHEST_VERSION)


@settings(max_examples=EXAMPLES)
@given(subscription=subscriptions(), version=VERSIONS)
def test_subscription_bytes_exactly_kafka(oracle: JavaOracle, subscription: Subscription, version: int) -> None:
    ours = encode_subscription(subscription, version)
    java = oracle.encode_subscription(subscription, version)
    assert ours.hex() == java.hex()
    assert oracle.decode_subscription(ours) == _on_the_wire(subscription, version)
    assert decode_subscription(java) == _on_the_wire(subscription, version)


@settings(max_examples=EXAMPLES)
@given(assignment=assignments(), version=VERSIONS)
def test_assignment_bytes_exactly_kafka(oracle: JavaOracle, assignment: Assignment, version: int) -> None:
    ours = encode_assignment(assignment, version)
    java = oracle.encode_assignment(assignment, version)
    assert ours.hex() == java.hex()
    regrouped = decode_assignment(ours)  # the bytes group partitions per topic, in first-appearance order
    assert sorted(regrouped.partitions) == sorted(assignment.partitions)
    assert regrouped.user_data == assignment.user_data
    assert oracle.decode_assignment(ours) == regrouped
    assert decode_assignment(java) == regrouped


def test_negative_version_refused_by_both(oracle: JavaOracle) -> None:
    subscription, assignment = Subscription(["t"]), Assignment([TopicPartition("t", 0)])
    with pytest.raises(EncodingError):
        encode_subscription(subscription, -1)
    with pytest.raises(JavaError, match="version"):
        oracle.encode_subscription(subscription, -1)
    with pytest.raises(EncodingError):
        encode_assignment(assignment, -1)
    with pytest.raises(JavaError, match="version"):
        oracle.encode_assignment(assignment, -1)


def _mutated(data: bytes, edits: list[tuple[int, int]], cut: int) -> bytes:
    raw = bytearray(data)
    for position, value in edits:
        if raw:
            raw[position % len(raw)] = value
    return bytes(raw[: max(0, len(raw) - cut)])


EDITS = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), max_size=3)


@settings(max_examples=EXAMPLES)
@given(subscription=subscriptions(), version=VERSIONS, edits=EDITS, cut=st.integers(0, 3))
def test_what_we_decode_java_decodes_alike(
    oracle: JavaOracle, subscription: Subscription, version: int, edits: list[tuple[int, int]], cut: int
) -> None:
    data = _mutated(encode_subscription(subscription, version), edits, cut)
    try:
        ours = decode_subscription(data)
    except ProtocolError:
        return  # ours refuses it: what Java makes of it is Java's business
    java = oracle.decode_subscription(data)
    assert java == ours, f"{data.hex()}\nours: {ours}\nJava: {java}"


@settings(max_examples=EXAMPLES)
@given(assignment=assignments(), version=VERSIONS, edits=EDITS, cut=st.integers(0, 3))
def test_what_we_decode_java_decodes_alike_assignment(
    oracle: JavaOracle, assignment: Assignment, version: int, edits: list[tuple[int, int]], cut: int
) -> None:
    data = _mutated(encode_assignment(assignment, version), edits, cut)
    try:
        ours = decode_assignment(data)
    except ProtocolError:
        return
    java = oracle.decode_assignment(data)
    assert java == ours, f"{data.hex()}\nours: {ours}\nJava: {java}"


@settings(max_examples=EXAMPLES)
@given(assignment=assignments(), generation=st.integers(-1, 2**31 - 1))
def test_sticky_user_data_exactly_kafka(oracle: JavaOracle, assignment: Assignment, generation: int) -> None:
    """Kafka's StickyAssignor writes V1 user data after onAssignment; ours reads it back, and writes the same.

    Java groups the partitions per topic in a HashMap (``CollectionUtils.groupPartitionsByTopic``), so the topics'
    order in its bytes is that map's; with one topic the bytes are equal, otherwise every topic's block is.
    """
    java = oracle.encode_sticky_user_data(assignment.partitions, generation)
    ours = encode_sticky_user_data(assignment.partitions, generation)
    decoded = decode_sticky_user_data(java)
    assert (sorted(decoded.partitions), decoded.generation) == (sorted(assignment.partitions), generation)
    if len({tp.topic for tp in assignment.partitions}) <= 1:
        assert ours.hex() == java.hex()
    else:
        by_topic = [tp.topic for tp in decoded.partitions]
        regrouped = sorted(assignment.partitions, key=lambda tp: by_topic.index(tp.topic))  # stable: keeps order
        assert encode_sticky_user_data(regrouped, generation).hex() == java.hex()
