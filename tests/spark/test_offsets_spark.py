"""The ``__consumer_offsets`` decoder on Spark equals the pure fold; a bad record is an error row."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyspark.sql import SparkSession

from assignors import Assignment, Subscription, TopicPartition
from assignors.offsets_topic import GroupMetadata, HistoryBuilder, MemberMetadata, OffsetCommit, Record, encode_record
from spark_udfs.offsets import offsets_tables

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


def test_spark_tables_equal_the_pure_fold(spark: SparkSession) -> None:
    raw = spark.createDataFrame(
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
    assert sorted((r.asDict() for r in tables.topics.collect()), key=lambda r: r["topic"]) == [
        {"topic": "t", "partitions": 2, "valid_from": None},
        {"topic": "u", "partitions": 5, "valid_from": None},
    ]
    (error,) = tables.errors.collect()
    assert error["group_id"] == "b"
    assert error["error"].startswith("partition 1 offset 1: value.")
