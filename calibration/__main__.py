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

from calibration.measure import MAX_STEADY_STALLS, STALL_S, stall_share
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
    parser.add_argument(
        "--at-once",
        type=int,
        default=AT_ONCE,
        help=f"how many strategies' groups play a scenario at the same time (default {AT_ONCE})",
    )
    args = parser.parse_args(argv)
    if args.at_once < 1:
        parser.error(f"--at-once is {args.at_once}; it must be at least 1")
    if not args.report_only:
        scenarios = [s for s in SCENARIOS if not args.scenarios or s.name in args.scenarios.split(",")]
        wanted = args.strategies.split(",") if args.strategies else None
        strategies = [
            s for s in STRATEGIES if wanted is None or s.label in wanted or s.label.replace(" ", "-") in wanted
        ]
        runs = record(scenarios, strategies, args.kafka_version, at_once=args.at_once)
        args.runs.parent.mkdir(parents=True, exist_ok=True)
        args.runs.write_text(json.dumps(runs), encoding="utf-8")
        stalled = runs["steady_stalls"]
        if stalled > MAX_STEADY_STALLS:
            print(
                f"the machine did not keep up: the settled groups stalled {stalled:.1%} of their partition-seconds "
                f"(fetch gaps over {STALL_S} s while nothing happened; at most {MAX_STEADY_STALLS:.0%} is a "
                f"measurement), so their pauses are the load's too. Nothing written but {args.runs}; try again on a "
                "quieter machine or with a smaller --at-once",
                file=sys.stderr,
            )
            return 1
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


AT_ONCE = 3
"""Strategies whose groups play a scenario at the same time. On a slow day (2026-11-29; a sticky benchmark row
2.5-3x its time of the day before) all eight at once (up to 72 consumers, 6 JVMs and a broker on 2 cores) stalled
the formed groups 9.6% and 5.9% of their partition-seconds and about doubled every pause; four at once 0.18%;
three at once 0.09% and 0.00% (``steady_stalls``)."""


def record(
    scenarios: Sequence[Scenario], strategies: Sequence[Strategy], version: str, *, at_once: int = AT_ONCE
) -> dict[str, Any]:
    """Play every scenario with every strategy on one broker, ``at_once`` strategies' groups at a time."""
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
            for first in range(0, len(strategies), at_once):
                played = play(
                    scenario,
                    strategies[first : first + at_once],
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
        "at_once": at_once,
        "steady_stalls": stall_share(runs, interval=SETTINGS.produce_interval_s),
        "runs": runs,
        "collected": collected,
    }


def _epoch(when: dt.datetime) -> float:
    """Seconds since the epoch of a Parquet timestamp (naive ones are UTC, as collect writes them)."""
    return (when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)).timestamp()


def collect(bootstrap: str, out: Path, runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``assignors collect`` on the broker's own ``__consumer_offsets``, then per group: how many snapshots the
    cluster recorded, whether the last recorded assignment is what the members held at the end, and the seconds of
    each KIP-848 hand-over the records show (its ``handovers`` table), by kind."""
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
    membership = pq.read_table(out / "membership").to_pylist()
    topics = pq.read_table(out / "topics").to_pylist()
    handed = pq.read_table(out / "handovers").to_pylist() if (out / "handovers").is_dir() else []
    found: dict[str, Any] = {}
    for run in runs:
        final = run["steps"][-1]
        ended = final.get("end_wall", float("inf"))  # the members' closing rebalances come after it
        rows = [r for r in table if r["group_id"] == run["group_id"] and _epoch(r["snapshot_ts"]) <= ended]
        members = [r for r in membership if r["group_id"] == run["group_id"] and _epoch(r["snapshot_ts"]) <= ended]
        named = {topic for r in members for topic in r["topics"] or ()}
        stamps = sorted({row["snapshot_ts"] for row in rows})
        last = {row["member_id"]: sorted(row["assigned"] or []) for row in rows if row["snapshot_ts"] == stamps[-1]}
        ids = {name: m["member_id"] for name, m in final["members"].items()}
        held = {ids[name]: sorted(f"{t}-{p}" for t, p in parts) for name, parts in final["holdings"].items()}
        handovers: dict[str, list[float]] = {}
        for row in handed:
            if row["group_id"] == run["group_id"] and _epoch(row["assigned_ts"]) <= ended:
                handovers.setdefault(str(row["kind"]), []).append(float(row["seconds"]))
        found[run["group_id"]] = {
            "snapshots": len(stamps),
            "final_agrees": bool(rows) and last == held,
            "handovers": handovers,
            # the group's own records as `assignors evaluate --actual` reads them (times as seconds since the epoch)
            "records": {
                "membership": [
                    [_epoch(r["snapshot_ts"]), r["member_id"], list(r["topics"] or ()), r["group_instance_id"]]
                    for r in members
                ],
                "actual": [
                    [
                        _epoch(r["snapshot_ts"]),
                        r["generation"],
                        r["protocol"],
                        r["member_id"],
                        r["group_instance_id"],
                        list(r["assigned"] or ()),
                    ]
                    for r in rows
                ],
                "topics": [
                    [r["topic"], r["partitions"], None if r["valid_from"] is None else _epoch(r["valid_from"])]
                    for r in topics
                    if r["topic"] in named
                ],
            },
        }
    return found


if __name__ == "__main__":
    raise SystemExit(main())
