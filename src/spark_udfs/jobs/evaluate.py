"""The route of ``assignors evaluate`` and ``assignors demo``: the tables in, the evaluation, the report out.

Each step once: the CLI reads the tables (:mod:`spark_udfs.tables.reading`), :func:`run_evaluation` evaluates
them (:func:`spark_udfs.jobs.history.evaluate`: optional columns added, topics collected and the actual strategy
measured, each once), writes the evaluation and the self-check, and summarizes them into the report
(:mod:`spark_udfs.report`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from assignors.tables import MEMBERSHIP_COLUMNS, PARAMETERS_COLUMNS, TOPICS_COLUMNS, WEIGHTS_COLUMNS
from spark_udfs.demo.sample import DEFAULT_GROUPS, DEFAULT_SNAPSHOTS, generate_history
from spark_udfs.jobs.history import evaluate
from spark_udfs.replay.timing import timing_model
from spark_udfs.report.aggregation import summarize
from spark_udfs.report.html import render_html
from spark_udfs.report.ranking import DEFAULT_RANK_BY, eager_apart_note
from spark_udfs.report.text import render_text
from spark_udfs.session import is_connect
from spark_udfs.tables.paths import join_uri, local_path
from spark_udfs.tables.schemas import ddl, write_local_parquet

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from pyspark.sql import DataFrame, SparkSession

    from assignors.metrics import PauseModel
    from spark_udfs.replay.timing import TimingParameter
    from spark_udfs.report.summary import Summary

__all__ = ["print_summary", "report_path", "run_demo", "run_evaluation"]


def _write(frame: DataFrame, target: str, *, replace: bool) -> None:
    """Write ``frame`` as Parquet; without ``replace`` an existing ``target`` is refused (FileExistsError)."""
    from pyspark.errors import AnalysisException

    if replace:
        frame.write.mode("overwrite").parquet(target)
        return
    try:
        frame.write.mode("error").parquet(target)
    except AnalysisException as error:
        if error.getCondition() != "PATH_ALREADY_EXISTS":
            raise
        msg = f"{target} already holds an evaluation; choose another --out or remove it"
        raise FileExistsError(msg) from None


@contextlib.contextmanager
def _progress(spark: SparkSession, *, where: TextIO | bool | None, every: float = 2.0) -> Iterator[None]:
    """Report Spark's task progress every ``every`` seconds while the block runs (``True``: on stderr)."""
    stream = sys.stderr if where is True else where or None
    if stream is None or is_connect(spark):  # Spark Connect has no status tracker: no progress lines
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


def report_path(out: str, report: str | None = None) -> Path:
    """The report file: ``report`` if given, else ``out/report.html`` when ``out`` is local, else ``./report.html``."""
    if report is not None:
        return Path(report)
    local = local_path(out)
    return (local if local is not None else Path()) / "report.html"


def run_evaluation(  # noqa: PLR0913 - the CLI's options
    spark: SparkSession,
    membership: DataFrame,
    topics: DataFrame,
    out: str,
    *,
    strategies: Sequence[str] | None = None,
    report: str | None = None,
    progress: TextIO | bool | None = True,
    actual: DataFrame | None = None,
    handovers: DataFrame | None = None,
    weights: DataFrame | None = None,
    rank_by: Sequence[str] = DEFAULT_RANK_BY,
    rebalance_seconds: float | None = None,
    heartbeat_seconds: float | None = None,
    replace: bool = True,
    pause_model: PauseModel | None = None,
    kafka_version: str | None = None,
    kafka_source: str | None = None,
    kafka_jars: str | Sequence[str] | None = None,
) -> Summary:
    """Evaluate, write ``out/evaluation`` (Parquet, through Spark: any URI) and the HTML report; returns the summary.

    The report is written by this process, to :func:`report_path` ``(out, report)``. With ``actual``
    (the recorded assignments), the strategy ``actual`` joins the evaluation and ``out/self_check``
    holds the range/roundrobin self-check; ``handovers`` (KIP-848's recorded hand-overs, beside ``actual``) is
    :func:`spark_udfs.jobs.history.evaluate_history`'s. ``out/parameters`` (Parquet, ``PARAMETERS_COLUMNS``; also
    ``out/parameters.json`` when ``out`` is local) holds the timing parameters the pause was priced with and the
    Kafka version, each with its source. ``pause_model`` (default: the measured one), ``rebalance_seconds`` and
    ``heartbeat_seconds`` are :func:`spark_udfs.jobs.history.evaluate_history`'s; ``kafka_source`` says where
    ``kafka_version`` came from; ``kafka_jars`` adds Kafka's own Java sticky assignors (``evaluate_history``'s).

    Raises:
        FileExistsError: ``out/evaluation`` exists and ``replace`` is False (``assignors evaluate``).
    """
    options = {"rebalance_seconds": rebalance_seconds, "heartbeat_seconds": heartbeat_seconds}
    timing = timing_model(pause_model, options)
    evaluation = evaluate(
        membership,
        topics,
        strategies,
        timing,
        actual=actual,
        handovers=handovers,
        weights=weights,
        kafka_version=kafka_version,
        kafka_source=kafka_source,
        kafka_jars=kafka_jars,
    )
    target = join_uri(out, "evaluation")
    with _progress(spark, where=progress):
        _write(evaluation.output, target, replace=replace)
    _write_parameters(spark, evaluation.parameters, out)
    checks = None
    if evaluation.self_check is not None:
        evaluation.self_check.write.mode("overwrite").parquet(join_uri(out, "self_check"))
        checks = spark.read.parquet(join_uri(out, "self_check"))
    note = (
        "Load is weighted by the weights table."
        if weights is not None
        else "No weights table: load is counted in partitions."
    )
    summary = summarize(
        spark.read.parquet(target),
        evaluation.membership,
        rank_by=rank_by,
        notes=[note],
        self_check=checks,
        weights_given=weights is not None,
    )
    values = {p.parameter: p.value for p in evaluation.parameters}
    apart = eager_apart_note(
        summary.strategies,
        heartbeat_seconds=values.get("heartbeat_seconds") or 0.0,
        together=values.get("eager_heartbeats") or 0.0,
        apart=values.get("eager_crash_heartbeats") or 0.0,
    )
    summary = dataclasses.replace(
        summary,
        parameters=list(evaluation.parameters),
        timing_notes=list(evaluation.timing_notes),
        caveats=[apart] if apart else [],
    )
    html = report_path(out, report)
    html.parent.mkdir(parents=True, exist_ok=True)
    html.write_text(render_html(summary), encoding="utf-8")
    return summary


