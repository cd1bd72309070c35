"""A user's typos in a CSV input, found before Spark's casts can throw, and named where they are.

Spark 4's ANSI casts throw on the first value that does not parse (``'yesterday at noon'`` as a
timestamp, ``'two'`` or ``'3000000000'`` as an int), which would stop the whole job with a Java
stack trace. :func:`csv_checks` types a CSV column with ``try_cast`` instead and keeps, per
typed column, a ``_bad_<column>`` column holding the raw text of a value that did not parse (or
breaks the column's rule: a negative partition count, a weight that is not a finite number >= 0),
per text column one holding a value with bytes that are not UTF-8 (Spark reads each as U+FFFD),
and ``_source``, the file each row came from. :func:`bad_values` collects the rows that carry one
(few, on the driver) and finds their line in the file when the file is local, so each message
names the table, the file and line, the column, the value and what was expected.

The evaluation turns a bad membership row into its group's ``error`` and a bad topics row into
the ``error`` of each group subscribing to that topic; every other group is evaluated. Everything
here is Spark SQL text, so it runs the same over Spark Connect.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assignors.tables import INT32_MAX
from spark_udfs.tables.paths import local_path

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from pyspark.sql import DataFrame, Row

__all__ = ["BAD_PREFIX", "SOURCE_COLUMN", "BadValue", "bad_values", "csv_checks", "expected"]

BAD_PREFIX = "_bad_"
SOURCE_COLUMN = "_source"
MAX_BAD_ROWS = 10_000
"""At most this many bad rows are collected on the driver (the first of each group is what counts)."""

_REPLACEMENT = "\ufffd"
_TEXT = {"string", "array<string>"}
_EXPECTED = {
    "string": "UTF-8 text (the file's bytes here are not UTF-8: save it as UTF-8)",
    "array<string>": "UTF-8 text (the file's bytes here are not UTF-8: save it as UTF-8)",
    "timestamp": "a timestamp (ISO 8601, e.g. 2024-05-01T12:00:00Z)",
    "int": f"an integer in 0..{INT32_MAX}",
    "bigint": "an integer",
    "double": "a number",
    "boolean": "true or false",
}
# Rules beyond "parses as its type", by column name: (SQL condition on the typed value ``{v}`` that makes
# it bad, what is expected instead). A condition must hold for null ``v`` too when a null is bad.
_RULES: dict[str, tuple[str, str]] = {
    "partitions": ("{v} < 0", f"an integer in 0..{INT32_MAX}"),
    "partition": ("{v} < 0", f"an integer in 0..{INT32_MAX} (empty: every partition)"),
    "weight": ("{v} IS NULL OR isnan({v}) OR {v} < 0 OR {v} = double('infinity')", "a finite number >= 0"),
}


def expected(column: str, kind: str) -> str:
    """What a value of ``column`` (of Spark type ``kind``) must be, in words."""
    rule = _RULES.get(column)
    return rule[1] if rule is not None else _EXPECTED.get(kind, kind)


def csv_checks(present: Sequence[str], columns: Sequence[tuple[str, str]]) -> list[str]:
    """SQL expressions for the ``_bad_<column>`` of each column of a CSV's string columns.

    A ``_bad_`` column holds the raw text when the value does not cast (``try_cast`` is null for a
    non-empty text) or breaks the column's rule, or, for a text column, when it holds bytes that
    are not UTF-8 (Spark read them as U+FFFD); else null.
    """
    checks = []
    for name, kind in columns:
        if name not in present:
            continue
        raw = f"`{name}`"
        if kind in _TEXT:
            # Spark decodes a CSV as UTF-8 and turns each byte that is not into U+FFFD: a Latin-1 export
            # would merge 'café' and 'cafè' into one member silently
            checks.append(f"CASE WHEN instr({raw}, '{_REPLACEMENT}') > 0 THEN {raw} END AS `{BAD_PREFIX}{name}`")
            continue
        typed = f"try_cast({raw} AS {kind})"
        bad = f"({raw} IS NOT NULL AND trim({raw}) != '' AND {typed} IS NULL)"
        rule = _RULES.get(name)
        if rule is not None:
            bad = f"({bad} OR ({rule[0].format(v=typed)}))"
        checks.append(f"CASE WHEN {bad} THEN coalesce({raw}, '') END AS `{BAD_PREFIX}{name}`")
    return checks


@dataclass(frozen=True, slots=True)
class BadValue:
    """One bad value: where it is, what it is and what was expected."""

    table: str
    key: str | None  # the row's group_id (membership) or topic (topics, weights)
    column: str
    value: str
    expected: str
    file: str | None
    line: int | None

    @property
    def message(self) -> str:
        where = self.table if self.file is None else f"{self.table} table {self.file}"
        if self.line is not None:
            where += f" line {self.line}"
        return f"{where}: column {self.column!r} is {self.value!r}, expected {self.expected}"


def bad_values(
    frame: DataFrame,
    columns: Sequence[tuple[str, str]],
    table: str,
    key: str,
    *,
    collected: Sequence[Row] | None = None,
) -> list[BadValue]:
    """The bad values of a table read by :func:`spark_udfs.tables.reading.read_table` (none for Parquet), in file
    order.

    At most :data:`MAX_BAD_ROWS` rows are collected; one row gives one value, its first bad column. A small table
    the caller has ``collected`` whole (every column) is searched as it is, without another Spark query.
    """
    present = set(frame.columns)
    checked = [(name, kind) for name, kind in columns if f"{BAD_PREFIX}{name}" in present]
    if not checked:
        return []
    condition = " OR ".join(f"`{BAD_PREFIX}{name}` IS NOT NULL" for name, _ in checked)
    source = [SOURCE_COLUMN] if SOURCE_COLUMN in present else []
    picked = [f"`{key}`", *source, *(f"`{BAD_PREFIX}{name}`" for name, _ in checked)]
    if collected is None:
        rows = frame.where(condition).selectExpr(*picked).limit(MAX_BAD_ROWS).collect()
    else:
        rows = [r for r in collected if any(r[f"{BAD_PREFIX}{name}"] is not None for name, _ in checked)]
        rows = rows[:MAX_BAD_ROWS]
    found: list[BadValue] = []
    for row in rows:
        name, kind = next((n, k) for n, k in checked if row[f"{BAD_PREFIX}{n}"] is not None)
        uri = row[SOURCE_COLUMN] if source else None
        found.append(BadValue(table, row[key], name, row[f"{BAD_PREFIX}{name}"], expected(name, kind), uri, None))
    return _with_lines(found, key)


def _with_lines(found: list[BadValue], key: str) -> list[BadValue]:
    """The values with their file as a path and their line, for local files; sorted by file and line."""
    by_file: dict[str, list[BadValue]] = {}
    for value in found:
        by_file.setdefault(value.file or "", []).append(value)
    located: list[BadValue] = []
    for uri, values in by_file.items():
        path = local_path(uri) if uri else None
        shown = str(path) if path is not None else (uri or None)
        lines = _lines(str(path), key, values) if path is not None and path.is_file() else {}
        located.extend(
            BadValue(v.table, v.key, v.column, v.value, v.expected, shown, lines.get((v.key, v.column, v.value)))
            for v in values
        )
    return sorted(located, key=lambda v: (v.file or "", v.line or 0, v.key or "", v.column))


def _records(path: str) -> Iterator[tuple[int, dict[str, str]]]:
    """``(first line, record)`` of each record of a CSV file with a header."""
    # errors="replace" decodes bytes that are not UTF-8 as Spark does (U+FFFD), so their line is found too
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:  # noqa: PTH123 - plain text
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            return
        start = reader.line_num + 1
        for record in reader:
            yield start, dict(zip(header, record, strict=False))
            start = reader.line_num + 1


def _lines(path: str, key: str, values: Sequence[BadValue]) -> dict[tuple[str | None, str, str], int]:
    """The first line of each ``(key, column, raw value)`` wanted, by reading the file once."""
    wanted = {(v.key, v.column, v.value) for v in values}
    columns = {v.column for v in values}
    lines: dict[tuple[str | None, str, str], int] = {}
    try:
        for line, record in _records(path):
            for column in columns:
                raw = record.get(column)
                entry = (record.get(key) or None, column, raw if raw is not None else "")
                if entry in wanted and entry not in lines:
                    lines[entry] = line
            if len(lines) == len(wanted):
                break
    except (OSError, UnicodeDecodeError, csv.Error):
        return lines  # the line is a courtesy: Spark read the file, so the message stands without it
    return lines
