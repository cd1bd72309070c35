"""From records to tables, and the two dump formats with the exact strings Kafka's tests pin.

The dump-log line is the expectation of Kafka's ``DumpLogSegmentsTest`` (3.9) for a v4
GroupMetadataValue decoded with ``--offsets-decoder``; the formatter strings are those of
``GroupMetadataMessageFormatterTest`` in 3.9 (key ``version``) and 4.x (key ``type``).
"""

from __future__ import annotations

import datetime as dt
import re

from hypothesis import given
from hypothesis import strategies as st

from assignors import Assignment, Subscription, TopicPartition
from assignors.offsets_topic import (
    ConsumerGroupCurrentMemberAssignment,
    ConsumerGroupMemberMetadata,
    ConsumerGroupPartitionMetadata,
    ConsumerGroupRecordTombstone,
    ConsumerGroupTargetAssignmentMember,
    ConsumerGroupTargetAssignmentMetadata,
    GroupMetadata,
    GroupTombstone,
    HistoryBuilder,
    MemberMetadata,
    OffsetCommit,
    Record,
    TopicCounts,
    TopicIdPartitions,
    TopicMetadata,
    encode_record,
    read_dump_log,
    read_formatter_output,
    timestamp_of,
)
from helpers.dumps import DUMP_LOG, DUMP_LOG_KEY, FORMATTER_4X, FORMATTER_39, FORMATTER_TOMBSTONE


def test_formatter_output_39_and_4x_concatenated_without_newlines() -> None:
    entries = list(read_formatter_output(FORMATTER_39 + FORMATTER_4X + FORMATTER_TOMBSTONE))
    assert [e.error for e in entries] == [None, None, None]
    first, second, third = (e.record for e in entries)
    assert first == second
    assert third == GroupTombstone("group-id")
    assert isinstance(first, GroupMetadata)
    assert (first.group_id, first.generation, first.protocol, first.leader) == ("group-id", 1, "range", "leader")
    assert first.current_state_timestamp == 1234
    (member,) = first.members
    assert (member.member_id, member.group_instance_id, member.rebalance_timeout_ms) == (
        "member-1",
        "group-instance-1",
        1000,
    )
    # the test's bytes {0,1} and {1,2} are not ConsumerProtocol: kept raw, the member marked
    assert (member.subscription_bytes, member.assignment_bytes) == (b"\x00\x01", b"\x01\x02")
    assert member.subscription is None
    assert member.error is not None
    assert all(e.timestamp_ms is None for e in entries)


def test_dump_log_pinned_line_with_offsets_and_create_time() -> None:
    entries = list(read_dump_log(DUMP_LOG.splitlines()))
    assert [(e.offset, e.timestamp_ms, e.error) for e in entries] == [
        (0, 1700000000000, None),
        (1, 1700000005000, None),
    ]
    record = entries[0].record
    assert record == GroupMetadata(
        "group",
        10,
        "consumer",
        "range",
        "member",
        -1,
        (
            MemberMetadata(
                "member",
                "instance",
                "client",
                "host",
                1000,
                100,
                Subscription(
                    ["foo"],
                    owned_partitions=[TopicPartition("foo", 0)],
                    generation_id=0,
                    rack_id="rack",
                    group_instance_id="instance",
                ),
                Assignment([TopicPartition("foo", 0)]),
            ),
        ),
        4,
    )
    assert entries[1].record == GroupTombstone("group")


def test_dump_errors_are_entries_not_exceptions() -> None:
    lines = ["| offset: 3 CreateTime: 5 key: {not json} payload: <DELETE>", f"| offset: 4 {DUMP_LOG_KEY} oops"]
    entries = list(read_dump_log(lines))
    assert [e.record for e in entries] == [None, None]
    assert entries[0].error is not None
    assert "line 1" in entries[0].error
    assert entries[1].error == "line 2: no 'payload:' after the key"
    (broken,) = read_formatter_output('{"key":{"version":2,"data":{"group":"g"}},"value":{"version":"x"}}')
    assert broken.error is not None
    assert "value version" in broken.error


def test_dump_log_to_tables() -> None:
    builder = HistoryBuilder()
    for entry in read_dump_log(DUMP_LOG.splitlines()):
        assert entry.record is not None
        builder.add(entry.record, entry.timestamp_ms)
    ts = timestamp_of(1700000000000)
    assert builder.membership == [
        {
            "group_id": "group",
            "snapshot_ts": ts,
            "member_id": "member",
            "topics": ["foo"],
            "group_instance_id": "instance",
            "rack_id": "rack",
        }
    ]
    assert builder.actual == [
        {
            "group_id": "group",
            "snapshot_ts": ts,
            "generation": 10,
            "protocol": "range",
            "leader": "member",
            "member_id": "member",
            "group_instance_id": "instance",
            "assigned": ["foo-0"],
        }
    ]
    assert builder.topics() == [{"topic": "foo", "partitions": 1, "valid_from": None, "topic_id": None}]
    assert builder.lower_bound_topics() == ["foo"]


