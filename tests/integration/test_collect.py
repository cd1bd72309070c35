"""``assignors collect`` end to end on librdkafka's mock cluster.

The mock has no ``__consumer_offsets``, so the test creates a topic and produces records in
the format Kafka's group coordinator writes there (keys and values from
:func:`assignors.offsets_topic.encode_record`, CreateTime timestamps, one partition per
group as ``partitionFor`` places them): two generations of a range group with an offset
commit between them, an Empty generation, and a deleted group (its tombstone). Then it runs
``assignors collect --topic ...`` against it and reads the three Parquet tables back.
"""

from __future__ import annotations

import datetime as dt
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assignors import Assignment, Subscription, TopicPartition
from assignors.cli import main
from assignors.offsets_topic import GroupMetadata, GroupTombstone, MemberMetadata, OffsetCommit, Record, encode_record
from integration.mock_cluster import MockCluster

pytestmark = pytest.mark.integration

TOPIC = "offsets-copy"
T0 = 1_760_000_000_000  # ms


def _member(member_id: str, partitions: list[int], rack: str | None = None) -> MemberMetadata:
    return MemberMetadata(
        member_id,
        None,
        "client",
        "/127.0.0.1",
        30000,
        10000,
        Subscription(["orders"], rack_id=rack),
        Assignment([TopicPartition("orders", p) for p in partitions]),
    )


RECORDS: list[tuple[int, int, Record]] = [  # (partition, CreateTime offset in ms, record)
    (0, 0, GroupMetadata("app", 1, "consumer", "range", "m1", T0, (_member("m1", [0, 1, 2], "r1"),))),
    (0, 500, OffsetCommit("app", "orders", 0, 17)),
    (
        0,
        1000,
        GroupMetadata("app", 2, "consumer", "range", "m1", T0, (_member("m1", [0, 1]), _member("m2", [2, 3]))),
    ),
    (0, 2000, GroupMetadata("app", 3, "consumer", None, None, T0, ())),
    (1, 0, GroupMetadata("gone", 5, "consumer", "roundrobin", "x", T0, (_member("x", [0]),))),
    (1, 3000, GroupTombstone("gone")),
]


def _produce(bootstrap: str) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for partition, delay, record in RECORDS:
        key, value = encode_record(record)
        producer.produce(TOPIC, value=value, key=key, partition=partition, timestamp=T0 + delay)
    assert producer.flush(15) == 0


def test_collect_reads_the_records_into_three_tables(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "history"
    with MockCluster() as cluster:
        cluster.create_topic(TOPIC, 3)
        _produce(cluster.bootstrap_servers)
        status = main(
            ["collect", "--bootstrap-servers", cluster.bootstrap_servers, "--topic", TOPIC, "--out", str(out)]
        )
    assert status == 0
    membership = pq.read_table(out / "membership").to_pylist()
    actual = pq.read_table(out / "actual").to_pylist()
    topics = pq.read_table(out / "topics").to_pylist()

    def at(delay: int) -> dt.datetime:
        return dt.datetime.fromtimestamp((T0 + delay) / 1000, tz=dt.UTC)

    assert sorted((r["group_id"], r["snapshot_ts"], r["member_id"], r["rack_id"]) for r in membership) == [
        ("app", at(0), "m1", "r1"),
        ("app", at(1000), "m1", None),
        ("app", at(1000), "m2", None),
        ("gone", at(0), "x", None),
    ]
    assert all(r["topics"] == ["orders"] for r in membership)
    assert sorted((r["group_id"], r["generation"], r["protocol"], r["member_id"], r["assigned"]) for r in actual) == [
        ("app", 1, "range", "m1", ["orders-0", "orders-1", "orders-2"]),
        ("app", 2, "range", "m1", ["orders-0", "orders-1"]),
        ("app", 2, "range", "m2", ["orders-2", "orders-3"]),
        ("gone", 5, "roundrobin", "x", ["orders-0"]),
    ]
    # partitions 0-2 were seen first, then 3: the lower bound grows at the second generation
    assert topics == [
        {"topic": "orders", "partitions": 3, "valid_from": None},
        {"topic": "orders", "partitions": 4, "valid_from": at(1000)},
    ]

    # the evaluation's strategy 'actual' and the self-check, on the collected tables
    from spark_udfs.actual import ActualRow, actual_rows, self_check
    from spark_udfs.replay import MemberRow, TopicHistory

    history = TopicHistory((r["topic"], r["partitions"], r["valid_from"]) for r in topics)
    app_members = [
        MemberRow(r["snapshot_ts"], r["member_id"], tuple(r["topics"]), r["group_instance_id"], r["rack_id"])
        for r in membership
        if r["group_id"] == "app"
    ]
    app_actual = [
        ActualRow(
            r["snapshot_ts"],
            r["generation"],
            r["protocol"],
            r["member_id"],
            r["group_instance_id"],
            tuple(r["assigned"]),
        )
        for r in actual
        if r["group_id"] == "app"
    ]
    rows = actual_rows("app", app_members, app_actual, history)
    assert [
        (r["strategy"], r["generation"], r["members"], r["max_load"], r["moved"], r["revoked"], r["valid"])
        for r in rows
    ] == [
        ("actual", 1, 1, 3, 0, 0, True),
        ("actual", 2, 2, 2, 1, 3, True),
    ]
    # what the recording's range did is what our RangeAssignor does on the same membership and counts
    assert [c["matched"] for c in self_check("app", app_members, app_actual, history)] == [True, True]


def _high_watermark(bootstrap: str, partition: int) -> int:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "watermarks"})
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(TOPIC, partition), timeout=15)
    finally:
        consumer.close()
    return int(high)


