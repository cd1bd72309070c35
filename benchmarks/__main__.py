"""Run the benchmark cases (each in a fresh process), record them as data, render RESULTS.md.

``python -m benchmarks [--only TEXT] [--skip TEXT]... [--repeat N] [--no-java] [--render]``

Each run writes its raw figures as one JSON file under ``benchmarks/results/`` (named by
its UTC start time). ``RESULTS.md`` is rendered from those files alone: for every case, its
latest recorded run, with that run's date. ``--only`` runs the cases whose row contains
every word of TEXT (case-insensitive; ``--only spark`` runs only the Spark evaluation and the timed ``assignors
demo``, ``--only demo`` the latter), ``--skip``
leaves out those that contain every word of its TEXT (``--skip kafka-python --skip spark``);
``--render`` runs nothing and renders again.

Beside each of our rows, in the same run, Kafka's own Java assignor times the same group
(:mod:`benchmarks.java`, one warm JVM per case); ``--no-java``, or a machine without ``java``
or without ``make jvm``'s build, runs our rows only.
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

from assignors import (
    COOPERATIVE_STICKY_ASSIGNOR_NAME,
    RANGE_ASSIGNOR_NAME,
    ROUNDROBIN_ASSIGNOR_NAME,
    STICKY_ASSIGNOR_NAME,
    WEIGHTED_STICKY_ASSIGNOR_NAME,
)
from assignors.consumer_group import UNIFORM_ASSIGNOR_NAME
from benchmarks import java

CASE_TIMEOUT_S = 300
JAVA_CASE_TIMEOUT_S = 900

# (section, label, spec, target seconds or None, assignors)
FOUNDATION = (RANGE_ASSIGNOR_NAME, ROUNDROBIN_ASSIGNOR_NAME)
STICKY = (STICKY_ASSIGNOR_NAME, COOPERATIVE_STICKY_ASSIGNOR_NAME)
UNIFORM = (UNIFORM_ASSIGNOR_NAME,)
WEIGHTED = (WEIGHTED_STICKY_ASSIGNOR_NAME,)
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
    ("sticky 1", "500x2000, 2000 members, identical, fresh", {"workload": "identical", "args": _1M}, 0.2, STICKY),
    ("sticky 1", "500x2000, 2000 members, identical, 2nd round", {"workload": "identical", "args": _1M, "round": 2},
     0.65, STICKY),
    ("sticky 1", "1000x1000, 2000 members, identical, fresh", {"workload": "identical", "args": _1M_SQUARE}, 0.2,
     STICKY),
    ("sticky 1", "1000x1000, 2000 members, identical, 2nd round",
     {"workload": "identical", "args": _1M_SQUARE, "round": 2}, 0.65, STICKY),
    ("sticky 2", "500x2000, 2000 members, last on topic-0, fresh",
     {"workload": "last_member_on_first_topic", "args": _1M}, 0.7, STICKY),
    ("sticky 2", "500x2000, 2000 members, last on topic-0, 2nd round",
     {"workload": "last_member_on_first_topic", "args": _1M, "round": 2}, 0.7, STICKY),
    ("sticky 3", "100x200, 500 members, every 4th on first half, fresh", {"workload": "halves", "args": _W3}, 2.0,
     STICKY),
    ("sticky 3", "100x200, 500 members, every 4th on first half, 2nd round",
     {"workload": "halves", "args": _W3, "round": 2}, 2.0, STICKY),
    ("sticky", "100x100, 500 members, identical, fresh", {"workload": "identical", "args": [100, 100, 500]}, 2.0,
     STICKY),
    ("sticky small", "10x20, 20 members, 2nd round (owned partitions)",
     {"workload": "identical", "args": _SMALL, "round": 2, "repeat": 201}, 0.0001, STICKY),
    ("sticky 4", "100x1000, 10 -> 1000 members, mixed (scale-out)",
     {"workload": "scale_out", "args": [100, 1000, 1000]}, 2.0, STICKY),
    ("sticky racks", "500x2000, 2000 members, 3 racks, fresh", {"workload": "racked", "args": _1M}, 2.0, STICKY),
    ("sticky racks", "500x2000, 2000 members, 3 racks, 2nd round", {"workload": "racked", "args": _1M, "round": 2},
     2.0, STICKY),
    ("uniform (KIP-848)", "1000x1000, 2000 members, identical, fresh", {"workload": "identical", "args": _1M_SQUARE},
     1.0, UNIFORM),
    ("uniform (KIP-848)", "1000x1000, 2000 members, identical, 2nd round",
     {"workload": "identical", "args": _1M_SQUARE, "round": 2}, 1.0, UNIFORM),
    ("uniform (KIP-848)", "1000x1000, 2000 members, every 4th on first half, fresh",
     {"workload": "halves", "args": _1M_SQUARE}, 1.0, UNIFORM),
    ("uniform (KIP-848)", "1000x1000, 2000 members, every 4th on first half, 2nd round",
     {"workload": "halves", "args": _1M_SQUARE, "round": 2}, 1.0, UNIFORM),
    ("uniform (KIP-848)", "1000x50, 1000 members, 100 topics each (KIP-1263), fresh",
     {"workload": "overlapping", "args": [1000, 50, 1000, 100]}, None, UNIFORM),
    ("uniform (KIP-848)", "1000x50, 1000 members, 100 topics each (KIP-1263), 2nd round",
     {"workload": "overlapping", "args": [1000, 50, 1000, 100], "round": 2}, None, UNIFORM),
    ("weighted-sticky", "1000x1000, 2000 members, skewed weights, fresh",
     {"workload": "identical", "args": _1M_SQUARE, "weights": "skewed"}, 2.0, WEIGHTED),
    ("weighted-sticky", "1000x1000, 2000 members, skewed weights, 2nd round",
     {"workload": "identical", "args": _1M_SQUARE, "weights": "skewed", "round": 2}, 2.0, WEIGHTED),
    ("weighted-sticky", "10x20, 20 members, skewed weights, 2nd round (owned partitions)",
     {"workload": "identical", "args": _SMALL, "weights": "skewed", "round": 2, "repeat": 201}, 0.0002, WEIGHTED),
]  # fmt: skip
BIG = {"workload": "identical", "args": _1M_SQUARE}
KAFKA_PYTHON = [
    ("range/roundrobin", "1000x1000, 2000 members, identical", RANGE_ASSIGNOR_NAME, BIG),
    ("range/roundrobin", "1000x1000, 2000 members, identical", ROUNDROBIN_ASSIGNOR_NAME, BIG),
    ("range/roundrobin", "100x100, 500 members, last on topic-0", ROUNDROBIN_ASSIGNOR_NAME,
     {"workload": "last_member_on_first_topic", "args": [100, 100, 500]}),
    ("sticky", "100x100, 500 members, identical, fresh", STICKY_ASSIGNOR_NAME,
     {"workload": "identical", "args": [100, 100, 500]}),
    ("sticky 3", "100x200, 500 members, every 4th on first half, fresh", STICKY_ASSIGNOR_NAME,
     {"workload": "halves", "args": _W3}),
    ("sticky 1", "500x2000, 2000 members, identical, fresh", STICKY_ASSIGNOR_NAME,
     {"workload": "identical", "args": _1M}),
]  # fmt: skip


SPARK_HEADING = "## Spark evaluation"
SLOWER_HEADING = "## Where we are slower than Kafka's Java"
NO_REASON = "**no reason recorded** (benchmarks/__main__.py SLOWER_BECAUSE)"
# Why a row is slower than Java: by (section, workload, assignor), else (section, "", assignor), else
# ("", "", assignor).
_SMALL_GROUP = (
    "a group of 200 partitions: the whole call is a fixed cost of about 0.08 ms in CPython (reading 20 subscriptions, "
    "sorting the members, one TopicPartition and one dict step per partition, 20 Assignments: a few thousand "
    "interpreted bytecodes) against Java's JIT-compiled code; no algorithm is left to beat it with at this size"
)
_UNIFORM_INTERPRETED = (
    "the heterogeneous builder reads every previous partition on both sides (Kafka's maybeRevokePartitions writes "
    "each previous owner into an int array, computeUnassignedPartitions scans them all), so a 2nd round where one "
    "member of 2,000 restarted still reads 1M previous partitions: one C-level lookup and store per partition here "
    "(previous_targets, 170-200 ms of our 220-260 ms on 2026-11-28, about 0.18 us a partition), the JIT's array "
    "store there; everything else of the call (subscribers per subscription group, one balance check per group of "
    "topics sharing their subscribers, the fill) takes some 30 ms: 0.85x-1.00x of Java in the runs of that day"
)
_UNIFORM_PASSES = (
    "Kafka's balancing passes on KIP-1263's shape are the cost left: fresh, 10,567 visits of the 1,000 topics in 11 "
    "passes; 7,211 of them find the topic balanced (from the second pass on told by bit masks of the members' loads, "
    "about 0.2 us each) and the other 3,356 run Kafka's MemberAssignmentBalancer: sort the topic's 100 subscribers by "
    "load, walk the most loaded range past some 17 subscribers that hold nothing of the topic (50 partitions among "
    "100 subscribers), 7,635 moves in all: about 13 us a visit in CPython (some 45 ms of our 80 ms; the fill 7 ms, "
    "the moves applied 8 ms, the subscriber lists 6 ms, the masks 5 ms), against Java's whole call of 25-28 ms. The "
    "target must be Kafka's to the partition "
    "(the order of the visits, of the members in each range and of the partitions given decide it), so no visit or "
    "step can be skipped (per-phase timers and cProfile, 2026-11-28)"
)
_UNIFORM_READS = (
    "a 2nd round on KIP-1263's shape is C-level work per item that the JIT does in a few ns: 50,000 previous "
    "partitions read into per-topic owner arrays, each member's 100 topics as a set to check it still subscribes to "
    "what it holds (previous_targets, 11-15 ms), the subscriber lists of 1,000 distinct subscriptions (100,000 "
    "appends, about 6 ms), one balancing pass over 1,000 topics (one load check each, 56 unbalanced topics walked end "
    "to end: about 5 ms); Java takes 16-22 ms for all of it (per-phase timers, 2026-11-28)"
)
SLOWER_BECAUSE: dict[tuple[str, str, str], str] = {
    ("uniform (KIP-848)", "", UNIFORM_ASSIGNOR_NAME): _UNIFORM_INTERPRETED,
    ("uniform (KIP-848)", "1000x50, 1000 members, 100 topics each (KIP-1263), fresh", UNIFORM_ASSIGNOR_NAME): (
        _UNIFORM_PASSES
    ),
    ("uniform (KIP-848)", "1000x50, 1000 members, 100 topics each (KIP-1263), 2nd round", UNIFORM_ASSIGNOR_NAME): (
        _UNIFORM_READS
    ),
    ("range/roundrobin", "10x20, 20 members (small group)", RANGE_ASSIGNOR_NAME): _SMALL_GROUP,
    ("range/roundrobin", "10x20, 20 members (small group)", ROUNDROBIN_ASSIGNOR_NAME): _SMALL_GROUP,
    ("sticky small", "", STICKY_ASSIGNOR_NAME): _SMALL_GROUP
    + " (a 2nd round: each owned partition checked, then the rest dealt; 0.079-0.081 ms a call in 8 interleaved"
    " processes on 2026-11-28, against Java's 0.05-0.08 ms in the bench runs of that day)",
    ("sticky small", "", COOPERATIVE_STICKY_ASSIGNOR_NAME): _SMALL_GROUP
    + " (a 2nd round: each owned partition checked, then the rest dealt; 0.079-0.081 ms a call in 8 interleaved"
    " processes on 2026-11-28, against Java's 0.05-0.08 ms in the bench runs of that day)",
}


def why_slower(record: dict[str, Any]) -> str:
    """The recorded reason a row is slower than Java, or NO_REASON."""
    section, label, who = record["section"], record["workload"], record["assignor"]
    for key in ((section, label, who), (section, "", who), ("", "", who)):
        if key in SLOWER_BECAUSE:
            return SLOWER_BECAUSE[key]
    return NO_REASON


SPARK_TIMEOUT_S = 900
SPARK_TARGET_S = 180.0
SPARK_TARGET_OVERHEAD = 1.5
SPARK_BASELINE = ("2026-11-26", 4050.0, 2624.0)
"""Issue 36's baseline of the Spark row: its date, Spark's and plain Python's evaluations/s (in
results/2026-11-26T17-04-44Z.json); the target is :data:`SPARK_TARGET_SPEEDUP` times Spark's."""
SPARK_TARGET_SPEEDUP = 1.5


