"""The replay on Arrow tables (what ``evaluate_history``'s ``applyInArrow`` runs) equals the replay on pandas frames."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assignors.tables import MEMBERSHIP_COLUMNS, OUTPUT_COLUMNS
from spark_udfs.demo.sample import generate_history
from spark_udfs.replay import (
    ALL_STRATEGIES,
    MemberRow,
    TopicHistory,
    WeightHistory,
    replay_frame,
    replay_group,
    replay_table,
    rows_to_table,
    table_member_rows,
)
from spark_udfs.tables.schemas import ddl

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pd = pytest.importorskip("pandas")

T0 = dt.datetime(2026, 1, 1, 12, 0)  # noqa: DTZ001 - Spark timestamps are naive
SIX = TopicHistory([("t", 6, None)])


def _membership(rows: list[tuple[Any, ...]], *, large: bool = False) -> Any:
    """Membership rows as Spark hands them to an ``applyInArrow`` function: timestamps as UTC instants."""
    text = pa.large_string() if large else pa.string()
    types = {
        "group_id": text,
        "snapshot_ts": pa.timestamp("us", tz="UTC"),
        "member_id": text,
        "topics": pa.list_(text),
        "group_instance_id": text,
        "rack_id": text,
    }
    names = [name for name, _ in MEMBERSHIP_COLUMNS]
    return pa.table([pa.array([row[i] for row in rows], type=types[n]) for i, n in enumerate(names)], names=names)


def _frame(table: Any) -> Any:
    """The same rows as Spark hands them to an ``applyInPandas`` function: naive datetimes in UTC."""
    frame = table.to_pandas()
    frame["snapshot_ts"] = frame["snapshot_ts"].dt.tz_convert("UTC").dt.tz_localize(None)
    return frame


def _plain(frame: Any) -> list[list[Any]]:
    """A frame's rows as Python values (missing: None; nested arrays as lists), ``assign_ms`` left out."""
    columns = [c for c in frame.columns if c != "assign_ms"]
    return [[_value(v) for v in record] for record in frame[columns].astype(object).itertuples(index=False)]


def _value(value: Any) -> Any:
    if isinstance(value, list | tuple) or hasattr(value, "tolist"):
        return [_value(v) for v in (value.tolist() if hasattr(value, "tolist") else value)]
    if isinstance(value, dict):
        return {k: _value(v) for k, v in value.items()}
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.tz_convert("UTC").tz_localize(None).to_pydatetime() if value.tzinfo else value.to_pydatetime()
    return value


@settings(max_examples=12)
@given(seed=st.integers(0, 10_000), detail=st.booleans(), large=st.booleans())
def test_replay_table_equals_replay_frame(seed: int, detail: bool, large: bool) -> None:
    """Every strategy, weights included, on generated groups: the Arrow path's rows are the pandas path's."""
    history = generate_history(2, 8, seed=seed)
    topics = TopicHistory(history.topics)
    weights = WeightHistory(history.weights)
    strategies = [*ALL_STRATEGIES, "weighted-sticky"]
    membership = _membership([tuple(r) for r in history.membership], large=large)
    for group in sorted(set(membership.column("group_id").to_pylist())):
        table = membership.filter(pc.equal(membership.column("group_id"), group))
        arrow = replay_table(table, topics, strategies, detail=detail, weights=weights)
        frame = replay_frame(_frame(table), topics, strategies, detail=detail, weights=weights)
        assert arrow.column_names == list(frame.columns)
        assert _plain(arrow.to_pandas()) == _plain(frame)
        text = pa.large_string() if large else pa.string()
        assert arrow.schema.field("group_id").type == text
        assert arrow.schema.field("snapshot_ts").type == pa.timestamp("us", tz="UTC")
        assert arrow.schema.field("moved").type == pa.int32()


@pytest.mark.usefixtures("spark")
def test_the_output_has_the_types_spark_expects() -> None:
    """``ddl(OUTPUT_COLUMNS)`` as Spark's Arrow conversion types it (``spark`` parses the DDL), detail included."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType, _parse_datatype_string

    rows = [("g", T0, "a", ["t"], None, None), ("g", T0 + dt.timedelta(minutes=1), "a", ["t"], None, None)]
    detailed = [*OUTPUT_COLUMNS, ("detail", "array<struct<member: string, partitions: array<string>>>")]
    for detail, large in [(False, False), (True, False), (True, True)]:
        schema = _parse_datatype_string(ddl(detailed if detail else OUTPUT_COLUMNS))
        assert isinstance(schema, StructType)
        expected = to_arrow_schema(schema, timezone="UTC", prefers_large_types=large)
        table = _membership(rows, large=large)
        assert replay_table(table, SIX, ["range", "sticky"], detail=detail).schema.equals(expected)


def test_a_session_time_zone_is_read_as_wall_clock_time_and_written_back_as_the_same_instant() -> None:
    """Spark hands timestamps over as UTC instants; the pandas path sees them as the session's wall-clock times,
    and so does the Arrow path given the session's zone. What it writes is the instant it read."""
    instants = [dt.datetime(2026, 1, 1, 11, 0, tzinfo=dt.UTC), dt.datetime(2026, 7, 1, 10, 0, tzinfo=dt.UTC)]
    table = _membership([("g", ts, "a", ["t"], None, None) for ts in instants])
    rows = table_member_rows(table, "Europe/Paris")
    assert [r.snapshot_ts for r in rows] == [dt.datetime(2026, 1, 1, 12, 0), dt.datetime(2026, 7, 1, 12, 0)]  # noqa: DTZ001
    out = replay_table(table, SIX, ["range"], time_zone="Europe/Paris")
    assert out.column("snapshot_ts").to_pylist() == instants
    assert replay_table(table, SIX, ["range"]).column("snapshot_ts").to_pylist() == instants


def test_table_member_rows_reads_nulls_and_shares_each_time() -> None:
    stamps = [T0, None, T0, T0 + dt.timedelta(minutes=1)]
    table = _membership(
        [("g", ts, f"m{i}", None if i == 1 else ["t"], "i" if i == 2 else None, "r") for i, ts in enumerate(stamps)]
    )
    rows = table_member_rows(table)
    assert rows == [
        MemberRow(T0, "m0", ("t",), None, "r"),
        MemberRow(None, "m1", None, None, "r"),
        MemberRow(T0, "m2", ("t",), "i", "r"),
        MemberRow(T0 + dt.timedelta(minutes=1), "m3", ("t",), None, "r"),
    ]
    assert rows[0].snapshot_ts is rows[2].snapshot_ts


def test_error_rows_and_nan_are_null() -> None:
    """A group's error rows have null metrics; a NaN double is null, as pandas' conversion made it."""
    errors, _ = replay_group("g", [MemberRow(None, "a", ())], SIX, ["range"])
    table = rows_to_table(errors, OUTPUT_COLUMNS)
    assert table.column("moved").null_count == table.num_rows == 1
    assert table.column("error").to_pylist() == [errors[0]["error"]]
    nan = rows_to_table([{"x": float("nan")}, {"x": 1.5}], [("x", "double")])
    assert nan.column("x").to_pylist() == [None, 1.5]
    with pytest.raises(ValueError, match="no Arrow type"):
        rows_to_table([{"x": 1}], [("x", "map<string, int>")])
