"""docs/evaluation.md's tables are assignors.tables' own: the inputs' columns and the output's, in order."""

from __future__ import annotations

import re
from pathlib import Path

from assignors.tables import MEMBERSHIP_COLUMNS, OUTPUT_COLUMNS, TOPICS_COLUMNS, WEIGHTS_COLUMNS, column_names

DOC = (Path(__file__).resolve().parents[2] / "docs" / "evaluation.md").read_text(encoding="utf-8")


def _rows(header: str) -> list[list[str]]:
    """The cells of the Markdown table under the row ``header``."""
    lines = DOC[DOC.index(header) :].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def test_the_inputs_table_lists_each_tables_columns() -> None:
    """Each input's row is ``name type, ...`` exactly as assignors.tables holds it."""
    documented = {row[0]: row[1].strip("`") for row in _rows("| table | columns | notes |")}
    expected = {"membership": MEMBERSHIP_COLUMNS, "topics": TOPICS_COLUMNS, "weights (optional)": WEIGHTS_COLUMNS}
    assert documented == {name: ", ".join(f"{n} {kind}" for n, kind in columns) for name, columns in expected.items()}


def test_the_output_table_defines_every_column_in_order() -> None:
    """The output's definitions name every column of OUTPUT_COLUMNS once, in its order."""
    names = [name for row in _rows("| column | type | definition |") for name in re.findall(r"`([a-z_]+)`", row[0])]
    assert names == list(column_names(OUTPUT_COLUMNS))
