"""The Spark evaluation at scale, against the same replay in one plain Python process.

``python -m benchmarks.spark_eval [--groups 1000] [--snapshots 100] [--master local[2]]`` prints
its figures as JSON. The generated history (``spark_udfs.demo.sample``, 10-30 members per group:
about 2M membership rows for 1,000 x 100) and its topic weights are written to Parquet first and are
not timed. Then:

- plain: one Python process reads the Parquet with pandas, replays every group with
  ``replay_frame`` (the function Spark runs) and writes the output as Parquet;
- spark: ``evaluate_history`` on ``master`` reads the same Parquet and writes its output, then summarizes it
  into the report as ``assignors evaluate`` does; the time of each phase (start-up, read, replay, write,
  report) is in the JSON and printed on stderr as one line.

Both outputs are compared row for row (every column but ``assign_ms``), so the two timings
measure the same work.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from spark_udfs.demo.sample import generate_history
from spark_udfs.replay import OUTPUT_COLUMNS, STRATEGIES, TopicHistory, replay_frame
from spark_udfs.replay.weights import WeightHistory

if TYPE_CHECKING:
    from spark_udfs.demo.sample import History

_KEY = ["group_id", "strategy", "snapshot_ts"]


def write_input(history: History, directory: Path) -> tuple[Path, Path, Path]:
    """Write the history as Parquet with UTC timestamps (Spark reads them as ``timestamp``)."""
    membership = pd.DataFrame(
        history.membership,
        columns=["group_id", "snapshot_ts", "member_id", "topics", "group_instance_id", "rack_id"],
    )
    membership["snapshot_ts"] = pd.to_datetime(membership["snapshot_ts"], utc=True)
    topics = pd.DataFrame(history.topics, columns=["topic", "partitions", "valid_from"])
    topics["partitions"] = topics["partitions"].astype("int32")
    topics["valid_from"] = pd.to_datetime(topics["valid_from"], utc=True)
    weights = pd.DataFrame(history.weights, columns=["topic", "partition", "weight", "valid_from"])
    weights["partition"] = weights["partition"].astype("Int32")
    weights["valid_from"] = pd.to_datetime(weights["valid_from"], utc=True)
    paths = directory / "membership.parquet", directory / "topics.parquet", directory / "weights.parquet"
    options: dict[str, Any] = {"coerce_timestamps": "us", "allow_truncated_timestamps": True}
    membership.to_parquet(paths[0], index=False, **options)
    topics.to_parquet(paths[1], index=False, **options)
    weights.to_parquet(paths[2], index=False, **options)
    return paths


def _naive_utc(column: pd.Series[Any]) -> pd.Series[Any]:
    naive: pd.Series[Any] = column.dt.tz_convert("UTC").dt.tz_localize(None)
    return naive


def _naive(value: Any) -> Any:
    return value.tz_convert("UTC").tz_localize(None).to_pydatetime()


def run_plain(membership_path: Path, topics_path: Path, weights_path: Path, out: Path) -> tuple[float, pd.DataFrame]:
    """Read, replay every group in this process, write; returns the seconds and the output."""
    start = time.perf_counter()
    membership = pd.read_parquet(membership_path)
    membership["snapshot_ts"] = _naive_utc(membership["snapshot_ts"])
    topics = pd.read_parquet(topics_path)
    history = TopicHistory(
        (t, int(p), None if pd.isna(v) else _naive(v))
        for t, p, v in zip(topics["topic"], topics["partitions"], topics["valid_from"], strict=True)
    )
    raw = pd.read_parquet(weights_path)
    weights = WeightHistory(
        (t, None if pd.isna(p) else int(p), float(w), None if pd.isna(v) else _naive(v))
        for t, p, w, v in zip(raw["topic"], raw["partition"], raw["weight"], raw["valid_from"], strict=True)
    )
    groups = membership.groupby("group_id", sort=True)
    frames = [replay_frame(group, history, STRATEGIES, weights=weights) for _, group in groups]
    output = pd.concat(frames, ignore_index=True)
    output.to_parquet(out, index=False)
    return time.perf_counter() - start, output


def run_spark(paths: tuple[Path, Path, Path], out: Path, master: str) -> dict[str, Any]:
    """Start a session, evaluate, write, report; returns the timings of each phase and the output read back.

    The phases: ``startup`` (the session and a first job), ``read`` (the tables read and checked, the topics and
    weights collected: everything ``evaluate_history`` does before its job), ``replay`` and ``write`` (one Spark
    job, the replay feeding the Parquet writer: ``write`` is the same rows written once more, read back from the
    output, and ``replay`` the job's rest), ``report`` (``summarize`` and the HTML, as ``assignors evaluate``).
    ``evaluate_s`` is read + replay + write, as before the breakdown.
    """
    from spark_udfs.report.aggregation import summarize
    from spark_udfs.report.html import render_html
    from spark_udfs.session import get_session
    from spark_udfs.udfs import evaluate_history

    start = time.perf_counter()
    spark = get_session(master, app_name="assignors-bench")
    spark.range(1).count()  # the JVM and a first job are up
    started = time.perf_counter()
    membership, topics, weights = (spark.read.parquet(str(path)) for path in paths)
    evaluation = evaluate_history(membership, topics, strategies=STRATEGIES, weights=weights)
    read = time.perf_counter()
    evaluation.write.mode("overwrite").parquet(str(out))
    finished = time.perf_counter()
    spark.read.parquet(str(out)).write.mode("overwrite").parquet(f"{out}-again")
    written = time.perf_counter()
    summary = summarize(spark.read.parquet(str(out)), membership, weights_given=True)
    render_html(summary)
    reported = time.perf_counter()
    output = pd.read_parquet(out)
    spark.stop()
    write_s = written - finished
    return {
        "startup_s": started - start,
        "read_s": read - started,
        "replay_s": max(finished - read - write_s, 0.0),
        "write_s": write_s,
        "report_s": reported - written,
        "evaluate_s": finished - started,
        "output": output,
    }


PHASES = ("startup", "read", "replay", "write", "report")
"""The phases of a Spark evaluation the benchmark times (see :func:`run_spark`)."""


def breakdown(figures: dict[str, Any]) -> str:
    """One line: the seconds of each phase of the Spark evaluation, and their total."""
    seconds = [figures[f"spark_{phase}_s"] for phase in PHASES]
    parts = ", ".join(f"{phase} {value:.1f} s" for phase, value in zip(PHASES, seconds, strict=True))
    return f"spark evaluation on {figures['master']}: {parts}; total {sum(seconds):.1f} s"


def same_output(plain: pd.DataFrame, spark: pd.DataFrame) -> bool:
    """Row for row equality of everything but the timings."""
    columns = [name for name, _ in OUTPUT_COLUMNS if name != "assign_ms"]
    left = plain[columns].sort_values(_KEY, ignore_index=True)
    right = spark[columns].sort_values(_KEY, ignore_index=True)
    right["snapshot_ts"] = right["snapshot_ts"].astype(left["snapshot_ts"].dtype)
    for name in columns:
        right[name] = right[name].astype(left[name].dtype)
    return bool(left.equals(right))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.spark_eval")
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--snapshots", type=int, default=100)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    history = generate_history(args.groups, args.snapshots, seed=11, members=(10, 30))
    with tempfile.TemporaryDirectory(prefix="assignors-bench-") as tmp:
        directory = Path(tmp)
        paths = write_input(history, directory)
        plain_s, plain = run_plain(*paths, directory / "plain.parquet")
        spark = run_spark(paths, directory / "spark", args.master)
    evaluations = len(plain)
    rebalances = int(plain["rebalanced"].sum())
    figures = {
        "groups": args.groups,
        "snapshots": args.snapshots,
        "membership_rows": len(history.membership),
        "evaluations": evaluations,
        "rebalances": rebalances,
        "errors": int(plain["error"].notna().sum()),
        "master": args.master,
        "plain_s": plain_s,
        "spark_startup_s": spark["startup_s"],
        "spark_evaluate_s": spark["evaluate_s"],
        **{f"spark_{phase}_s": spark[f"{phase}_s"] for phase in PHASES[1:]},
        "spark_wall_s": spark["startup_s"] + spark["evaluate_s"],
        "overhead": spark["evaluate_s"] / plain_s,
        "evaluations_per_s_plain": evaluations / plain_s,
        "evaluations_per_s_spark": evaluations / spark["evaluate_s"],
        "same_output": same_output(plain, spark["output"]),
    }
    print(breakdown(figures), file=sys.stderr)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
