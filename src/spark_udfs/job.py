"""The evaluation job behind ``assignors evaluate`` and ``assignors demo``."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO
from urllib.parse import unquote, urlparse

from assignors.metrics import DEFAULT_HEARTBEAT_SECONDS, DEFAULT_REBALANCE_SECONDS
from spark_udfs.costs import WEIGHTS_COLUMNS
from spark_udfs.ranking import DEFAULT_RANK_BY
from spark_udfs.replay import ALL_STRATEGIES, MEMBERSHIP_COLUMNS, TOPICS_COLUMNS, ddl
from spark_udfs.report import Summary, render_html, render_text, summarize
from spark_udfs.schemas import OPTIONAL_CSV_COLUMNS, SchemaError, csv_columns, with_optional_columns
from spark_udfs.session import first_line, is_connect
from spark_udfs.udfs import evaluate_history

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "OPTIONAL_CSV_COLUMNS",
    "join_uri",
    "local_path",
    "print_summary",
    "read_table",
    "run_demo",
    "run_evaluation",
]


def local_path(uri: str) -> Path | None:
    """The local file system path of ``uri`` (a plain path or ``file:``), else None (``hdfs://``, ``s3a://``...)."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if len(parsed.scheme) <= 1:  # no scheme, or a Windows drive letter
        return Path(uri)
    return None


def join_uri(base: str, name: str) -> str:
    """``base/name`` for a path or a URI."""
    return f"{base.rstrip('/')}/{name}"


def _is_csv(path: str) -> bool:
    """A ``.csv`` file, or a local directory holding ``.csv`` files (Spark reads the rest as Parquet)."""
    if path.rstrip("/").lower().endswith(".csv"):
        return True
    local = local_path(path)
    return local is not None and local.is_dir() and any(local.glob("*.csv"))


def read_table(spark: SparkSession, path: str, columns: Sequence[tuple[str, str]]) -> DataFrame:
    """Read Parquet (a file or a directory) or CSV with a header, from any path or URI Spark reads.

    In CSV, an ``array<string>`` column holds its items separated by ``;`` (empty: none) and
    timestamps are ISO 8601; Parquet is read as it is. Either way only ``group_instance_id``,
    ``rack_id`` and ``valid_from`` may be left out (null), and the schema is checked later. A CSV
    value that does not parse is null, and its text is kept for the evaluation to name it
    (:mod:`spark_udfs.validation`): one typo never stops the job.

    Raises:
        FileNotFoundError: Spark says the path does not exist (one line, Spark's words).
        SchemaError: the table cannot be read at all (an empty directory, not Parquet, not
            readable): one line naming the path and the problem.
    """
    from pyspark.errors import AnalysisException

    from spark_udfs.validation import SOURCE_COLUMN, csv_checks

    local = local_path(path)
    if (
        local is not None
        and local.is_dir()
        and not any(p for p in local.iterdir() if not p.name.startswith((".", "_")))
    ):
        msg = f"{path}: an empty directory, no table to read"
        raise SchemaError(msg)
    csv = _is_csv(path)
    if not csv and local is not None:
        _check_parquet_files(path, local)
    try:
        if not csv:
            frame = with_optional_columns(spark.read.parquet(path), columns)
        else:
            raw = spark.read.option("header", "true").csv(path)
            checks = csv_checks(raw.columns, columns)
            source = [f"_metadata.file_path AS {SOURCE_COLUMN}"] if checks else []
            frame = raw.selectExpr(*csv_columns(raw.columns, columns), *checks, *source)
        frame.schema  # noqa: B018 - analyse now: over Spark Connect reading is lazy
    except AnalysisException as error:
        message = str(error).strip().splitlines()[0]
        if error.getCondition() == "PATH_NOT_FOUND":
            msg = f"{path}: {message}"
            raise FileNotFoundError(msg) from None
        msg = f"{path}: cannot read as {'CSV' if csv else 'Parquet'}: {message}"
        raise SchemaError(msg) from None
    except Exception as error:  # noqa: BLE001 - classic Spark raises the JVM's error type, Connect its own
        msg = f"{path}: cannot read as {'CSV' if csv else 'Parquet'}: {first_line(error)}"
        raise SchemaError(msg) from None
    return frame


_PARQUET_MAGIC = b"PAR1"


def _check_parquet_files(path: str, local: Path) -> None:
    """Refuse a local file that is not Parquet before Spark logs a Java stack trace over it."""
    files = [local] if local.is_file() else sorted(p for p in local.rglob("*") if p.is_file())
    for file in files:
        if file.name.startswith((".", "_")) or file.suffix.lower() in {".crc", ".csv"}:
            continue
        try:
            with file.open("rb") as handle:
                head = handle.read(4)
                handle.seek(max(file.stat().st_size - 4, 0))
                tail = handle.read(4)
        except OSError as error:
            msg = f"{path}: cannot read {file}: {error.strerror or error}"
            raise SchemaError(msg) from None
        if head != _PARQUET_MAGIC or tail != _PARQUET_MAGIC:
            where = "" if file == local else f" ({file.relative_to(local)})"
            msg = (
                f"{path}: not a Parquet file{where}: it does not start and end with PAR1; "
                "a CSV table must be a .csv file or a directory of .csv files"
            )
            raise SchemaError(msg)


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
    strategies: Sequence[str] = ALL_STRATEGIES,
    report: str | None = None,
    progress: TextIO | bool | None = True,
    actual: DataFrame | None = None,
    weights: DataFrame | None = None,
    rank_by: Sequence[str] = DEFAULT_RANK_BY,
    rebalance_seconds: float = DEFAULT_REBALANCE_SECONDS,
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
    replace: bool = True,
) -> Summary:
    """Evaluate, write ``out/evaluation`` (Parquet, through Spark: any URI) and the HTML report; returns the summary.

    The report is written by this process, to :func:`report_path` ``(out, report)``. With ``actual``
    (the recorded assignments), the strategy ``actual`` joins the evaluation and ``out/self_check``
    holds the range/roundrobin self-check.

    Raises:
        FileExistsError: ``out/evaluation`` exists and ``replace`` is False (``assignors evaluate``).
    """
    evaluation = evaluate_history(
        membership,
        topics,
        strategies=strategies,
        actual=actual,
        weights=weights,
        rebalance_seconds=rebalance_seconds,
        heartbeat_seconds=heartbeat_seconds,
    )
    target = join_uri(out, "evaluation")
    with _progress(spark, where=progress):
        _write(evaluation, target, replace=replace)
    checks = None
    if actual is not None:
        from spark_udfs.offsets import evaluate_actual

        _, found = evaluate_actual(membership, topics, actual)
        found.write.mode("overwrite").parquet(join_uri(out, "self_check"))
        checks = spark.read.parquet(join_uri(out, "self_check"))
    note = (
        f"Pause cost assumes a rebalance round stops a group for {rebalance_seconds:g} s and the consumer "
        f"protocol's heartbeat interval is {heartbeat_seconds:g} s. "
        + (
            "Load is weighted by the weights table."
            if weights is not None
            else "No weights table: load is counted in partitions."
        )
    )
    summary = summarize(
        spark.read.parquet(target),
        membership,
        rank_by=rank_by,
        notes=[note],
        self_check=checks,
        weights_given=weights is not None,
    )
    html = report_path(out, report)
    html.parent.mkdir(parents=True, exist_ok=True)
    html.write_text(render_html(summary), encoding="utf-8")
    return summary