def _member(
    member_id: str, topics: list[str], assigned: list[tuple[str, int]], instance: str | None = None
) -> MemberMetadata:
    subscription = Subscription(topics, group_instance_id=instance)
    return MemberMetadata(
        member_id, instance, "c", "h", 1, 1, subscription, Assignment([TopicPartition(t, p) for t, p in assigned])
    )


def test_classic_history_generations_same_generation_empty_and_counts() -> None:
    """Two generations, a static member's replacement in the same generation, an Empty group, a tombstone."""
    builder = HistoryBuilder(topic_counts=TopicCounts([("t", 2, None)]))
    gen1 = GroupMetadata("g", 1, "consumer", "range", "a", -1, (_member("a", ["t"], [("t", 0), ("t", 1)]),))
    gen2 = GroupMetadata(
        "g", 2, "consumer", "range", "a", -1, (_member("a", ["t"], [("t", 0)]), _member("b", ["t", "u"], [("t", 3)]))
    )
    replaced = GroupMetadata("g", 2, "consumer", "range", "a", -1, (_member("a2", ["t"], [("t", 0)], "s1"),))
    empty = GroupMetadata("g", 3, "consumer", None, None, -1, ())
    builder.add(gen1, 1000)
    builder.add(OffsetCommit("g", "t", 0, 5), 1500)
    builder.add(gen2, 2000)
    builder.add(replaced, 2000)  # same CreateTime: the snapshot moves one microsecond on
    builder.add(empty, 3000)
    builder.add(GroupTombstone("g"), 4000)
    times = sorted({row["snapshot_ts"] for row in builder.membership})
    assert times == [timestamp_of(1000), timestamp_of(2000), timestamp_of(2000) + dt.timedelta(microseconds=1)]
    assert [(r["generation"], r["member_id"], r["assigned"]) for r in builder.actual] == [
        (1, "a", ["t-0", "t-1"]),
        (2, "a", ["t-0"]),
        (2, "b", ["t-3"]),
        (2, "a2", ["t-0"]),
    ]
    assert builder.stats["empty generations"] == 1
    assert builder.stats["offset commits"] == 1
    assert len(builder.warnings) == 1
    assert "t-3, beyond the 2 partitions given for 't'" in builder.warnings[0]
    assert builder.topics() == [{"topic": "t", "partitions": 2, "valid_from": None, "topic_id": None}]
    assert builder.unsized_topics() == ["u"]


def test_group_filter_and_since() -> None:
    builder = HistoryBuilder(groups=re.compile("^keep"), since=timestamp_of(1500))
    for group, ms in [("keep-1", 1000), ("keep-1", 2000), ("drop", 2000)]:
        builder.add(GroupMetadata(group, 1, "consumer", "range", "a", -1, (_member("a", ["t"], [("t", 0)]),)), ms)
    assert [(r["group_id"], r["snapshot_ts"]) for r in builder.membership] == [("keep-1", timestamp_of(2000))]
    assert builder.groups_seen == {"keep-1"}


def test_kip848_fold_in_offset_order() -> None:
    """Members (type 5), subscription metadata (4), target deltas (7) then the epoch (6); a member leaves."""
    topic_id = "AAAAAAAAAAAAAAAAAAAAAQ"
    member = ConsumerGroupMemberMetadata("g", "m1", None, "r1", "c", "h", ("foo",), None, 1, "range")
    other = ConsumerGroupMemberMetadata("g", "m2", "i2", None, "c", "h", ("foo",), None, 1, "range")
    records: list[tuple[Record, int]] = [
        (ConsumerGroupPartitionMetadata("g", (TopicMetadata(topic_id, "foo", 3),)), 10),
        (member, 10),
        (other, 10),
        (ConsumerGroupTargetAssignmentMember("g", "m1", (TopicIdPartitions(topic_id, (0, 1)),)), 11),
        (ConsumerGroupTargetAssignmentMember("g", "m2", (TopicIdPartitions(topic_id, (2,)),)), 11),
        (ConsumerGroupTargetAssignmentMetadata("g", 1), 11),
        (ConsumerGroupRecordTombstone(5, "g", "m2"), 20),
        (ConsumerGroupRecordTombstone(7, "g", "m2"), 20),
        (ConsumerGroupTargetAssignmentMember("g", "m1", (TopicIdPartitions(topic_id, (0, 1, 2)),)), 21),
        (ConsumerGroupTargetAssignmentMetadata("g", 2), 21),
    ]
    builder = HistoryBuilder()
    for record, ms in records:
        builder.add(record, ms)
    assert [(r["generation"], r["protocol"], r["member_id"], r["assigned"]) for r in builder.actual] == [
        (1, "consumer-range", "m1", ["foo-0", "foo-1"]),
        (1, "consumer-range", "m2", ["foo-2"]),
        (2, "consumer-range", "m1", ["foo-0", "foo-1", "foo-2"]),
    ]
    assert [(r["member_id"], r["group_instance_id"], r["rack_id"]) for r in builder.membership] == [
        ("m1", None, "r1"),
        ("m2", "i2", None),
        ("m1", None, "r1"),
    ]
    # The id the records gave the topic: the uniform replay's topic order (docs/evaluation.md).
    assert builder.topics() == [{"topic": "foo", "partitions": 3, "valid_from": None, "topic_id": topic_id}]
    assert builder.lower_bound_topics() == []


