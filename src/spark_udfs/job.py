"""The evaluation job behind ``assignors evaluate`` and ``assignors demo``."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

from assignors.metrics import DEFAULT_HEARTBEAT_SECONDS, DEFAULT_REBALANCE_SECONDS
from spark_udfs.costs import WEIGHTS_COLUMNS
from spark_udfs.ranking import DEFAULT_RANK_BY
from spark_udfs.replay import MEMBERSHIP_COLUMNS, STRATEGIES, TOPICS_COLUMNS, ddl
from spark_udfs.report import Summary, render_html, render_text, summarize
from spark_udfs.udfs import evaluate_history

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from pyspark.sql import DataFrame, SparkSession

__all__ = ["print_summary", "read_table", "run_demo", "run_evaluation"]


def read_table(spark: SparkSession, path: str, columns: Sequence[tuple[str, str]]) -> DataFrame:
    """Read Parquet (a ``.parquet`` file or a directory) or CSV with a header.

    In CSV, an ``array<string>`` column holds its items separated by ``;`` (empty: none)
    and timestamps are ISO 8601. Parquet is read as it is; its schema is checked later.
    """
    from pyspark.sql import functions as sf

    source = Path(path)
    if not source.exists():
        msg = f"{path}: no such file or directory"
        raise FileNotFoundError(msg)
    if source.suffix != ".csv" and not any(source.glob("*.csv")):
        return spark.read.parquet(path)
    raw = spark.read.option("header", "true").csv(path)
    selected = []
    for name, kind in columns:
        if name not in raw.columns:
            selected.append(sf.lit(None).cast(kind if kind != "array<string>" else "string").alias(name))
            continue
        column = sf.col(name)
        if kind == "array<string>":
            column = sf.when(column.isNull() | (sf.trim(column) == ""), sf.array().cast("array<string>")).otherwise(
                sf.split(column, ";")
            )
        else:
            column = column.cast(kind)
        selected.append(column.alias(name))
    return raw.select(*selected)


@contextlib.contextmanager
def _progress(spark: SparkSession, stream: TextIO | None, every: float = 2.0) -> Iterator[None]:
    """Report Spark's task progress on ``stream`` every ``every`` seconds while the block runs."""
    if stream is None:
        yield
        return
    done = threading.Event()
    tracker = spark.sparkContext.statusTracker()

    def report() -> None:
        started = time.monotonic()
        while not done.wait(every):
            stages = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
            tasks = [(s.numCompletedTasks, s.numTasks) for s in stages if s is not None]
            finished, total = sum(t[0] for t in tasks), sum(t[1] for t in tasks)
            stream.write(f"  ... {time.monotonic() - started:.0f} s: {finished}/{total} tasks of the running stages\n")
            stream.flush()

    thread = threading.Thread(target=report, name="assignors-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def run_evaluation(  # noqa: PLR0913 - the CLI's options
    spark: SparkSession,
    membership: DataFrame,
    topics: DataFrame,
    out: str,
    *,
    strategies: Sequence[str] = STRATEGIES,
    progress: TextIO | Literal["stderr"] | None = "stderr",
    actual: DataFrame | None = None,
    weights: DataFrame | None = None,
    rank_by: Sequence[str] = DEFAULT_RANK_BY,
    rebalance_seconds: float = DEFAULT_REBALANCE_SECONDS,
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
) -> Summary:
    """Evaluate, write ``out/evaluation`` (Parquet) and ``out/report.html``; returns the summary.

    With ``actual`` (the recorded assignments), the strategy ``actual`` joins the evaluation
    and ``out/self_check`` holds the range/roundrobin self-check.
    """
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    evaluation = evaluate_history(
        membership,
        topics,
        strategies=strategies,
        actual=actual,
        weights=weights,
        rebalance_seconds=rebalance_seconds,
        heartbeat_seconds=heartbeat_seconds,
    )
    with _progress(spark, sys.stderr if progress == "stderr" else progress):  # resolved per call, as tests swap it
        evaluation.write.mode("overwrite").parquet(str(target / "evaluation"))
    if actual is not None:
        from spark_udfs.offsets import evaluate_actual

        _, checks = evaluate_actual(membership, topics, actual)
        checks.write.mode("overwrite").parquet(str(target / "self_check"))
    written = spark.read.parquet(str(target / "evaluation"))
    note = (
        f"Pause cost assumes a rebalance round stops a group for {rebalance_seconds:g} s and the consumer "
        f"protocol's heartbeat interval is {heartbeat_seconds:g} s. "
        + (
            "Load is weighted by the weights table."
            if weights is not None
            else "No weights table: load is counted in partitions."
        )
    )
    summary = summarize(written, membership, rank_by=rank_by, notes=[note])
    (target / "report.html").write_text(render_html(summary), encoding="utf-8")
    return summary


def run_demo(  # noqa: PLR0913 - the CLI's options
    spark: SparkSession,
    out: str,
    *,
    groups: int = 300,
    snapshots: int = 48,
    progress: TextIO | Literal["stderr"] | None = "stderr",
    rank_by: Sequence[str] = DEFAULT_RANK_BY,
    rebalance_seconds: float = DEFAULT_REBALANCE_SECONDS,
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
) -> Summary:
    """Generate the sample history (with topic weights), save it under ``out/input`` and evaluate it into ``out``."""
    from spark_udfs.sample import generate_history

    history = generate_history(groups, snapshots)
    membership = spark.createDataFrame(history.membership, ddl(MEMBERSHIP_COLUMNS))
    topics = spark.createDataFrame(history.topics, ddl(TOPICS_COLUMNS))
    weights = spark.createDataFrame(history.weights, ddl(WEIGHTS_COLUMNS))
    target = Path(out)
    membership.write.mode("overwrite").parquet(str(target / "input" / "membership"))
    topics.write.mode("overwrite").parquet(str(target / "input" / "topics"))
    weights.write.mode("overwrite").parquet(str(target / "input" / "weights"))
    membership = spark.read.parquet(str(target / "input" / "membership"))
    topics = spark.read.parquet(str(target / "input" / "topics"))
    weights = spark.read.parquet(str(target / "input" / "weights"))
    return run_evaluation(
        spark,
        membership,
        topics,
        out,
        progress=progress,
        weights=weights,
        rank_by=rank_by,
        rebalance_seconds=rebalance_seconds,
        heartbeat_seconds=heartbeat_seconds,
    )


def print_summary(summary: Summary, out: str, stream: TextIO | None = None) -> None:
    from spark_udfs.offsets import actual_headline

    stream = stream or sys.stdout  # resolved per call: a default bound at import outlives a captured stdout

    headline = actual_headline(summary.strategies)
    if headline is not None:
        stream.write(headline + "\n\n")
    stream.write(render_text(summary) + "\n")
    stream.write(f"\nwrote {Path(out) / 'evaluation'} and {Path(out) / 'report.html'}\n")
