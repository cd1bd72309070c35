"""The evaluation's tables: column lists, their Spark DDL, the schema check and the CSV typing.

Every table the evaluation reads or writes is a tuple of ``(name, Spark SQL type)``:
``MEMBERSHIP_COLUMNS`` and ``TOPICS_COLUMNS`` (inputs), ``WEIGHTS_COLUMNS`` (optional input),
``OUTPUT_COLUMNS`` (one row per group, snapshot and strategy) and ``DETAIL_COLUMNS`` (one row
per member). docs/evaluation.md defines each output column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from assignors import AssignorError
from spark_udfs.costs import WEIGHTS_COLUMNS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "ASSIGNMENT_TYPE",
    "DETAIL_COLUMNS",
    "MEMBERSHIP_COLUMNS",
    "OPTIONAL_COLUMNS",
    "OPTIONAL_CSV_COLUMNS",
    "OUTPUT_COLUMNS",
    "TOPICS_COLUMNS",
    "WEIGHTS_COLUMNS",
    "SchemaError",
    "check_schema",
    "csv_columns",
    "ddl",
    "with_optional_columns",
]

MEMBERSHIP_COLUMNS: tuple[tuple[str, str], ...] = (
    ("group_id", "string"),
    ("snapshot_ts", "timestamp"),
    ("member_id", "string"),
    ("topics", "array<string>"),
    ("group_instance_id", "string"),
    ("rack_id", "string"),
)
TOPICS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("topic", "string"),
    ("partitions", "int"),
    ("valid_from", "timestamp"),
)
OUTPUT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("group_id", "string"),
    ("snapshot_ts", "timestamp"),
    ("strategy", "string"),
    ("protocol", "string"),
    ("generation", "int"),
    ("rebalanced", "boolean"),
    ("members", "int"),
    ("partitions", "int"),
    ("assigned", "int"),
    ("min_load", "int"),
    ("max_load", "int"),
    ("load_spread", "int"),
    ("load_stddev", "double"),
    ("moved", "int"),
    ("orphaned", "int"),
    ("revoked", "int"),
    ("rounds", "int"),
    ("valid", "boolean"),
    ("error", "string"),
    ("assign_ms", "double"),
    ("topic_spread", "int"),
    ("topic_spread_sum", "int"),
    ("weighted_max_load", "double"),
    ("weighted_min_load", "double"),
    ("weighted_spread", "double"),
    ("weighted_max_mean_ratio", "double"),
    ("pause_partition_seconds", "double"),
)
DETAIL_COLUMNS: tuple[tuple[str, str], ...] = (
    ("group_id", "string"),
    ("snapshot_ts", "timestamp"),
    ("strategy", "string"),
    ("member", "string"),
    ("partitions", "array<string>"),
)
# One assignment in a column: the detail column of the output, and the UDFs' argument and result.
ASSIGNMENT_TYPE = "array<struct<member: string, partitions: array<string>>>"
# Columns an input table may leave out, CSV or Parquet or a DataFrame (they are null then); every other
# column must be there.
OPTIONAL_COLUMNS = frozenset({"group_instance_id", "rack_id", "valid_from"})
OPTIONAL_CSV_COLUMNS = OPTIONAL_COLUMNS
"""The name :data:`OPTIONAL_COLUMNS` had when only a CSV could leave them out."""

# Narrower types Spark reads for a column, which it widens losslessly.
_ACCEPTED = {"int": {"int", "bigint"}, "double": {"double", "float", "int", "bigint"}}


class SchemaError(AssignorError, ValueError):
    """An input table lacks a column or has one of the wrong type."""


def ddl(columns: Sequence[tuple[str, str]]) -> str:
    """A column list as a Spark DDL schema string: ``"name type, ..."``."""
    return ", ".join(f"{name} {kind}" for name, kind in columns)


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
    :func:`spark_udfs.validation.csv_checks` keeps its text to name it.
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
            # try_cast: a typo becomes null here and is named by spark_udfs.validation, never an ANSI cast error
            expressions.append(f"try_cast({quoted} AS {kind}) AS {quoted}")
    return expressions