def test_transactional_commits_leave_control_batches_that_are_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Transactional offset commits leave a control batch (the commit marker) in the log; here it is the last offset.

    librdkafka hands no control record to the application: nothing is undecodable, the
    collection still reaches the end, and the two committed offsets are recognised and skipped.
    """
    import pyarrow.parquet as pq
    from confluent_kafka import Producer

    out = tmp_path / "history"
    with MockCluster() as cluster:
        cluster.create_topic(TOPIC, 1)
        plain = Producer({"bootstrap.servers": cluster.bootstrap_servers})
        key, value = encode_record(RECORDS[0][2])
        plain.produce(TOPIC, value=value, key=key, partition=0, timestamp=T0)
        assert plain.flush(15) == 0
        transactional = Producer({"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": "commits"})
        transactional.init_transactions(15)
        transactional.begin_transaction()
        for partition in (0, 1):
            key, value = encode_record(OffsetCommit("app", "orders", partition, 40 + partition))
            transactional.produce(TOPIC, value=value, key=key, partition=0, timestamp=T0 + 100)
        transactional.commit_transaction(15)
        assert _high_watermark(cluster.bootstrap_servers, 0) == 4  # 3 records and the commit marker
        status = main(
            ["collect", "--bootstrap-servers", cluster.bootstrap_servers, "--topic", TOPIC, "--out", str(out)]
        )
    assert status == 0
    printed = capsys.readouterr()
    assert "offset commits 2" in printed.out
    assert "records 3" in printed.out
    assert "undecodable" not in printed.out
    assert "without a key" not in printed.out
    rows = pq.read_table(out / "actual").to_pylist()
    assert [(r["group_id"], r["generation"], r["assigned"]) for r in rows] == [
        ("app", 1, ["orders-0", "orders-1", "orders-2"])
    ]


_PROGRESS = re.compile(r"(\d+) records \((\d+)/s\), (\d+) groups, (\d+) snapshots, lag to the end (\d+)")


def _wait_for_progress(log: Path, records: int, process: subprocess.Popen[bytes], timeout: float = 90.0) -> str:
    """Wait until a progress line shows ``records`` records read and no lag; returns that line."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text(encoding="utf-8")
        for line in log.read_text(encoding="utf-8").splitlines():
            found = _PROGRESS.search(line)
            if found and int(found.group(1)) == records and int(found.group(5)) == 0:
                return line
        time.sleep(0.2)
    msg = f"no progress line with {records} records and no lag in time:\n{log.read_text(encoding='utf-8')}"
    raise AssertionError(msg)


