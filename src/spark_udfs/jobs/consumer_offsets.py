"""The ``__consumer_offsets`` decoder on Spark: raw ``key``/``value``/``timestamp`` rows become the three tables.

A user's Kafka-to-lake sink stores the topic's records as rows with binary ``key`` and
``value`` columns and a ``timestamp`` (optionally ``partition`` and ``offset``).
:func:`offsets_tables` groups them by consumer group (the group id is in the key), folds each
group's records in offset order (else time order) with
:class:`assignors.offsets_topic.HistoryBuilder` inside ``applyInPandas``, and returns the
``membership``, ``actual`` and ``topics`` DataFrames plus an ``errors`` DataFrame: one bad
record becomes an error row, never a failed job. Only DataFrame operations and pandas
functions are used, so it runs over Spark Connect.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assignors import ProtocolError
from assignors.offsets_topic import HistoryBuilder, UnknownRecord, decode_record, timestamp_of
from assignors.tables import (
    ACTUAL_COLUMNS,
    COLLECTED_TOPICS_COLUMNS,
    ERROR_COLUMNS,
    MEMBERSHIP_COLUMNS,
    Columns,
    column_names,
)
from spark_udfs.tables.schemas import ddl

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

logger = logging.getLogger(__name__)

__all__ = [
    "FOLDED_COLUMNS",
    "OffsetsTables",
    "fold_group_frame",
    "group_of_key",
    "offsets_tables",
]

_TIMES = {"snapshot_ts", "valid_from"}
FOLDED_COLUMNS: Columns = (
    ("table", "string"),
    ("group_id", "string"),
    ("ts_us", "bigint"),
    *dict.fromkeys(
        column
        for column in (*MEMBERSHIP_COLUMNS, *ACTUAL_COLUMNS, *COLLECTED_TOPICS_COLUMNS)
        if column[0] != "group_id" and column[0] not in _TIMES
    ),
    ("error", "string"),
)
"""What one group's fold emits: rows of every table (:mod:`assignors.tables`), told apart by ``table``; times as
epoch microseconds."""


@dataclass(frozen=True)
class OffsetsTables:
    """The tables decoded from raw ``__consumer_offsets`` rows."""

    membership: DataFrame
    actual: DataFrame
    topics: DataFrame
    errors: DataFrame


def group_of_key(key: bytes | None) -> str | None:
    """The group id a record key names, or None (unknown record types, undecodable keys)."""
    if key is None:
        return None
    try:
        record = decode_record(bytes(key), None)
    except ProtocolError:
        return None
    return None if isinstance(record, UnknownRecord) else getattr(record, "group_id", None)


def _us(ts: Any) -> int | None:
    """Epoch microseconds (a snapshot moved one microsecond past a tie keeps its place)."""
    return None if ts is None else (ts - timestamp_of(0)) // dt.timedelta(microseconds=1)


def fold_group_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """One group's raw rows (``key``, ``value``, ``ts_ms``, ``pos_partition``, ``pos_offset``) folded into rows."""
    import pandas as pd

    ordered = frame.sort_values(["pos_partition", "pos_offset", "ts_ms"], kind="stable", na_position="first")
    builder = HistoryBuilder()
    out: list[dict[str, Any]] = []
    group = None
    try:
        for key, value, ms, partition, offset in zip(
            ordered["key"],
            ordered["value"],
            ordered["ts_ms"],
            ordered["pos_partition"],
            ordered["pos_offset"],
            strict=True,
        ):
            stamp = None if pd.isna(ms) else int(ms)
            where = f"partition {int(partition)} offset {int(offset)}" if not pd.isna(offset) else f"record at {stamp}"
            record = builder.add_raw(
                bytes(key) if key is not None else b"", None if value is None else bytes(value), stamp, where
            )
            group = group or getattr(record, "group_id", None)
    except Exception as error:  # one group must never fail the job (logged with its traceback)
        logger.warning("group %r: internal error while folding its records", group, exc_info=True)
        builder.errors.append(f"internal error: {type(error).__name__}: {error}")
    membership, actual = builder.drain()
    group = group or next(iter(builder.groups_seen), None)
    out.extend({"table": "membership", **row, "ts_us": _us(row.pop("snapshot_ts"))} for row in membership)
    out.extend({"table": "actual", **row, "ts_us": _us(row.pop("snapshot_ts"))} for row in actual)
    out.extend(
        {
            "table": "topics",
            "topic": row["topic"],
            "partitions": row["partitions"],
            "ts_us": _us(row["valid_from"]),
            "topic_id": row.get("topic_id"),
        }
        for row in builder.topics()
    )
    out.extend({"table": "error", "group_id": group, "error": message} for message in builder.errors)
    columns = list(column_names(FOLDED_COLUMNS))
    return pd.DataFrame([{name: row.get(name) for name in columns} for row in out], columns=columns)


