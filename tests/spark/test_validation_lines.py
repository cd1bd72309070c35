"""The file line of a bad CSV value: found by reading the file once, whatever the quoting, blank lines or
multi-line fields (pure Python: no Spark session)."""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from spark_udfs.validation import BadValue, _lines, csv_checks, expected

TEXT = st.text(alphabet=st.sampled_from('ab,"\n x'), max_size=6)


@given(
    rows=st.lists(st.tuples(st.sampled_from(["g1", "g2", "g3"]), TEXT), min_size=1, max_size=12),
    blanks=st.sets(st.integers(0, 12), max_size=4),
    pick=st.integers(0, 11),
)
def test_the_line_is_the_first_record_with_that_key_and_value(
    rows: list[tuple[str, str]], blanks: set[int], pick: int
) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["group_id", "snapshot_ts"])
    first_lines: dict[tuple[str, str], int] = {}
    for index, (group, value) in enumerate(rows):
        if index in blanks:
            buffer.write("\n")
        line = buffer.getvalue().count("\n") + 1
        first_lines.setdefault((group, value), line)
        writer.writerow([group, value])
    group, value = rows[pick % len(rows)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "membership.csv"
        path.write_text(buffer.getvalue(), encoding="utf-8")
        wanted = BadValue("membership", group, "snapshot_ts", value, "a timestamp", str(path), None)
        found = _lines(str(path), "group_id", [wanted])
    assert found == {(group, "snapshot_ts", value): first_lines[group, value]}


def test_the_checks_cover_every_typed_column_and_only_those_present() -> None:
    columns = (("topic", "string"), ("partitions", "int"), ("valid_from", "timestamp"), ("items", "array<string>"))
    checks = csv_checks(["topic", "partitions"], columns)
    assert checks == [
        (
            "CASE WHEN ((`partitions` IS NOT NULL AND trim(`partitions`) != '' "
            "AND try_cast(`partitions` AS int) IS NULL) OR (try_cast(`partitions` AS int) < 0)) "
            "THEN coalesce(`partitions`, '') END AS `_bad_partitions`"
        )
    ]
    assert expected("valid_from", "timestamp") == "a timestamp (ISO 8601, e.g. 2024-05-01T12:00:00Z)"
    assert expected("weight", "double") == "a finite number >= 0"
