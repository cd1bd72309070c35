"""The benchmark runner's bookkeeping: RESULTS.md is rendered from the JSON runs alone, and --only selects."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.__main__ import RESULTS_DIR, RESULTS_MD, main, render, selected


def test_results_md_is_exactly_the_rendering_of_the_recorded_runs() -> None:
    """One source of truth: the committed RESULTS.md is what `python -m benchmarks --render` writes."""
    assert RESULTS_MD.read_text(encoding="utf-8") == render(RESULTS_DIR)


def test_only_selects_by_every_word() -> None:
    assert selected("", "spark evaluation")
    assert selected("spark", "spark evaluation")
    assert not selected("sticky", "spark evaluation")
    assert selected(
        "Sticky RACKS cooperative", "sticky racks 500x2000, 2000 members, 3 racks, fresh cooperative-sticky"
    )
    assert not selected("sticky racks range", "sticky racks 500x2000, 2000 members, 3 racks, fresh sticky")


def test_each_row_is_its_cases_latest_run(tmp_path: Path) -> None:
    def run(date: str, median: float) -> dict[str, object]:
        case = {"section": "range/roundrobin", "workload": "10x20, 20 members (small group)", "assignor": "range"}
        figures = {"target_s": None, "median_s": median, "min_s": median, "max_s": median, "peak_rss_mb": 16.0}
        return {"date": date, "python": "3.11", "cores": 2, "machine": "x86_64", "cases": [case | figures]}

    (tmp_path / "2026-01-01T00-00-00Z.json").write_text(json.dumps(run("2026-01-01", 0.002)), encoding="utf-8")
    (tmp_path / "2026-02-01T00-00-00Z.json").write_text(json.dumps(run("2026-02-01", 0.001)), encoding="utf-8")
    text = render(tmp_path)
    assert "| 1.0 ms | 1.0-1.0 ms | 16 MB |  | 2026-02-01 |" in text
    assert "2.0 ms" not in text
    out = tmp_path / "RESULTS.md"
    assert main(["--render", "--results", str(tmp_path), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == text