def _running_max(frame: pd.DataFrame) -> pd.DataFrame:
    """One topic's lower bounds from every group: a row each time the count grows, the first valid always; the
    topic's id the records gave it (the latest, the same on every row; the greatest of one time's, so that the
    groups' order does not decide)."""
    import pandas as pd

    ordered = frame.sort_values(["ts_us", "partitions", "topic_id"], na_position="first", kind="stable")
    named = ordered["topic_id"].dropna()
    topic_id = None if named.empty else str(named.iloc[-1])
    rows: list[dict[str, Any]] = []
    best = 0
    for topic, partitions, us in zip(ordered["topic"], ordered["partitions"], ordered["ts_us"], strict=True):
        if partitions > best:
            since = None if not rows else int(us)
            rows.append({"topic": topic, "partitions": int(partitions), "ts_us": since, "topic_id": topic_id})
            best = partitions
    return pd.DataFrame(rows, columns=["topic", "partitions", "ts_us", "topic_id"])


def offsets_tables(raw: DataFrame) -> OffsetsTables:
    """Decode raw ``__consumer_offsets`` rows: ``key``, ``value``, ``timestamp``; optional ``partition``, ``offset``."""
    import pandas as pd
    from pyspark.sql import functions as sf
    from pyspark.sql.pandas.functions import pandas_udf

    def groups_of(keys: pd.Series) -> pd.Series:
        return keys.map(group_of_key)

    groups_of.__annotations__ = {"keys": pd.Series, "return": pd.Series}  # pyspark reads the hints at run time
    group_udf = pandas_udf(groups_of, returnType="string")  # type: ignore[call-overload]

    has = set(raw.columns)
    prepared = raw.select(
        sf.coalesce(group_udf(sf.col("key")), sf.lit("")).alias("group_key"),
        sf.col("key"),
        sf.col("value"),
        sf.unix_millis(sf.col("timestamp")).alias("ts_ms"),
        (sf.col("partition") if "partition" in has else sf.lit(None)).cast("int").alias("pos_partition"),
        (sf.col("offset") if "offset" in has else sf.lit(None)).cast("bigint").alias("pos_offset"),
    )
    folded = prepared.groupBy("group_key").applyInPandas(fold_group_frame, schema=ddl(FOLDED_COLUMNS)).cache()

    def table(name: str, columns: tuple[tuple[str, str], ...], ts_column: str) -> DataFrame:
        picked = [
            sf.timestamp_micros(sf.col("ts_us")).alias(ts_column) if column == ts_column else sf.col(column)
            for column, _ in columns
        ]
        return folded.where(sf.col("table") == name).select(*picked)

    observations = folded.where(sf.col("table") == "topics").select("topic", "partitions", "ts_us", "topic_id")
    topics = observations.groupBy("topic").applyInPandas(
        _running_max, schema="topic string, partitions int, ts_us bigint, topic_id string"
    )
    return OffsetsTables(
        membership=table("membership", MEMBERSHIP_COLUMNS, "snapshot_ts"),
        actual=table("actual", ACTUAL_COLUMNS, "snapshot_ts"),
        topics=topics.select(
            "topic", "partitions", sf.timestamp_micros(sf.col("ts_us")).alias("valid_from"), "topic_id"
        ).select(*column_names(COLLECTED_TOPICS_COLUMNS)),
        errors=folded.where(sf.col("table") == "error").select(*column_names(ERROR_COLUMNS)),
    )