def _run(spec: dict[str, Any]) -> dict[str, Any]:
    return _run_module(["benchmarks.case", json.dumps(spec)], CASE_TIMEOUT_S)


def _run_java(spec: dict[str, Any]) -> dict[str, Any]:
    return _run_module(["benchmarks.java", json.dumps(spec)], JAVA_CASE_TIMEOUT_S)


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


RESULTS_DIR = Path(__file__).with_name("results")
RESULTS_MD = Path(__file__).with_name("RESULTS.md")
SPARK_LABEL = "spark evaluation"
DEMO_LABEL = "spark demo"
"""``--only demo`` (or ``--only spark``) runs the timed ``assignors demo`` (:mod:`benchmarks.spark_demo`)."""


def selected(only: str, text: str) -> bool:
    """Whether a case described by ``text`` runs under ``--only only``: every word of it appears."""
    return all(word in text.lower() for word in only.lower().split())


def _ms(seconds: float) -> str:
    """Milliseconds: one decimal, three below 1 ms (a small group's call, Java's especially)."""
    ms = seconds * 1000
    return f"{ms:.1f} ms" if ms >= 1 else f"{ms:.3f} ms"


def ratio(record: dict[str, Any]) -> float | None:
    """Ours / Java (wall-clock medians) for a row that has both, else None."""
    theirs = record.get("java")
    if "error" in record or not theirs or "error" in theirs or theirs["median_s"] <= 0:
        return None
    return float(record["median_s"]) / float(theirs["median_s"])


