"""The Spark evaluation at scale, against the same replay in one plain Python process.

``python -m benchmarks.spark_eval [--groups 1000] [--snapshots 100] [--master local[2]]`` prints
its figures as JSON. The generated history (``spark_udfs.demo.sample``, 10-30 members per group:
about 2M membership rows for 1,000 x 100) and its topic weights are written to Parquet first and are
not timed. Then:

- plain: one Python process reads the Parquet with pandas, replays every group with
  ``replay_frame`` (the function Spark runs) and writes the output as Parquet;
- spark: ``evaluate_history`` on ``master`` reads the same Parquet and writes its output.

Both outputs are compared row for row (every column but ``assign_ms``), so the two timings
measure the same work.
"""

from __future__ import annotations

import argparse
import json
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
    """Start a session, evaluate, write; returns the timings and the output read back."""
    from spark_udfs.session import get_session
    from spark_udfs.udfs import evaluate_history

    start = time.perf_counter()
    spark = get_session(master, app_name="assignors-bench")
    spark.range(1).count()  # the JVM and a first job are up
    started = time.perf_counter()
    membership, topics, weights = (spark.read.parquet(str(path)) for path in paths)
    evaluation = evaluate_history(membership, topics, strategies=STRATEGIES, weights=weights)
    evaluation.write.mode("overwrite").parquet(str(out))
    finished = time.perf_counter()
    output = pd.read_parquet(out)
    spark.stop()
    return {"startup_s": started - start, "evaluate_s": finished - started, "output": output}


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
        "spark_wall_s": spark["startup_s"] + spark["evaluate_s"],
        "overhead": spark["evaluate_s"] / plain_s,
        "evaluations_per_s_plain": evaluations / plain_s,
        "evaluations_per_s_spark": evaluations / spark["evaluate_s"],
        "same_output": same_output(plain, spark["output"]),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
