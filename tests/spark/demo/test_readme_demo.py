"""The README's ``make demo`` is ``assignors demo --out demo-output``: here the same command on a small history.

The full demo (300 groups x 48 snapshots) takes minutes; this runs the command line's own ``demo`` on the
session the Spark tests share, and checks what the README promises it writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from assignors.cli import main

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.xdist_group("spark")  # one worker holds the JVMs (make unit: --dist loadgroup)


@pytest.mark.usefixtures("spark")
def test_assignors_demo_writes_the_evaluation_and_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo-output"
    assert main(["demo", "--out", str(out), "--groups", "4", "--snapshots", "6"]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}/evaluation and {out}/report.html" in printed
    assert list((out / "evaluation").glob("*.parquet"))
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "cooperative-sticky" in html
    assert "<dt>weighted-sticky (COOPERATIVE)</dt><dd>Adopting weighted-sticky takes " in html  # the sample has weights
    assert "<script" in html  # the charts, plotly.js inlined