# CPU seconds are ticks of 10 ms on the JVM's side (Linux): below this a CPU ratio says nothing.
CPU_RATIO_FLOOR_S = 0.05


def cpu_ratio(record: dict[str, Any]) -> float | None:
    """Ours / Java in median CPU seconds (the JVM's: every thread), where both took at least CPU_RATIO_FLOOR_S."""
    theirs = record.get("java") or {}
    ours_cpu, their_cpu = record.get("cpu_median_s"), theirs.get("cpu_median_s")
    if ratio(record) is None or ours_cpu is None or their_cpu is None:
        return None
    if min(ours_cpu, their_cpu) < CPU_RATIO_FLOOR_S:
        return None
    return float(ours_cpu) / float(their_cpu)


def _times(factor: float) -> str:
    """A ratio: two decimals, three below 0.1 (Kafka's slowest rows)."""
    return f"{factor:.2f}x" if factor >= 0.1 else f"{factor:.3f}x"


def _java_cells(record: dict[str, Any]) -> str:
    theirs = record.get("java")
    if not theirs:
        return " |  | "
    if "error" in theirs:
        return f"{theirs['error']} |  | "
    factor, cpu = ratio(record), cpu_ratio(record)
    text = "" if factor is None else (_times(factor) if factor <= 1 else f"**{_times(factor)}**")
    cpu_text = "" if cpu is None else _times(cpu)
    return f"{_ms(theirs['median_s'])} | {text} | {cpu_text}"


