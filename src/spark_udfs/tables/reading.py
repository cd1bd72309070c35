"""Reading an input table: Parquet or CSV, from any path or URI Spark reads, typed and checked as it is read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spark_udfs.session import first_line
from spark_udfs.tables.csv_checks import SOURCE_COLUMN, csv_checks
from spark_udfs.tables.paths import local_path
from spark_udfs.tables.schemas import SchemaError, csv_columns

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from pyspark.sql import DataFrame, SparkSession

__all__ = ["read_table"]


def _is_csv(path: str) -> bool:
    """A ``.csv`` file, or a local directory holding ``.csv`` files (Spark reads the rest as Parquet)."""
    if path.rstrip("/").lower().endswith(".csv"):
        return True
    local = local_path(path)
    return local is not None and local.is_dir() and any(local.glob("*.csv"))


def read_table(spark: SparkSession, path: str, columns: Sequence[tuple[str, str]]) -> DataFrame:
    """Read Parquet (a file or a directory) or CSV with a header, from any path or URI Spark reads.

    In CSV, an ``array<string>`` column holds its items separated by ``;`` (empty: none) and
    timestamps are ISO 8601; Parquet is read as it is. Either way only ``group_instance_id``,
    ``rack_id`` and ``valid_from`` may be left out (null: the CSV typing adds them, the evaluation adds them to
    Parquet), and the schema is checked later. A CSV
    value that does not parse is null, and its text is kept for the evaluation to name it
    (:mod:`spark_udfs.tables.csv_checks`): one typo never stops the job.

    Raises:
        FileNotFoundError: Spark says the path does not exist (one line, Spark's words).
        SchemaError: the table cannot be read at all (an empty directory, not Parquet, not
            readable): one line naming the path and the problem.
    """
    from pyspark.errors import AnalysisException

    local = local_path(path)
    if (
        local is not None
        and local.is_dir()
        and not any(p for p in local.iterdir() if not p.name.startswith((".", "_")))
    ):
        msg = f"{path}: an empty directory, no table to read"
        raise SchemaError(msg)
    csv = _is_csv(path)
    if not csv and local is not None:
        _check_parquet_files(path, local)
    try:
        if not csv:
            frame = spark.read.parquet(path)  # its optional columns are added once, by the evaluation
        else:
            raw = spark.read.option("header", "true").csv(path)
            checks = csv_checks(raw.columns, columns)
            source = [f"_metadata.file_path AS {SOURCE_COLUMN}"] if checks else []
            frame = raw.selectExpr(*csv_columns(raw.columns, columns), *checks, *source)
        frame.schema  # noqa: B018 - analyse now: over Spark Connect reading is lazy
    except AnalysisException as error:
        message = str(error).strip().splitlines()[0]
        if error.getCondition() == "PATH_NOT_FOUND":
            msg = f"{path}: {message}"
            raise FileNotFoundError(msg) from None
        msg = f"{path}: cannot read as {'CSV' if csv else 'Parquet'}: {message}"
        raise SchemaError(msg) from None
    except Exception as error:  # noqa: BLE001 - classic Spark raises the JVM's error type, Connect its own
        msg = f"{path}: cannot read as {'CSV' if csv else 'Parquet'}: {first_line(error)}"
        raise SchemaError(msg) from None
    return frame


_PARQUET_MAGIC = b"PAR1"


def _check_parquet_files(path: str, local: Path) -> None:
    """Refuse a local file that is not Parquet before Spark logs a Java stack trace over it."""
    files = [local] if local.is_file() else sorted(p for p in local.rglob("*") if p.is_file())
    for file in files:
        if file.name.startswith((".", "_")) or file.suffix.lower() in {".crc", ".csv"}:
            continue
        try:
            with file.open("rb") as handle:
                head = handle.read(4)
                handle.seek(max(file.stat().st_size - 4, 0))
                tail = handle.read(4)
        except OSError as error:
            msg = f"{path}: cannot read {file}: {error.strerror or error}"
            raise SchemaError(msg) from None
        if head != _PARQUET_MAGIC or tail != _PARQUET_MAGIC:
            where = "" if file == local else f" ({file.relative_to(local)})"
            msg = (
                f"{path}: not a Parquet file{where}: it does not start and end with PAR1; "
                "a CSV table must be a .csv file or a directory of .csv files"
            )
            raise SchemaError(msg)