def test_kip848_topic_ids_without_type_4_use_the_given_names() -> None:
    builder = HistoryBuilder(topic_ids={"AAAAAAAAAAAAAAAAAAAAAg": "bar"})
    builder.add(ConsumerGroupMemberMetadata("g", "m", None, None, "c", "h", ("bar",), None, 1, None), 1)
    builder.add(ConsumerGroupTargetAssignmentMember("g", "m", (TopicIdPartitions("AAAAAAAAAAAAAAAAAAAAAg", (4,)),)), 1)
    builder.add(ConsumerGroupTargetAssignmentMember("g", "x", (TopicIdPartitions("AAAAAAAAAAAAAAAAAAAAAw", (0,)),)), 1)
    builder.add(ConsumerGroupTargetAssignmentMetadata("g", 1), 1)
    assert builder.actual[0]["assigned"] == ["bar-4"]
    assert builder.actual[0]["protocol"] == "uniform"
    assert builder.topics() == [
        {"topic": "bar", "partitions": 5, "valid_from": None, "topic_id": "AAAAAAAAAAAAAAAAAAAAAg"}
    ]


def test_undecodable_bytes_are_counted_not_raised() -> None:
    builder = HistoryBuilder()
    assert builder.add_raw(b"\x00\x02\x00\x05ab", None, 1, "partition 0 offset 7") is None
    assert builder.stats["undecodable"] == 1
    assert builder.errors[0].startswith("partition 0 offset 7: key.group")


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(1, 5)), min_size=1, max_size=12))
def test_topics_lower_bound_is_the_running_maximum(history: list[tuple[int, int]]) -> None:
    """Each recorded generation raises the count to its highest partition + 1; the rows never shrink."""
    builder = HistoryBuilder()
    for step, (highest, members) in enumerate(history):
        assigned = [("t", p) for p in range(highest + 1)]
        group = tuple(_member(f"m{i}", ["t"], assigned[i::members]) for i in range(members))
        key, value = encode_record(GroupMetadata("g", step + 1, "consumer", "range", "m0", -1, group))
        builder.add_raw(key, value, 1000 * (step + 1))
    rows = builder.topics()
    counts = [row["partitions"] for row in rows]
    assert counts == sorted(set(counts))
    assert counts[-1] == max(h for h, _ in history) + 1
    assert rows[0]["valid_from"] is None
    assert len({tuple(r["assigned"]) for r in builder.actual if r["assigned"]}) >= 1


def test_kip848_topic_ids_unnamed_in_the_records_are_resolved_once() -> None:
    """An id no type-4 record names asks the resolver (the cluster's metadata) once; the names given win."""
    asked: list[int] = []

    def resolve() -> dict[str, str]:
        asked.append(1)
        return {"AAAAAAAAAAAAAAAAAAAAAg": "from-cluster", "AAAAAAAAAAAAAAAAAAAAAw": "baz"}

    builder = HistoryBuilder(topic_ids={"AAAAAAAAAAAAAAAAAAAAAg": "given"}, resolve_topic_ids=resolve)
    builder.add(ConsumerGroupMemberMetadata("g", "m", None, None, "c", "h", ("baz", "given"), None, 1, None), 1)
    builder.add(ConsumerGroupTargetAssignmentMember("g", "m", (TopicIdPartitions("AAAAAAAAAAAAAAAAAAAAAg", (0,)),)), 1)
    builder.add(ConsumerGroupTargetAssignmentMetadata("g", 1), 1)
    assert asked == []  # every id was named
    builder.add(
        ConsumerGroupTargetAssignmentMember(
            "g",
            "m",
            (TopicIdPartitions("AAAAAAAAAAAAAAAAAAAAAg", (0,)), TopicIdPartitions("AAAAAAAAAAAAAAAAAAAAAw", (1,))),
        ),
        2,
    )
    builder.add(ConsumerGroupTargetAssignmentMetadata("g", 2), 2)
    builder.add(ConsumerGroupTargetAssignmentMember("g", "m", (TopicIdPartitions("AAAAAAAAAAAAAAAAAAAAAQ", (0,)),)), 3)
    builder.add(ConsumerGroupTargetAssignmentMetadata("g", 3), 3)
    assert asked == [1]
    assert [r["assigned"] for r in builder.actual] == [["given-0"], ["baz-1", "given-0"], ["AAAAAAAAAAAAAAAAAAAAAQ-0"]]
    assert any("AAAAAAAAAAAAAAAAAAAAAQ" in w for w in builder.warnings)


