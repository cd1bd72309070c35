"""``assignors collect`` on a real broker's own ``__consumer_offsets`` (Apache Kafka 4.4.0, KRaft, on 127.0.0.1).

Real groups run first, each member a process of its own (:mod:`assignors.testing._groups`), through the same
membership history: a, b and c join one at a time, then b leaves. The groups:

- classic, our assignors through the adapters: kafka-python with ``range``, aiokafka with ``roundrobin``;
- classic, librdkafka's own: confluent-kafka with ``range`` and with ``cooperative-sticky``;
- KIP-848 (``group.protocol=consumer``): confluent-kafka with ``group.remote.assignor`` ``uniform`` and ``range``.

Then ``assignors collect --bootstrap-servers`` reads the topic the broker's group coordinator wrote, and its
``membership`` and ``actual`` tables are compared with what the clients observed: each member's rebalance-listener
calls (with the generation, where the client tells it), and the group's steady state after each step as the
members hold it and the broker describes it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from assignors.cli import main
from assignors.offsets_topic import GroupMetadata, MemberMetadata, OffsetCommit, Record, encode_record
from assignors.testing import KafkaBroker
from assignors.testing._groups import MemberProcess, MemberSpec, Observation, settle_group
from helpers.kafka_jvm import classpath

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

TOPICS = {"orders": 6, "payments": 4}
SUBSCRIBED = ("orders", "payments")

GROUPS: dict[str, dict[str, Any]] = {  # group -> the MemberSpec fields its members share
    "kafka-python-range": {"client": "kafka-python", "strategy": "range"},
    "aiokafka-roundrobin": {"client": "aiokafka", "strategy": "roundrobin"},
    "librdkafka-range": {"client": "confluent", "strategy": "range"},
    "librdkafka-cooperative-sticky": {"client": "confluent", "strategy": "cooperative-sticky"},
    "kip848-uniform": {"client": "confluent", "remote_assignor": "uniform"},
    "kip848-range": {"client": "confluent", "remote_assignor": "range"},
}
KIP848 = ("kip848-uniform", "kip848-range")
COMMITTED = {("orders", 0): 7, ("payments", 3): 2}  # a simple consumer's offset commits (OffsetCommit records)


@dataclass
class GroupRun:
    """What the clients of one group observed: every member's listener calls, and the steady state of each step."""

    members: list[MemberProcess] = field(default_factory=list)
    steps: list[Observation] = field(default_factory=list)
    ended_at: float = 0.0
    """The time (s since the epoch) the last step had settled: what came later is the members' teardown."""

    def events(self, member: MemberProcess) -> list[dict[str, Any]]:
        return [e for e in member.events if e["at"] <= self.ended_at]


@dataclass
class Collected:
    runs: dict[str, GroupRun]
    out: Path
    printed: str
    membership: list[dict[str, Any]]
    actual: list[dict[str, Any]]
    topics: list[dict[str, Any]]
    bootstrap: str


def _run_group(group: str, bootstrap: str, admin: Any, work: Path) -> GroupRun:
    shared = GROUPS[group]
    run = GroupRun()
    for name in ("a", "b", "c"):
        spec = MemberSpec(f"{group}-{name}", group=group, topics=SUBSCRIBED, **shared)
        run.members.append(MemberProcess.launch(spec, bootstrap, work))
        run.steps.append(settle_group(admin, group, run.members, TOPICS, consumer_protocol=group in KIP848))
    run.members[1].leave()
    run.steps.append(settle_group(admin, group, run.members, TOPICS, consumer_protocol=group in KIP848))
    run.ended_at = time.time()
    for member in run.members:
        member.leave()
    return run


def _commit_offsets(bootstrap: str) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "committer", "enable.auto.commit": False})
    try:
        offsets = [TopicPartition(t, p, o) for (t, p), o in sorted(COMMITTED.items())]
        consumer.commit(offsets=offsets, asynchronous=False)
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def broker() -> Iterator[KafkaBroker]:
    with KafkaBroker(classpath=classpath()) as running:
        yield running


