"""Run every benchmark case (each in a fresh process) and rewrite benchmarks/RESULTS.md.

``python -m benchmarks [--only TEXT] [--repeat N] [--out PATH]``

With ``--only``, the rows that ran replace their old versions and every other row (and
the Spark table, unless it ran) stays as it was. The ``## Notes`` section, written by
hand, is always kept.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CASE_TIMEOUT_S = 300

# (section, label, spec, target seconds or None, assignors)
FOUNDATION = ("range", "roundrobin")
STICKY = ("sticky", "cooperative-sticky")
_1M = [500, 2000, 2000]
_1M_SQUARE = [1000, 1000, 2000]
_W3 = [100, 200, 500]
_SMALL = [10, 20, 20]
Case = tuple[str, str, dict[str, Any], float | None, tuple[str, ...]]
CASES: list[Case] = [
    ("range/roundrobin", "1000x1000, 2000 members, identical", {"workload": "identical", "args": _1M_SQUARE}, 1.0,
     FOUNDATION),
    ("range/roundrobin", "500x2000, 2000 members, identical", {"workload": "identical", "args": _1M}, 1.0, FOUNDATION),
    ("range/roundrobin", "10x20, 20 members (small group)", {"workload": "identical", "args": _SMALL}, None,
     FOUNDATION),
    ("sticky 1", "500x2000, 2000 members, identical, fresh", {"workload": "identical", "args": _1M}, 1.0, STICKY),
    ("sticky 1", "500x2000, 2000 members, identical, 2nd round", {"workload": "identical", "args": _1M, "round": 2},
     2.0, STICKY),
    ("sticky 1", "1000x1000, 2000 members, identical, fresh", {"workload": "identical", "args": _1M_SQUARE}, 1.0,
     STICKY),
    ("sticky 1", "1000x1000, 2000 members, identical, 2nd round",
     {"workload": "identical", "args": _1M_SQUARE, "round": 2}, 2.0, STICKY),
    ("sticky 2", "500x2000, 2000 members, last on topic-0, fresh",
     {"workload": "last_member_on_first_topic", "args": _1M}, 2.0, STICKY),
    ("sticky 2", "500x2000, 2000 members, last on topic-0, 2nd round",
     {"workload": "last_member_on_first_topic", "args": _1M, "round": 2}, 2.0, STICKY),
    ("sticky 3", "100x200, 500 members, every 4th on first half, fresh", {"workload": "halves", "args": _W3}, 2.0,
     STICKY),
    ("sticky 3", "100x200, 500 members, every 4th on first half, 2nd round",
     {"workload": "halves", "args": _W3, "round": 2}, 2.0, STICKY),
    ("sticky", "100x100, 500 members, identical, fresh", {"workload": "identical", "args": [100, 100, 500]}, 2.0,
     STICKY),
    ("sticky small", "10x20, 20 members, 2nd round (owned partitions)",
     {"workload": "identical", "args": _SMALL, "round": 2}, 0.001, STICKY),
    ("sticky 4", "100x1000, 10 -> 1000 members, mixed (scale-out)",
     {"workload": "scale_out", "args": [100, 1000, 1000]}, 2.0, STICKY),
    ("sticky racks", "500x2000, 2000 members, 3 racks, fresh", {"workload": "racked", "args": _1M}, None, STICKY),
    ("sticky racks", "500x2000, 2000 members, 3 racks, 2nd round", {"workload": "racked", "args": _1M, "round": 2},
     None, STICKY),
]  # fmt: skip
BIG = {"workload": "identical", "args": _1M_SQUARE}
KAFKA_PYTHON = [
    ("range/roundrobin", "1000x1000, 2000 members, identical", "range", BIG),
    ("range/roundrobin", "1000x1000, 2000 members, identical", "roundrobin", BIG),
    ("range/roundrobin", "100x100, 500 members, last on topic-0", "roundrobin",
     {"workload": "last_member_on_first_topic", "args": [100, 100, 500]}),
    ("sticky", "100x100, 500 members, identical, fresh", "sticky", {"workload": "identical", "args": [100, 100, 500]}),
    ("sticky 3", "100x200, 500 members, every 4th on first half, fresh", "sticky",
     {"workload": "halves", "args": _W3}),
    ("sticky 1", "500x2000, 2000 members, identical, fresh", "sticky", {"workload": "identical", "args": _1M}),
]  # fmt: skip


SPARK_HEADING = "## Spark evaluation"
NOTES_HEADING = "## Notes"
SPARK_TIMEOUT_S = 900
SPARK_TARGET_S = 180.0
SPARK_TARGET_OVERHEAD = 1.5


def _run(spec: dict[str, Any]) -> dict[str, Any]:
    return _run_module(["benchmarks.case", json.dumps(spec)], CASE_TIMEOUT_S)


def _run_module(arguments: list[str], timeout: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    try:
        proc = subprocess.run(  # noqa: S603 - our own module, fixed arguments
            [sys.executable, "-m", *arguments],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {timeout} s"}
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["exit status " + str(proc.returncode)])[-1]
        return {"error": f"fails: {last[:120]}"}
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _row(section: str, label: str, who: str, figures: dict[str, Any], target: float | None) -> str:
    if "error" in figures:
        return f"| {section} | {label} | {who} | {figures['error']} | | | |"
    verdict = "" if target is None else ("ok" if figures["median_s"] <= target else "**over**")
    target_text = "" if target is None else f"<= {target:g} s {verdict}"
    spread = f"{figures['min_s'] * 1000:.1f}-{figures['max_s'] * 1000:.1f} ms"
    median = f"{figures['median_s'] * 1000:.1f} ms"
    return f"| {section} | {label} | {who} | {median} | {spread} | {figures['peak_rss_mb']:.0f} MB | {target_text} |"


def _spark_rows(figures: dict[str, Any]) -> list[str]:
    """The Spark evaluation's table (issue targets: wall time and overhead against plain Python)."""
    header = [
        "",
        SPARK_HEADING,
        "",
        "`python -m benchmarks.spark_eval`: `evaluate_history` with all four strategies on `local[2]` against the",
        "same replay (`replay_frame`) in one plain Python process; both read the same Parquet and write Parquet, and",
        "their outputs are checked equal row for row. Evaluations = output rows (snapshots x strategies).",
        "",
    ]
    if "error" in figures:
        return [*header, f"Spark evaluation {figures['error']}"]
    wall_ok = "ok" if figures["spark_wall_s"] <= SPARK_TARGET_S else "**over**"
    overhead_ok = "ok" if figures["overhead"] <= SPARK_TARGET_OVERHEAD else "**over**"
    return [
        *header,
        "| history | plain Python | Spark evaluate | Spark wall (with startup) | overhead | evaluations/s | output |",
        "|---|---|---|---|---|---|---|",
        (
            f"| {figures['groups']} groups x {figures['snapshots']} snapshots, {figures['membership_rows']:,} member"
            f" rows, {figures['evaluations']:,} evaluations ({figures['rebalances']:,} rebalances)"
            f" | {figures['plain_s']:.1f} s | {figures['spark_evaluate_s']:.1f} s"
            f" | {figures['spark_wall_s']:.1f} s (<= {SPARK_TARGET_S:g} s {wall_ok})"
            f" | {figures['overhead']:.2f}x (<= {SPARK_TARGET_OVERHEAD:g}x {overhead_ok})"
            f" | {figures['evaluations_per_s_spark']:,.0f} Spark, {figures['evaluations_per_s_plain']:,.0f} plain"
            f" | {'equal' if figures['same_output'] else '**differs**'} |"
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--only", default="", help="run only cases whose row contains this text")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    args = parser.parse_args()
    rows: list[str] = []
    for section, label, spec, target, assignors in CASES:
        for assignor in assignors:
            if args.only not in f"{section} {label} {assignor}":
                continue
            figures = _run({**spec, "assignor": assignor, "repeat": args.repeat})
            rows.append(_row(section, label, assignor, figures, target))
            print(rows[-1], flush=True)
    for section, label, assignor, spec in KAFKA_PYTHON:
        if args.only not in f"{section} {label} {assignor} kafka-python":
            continue
        figures = _run({**spec, "assignor": assignor, "client": "kafka-python", "repeat": 1})
        rows.append(_row(section, label, f"kafka-python {assignor}", figures, None))
        print(rows[-1], flush=True)
    spark: list[str] = []
    if args.only in "spark evaluation":
        spark = _spark_rows(_run_module(["benchmarks.spark_eval"], SPARK_TIMEOUT_S))
        print("\n".join(spark), flush=True)
    header = [
        "# Benchmark results",
        "",
        (
            f"Written by `make bench` on {dt.datetime.now(tz=dt.UTC):%Y-%m-%d}: Python {platform.python_version()}, "
            f"{os.cpu_count()} cores, {platform.machine()}. Each case runs in a fresh process: one warm-up, then "
            f"{args.repeat} timed `assign` calls (kafka-python: one); peak RSS is that process's, input included. "
            "Every result is checked (each partition assigned once, to a subscriber) so a fast wrong change cannot win."
        ),
        "",
        "| section | workload | assignor | median | min-max | peak RSS | target |",
        "|---|---|---|---|---|---|---|",
    ]
    out = Path(args.out)
    existing = _Results.read(out) if out.exists() else _Results()
    kept = existing if args.only else _Results(notes=existing.notes)  # a full run replaces every table
    tables = [*header, *_merge(_case_keys(), kept.rows, rows), *(spark or kept.spark)]
    out.write_text("\n".join([*tables, *kept.notes, ""]), encoding="utf-8")
    return 0


def _case_keys() -> list[tuple[str, str, str]]:
    """Every row's key (section, workload, assignor) in the order the tables list them."""
    keys = [(section, label, assignor) for section, label, _, _, assignors in CASES for assignor in assignors]
    keys += [(section, label, f"kafka-python {assignor}") for section, label, assignor, _ in KAFKA_PYTHON]
    return keys


def _key(row: str) -> tuple[str, ...]:
    return tuple(cell.strip() for cell in row.strip("|").split("|")[:3])


def _merge(keys: list[tuple[str, str, str]], old: list[str], new: list[str]) -> list[str]:
    """The table's rows in case order: the new version of a row where it ran, else the old one."""
    by_key = {_key(row): row for row in old}
    by_key.update({_key(row): row for row in new})
    return [by_key[key] for key in keys if key in by_key]


@dataclass
class _Results:
    """The parts of an existing RESULTS.md that a partial run keeps."""

    rows: list[str] = field(default_factory=list)
    spark: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> _Results:
        lines = path.read_text(encoding="utf-8").splitlines()
        notes_at = next((i for i, line in enumerate(lines) if line == NOTES_HEADING), len(lines))
        spark_at = next((i for i, line in enumerate(lines) if line == SPARK_HEADING), notes_at)
        rows = [line for line in lines[:spark_at] if line.startswith("| ") and not line.startswith("| section ")]
        spark = ["", *lines[spark_at:notes_at]] if spark_at < notes_at else []
        while spark and not spark[-1]:
            spark.pop()
        return cls(rows, spark, ["", *lines[notes_at:]] if notes_at < len(lines) else [])


if __name__ == "__main__":
    sys.exit(main())
