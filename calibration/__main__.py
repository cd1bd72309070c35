"""``python -m calibration``: play the scenarios on a local broker and write docs/calibration.md."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from calibration.runner import ROOT, java_classpath, play
from calibration.scenarios import SCENARIOS, SETTINGS, STRATEGIES, Scenario, Strategy


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m calibration", description=__doc__)
    parser.add_argument("--scenarios", help="comma-separated names (default: all)")
    parser.add_argument("--strategies", help="comma-separated labels' first words or full labels (default: all)")
    parser.add_argument(
        "--runs",
        type=Path,
        default=ROOT / "calibration" / "runs.json",
        help="where the raw runs go (and are read from with --report-only)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "calibration.md")
    parser.add_argument("--summary", type=Path, default=ROOT / "calibration" / "results.json")
    parser.add_argument(
        "--previous",
        type=Path,
        default=ROOT / "calibration" / "previous.json",
        help="the observed totals of the run before (written from --summary before a new run overwrites it)",
    )
    parser.add_argument("--report-only", action="store_true", help="no broker: re-render from --runs")
    parser.add_argument("--kafka-version", default="4.4.0")
    args = parser.parse_args(argv)
    if not args.report_only:
        scenarios = [s for s in SCENARIOS if not args.scenarios or s.name in args.scenarios.split(",")]
        wanted = args.strategies.split(",") if args.strategies else None
        strategies = [
            s for s in STRATEGIES if wanted is None or s.label in wanted or s.label.replace(" ", "-") in wanted
        ]
        runs = record(scenarios, strategies, args.kafka_version)
        args.runs.parent.mkdir(parents=True, exist_ok=True)
        args.runs.write_text(json.dumps(runs), encoding="utf-8")
        if args.scenarios is None and args.strategies is None:  # a full run: the fit's history keeps it
            from calibration.fit import HISTORY, compact

            HISTORY.mkdir(exist_ok=True)
            stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H-%MZ")
            (HISTORY / f"{stamp}.json").write_text(json.dumps(compact(runs), sort_keys=True) + "\n")
    from calibration.report import previous_totals, render

    if not args.report_only and args.summary.is_file():  # the run before this one: the measurement's own spread
        args.previous.write_text(json.dumps(previous_totals(args.summary), indent=1, sort_keys=True) + "\n")
    runs = json.loads(args.runs.read_text(encoding="utf-8"))
    previous = json.loads(args.previous.read_text(encoding="utf-8")) if args.previous.is_file() else None
    render(runs, out=args.out, summary=args.summary, previous=previous)
    print(f"wrote {args.out} and {args.summary}", file=sys.stderr)
    return 0


def record(scenarios: Sequence[Scenario], strategies: Sequence[Strategy], version: str) -> dict[str, Any]:
    from assignors.testing import KafkaBroker

    began = time.monotonic()
    classpath = java_classpath(version)[1:]
    runs: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="calibrate-") as work,
        KafkaBroker(classpath=classpath, config=SETTINGS.broker_config(), heap="768m") as broker,
    ):
        for scenario in scenarios:
            print(f"{scenario.name}: {scenario.description} ({time.monotonic() - began:.0f} s)", file=sys.stderr)
            played = play(
                scenario,
                strategies,
                bootstrap=broker.bootstrap_servers,
                settings=SETTINGS,
                work=Path(work),
                kafka_version=version,
            )
            runs.extend(run.to_json() for run in played)
        collected = collect(broker.bootstrap_servers, Path(work) / "history", runs)
        kafka = broker.version
    return {
        "kafka_version": kafka,
        "settings": dict(SETTINGS.__dict__),
        "broker_config": SETTINGS.broker_config(),
        "seconds": round(time.monotonic() - began, 1),
        "runs": runs,
        "collected": collected,
    }


def _epoch(when: dt.datetime) -> float:
    """Seconds since the epoch of a Parquet timestamp (naive ones are UTC, as collect writes them)."""
    return (when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)).timestamp()


def collect(bootstrap: str, out: Path, runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``assignors collect`` on the broker's own ``__consumer_offsets``, then per group: how many snapshots the
    cluster recorded, and whether the last recorded assignment is what the members held at the end."""
    command = [sys.executable, "-m", "assignors", "collect", "--bootstrap-servers", bootstrap, "--out", str(out)]
    command += ["--groups", "^calib-"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)  # noqa: S603
    except subprocess.TimeoutExpired:
        return {"error": "assignors collect did not finish within 300 s"}
    if done.returncode != 0:
        return {"error": (done.stdout + done.stderr).strip().splitlines()[-1:]}
    import pyarrow.parquet as pq  # the collect extra's

    table = pq.read_table(out / "actual").to_pylist()
    found: dict[str, Any] = {}
    for run in runs:
        final = run["steps"][-1]
        ended = final.get("end_wall", float("inf"))  # the members' closing rebalances come after it
        rows = [r for r in table if r["group_id"] == run["group_id"] and _epoch(r["snapshot_ts"]) <= ended]
        stamps = sorted({row["snapshot_ts"] for row in rows})
        last = {row["member_id"]: sorted(row["assigned"] or []) for row in rows if row["snapshot_ts"] == stamps[-1]}
        ids = {name: m["member_id"] for name, m in final["members"].items()}
        held = {ids[name]: sorted(f"{t}-{p}" for t, p in parts) for name, parts in final["holdings"].items()}
        found[run["group_id"]] = {"snapshots": len(stamps), "final_agrees": bool(rows) and last == held}
    return found


if __name__ == "__main__":
    raise SystemExit(main())