@pytest.fixture(scope="module")
def collected(broker: KafkaBroker, tmp_path_factory: pytest.TempPathFactory) -> Collected:
    import pyarrow.parquet as pq
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    work = tmp_path_factory.mktemp("groups")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    for future in admin.create_topics([NewTopic(t, n, 1) for t, n in TOPICS.items()]).values():
        future.result(60)
    runs: dict[str, GroupRun] = {}
    try:
        for group in GROUPS:
            runs[group] = _run_group(group, broker.bootstrap_servers, admin, work)
    finally:
        for run in runs.values():
            for member in run.members:
                if member.alive():
                    member.kill()
    _commit_offsets(broker.bootstrap_servers)
    out = work / "history"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        status = main(["collect", "--bootstrap-servers", broker.bootstrap_servers, "--out", str(out)])
    assert status == 0, printed.getvalue()
    return Collected(
        runs,
        out,
        printed.getvalue(),
        pq.read_table(out / "membership").to_pylist(),
        pq.read_table(out / "actual").to_pylist(),
        pq.read_table(out / "topics").to_pylist(),
        broker.bootstrap_servers,
    )


def _snapshots(collected: Collected, group: str) -> list[tuple[int, dict[str, list[str]]]]:
    """A group's recorded snapshots until its last step, in order: (generation or epoch, member id -> assigned).

    Snapshots are stamped with the records' CreateTime, on the broker's clock, which is this machine's.
    """
    end = dt.datetime.fromtimestamp(collected.runs[group].ended_at, tz=dt.UTC)
    by_ts: dict[dt.datetime, tuple[int, dict[str, list[str]]]] = {}
    for row in collected.actual:
        if row["group_id"] == group and row["snapshot_ts"] <= end:
            by_ts.setdefault(row["snapshot_ts"], (row["generation"], {}))[1][row["member_id"]] = row["assigned"]
    return [by_ts[ts] for ts in sorted(by_ts)]


def _text(partitions: list[list[Any]]) -> list[str]:
    return [f"{topic}-{number}" for topic, number in sorted((t, int(p)) for t, p in partitions)]


def test_every_record_the_coordinator_wrote_decodes(collected: Collected) -> None:
    """Nothing undecodable; the kinds of record Kafka 4.4's coordinator writes for these groups are all there.

    Kafka 4.1+ writes no type-4 record (KIP-1101 replaced it with the type-3 record's MetadataHash tag), so the
    topic ids of the KIP-848 assignments are named from the cluster's metadata: every partition is named.
    """
    printed = collected.printed
    assert "undecodable" not in printed
    assert "skipped:" not in printed
    decoded = dict(re.findall(r"(\w+) (\d+)", re.search(r"^decoded: (.*)$", printed, re.MULTILINE).group(1)))  # type: ignore[union-attr]
    assert set(decoded) == {
        "GroupMetadata",
        "OffsetCommit",
        "ConsumerGroupMetadata",
        "ConsumerGroupMemberMetadata",
        "ConsumerGroupTargetAssignmentMember",
        "ConsumerGroupTargetAssignmentMetadata",
        "ConsumerGroupCurrentMemberAssignment",
        "ConsumerGroupRecordTombstone",
    }, printed
    assert int(decoded["OffsetCommit"]) == len(COMMITTED)
    sys.stdout.write(f"\nrecords decoded from Kafka 4.4.0's __consumer_offsets: {decoded}\n")  # the docs' figure
    assert "has no name in the records" not in printed
    assert {p.split("-")[0] for row in collected.actual for p in row["assigned"]} == set(SUBSCRIBED)
    # every partition was assigned at some point, so the lower bounds are the counts; each topic carries the id the
    # KIP-848 records named it by, the broker's own (the uniform replay's topic order)
    from assignors.collect import cluster_topic_ids

    ids = {name: topic_id for topic_id, name in cluster_topic_ids({"bootstrap.servers": collected.bootstrap}).items()}
    assert collected.topics == [
        {"topic": t, "partitions": n, "valid_from": None, "topic_id": ids[t]} for t, n in sorted(TOPICS.items())
    ]


@pytest.mark.parametrize("group", ["kafka-python-range", "aiokafka-roundrobin"])
def test_each_generation_is_what_each_member_was_given(collected: Collected, group: str) -> None:
    """kafka-python and aiokafka (EAGER) tell the generation of each assignment: the tables hold exactly those."""
    observed: dict[tuple[int, str], list[str]] = {}
    run = collected.runs[group]
    for member in run.members:
        for event in run.events(member):
            if event["event"] == "assigned":
                observed[(event["generation"], event["member_id"])] = _text(event["partitions"])
    recorded = {
        (generation, member): assigned
        for generation, snapshot in _snapshots(collected, group)
        for member, assigned in snapshot.items()
    }
    assert sorted(recorded.items()) == sorted(observed.items())


