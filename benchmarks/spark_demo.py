"""``assignors demo`` on a small history, timed as a user runs it: what a user iterating on ``--rank-by`` waits for.

``python -m benchmarks.spark_demo [--groups N] [--runs K]`` (default 150 groups, the demo's 48 snapshots each, 3 runs)
starts ``python -m assignors demo --groups N --out DIR`` K times, one after the other, each a fresh process, and takes
each one's wall time from its start to its exit: Python's and Spark's start-up, the sample history generated and
written, every strategy replayed, the evaluation written and the report rendered. It prints the figures as JSON
(``make bench`` renders them into RESULTS.md); a run that fails is an error, not a time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from spark_udfs.demo.sample import DEFAULT_SNAPSHOTS  # noqa: TID251 - the demo's own history size

__all__ = ["DEMO_GROUPS", "DEMO_TARGET_S", "main", "time_demo"]

DEMO_GROUPS = 150
"""The small history of issue 36: 150 groups of the demo's sample (``spark_udfs.demo.sample``)."""
DEMO_TARGET_S = 20.0
"""The wall time a 150-group demo should take here, start-up included (issue 36)."""
RUN_TIMEOUT_S = 300


def time_demo(groups: int, runs: int) -> dict[str, Any]:
    """The wall seconds of ``runs`` fresh ``assignors demo --groups groups`` processes, and their median."""
    seconds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="assignors-demo-bench-") as tmp:
        for number in range(runs):
            out = Path(tmp) / f"out-{number}"
            command = [sys.executable, "-m", "assignors", "demo", "--groups", str(groups), "--out", str(out)]
            started = time.perf_counter()
            proc = subprocess.run(  # noqa: S603 - our own command, fixed arguments
                command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False
            )
            elapsed = time.perf_counter() - started
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
                return {"groups": groups, "error": f"fails: {last[:120]}"}
            if not (out / "report.html").is_file():
                return {"groups": groups, "error": "wrote no report.html"}
            seconds.append(round(elapsed, 2))
    return {
        "groups": groups,
        "snapshots": DEFAULT_SNAPSHOTS,
        "runs_s": seconds,
        "median_s": statistics.median(seconds),
        "target_s": DEMO_TARGET_S,
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.spark_demo")
    parser.add_argument("--groups", type=int, default=DEMO_GROUPS)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(time_demo(args.groups, args.runs)))


if __name__ == "__main__":
    main()
