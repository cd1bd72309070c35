"""The ``__consumer_offsets`` decoder on Spark equals the pure fold; a bad record is an error row."""

from __future__ import annotations

import base64
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from assignors import Assignment, Subscription, TopicPartition
from assignors.cli import main
from assignors.consumer_protocol import encode_assignment, encode_subscription
from assignors.metrics import DEFAULT_PAUSE_MODEL
from assignors.offsets_topic import GroupMetadata, HistoryBuilder, MemberMetadata, OffsetCommit, Record, encode_record
from spark_udfs.jobs.consumer_offsets import offsets_tables

pytestmark = pytest.mark.xdist_group("spark")  # beside the Connect server (make unit: --dist loadgroup)

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)


def _member(member_id: str, topics: list[str], assigned: list[tuple[str, int]]) -> MemberMetadata:
    return MemberMetadata(
        member_id,
        None,
        "c",
        "h",
        1,
        1,
        Subscription(topics, rack_id="r1"),
        Assignment([TopicPartition(t, p) for t, p in assigned]),
    )


RECORDS: list[tuple[int, int, int, Record]] = [  # partition, offset, seconds after T0, record
    (0, 0, 0, GroupMetadata("a", 1, "consumer", "range", "m1", -1, (_member("m1", ["t"], [("t", 0), ("t", 1)]),))),
    (0, 1, 5, OffsetCommit("a", "t", 0, 10)),
    (
        0,
        2,
        10,
        GroupMetadata(
            "a", 2, "consumer", "range", "m1", -1, (_member("m1", ["t"], [("t", 0)]), _member("m2", ["t"], [("t", 1)]))
        ),
    ),
    (1, 0, 3, GroupMetadata("b", 7, "consumer", "roundrobin", "x", -1, (_member("x", ["u"], [("u", 4)]),))),
]


def _raw_rows() -> list[tuple[Any, ...]]:
    rows = []
    for partition, offset, seconds, record in RECORDS:
        key, value = encode_record(record)
        rows.append((key, value, (T0 + dt.timedelta(seconds=seconds)).replace(tzinfo=None), partition, offset))
    # a group-metadata record of group "b" cut short
    key, value = encode_record(RECORDS[-1][3])
    assert value is not None
    rows.append((key, value[:20], (T0 + dt.timedelta(seconds=20)).replace(tzinfo=None), 1, 1))
    return rows


def _naive(rows: list[dict[str, Any]], column: str) -> list[dict[str, Any]]:
    return [{**row, column: row[column].replace(tzinfo=None) if row[column] else None} for row in rows]


def test_spark_tables_equal_the_pure_fold(session: SparkSession) -> None:
    """On a local session and over Spark Connect."""
    raw = session.createDataFrame(
        _raw_rows(), "key binary, value binary, timestamp timestamp, partition int, offset long"
    )
    tables = offsets_tables(raw)
    expected = HistoryBuilder()
    for _, _, seconds, record in RECORDS:
        expected.add(record, int((T0 + dt.timedelta(seconds=seconds)).timestamp() * 1000))

    def rows(frame: Any) -> list[dict[str, Any]]:
        return sorted(
            (r.asDict() for r in frame.collect()), key=lambda r: (r["group_id"], r["snapshot_ts"], r["member_id"])
        )

    assert rows(tables.membership) == _naive(expected.membership, "snapshot_ts")
    assert rows(tables.actual) == _naive(expected.actual, "snapshot_ts")
    topics = sorted((r.asDict() for r in tables.topics.collect()), key=lambda r: r["topic"])
    assert [(r["topic"], r["partitions"], r["valid_from"]) for r in topics] == [("t", 2, None), ("u", 5, None)]
    assert topics == sorted(expected.topics(), key=lambda r: r["topic"])  # with the ids KIP-848 records gave
    (error,) = tables.errors.collect()
    assert error["group_id"] == "b"
    assert error["error"].startswith("partition 1 offset 1: value.")