@pytest.mark.parametrize("group", ["librdkafka-range", "librdkafka-cooperative-sticky"])
def test_each_member_was_given_what_the_tables_say(collected: Collected, group: str) -> None:
    """librdkafka does not tell the generation: each member's assignments, in order, are the recorded ones.

    Under EAGER each ``assigned`` call is the member's whole assignment; under COOPERATIVE the calls are
    increments, so the member's holdings after each call are compared.
    """
    snapshots = _snapshots(collected, group)
    run = collected.runs[group]
    for member in run.members:
        held: set[str] = set()
        seen: list[list[str]] = []
        for event in run.events(member):
            if event["event"] == "assigned":
                held |= set(_text(event["partitions"]))
                seen.append(sorted(held))
            elif event["event"] in ("revoked", "lost"):
                held -= set(_text(event["partitions"]))
        mine = [snapshot[member.member_id] for _, snapshot in snapshots if member.member_id in snapshot]
        mine = _unless_never_synced(mine, seen)
        if group == "librdkafka-range":
            assert mine == seen, member.name
        else:  # an increment may be empty (nothing new this generation): the holdings repeat
            assert [s for i, s in enumerate(mine) if i == 0 or s != mine[i - 1]] == [
                s for i, s in enumerate(seen) if i == 0 or s != seen[i - 1]
            ], member.name


def _unless_never_synced(recorded: list[list[str]], seen: list[list[str]]) -> list[list[str]]:
    """``recorded`` without the empty assignments it starts with that the member never received.

    The coordinator writes a generation's assignment when the leader's SyncGroup arrives. A member that just joined
    and is given nothing (under COOPERATIVE, the others first give up what it will get) may send its own SyncGroup
    only after the next rebalance began: the broker answers REBALANCE_IN_PROGRESS, and the member never learns of a
    generation the record names it in, with nothing. Only such a leading empty one is left out.
    """
    while recorded and not recorded[0] and (not seen or seen[0]):
        recorded = recorded[1:]
    return recorded


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_the_steady_state_of_every_step_is_a_recorded_snapshot(collected: Collected, group: str) -> None:
    """After each step the group's steady state (members and assignments, as the clients held them and the broker
    described them) is a recorded snapshot, in order; the last snapshot is the last step's.

    A KIP-848 group records one target assignment epoch per step here: its snapshots are exactly the steps.
    """
    recorded = [snapshot for _, snapshot in _snapshots(collected, group)]
    steps = collected.runs[group].steps
    assert len(steps) == 4
    assert recorded[-1] == steps[-1]
    position = 0
    for step in steps:
        assert step in recorded[position:], (group, step, recorded)
        position = recorded.index(step, position) + 1
    if group in KIP848:
        assert recorded == steps
        epochs = [epoch for epoch, _ in _snapshots(collected, group)]
        assert epochs == sorted(set(epochs))


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_membership_rows_are_the_members_and_their_subscriptions(collected: Collected, group: str) -> None:
    actual = {(r["snapshot_ts"], r["member_id"]) for r in collected.actual if r["group_id"] == group}
    members = [r for r in collected.membership if r["group_id"] == group]
    assert {(r["snapshot_ts"], r["member_id"]) for r in members} == actual
    assert all(r["topics"] == sorted(SUBSCRIBED) for r in members)
    ids = {m.member_id for m in collected.runs[group].members}
    assert {r["member_id"] for r in members} == ids


@pytest.mark.parametrize("group", KIP848)
def test_each_kip848_hand_over_is_what_the_members_saw(collected: Collected, group: str) -> None:
    """The handovers table against the members' own listener calls: each partition recorded as handed to a member
    was assigned to it by its client within moments of the record, and given up by another member (revoked, or its
    member left) as many seconds before; b's leaving orphans partitions that a and c took over."""
    import pyarrow.parquet as pq

    run = collected.runs[group]
    end = dt.datetime.fromtimestamp(run.ended_at, tz=dt.UTC)
    rows = [r for r in pq.read_table(collected.out / "handovers").to_pylist() if r["group_id"] == group]
    rows = [r for r in rows if r["assigned_ts"] <= end]
    assert {r["kind"] for r in rows} == {"consumer_move", "consumer_orphan"}, rows
    calls: dict[str, list[tuple[str, float, str | None]]] = {}  # partition -> (event, at, member id)
    for member in run.members:
        for event in run.events(member):
            if event["event"] in ("assigned", "revoked", "lost"):
                for partition in _text(event["partitions"]):
                    calls.setdefault(partition, []).append((event["event"], float(event["at"]), member.member_id))
    left = run.members[1]
    for row in rows:
        got_at = row["assigned_ts"].timestamp()
        given_up_at = got_at - row["seconds"]
        assert 0.0 <= row["seconds"] < 10.0, row
        seen = calls.get(row["partition"], [])
        assert any(e == "assigned" and who == row["member_id"] and -0.5 <= at - got_at <= 3.0 for e, at, who in seen), (
            row,
            seen,
        )
        if row["kind"] == "consumer_move":
            assert any(
                e in ("revoked", "lost") and who != row["member_id"] and -0.5 <= at - given_up_at <= 3.0
                for e, at, who in seen
            ), (row, seen)
        else:
            assert row["member_id"] != left.member_id
            assert any(e in ("revoked", "lost") and who == left.member_id for e, _, who in seen), (row, seen)


