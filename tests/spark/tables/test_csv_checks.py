"""The file line of a bad CSV value: found by reading the file once, whatever the quoting, blank lines or
multi-line fields (pure Python: no Spark session)."""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from spark_udfs.tables.csv_checks import BadValue, _lines, csv_checks, expected

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


def test_the_checks_cover_every_column_present_and_only_those() -> None:
    columns = (("topic", "string"), ("partitions", "int"), ("valid_from", "timestamp"), ("items", "array<string>"))
    checks = csv_checks(["topic", "partitions"], columns)
    assert checks == [
        "CASE WHEN instr(`topic`, '\ufffd') > 0 THEN `topic` END AS `_bad_topic`",
        (
            "CASE WHEN ((`partitions` IS NOT NULL AND trim(`partitions`) != '' "
            "AND try_cast(`partitions` AS int) IS NULL) OR (try_cast(`partitions` AS int) < 0)) "
            "THEN coalesce(`partitions`, '') END AS `_bad_partitions`"
        ),
    ]
    assert expected("valid_from", "timestamp") == "a timestamp (ISO 8601, e.g. 2024-05-01T12:00:00Z)"
    assert expected("weight", "double") == "a finite number >= 0"
    assert expected("member_id", "string") == "UTF-8 text (the file's bytes here are not UTF-8: save it as UTF-8)"


@given(
    names=st.lists(st.text(alphabet="aé\u00e8z", min_size=1, max_size=4), min_size=1, max_size=8),
    pick=st.integers(0, 7),
)
def test_the_line_of_a_value_that_is_not_utf8_is_found_as_spark_reads_it(names: list[str], pick: int) -> None:
    """A Latin-1 file: the value is what Spark's UTF-8 decoding makes of it (U+FFFD per bad byte)."""
    text = "group_id,member_id\n" + "".join(f"g,{name}\n" for name in names)
    name = names[pick % len(names)]
    seen = name.encode("latin-1").decode("utf-8", errors="replace")
    first = 2 + next(i for i, n in enumerate(names) if n.encode("latin-1").decode("utf-8", errors="replace") == seen)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "membership.csv"
        path.write_bytes(text.encode("latin-1"))
        wanted = BadValue("membership", "g", "member_id", seen, expected("member_id", "string"), str(path), None)
        assert _lines(str(path), "group_id", [wanted]) == {("g", "member_id", seen): first}
