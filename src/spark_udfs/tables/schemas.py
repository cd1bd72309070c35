"""The tables as Spark sees them: a column list's DDL, the schema check, the optional columns and the CSV typing.

The column lists themselves live in one home, :mod:`assignors.tables` (plain Python, also what
``assignors collect`` writes): ``MEMBERSHIP_COLUMNS``, ``TOPICS_COLUMNS``, ``WEIGHTS_COLUMNS``,
``ACTUAL_COLUMNS``, ``OUTPUT_COLUMNS``, ``DETAIL_COLUMNS``. docs/evaluation.md defines each column.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assignors import AssignorError
from assignors.tables import OPTIONAL_COLUMNS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "OPTIONAL_COLUMNS",
    "SchemaError",
    "check_schema",
    "csv_columns",
    "ddl",
    "with_optional_columns",
    "write_local_parquet",
]

# Narrower types Spark reads for a column, which it widens losslessly.
_ACCEPTED = {"int": {"int", "bigint"}, "double": {"double", "float", "int", "bigint"}}


class SchemaError(AssignorError, ValueError):
    """An input table lacks a column or has one of the wrong type."""


def ddl(columns: Sequence[tuple[str, str]]) -> str:
    """A column list as a Spark DDL schema string: ``"name type, ..."``."""
    return ", ".join(f"{name} {kind}" for name, kind in columns)


_ARROW_KINDS = ("string", "int", "double", "timestamp", "array<string>")
"""The column types :func:`write_local_parquet` writes (those of the input tables)."""


def _arrow_type(kind: str) -> Any:
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int": pa.int32(),
        "double": pa.float64(),
        "timestamp": pa.timestamp("us", tz="UTC"),  # Spark's TIMESTAMP: UTC instants
        "array<string>": pa.list_(pa.string()),
    }
    if kind not in types:
        msg = f"no Arrow type for the column type {kind!r}; expected one of {', '.join(_ARROW_KINDS)}"
        raise ValueError(msg)
    return types[kind]


def write_local_parquet(rows: Iterable[Sequence[Any]], columns: Sequence[tuple[str, str]], directory: Path) -> Path:
    """Write ``rows`` (tuples in ``columns``' order) as one Parquet file in ``directory``; returns the file.

    What Spark reads back from ``directory`` has the types ``ddl(columns)`` names, as if Spark had written
    it (``mode("overwrite")``: what ``directory`` held is removed first), without a Spark job: pyarrow, in this
    process, for a local directory. Naive timestamps are UTC, as the session's time zone.
    """
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, _arrow_type(kind)) for name, kind in columns])
    listed = list(rows)
    table = pa.Table.from_arrays(
        [pa.array([row[i] for row in listed], type=field.type) for i, field in enumerate(schema)], schema=schema
    )
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    target = directory / "part-00000.parquet"
    pq.write_table(table, target)
    return target


def check_schema(frame: DataFrame, expected: Sequence[tuple[str, str]], table: str) -> None:
    """Fail fast, listing the expected schema, when ``frame`` lacks a column or has a wrong type.

    Raises:
        SchemaError: naming the table, each missing or mistyped column, and the expected schema.
    """
    actual = {field.name: field.dataType.simpleString() for field in frame.schema.fields}
    problems = []
    for name, kind in expected:
        found = actual.get(name)
        if found is None:
            problems.append(f"missing column {name!r}")
        elif found != kind and found not in _ACCEPTED.get(kind, ()):
            problems.append(f"column {name!r} is {found}, expected {kind}")
    if problems:
        msg = f"{table} table: {'; '.join(problems)}. Expected schema: {ddl(expected)}"
        raise SchemaError(msg)


def with_optional_columns(frame: DataFrame, columns: Sequence[tuple[str, str]]) -> DataFrame:
    """``frame`` with each optional column of ``columns`` (:data:`OPTIONAL_COLUMNS`) it lacks, as a typed null."""
    present = set(frame.columns)  # one schema request over Spark Connect
    absent = [(name, kind) for name, kind in columns if name in OPTIONAL_COLUMNS and name not in present]
    missing = [f"CAST(NULL AS {kind}) AS `{name}`" for name, kind in absent]
    return frame.selectExpr("*", *missing) if missing else frame


def csv_columns(present: Sequence[str], columns: Sequence[tuple[str, str]]) -> list[str]:
    """SQL expressions typing a CSV's string columns as ``columns`` says.

    An ``array<string>`` column holds its items separated by ``;`` (empty: none); an absent
    optional column (``OPTIONAL_COLUMNS``) is null; an absent required column stays absent,
    so that :func:`check_schema` reports it. A value that does not cast is null (``try_cast``):
    keeps its text to name it.
    """
    expressions = []
    for name, kind in columns:
        quoted = f"`{name}`"
        if name not in present:
            if name in OPTIONAL_COLUMNS:
                expressions.append(f"CAST(NULL AS {kind}) AS {quoted}")
            continue
        if kind == "array<string>":
            expressions.append(
                f"CASE WHEN {quoted} IS NULL OR trim({quoted}) = '' THEN CAST(array() AS array<string>)"
                f" ELSE split({quoted}, ';') END AS {quoted}"
            )
        else:
            # try_cast: a typo becomes null here and is named by spark_udfs.tables.csv_checks, never an ANSI cast error
            expressions.append(f"try_cast({quoted} AS {kind}) AS {quoted}")
    return expressions