def test_the_self_check_reproduces_every_range_and_roundrobin_generation(collected: Collected) -> None:
    """What the cluster's range and roundrobin did (ours through the adapters, and librdkafka's own) is what
    our assignors compute for the recorded membership and the collected partition counts: 100 %."""
    from spark_udfs.replay import MemberRow, TopicHistory
    from spark_udfs.replay.actual import ActualRow, match_rates, self_check

    history = TopicHistory((r["topic"], r["partitions"], r["valid_from"]) for r in collected.topics)
    rows = []
    for group in ("kafka-python-range", "aiokafka-roundrobin", "librdkafka-range"):
        members = [
            MemberRow(r["snapshot_ts"], r["member_id"], tuple(r["topics"]), r["group_instance_id"], r["rack_id"])
            for r in collected.membership
            if r["group_id"] == group
        ]
        actual = [
            ActualRow(
                r["snapshot_ts"],
                r["generation"],
                r["protocol"],
                r["member_id"],
                r["group_instance_id"],
                tuple(r["assigned"]),
            )
            for r in collected.actual
            if r["group_id"] == group
        ]
        rows += self_check(group, members, actual, history)
    rates = match_rates(rows)
    assert set(rates) == {"kafka-python-range", "aiokafka-roundrobin", "librdkafka-range"}
    assert all(matched == checked >= 4 for matched, checked in rates.values()), [
        (r["group_id"], r["generation"], r["mismatches"]) for r in rows if not r["matched"]
    ]


# --- collect's reading of a topic: copies of records in an ordinary topic (--topic) ----------------------------

T0 = 1_760_000_000_000  # ms


def _member(member_id: str, partitions: list[int]) -> MemberMetadata:
    from assignors import Assignment, Subscription, TopicPartition

    return MemberMetadata(
        member_id,
        None,
        "client",
        "/127.0.0.1",
        30000,
        10000,
        Subscription(["orders"]),
        Assignment([TopicPartition("orders", p) for p in partitions]),
    )


COPIES: list[tuple[int, Record]] = [  # (CreateTime offset in ms, record)
    (0, GroupMetadata("app", 1, "consumer", "range", "m1", T0, (_member("m1", [0, 1, 2]),))),
    (500, OffsetCommit("app", "orders", 0, 17)),
    (1000, GroupMetadata("app", 2, "consumer", "range", "m1", T0, (_member("m1", [0, 1]), _member("m2", [2, 3])))),
]


def _copy_topic(bootstrap: str, topic: str, records: list[tuple[int, Record]]) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept while its futures run
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(60)
    producer = Producer({"bootstrap.servers": bootstrap})
    for delay, record in records:
        key, value = encode_record(record)
        producer.produce(topic, value=value, key=key, timestamp=T0 + delay)
    assert producer.flush(30) == 0