def _row(record: dict[str, Any]) -> str:
    section, label, who, date = record["section"], record["workload"], record["assignor"], record["date"]
    if "error" in record:
        return f"| {section} | {label} | {who} | {record['error']} | | | | {_java_cells(record)} | {date} |"
    target = record.get("target_s")
    verdict = "" if target is None else ("ok" if record["median_s"] <= target else "**over**")
    target_text = "" if target is None else f"<= {target:g} s {verdict}"
    spread = f"{record['min_s'] * 1000:.1f}-{record['max_s'] * 1000:.1f} ms"
    rss = f"{record['peak_rss_mb']:.0f} MB"
    return (
        f"| {section} | {label} | {who} | {_ms(record['median_s'])} | {spread} | {rss} | {target_text}"
        f" | {_java_cells(record)} | {date} |"
    )


def _spark_rows(figures: dict[str, Any]) -> list[str]:
    """The Spark evaluation's table (targets: wall time, and overhead against plain Python)."""
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
        return [*header, f"Spark evaluation ({figures['date']}): {figures['error']}"]
    wall_ok = "ok" if figures["spark_wall_s"] <= SPARK_TARGET_S else "**over**"
    overhead_ok = "ok" if figures["overhead"] <= SPARK_TARGET_OVERHEAD else "**over**"
    return [
        *header,
        (
            "| history | plain Python | Spark evaluate | Spark wall (with startup) | overhead | evaluations/s | output"
            " | run |"
        ),
        "|---|---|---|---|---|---|---|---|",
        (
            f"| {figures['groups']} groups x {figures['snapshots']} snapshots, {figures['membership_rows']:,} member"
            f" rows, {figures['evaluations']:,} evaluations ({figures['rebalances']:,} rebalances)"
            f" | {figures['plain_s']:.1f} s | {figures['spark_evaluate_s']:.1f} s"
            f" | {figures['spark_wall_s']:.1f} s (<= {SPARK_TARGET_S:g} s {wall_ok})"
            f" | {figures['overhead']:.2f}x (<= {SPARK_TARGET_OVERHEAD:g}x {overhead_ok})"
            f" | {figures['evaluations_per_s_spark']:,.0f} Spark, {figures['evaluations_per_s_plain']:,.0f} plain"
            f" | {'equal' if figures['same_output'] else '**differs**'} | {figures['date']} |"
        ),
        *_spark_phases(figures),
        *_spark_speedup(figures),
    ]