def test_collected_tables_to_a_report_with_the_actual_strategy(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """collect --from-dump, then evaluate --actual: the strategy 'actual' and the range self-check."""
    from assignors import Cluster, RangeAssignor

    lines = []
    for step, ids in enumerate([["m1"], ["m1", "m2"], ["m1", "m2", "m3"]]):
        result = RangeAssignor().assign(Cluster({"t": 6}), {m: Subscription(["t"]) for m in ids})
        raw_sub = encode_subscription(Subscription(["t"]))
        group = tuple(
            MemberMetadata(m, None, "c", "h", 1, 1, Subscription(["t"]), result[m], raw_sub,
                           encode_assignment(result[m]) if result[m].partitions else b"")
            for m in ids
        )  # fmt: skip
        record = {
            "key": {"type": 2, "data": {"group": "g"}},
            "value": {"version": 3, "data": _json_of(GroupMetadata("g", step + 1, "consumer", "range", "m1",
                                                                   1_700_000_000_000 + 60_000 * step, group))},
        }  # fmt: skip
        lines.append(json.dumps(record))
    dump = tmp_path / "dump.json"
    dump.write_text("".join(lines), encoding="utf-8")
    collected = tmp_path / "collected"
    counts = tmp_path / "counts.json"
    counts.write_text('{"t": 6}', encoding="utf-8")
    assert main(["collect", "--from-dump", str(dump), "--out", str(collected), "--topics", str(counts)]) == 0
    report = tmp_path / "report"
    argv = ["evaluate", "--membership", str(collected / "membership"), "--topics", str(collected / "topics")]
    argv += ["--actual", str(collected / "actual"), "--out", str(report), "--strategies", "range", "sticky"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "Your cluster did pause" in printed
    # collected tables share their times (one record is both): no rebalance length to derive, and the report says so
    assert "  eager_heartbeats kept (measured): the cluster's records show 0 EAGER rebalances" in printed
    evaluation = spark.read.parquet(str(report / "evaluation"))
    actual_rows = [r.asDict() for r in evaluation.where("strategy = 'actual'").orderBy("snapshot_ts").collect()]
    range_rows = [r.asDict() for r in evaluation.where("strategy = 'range'").orderBy("snapshot_ts").collect()]
    assert len(actual_rows) == 3
    for ours, theirs in zip(actual_rows, range_rows, strict=True):
        for column in ("members", "assigned", "max_load", "load_spread", "moved", "orphaned", "revoked", "valid"):
            assert ours[column] == theirs[column], column
    checks = spark.read.parquet(str(report / "self_check")).collect()
    assert sorted((r["generation"], r["matched"]) for r in checks) == [(1, True), (2, True), (3, True)]
    assert "Your cluster did pause" in (report / "report.html").read_text(encoding="utf-8")


def _json_of(record: GroupMetadata) -> dict[str, Any]:
    """The formatter's JSON of a GroupMetadataValue v3: base64 of the raw member bytes."""
    return {
        "protocolType": record.protocol_type,
        "generation": record.generation,
        "protocol": record.protocol,
        "leader": record.leader,
        "currentStateTimestamp": record.current_state_timestamp,
        "members": [
            {
                "memberId": m.member_id,
                "groupInstanceId": m.group_instance_id,
                "clientId": m.client_id,
                "clientHost": m.client_host,
                "rebalanceTimeout": m.rebalance_timeout_ms,
                "sessionTimeout": m.session_timeout_ms,
                "subscription": base64.b64encode(m.subscription_bytes).decode(),
                "assignment": base64.b64encode(m.assignment_bytes).decode(),
            }
            for m in record.members
        ],
    }


def test_the_actual_strategy_on_spark_equals_the_pure_rows(spark: SparkSession) -> None:
    """evaluate_history(actual=..., weights=..., durations): its 'actual' rows are actual_rows', weights and all."""
    from assignors.tables import WEIGHTS_COLUMNS
    from spark_udfs.replay import MEMBERSHIP_COLUMNS, TOPICS_COLUMNS, MemberRow, TopicHistory, ddl
    from spark_udfs.replay.actual import ActualRow, actual_rows
    from spark_udfs.replay.timing import PauseTiming
    from spark_udfs.replay.weights import WeightHistory
    from spark_udfs.udfs import evaluate_history

    M = DEFAULT_PAUSE_MODEL  # noqa: N806 - the model, as the docs write it
    tables = offsets_tables(
        spark.createDataFrame(_raw_rows(), "key binary, value binary, timestamp timestamp, partition int, offset long")
    )
    topics = [("t", 2, None), ("u", 5, None)]
    weights = [("t", None, 3.0, None), ("t", 1, 7.0, None), ("u", None, 1.0, None)]
    evaluation = evaluate_history(
        tables.membership,
        spark.createDataFrame(topics, ddl(TOPICS_COLUMNS)),
        strategies=["range"],
        actual=tables.actual,
        weights=spark.createDataFrame(weights, ddl(WEIGHTS_COLUMNS)),
        rebalance_seconds=3.0,
        heartbeat_seconds=2.0,
    )
    got = [r.asDict() for r in evaluation.where("strategy = 'actual'").orderBy("group_id", "snapshot_ts").collect()]
    members = [r.asDict() for r in tables.membership.select(*(n for n, _ in MEMBERSHIP_COLUMNS)).collect()]
    recorded = [r.asDict() for r in tables.actual.collect()]
    expected = []
    for group in ("a", "b"):
        expected += actual_rows(
            group,
            [
                MemberRow(m["snapshot_ts"], m["member_id"], tuple(m["topics"]), m["group_instance_id"], m["rack_id"])
                for m in members
                if m["group_id"] == group
            ],
            [
                ActualRow(r["snapshot_ts"], r["generation"], r["protocol"], r["member_id"], None, tuple(r["assigned"]))
                for r in recorded
                if r["group_id"] == group
            ],
            TopicHistory(topics),
            weights=WeightHistory(weights),
            timing=PauseTiming(3.0, 2.0),
        )
    assert got == expected
    # a: m1 alone holds t-0 (3) and t-1 (7), then m2 takes t-1: EAGER stops m1's 2 partitions for 0.12 of the
    # 3 s classic heartbeat (--rebalance-seconds) and a 0.09 s fetch (the measured factors)
    assert [(r["weighted_max_load"], r["weighted_spread"]) for r in got[:2]] == [(10.0, 0.0), (7.0, 4.0)]
    assert [r["pause_partition_seconds"] for r in got[:2]] == pytest.approx(
        [0.0, 2 * (M.eager_heartbeats * 3 + M.fetch_seconds)]
    )