def test_an_unknown_record_type_is_counted_and_reported_never_fatal(
    broker: KafkaBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A share group's record (key type 10, KIP-932) among the copies: counted, named in a warning, the rest read."""
    import pyarrow.parquet as pq
    from confluent_kafka import Producer

    _copy_topic(broker.bootstrap_servers, "copies-unknown", COPIES)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    share_key = b"\x00\x0a" + b"\x00\x05share" + b"\x00\x02m1"
    producer.produce("copies-unknown", key=share_key, value=b"\x00\x00\x01", timestamp=T0 + 2000)
    assert producer.flush(30) == 0
    argv = ["collect", "--bootstrap-servers", broker.bootstrap_servers, "--topic", "copies-unknown"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "other record types 1" in printed
    assert "UnknownRecord 1" in printed
    assert "warning: records of key type 10 (a share group's record, KIP-932) are not read" in printed
    rows = pq.read_table(tmp_path / "out" / "actual").to_pylist()
    assert [(r["generation"], r["member_id"]) for r in rows] == [(1, "m1"), (2, "m1"), (2, "m2")]


def test_transactional_commits_leave_control_batches_that_are_skipped(
    broker: KafkaBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Transactional offset commits leave a control batch (the commit marker) in the log; collect reads past it."""
    import pyarrow.parquet as pq
    from confluent_kafka import Producer

    topic = "copies-transactional"
    _copy_topic(broker.bootstrap_servers, topic, COPIES[:1])
    transactional = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "commits"})
    transactional.init_transactions(60)
    transactional.begin_transaction()
    for partition in (0, 1):
        key, value = encode_record(OffsetCommit("app", "orders", partition, 40 + partition))
        transactional.produce(topic, value=value, key=key, timestamp=T0 + 100)
    transactional.commit_transaction(60)
    assert (
        main(["collect", "--bootstrap-servers", broker.bootstrap_servers, "--topic", topic, "--out", str(tmp_path)])
        == 0
    )
    printed = capsys.readouterr().out
    assert "offset commits 2" in printed
    assert "records 3" in printed
    assert "undecodable" not in printed
    rows = pq.read_table(tmp_path / "actual").to_pylist()
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


def test_follow_then_ctrl_c_keeps_every_record_read(broker: KafkaBroker, tmp_path: Path) -> None:
    """``collect --follow`` in its own process tails the topic; a real SIGINT stops it with status 0, tables intact.

    The command starts as a terminal starts it, with SIGINT at its default (coreutils' ``env --default-signal``):
    a shell without job control starts background commands with SIGINT ignored, an ignored disposition survives
    exec, and Python then installs no KeyboardInterrupt handler.
    """
    import pyarrow.parquet as pq
    from confluent_kafka import Producer

    topic = "copies-follow"
    _copy_topic(broker.bootstrap_servers, topic, COPIES)
    out = tmp_path / "history"
    log, printed = tmp_path / "stderr.txt", tmp_path / "stdout.txt"
    argv = ["collect", "--bootstrap-servers", broker.bootstrap_servers, "--topic", topic, "--out", str(out)]
    with log.open("wb") as err, printed.open("wb") as stdout:
        process = subprocess.Popen(  # noqa: S603 - this interpreter and a fixed argument list
            ["env", "--default-signal=INT", sys.executable, "-m", "assignors", *argv, "--follow"],  # noqa: S607
            stdout=stdout,
            stderr=err,
        )
        try:
            first = _wait_for_progress(log, len(COPIES), process)
            assert first.split()[3:5] == ["1", "groups,"]
            later = GroupMetadata("app", 3, "consumer", "range", "m2", T0, (_member("m2", [0, 1, 2, 3]),))
            producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
            key, value = encode_record(later)
            producer.produce(topic, value=value, key=key, timestamp=T0 + 5000)
            assert producer.flush(30) == 0
            _wait_for_progress(log, len(COPIES) + 1, process)
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
    assert sorted((r["generation"], r["member_id"]) for r in actual) == [(1, "m1"), (2, "m1"), (2, "m2"), (3, "m2")]


def test_a_topic_ids_file_wins_over_the_cluster(collected: Collected, tmp_path: Path) -> None:
    """``--topic-ids`` names an id its own way; ids it does not name still come from the cluster."""
    import pyarrow.parquet as pq

    from assignors.collect import cluster_topic_ids

    ids = cluster_topic_ids({"bootstrap.servers": collected.bootstrap})
    orders = next(i for i, name in ids.items() if name == "orders")
    names = tmp_path / "ids.json"
    names.write_text(json.dumps({orders: "orders-renamed"}), encoding="utf-8")
    argv = ["collect", "--bootstrap-servers", collected.bootstrap, "--groups", "^kip848-uniform$"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main([*argv, "--topic-ids", str(names), "--out", str(tmp_path / "out")]) == 0
    assigned = {
        p.rsplit("-", 1)[0] for r in pq.read_table(tmp_path / "out" / "actual").to_pylist() for p in r["assigned"]
    }
    assert assigned == {"orders-renamed", "payments"}