def _spark_speedup(figures: dict[str, Any]) -> list[str]:
    """The row's evaluations/s against :data:`SPARK_BASELINE`, Spark's and plain Python's (the machine's speed moves
    both alike: two ratios that agree measure the code, not the hour)."""
    date, spark, plain = SPARK_BASELINE
    ratio = figures["evaluations_per_s_spark"] / spark
    verdict = "ok" if ratio >= SPARK_TARGET_SPEEDUP else "**short**"
    return [
        "",
        (
            f"Against {date} ({spark:,.0f} evaluations/s on Spark, {plain:,.0f} in plain Python): Spark"
            f" {ratio:.2f}x (>= {SPARK_TARGET_SPEEDUP:g}x {verdict}), plain Python"
            f" {figures['evaluations_per_s_plain'] / plain:.2f}x."
        ),
    ]


def _spark_phases(figures: dict[str, Any]) -> list[str]:
    """The Spark evaluation's time by phase (``benchmarks.spark_eval.PHASES``), in runs that recorded it."""
    phases = ("startup", "read", "replay", "write", "report")
    if any(f"spark_{phase}_s" not in figures for phase in phases):
        return []
    parts = ", ".join(f"{phase} {figures[f'spark_{phase}_s']:.1f} s" for phase in phases)
    return [
        "",
        f"Spark's time by phase (`write`: the output written once more; `report`: `summarize` and the HTML): {parts}.",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--only", default="", help="run only the cases whose row contains every word of this text")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--skip", action="append", default=[], help="skip the cases whose row contains every word of this text"
    )
    parser.add_argument("--no-java", action="store_true", help="run our rows only, not Kafka's Java beside them")
    parser.add_argument("--render", action="store_true", help="run nothing; render RESULTS.md from results/")
    parser.add_argument("--results", default=str(RESULTS_DIR), help=argparse.SUPPRESS)
    parser.add_argument("--out", default=str(RESULTS_MD), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    results = Path(args.results)
    if not args.render:
        started = dt.datetime.now(tz=dt.UTC)
        run = {
            "date": f"{started:%Y-%m-%d}",
            "python": platform.python_version(),
            "cores": os.cpu_count(),
            "machine": platform.machine(),
            "repeat": args.repeat,
            "cases": _run_cases(
                args.only, args.repeat, skip=args.skip, with_java=_java_available(no_java=args.no_java)
            ),
            "spark": _run_module(["benchmarks.spark_eval"], SPARK_TIMEOUT_S)
            if _chosen(args.only, args.skip, SPARK_LABEL)
            else None,
            "demo": _run_module(["benchmarks.spark_demo"], SPARK_TIMEOUT_S)
            if _chosen(args.only, args.skip, DEMO_LABEL)
            else None,
        }
        results.mkdir(parents=True, exist_ok=True)
        (results / f"{started:%Y-%m-%dT%H-%M-%SZ}.json").write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
    Path(args.out).write_text(render(results), encoding="utf-8")
    return 0


def _java_available(*, no_java: bool) -> bool:
    """Whether the Java rows run; when they cannot, one line says why."""
    if no_java:
        return False
    _, why = java.classpath()
    if why:
        print(f"Kafka's Java assignors are not timed in this run: {why}. Our rows only.", flush=True)
    return not why


def _chosen(only: str, skip: list[str], text: str) -> bool:
    """Selected by ``--only`` and by no ``--skip``."""
    return selected(only, text) and not any(selected(words, text) for words in skip)


def _run_cases(
    only: str, repeat: int, *, skip: list[str] | None = None, with_java: bool = False
) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    jobs = [
        (section, label, {"repeat": repeat, **spec, "assignor": assignor}, target, assignor)  # a case may ask more
        for section, label, spec, target, assignors in CASES
        for assignor in assignors
    ]
    jobs += [
        (section, label, {**spec, "assignor": assignor, "client": "kafka-python", "repeat": 1}, None,
         f"kafka-python {assignor}")
        for section, label, assignor, spec in KAFKA_PYTHON
    ]  # fmt: skip
    for section, label, spec, target, who in jobs:
        if not _chosen(only, skip or [], f"{section} {label} {who}"):
            continue
        record = {"section": section, "workload": label, "assignor": who, "target_s": target, **_run(spec)}
        if with_java and spec.get("client") is None and not spec.get("weights"):  # Kafka has no weighted assignor
            record["java"] = _run_java(spec)
        records.append(record)
        print(_row({**record, "date": "now"}), flush=True)
    return records


def render(results: Path) -> str:
    """RESULTS.md from the JSON runs under ``results``: each case's latest run, in case order."""
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    spark: dict[str, Any] | None = None
    demo: dict[str, Any] | None = None
    machines: set[str] = set()
    for path in sorted(results.glob("*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        machines.add(f"Python {run['python']}, {run['cores']} cores, {run['machine']}")
        for record in run["cases"]:
            latest[record["section"], record["workload"], record["assignor"]] = {**record, "date": run["date"]}
        if run.get("spark") is not None:
            spark = {**run["spark"], "date": run["date"]}
        if run.get("demo") is not None:
            demo = {**run["demo"], "date": run["date"]}
    shown = [latest[key] for key in _case_keys() if key in latest]
    javas = sorted(
        {f"Kafka {r['java']['kafka']} on {r['java']['jvm']}" for r in shown if "kafka" in (r.get("java") or {})}
    )
    lines = [
        "# Benchmark results",
        "",
        "Rendered by `make bench` from the raw runs in [`results/`](results/) (one JSON file per run); each row is",
        "its case's latest run, dated. Do not edit by hand: `python -m benchmarks --render` writes it again.",
        "",
        (
            f"Machines: {'; '.join(sorted(machines))}. Each case runs in a fresh process: one warm-up, then the timed "
            "`assign` calls (5 by default, more where a case asks; kafka-python: one); peak RSS is that process's, "
            "input included; the raw runs hold CPU seconds beside the wall time. Every result is checked (each "
            "partition assigned once, to a subscriber) so a fast wrong change cannot win."
        ),
        "",
        (
            f"Java: Kafka's own assignor on the same group in the same run ({'; '.join(javas) or 'not run'}), one JVM "
            "per case, warm as Kafka's JMH benchmarks are (calls for 5 s and at least 2 of them, then as many timed "
            "calls as ours, at least 3 once they took 20 s); a 2nd round starts, on both sides, from OUR first round. "
            "Its result is checked as ours is. Ratio: our median / Java's, bold where we are slower (why: below the "
            "table); the CPU ratio (median CPU seconds, the JVM's every thread: collector and JIT included) is less "
            f"sensitive to a loaded machine, shown where both took at least {CPU_RATIO_FLOOR_S * 1000:.0f} ms."
        ),
        "",
        (
            "| section | workload | assignor | median | min-max | peak RSS | target | Java median | ours / Java"
            " | CPU ours / Java | run |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *(_row(record) for record in shown),
    ]
    slower = [record for record in shown if (ratio(record) or 0) > 1]
    if slower:
        lines += ["", SLOWER_HEADING, ""]
        lines += [
            f"- {r['section']}, {r['workload']}, {r['assignor']} ({ratio(r):.2f}x): {why_slower(r)}" for r in slower
        ]
    if spark is not None:
        lines += _spark_rows(spark)
    if demo is not None:
        lines += _demo_rows(demo, heading=spark is None)
    return "\n".join([*lines, ""])


def _demo_rows(figures: dict[str, Any], *, heading: bool) -> list[str]:
    """The timed ``assignors demo`` on a small history (:mod:`benchmarks.spark_demo`): its wall time per run."""
    lines = ["", SPARK_HEADING] if heading else []
    what = f"`assignors demo --groups {figures['groups']}`"
    if "error" in figures:
        return [*lines, "", f"{what} ({figures['date']}): {figures['error']}"]
    runs = ", ".join(f"{s:.1f}" for s in figures["runs_s"])
    ok = "ok" if figures["median_s"] <= figures["target_s"] else "**over**"
    return [
        *lines,
        "",
        (
            f"`python -m benchmarks.spark_demo`: {what} ({figures['groups']} groups x {figures['snapshots']} "
            "snapshots of the demo's sample history, every strategy, the evaluation written and the report) as a user "
            f"runs it, {len(figures['runs_s'])} fresh processes one after the other, each from its start to its exit: "
            f"median {figures['median_s']:.1f} s (runs {runs} s; <= {figures['target_s']:g} s {ok}), {figures['date']}."
        ),
    ]


def _case_keys() -> list[tuple[str, str, str]]:
    """Every row's key (section, workload, assignor) in the order the tables list them."""
    keys = [(section, label, assignor) for section, label, _, _, assignors in CASES for assignor in assignors]
    keys += [(section, label, f"kafka-python {assignor}") for section, label, assignor, _ in KAFKA_PYTHON]
    return keys


if __name__ == "__main__":
    sys.exit(main())