# -- KIP-848 hand-overs (the handovers table) ---------------------------------------------------------------------
TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"


def _current(member: str, assigned: tuple[int, ...], pending: tuple[int, ...] = (), epoch: int = 1) -> Record:
    parts = (TopicIdPartitions(TOPIC_ID, assigned),) if assigned else ()
    revoking = (TopicIdPartitions(TOPIC_ID, pending),) if pending else ()
    return ConsumerGroupCurrentMemberAssignment("g", member, epoch, epoch - 1, 1 if pending else 0, parts, revoking)


def test_kip848_hand_overs_by_hand() -> None:
    """a holds 0-1; b joins: a is told to revoke 1 (pending), releases it, b gets it 1.5 s after a was told; then b
    leaves and a gets 1 back 0.6 s after b's current assignment was deleted."""
    builder = HistoryBuilder(topic_ids={TOPIC_ID: "foo"})
    for record, ms in [
        (_current("a", (0, 1)), 1_000),
        (_current("b", ()), 1_900),
        (_current("a", (0,), (1,), epoch=2), 2_000),
        (_current("a", (0,), epoch=3), 3_000),
        (_current("b", (1,), epoch=3), 3_500),
        (ConsumerGroupRecordTombstone(8, "g", "b"), 5_000),
        (_current("a", (0, 1), epoch=4), 5_600),
        (_current("a", (0, 1), epoch=5), None),  # no timestamp: nothing measured, nothing lost
    ]:
        builder.add(record, ms)
    assert builder.drain_handovers() == [
        {
            "group_id": "g",
            "assigned_ts": timestamp_of(3_500),
            "member_id": "b",
            "partition": "foo-1",
            "kind": "consumer_move",
            "seconds": 1.5,
        },
        {
            "group_id": "g",
            "assigned_ts": timestamp_of(5_600),
            "member_id": "a",
            "partition": "foo-1",
            "kind": "consumer_orphan",
            "seconds": 0.6,
        },
    ]
    assert builder.drain_handovers() == []  # drained
    # before --since: not kept
    late = HistoryBuilder(topic_ids={TOPIC_ID: "foo"}, since=timestamp_of(4_000))
    for record, ms in [
        (_current("a", (0, 1)), 1_000),
        (_current("a", (0,), (1,)), 2_000),
        (_current("b", (1,)), 3_500),
    ]:
        late.add(record, ms)
    assert late.drain_handovers() == []


@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from("abc"), st.integers(1, 3_000)), max_size=30))
def test_kip848_every_move_is_one_hand_over_of_its_own_seconds(moves: list[tuple[int, str, int]]) -> None:
    """A group of a, b and c over six partitions where each move is told (pending revocation), released, then
    recorded at its new member ``gap`` ms after it was told: one ``consumer_move`` row per move, with that gap."""
    builder = HistoryBuilder(topic_ids={TOPIC_ID: "foo"})
    owner = {p: "abc"[p % 3] for p in range(6)}
    now = 1_000

    def record(member: str, pending: tuple[int, ...] = ()) -> None:
        held = tuple(sorted(p for p, who in owner.items() if who == member and p not in pending))
        builder.add(_current(member, held, pending), now)

    for member in "abc":
        record(member)
    expected = []
    for partition, to, gap in moves:
        old = owner[partition]
        if old == to:
            continue
        now += 10
        record(old, (partition,))  # told to revoke
        owner[partition] = "-"
        now += 5
        record(old)  # released
        now += gap - 5
        owner[partition] = to
        record(to)
        expected.append((to, f"foo-{partition}", gap / 1000))
    found = builder.drain_handovers()
    assert [(r["member_id"], r["partition"], r["seconds"]) for r in found] == expected
    assert all(r["kind"] == "consumer_move" for r in found)
