"""write_local_parquet: the demo's inputs written by pyarrow read back by Spark as Spark would have written them."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import pytest

from assignors.tables import MEMBERSHIP_COLUMNS, TOPICS_COLUMNS, WEIGHTS_COLUMNS
from spark_udfs.tables.schemas import ddl, write_local_parquet

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import SparkSession

pytestmark = pytest.mark.xdist_group("spark")

T0 = dt.datetime(2026, 1, 5, 8, 0)  # noqa: DTZ001 - naive, UTC as the session
MEMBERSHIP = [
    ("g", T0, "a", ["o", "p"], None, "rack-a"),
    ("g", T0 + dt.timedelta(minutes=5), "b", [], "g-1", None),
]
TOPICS = [("o", 3, None), ("p", 2, T0)]
WEIGHTS = [("o", None, 2.5, None), ("p", 1, 0.0, T0)]


def test_the_files_read_as_spark_writes_them(spark: SparkSession, tmp_path: Path) -> None:
    cases: dict[str, tuple[list[tuple[Any, ...]], tuple[tuple[str, str], ...]]] = {
        "membership": (MEMBERSHIP, MEMBERSHIP_COLUMNS),
        "topics": (TOPICS, TOPICS_COLUMNS),
        "weights": (WEIGHTS, WEIGHTS_COLUMNS),
    }
    for name, (rows, columns) in cases.items():
        write_local_parquet(rows, columns, tmp_path / "arrow" / name)
        spark.createDataFrame(rows, ddl(columns)).write.parquet(str(tmp_path / "spark" / name))
        ours = spark.read.parquet(str(tmp_path / "arrow" / name))
        theirs = spark.read.parquet(str(tmp_path / "spark" / name))
        assert ours.schema == theirs.schema
        assert ours.schema.simpleString() == f"struct<{ddl(columns).replace(' ', ':').replace(',:', ',')}>"
        assert sorted(ours.collect(), key=str) == sorted(theirs.collect(), key=str)


def test_overwrites_the_directory(tmp_path: Path) -> None:
    target = tmp_path / "topics"
    target.mkdir()
    (target / "part-00000-old.parquet").write_bytes(b"stale")
    written = write_local_parquet(TOPICS, TOPICS_COLUMNS, target)
    assert [p.name for p in target.iterdir()] == [written.name]
    table = pq.read_table(written)
    assert table.column_names == ["topic", "partitions", "valid_from"]
    assert str(table.schema.field("valid_from").type) == "timestamp[us, tz=UTC]"
    assert table.to_pylist()[1]["valid_from"] == T0.replace(tzinfo=dt.UTC)


def test_an_unknown_column_type_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no Arrow type for the column type 'map<string,int>'"):
        write_local_parquet([], [("m", "map<string,int>")], tmp_path / "x")
    assert not (tmp_path / "x").exists()
