"""Small defects found in review, each pinned by a test that failed before its fix (the demo's restart: test_replay)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import Cluster, InvalidSubscriptionError, ProtocolError, Subscription, TopicPartition, get_assignor
from assignors._core.snapshot import parse_snapshot
from assignors.consumer_protocol import decode_assignment, decode_subscription, encode_assignment
from assignors.metrics import check_assignment
from assignors.testing import Group, groups


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def _owned(topic: str) -> bytes:
    """``[topic, [0]]``: one topic-partitions element."""
    return struct.pack(">i", 1) + _string(topic) + struct.pack(">ii", 1, 0)


@given(groups(), st.data())
def test_check_assignment_reads_a_one_shot_iterable_once(group: Group, data: st.DataObject) -> None:
    """Generators give the same violations as tuples (the fast path used to consume them)."""
    result = get_assignor("range").assign(group.cluster, group.subscriptions)
    assignment = {m: a.partitions for m, a in result.items()}
    broken: bool = data.draw(st.booleans(), label="break it")
    if assignment and broken:
        member = data.draw(st.sampled_from(sorted(assignment)), label="member")
        assignment[member] = (*assignment[member], TopicPartition("not-subscribed", 0))
    expected = check_assignment(group.cluster, group.subscriptions, assignment)
    one_shot = {m: (tp for tp in partitions) for m, partitions in assignment.items()}
    assert check_assignment(group.cluster, group.subscriptions, one_shot) == expected


def test_check_assignment_of_generators_pinned() -> None:
    cluster = Cluster({"t": 2})
    subscriptions = {"a": Subscription(["t"]), "b": Subscription(["t"])}
    valid = {"a": iter([TopicPartition("t", 0)]), "b": iter([TopicPartition("t", 1)])}
    assert check_assignment(cluster, subscriptions, valid) == []
    twice = {"a": iter([TopicPartition("t", 0)]), "b": iter([TopicPartition("t", 0)])}
    assert [v.kind for v in check_assignment(cluster, subscriptions, twice)] == ["duplicate", "unassigned"]


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


def test_snapshot_empty_topic_with_racks_names_the_path() -> None:
    data = {"topics": {"": {"partitions": 2, "racks": [["a"], ["b"]]}}, "members": {"m": {"topics": [""]}}}
    with pytest.raises(InvalidSubscriptionError, match=r"^topics: expected a non-empty string, got ''$"):
        parse_snapshot(data)
