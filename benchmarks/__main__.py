"""Run every benchmark case (each in a fresh process) and rewrite benchmarks/RESULTS.md.

``python -m benchmarks [--only TEXT] [--repeat N] [--out PATH]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

CASE_TIMEOUT_S = 300

# (section, label, spec, target seconds or None)
CASES: list[tuple[str, str, dict[str, Any], float | None]] = [
    (
        "range/roundrobin",
        "1000x1000, 2000 members, identical",
        {"workload": "identical", "args": [1000, 1000, 2000]},
        1.0,
    ),
    (
        "range/roundrobin",
        "500x2000, 2000 members, identical",
        {"workload": "identical", "args": [500, 2000, 2000]},
        1.0,
    ),
    ("range/roundrobin", "10x20, 20 members (small group)", {"workload": "identical", "args": [10, 20, 20]}, None),
]
FOUNDATION = ("range", "roundrobin")
BIG = {"workload": "identical", "args": [1000, 1000, 2000]}
KAFKA_PYTHON = [
    ("range/roundrobin", "1000x1000, 2000 members, identical", "range", BIG),
    ("range/roundrobin", "1000x1000, 2000 members, identical", "roundrobin", BIG),
    ("range/roundrobin", "100x100, 500 members, last on topic-0", "roundrobin",
     {"workload": "last_member_on_first_topic", "args": [100, 100, 500]}),
]  # fmt: skip


def _run(spec: dict[str, Any]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    try:
        proc = subprocess.run(  # noqa: S603 - our own module, fixed arguments
            [sys.executable, "-m", "benchmarks.case", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=CASE_TIMEOUT_S,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {CASE_TIMEOUT_S} s"}
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


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--only", default="", help="run only cases whose row contains this text")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    args = parser.parse_args()
    rows: list[str] = []
    for section, label, spec, target in CASES:
        for assignor in FOUNDATION:
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
    Path(args.out).write_text("\n".join([*header, *rows, ""]), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