def run_demo(  # noqa: PLR0913 - the CLI's options
    spark: SparkSession,
    out: str,
    *,
    groups: int = DEFAULT_GROUPS,
    snapshots: int = DEFAULT_SNAPSHOTS,
    report: str | None = None,
    progress: TextIO | bool | None = True,
    rank_by: Sequence[str] = DEFAULT_RANK_BY,
    rebalance_seconds: float | None = None,
    heartbeat_seconds: float | None = None,
    pause_model: PauseModel | None = None,
    kafka_version: str | None = None,
    kafka_source: str | None = None,
) -> Summary:
    """Generate the sample history (with topic weights), save it under ``out/input`` and evaluate it into ``out``.

    Every strategy runs: the classic four, KIP-848's ``uniform`` and ``consumer-range``, and ``weighted-sticky``.
    """
    history = generate_history(groups, snapshots)
    inputs = join_uri(out, "input")
    tables: dict[str, tuple[Sequence[Sequence[Any]], Sequence[tuple[str, str]]]] = {
        "membership": (history.membership, MEMBERSHIP_COLUMNS),
        "topics": (history.topics, TOPICS_COLUMNS),
        "weights": (history.weights, WEIGHTS_COLUMNS),
    }
    local = _local_directory(spark, inputs)
    for name, (rows, columns) in tables.items():
        if local is not None:  # no Spark job: three small files written by this process
            write_local_parquet(rows, columns, local / name)
        else:
            spark.createDataFrame(rows, ddl(columns)).write.mode("overwrite").parquet(join_uri(inputs, name))
    # read with the schemas they were written with: Spark need not open the files to infer them
    saved = {name: spark.read.schema(ddl(tables[name][1])).parquet(join_uri(inputs, name)) for name in tables}
    return run_evaluation(
        spark,
        saved["membership"],
        saved["topics"],
        out,
        strategies=None,  # every strategy, weighted-sticky included (the sample has weights)
        report=report,
        progress=progress,
        weights=saved["weights"],
        rank_by=rank_by,
        rebalance_seconds=rebalance_seconds,
        heartbeat_seconds=heartbeat_seconds,
        pause_model=pause_model,
        kafka_version=kafka_version,
        kafka_source=kafka_source,
    )


def _local_directory(spark: SparkSession, uri: str) -> Path | None:
    """Where this process may write a table itself (the demo's inputs, the parameters): ``uri``'s local path when
    the session is a ``local[...]`` one (its executors share this file system), else None (Spark writes it, where
    it runs)."""
    if is_connect(spark) or not str(spark.conf.get("spark.master", "") or "").startswith("local"):
        return None
    return local_path(uri)


def _write_parameters(spark: SparkSession, parameters: Sequence[TimingParameter], out: str) -> None:
    """``out/parameters`` (Parquet, any URI) and, when ``out`` is local, ``out/parameters.json``."""
    rows = [p.row() for p in parameters]
    values = [tuple(r.values()) for r in rows]
    here = _local_directory(spark, out)
    if here is not None:  # a local session and directory: no Spark job for a few rows (1.4-1.8 s of a demo's 36)
        write_local_parquet(values, PARAMETERS_COLUMNS, here / "parameters")
    else:
        frame = spark.createDataFrame(values, ddl(PARAMETERS_COLUMNS))
        frame.coalesce(1).write.mode("overwrite").parquet(join_uri(out, "parameters"))
    local = local_path(out)
    if local is not None:
        text = json.dumps(rows, indent=2) + "\n"
        (local / "parameters.json").write_text(text, encoding="utf-8")


def print_summary(summary: Summary, out: str, stream: TextIO | None = None, *, report: str | None = None) -> None:
    """The summary and where the output went, on ``stream`` (default: the current stdout)."""
    stream = stream or sys.stdout  # resolved per call: a default bound at import outlives a captured stdout
    stream.write(render_text(summary) + "\n")
    stream.write(f"\nwrote {join_uri(out, 'evaluation')} and {report_path(out, report)}\n")