def test_follow_then_ctrl_c_keeps_every_record_read(tmp_path: Path) -> None:
    """``collect --follow`` in its own process tails the topic; a real SIGINT stops it with status 0, tables intact.

    The progress lines (records, records/s, groups, snapshots, lag to the end) show the first
    six records, then a seventh produced while it follows; after Ctrl-C the Parquet tables
    hold the snapshots of both.

    The command starts as a terminal starts it, with SIGINT at its default (coreutils'
    ``env --default-signal``): a shell without job control starts background commands with
    SIGINT ignored, an ignored disposition survives exec, and Python then installs no
    KeyboardInterrupt handler (as it should: such a parent asked for Ctrl-C to pass its children by).
    """
    import pyarrow.parquet as pq
    from confluent_kafka import Producer

    out = tmp_path / "history"
    log, printed = tmp_path / "stderr.txt", tmp_path / "stdout.txt"
    with MockCluster() as cluster, log.open("wb") as err, printed.open("wb") as stdout:
        cluster.create_topic(TOPIC, 3)
        _produce(cluster.bootstrap_servers)
        argv = ["collect", "--bootstrap-servers", cluster.bootstrap_servers, "--topic", TOPIC, "--out", str(out)]
        process = subprocess.Popen(  # noqa: S603 - this interpreter and a fixed argument list
            ["env", "--default-signal=INT", sys.executable, "-m", "assignors", *argv, "--follow"],  # noqa: S607
            stdout=stdout,
            stderr=err,
        )
        try:
            first = _wait_for_progress(log, len(RECORDS), process)
            assert first.split()[3:5] == ["2", "groups,"]  # app and gone
            later = GroupMetadata("app", 4, "consumer", "range", "m2", T0, (_member("m2", [0, 1, 2, 3]),))
            producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
            key, value = encode_record(later)
            producer.produce(TOPIC, value=value, key=key, partition=0, timestamp=T0 + 5000)
            assert producer.flush(15) == 0
            _wait_for_progress(log, len(RECORDS) + 1, process)
            process.send_signal(signal.SIGINT)
            status = process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert status == 0, log.read_text(encoding="utf-8")
    assert "interrupted: the tables hold every record read so far" in log.read_text(encoding="utf-8")
    assert "collected: " in printed.read_text(encoding="utf-8")
    actual = pq.read_table(out / "actual").to_pylist()
    assert sorted((r["group_id"], r["generation"], r["member_id"]) for r in actual) == [
        ("app", 1, "m1"),
        ("app", 2, "m1"),
        ("app", 2, "m2"),
        ("app", 4, "m2"),
        ("gone", 5, "x"),
    ]
    assert len(pq.read_table(out / "membership")) == 5


def test_kip848_topic_ids_come_from_the_cluster_when_no_record_names_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kafka 4.1+ writes no type-4 record: collect asks the cluster's metadata for the ids, once.

    librdkafka's mock does not answer DescribeTopics, so the collection says which ids it could
    not name and keeps them as ids; a ``--topic-ids`` file names them.
    """
    import json

    import pyarrow.parquet as pq
    from confluent_kafka import Producer

    from assignors.offsets_topic import (
        ConsumerGroupMemberMetadata,
        ConsumerGroupTargetAssignmentMember,
        ConsumerGroupTargetAssignmentMetadata,
        TopicIdPartitions,
    )
    from spark_udfs import collect

    monkeypatch.setattr(collect, "METADATA_SECONDS", 1.0)
    topic_id = "AAAAAAAAAAAAAAAAAAAAAQ"
    records: list[Record] = [
        ConsumerGroupMemberMetadata("kip848", "m1", None, "r1", "c", "h", ("orders",), None, 1, "uniform"),
        ConsumerGroupTargetAssignmentMember("kip848", "m1", (TopicIdPartitions(topic_id, (0, 1)),)),
        ConsumerGroupTargetAssignmentMetadata("kip848", 1),
    ]
    names = tmp_path / "ids.json"
    names.write_text(json.dumps({topic_id: "orders"}), encoding="utf-8")
    assigned = {}
    with MockCluster() as cluster:
        cluster.create_topic(TOPIC, 1)
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
        for delay, record in enumerate(records):
            key, value = encode_record(record)
            producer.produce(TOPIC, value=value, key=key, timestamp=T0 + delay)
        assert producer.flush(15) == 0
        for run, extra in (("cluster", []), ("file", ["--topic-ids", str(names)])):
            argv = ["collect", "--bootstrap-servers", cluster.bootstrap_servers, "--topic", TOPIC]
            assert main([*argv, "--out", str(tmp_path / run), *extra]) == 0
            assigned[run] = pq.read_table(tmp_path / run / "actual").to_pylist()[0]["assigned"]
            printed = capsys.readouterr()
            if run == "cluster":
                assert "the cluster gave the topic ids of 0 of" in printed.err
                assert f"warning: topic id {topic_id} (group 'kip848') has no name in the records" in printed.out
    assert assigned == {"cluster": [f"{topic_id}-0", f"{topic_id}-1"], "file": ["orders-0", "orders-1"]}