def run_demo(  # noqa: PLR0913 - the CLI's options
    spark: SparkSession,
    out: str,
    *,
    groups: int = 300,
    snapshots: int = 48,
    report: str | None = None,
    progress: TextIO | bool | None = True,
    rank_by: Sequence[str] = DEFAULT_RANK_BY,
    rebalance_seconds: float = DEFAULT_REBALANCE_SECONDS,
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
) -> Summary:
    """Generate the sample history (with topic weights), save it under ``out/input`` and evaluate it into ``out``.

    Every strategy runs: the classic four and KIP-848's ``uniform`` and ``consumer-range``.
    """
    from spark_udfs.sample import generate_history

    history = generate_history(groups, snapshots)
    membership = spark.createDataFrame(history.membership, ddl(MEMBERSHIP_COLUMNS))
    topics = spark.createDataFrame(history.topics, ddl(TOPICS_COLUMNS))
    weights = spark.createDataFrame(history.weights, ddl(WEIGHTS_COLUMNS))
    inputs = join_uri(out, "input")
    tables = {"membership": membership, "topics": topics, "weights": weights}
    for name, table in tables.items():
        table.write.mode("overwrite").parquet(join_uri(inputs, name))
    saved = {name: spark.read.parquet(join_uri(inputs, name)) for name in tables}
    return run_evaluation(
        spark,
        saved["membership"],
        saved["topics"],
        out,
        strategies=ALL_STRATEGIES,
        report=report,
        progress=progress,
        weights=saved["weights"],
        rank_by=rank_by,
        rebalance_seconds=rebalance_seconds,
        heartbeat_seconds=heartbeat_seconds,
    )


def print_summary(summary: Summary, out: str, stream: TextIO | None = None, *, report: str | None = None) -> None:
    """The summary and where the output went, on ``stream`` (default: the current stdout)."""
    stream = stream or sys.stdout  # resolved per call: a default bound at import outlives a captured stdout
    stream.write(render_text(summary) + "\n")
    stream.write(f"\nwrote {join_uri(out, 'evaluation')} and {report_path(out, report)}\n")
