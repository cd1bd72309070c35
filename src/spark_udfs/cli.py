"""The Spark commands of ``assignors``: ``evaluate`` and ``demo``.

``assignors evaluate --membership PATH --topics PATH --out DIR [--weights PATH] [--rank-by FIGURE,...]
[--kafka-version X.Y.Z] [--client NAME] [--heartbeat-interval-ms MS] [--session-timeout-ms MS]
[--consumer-heartbeat-interval-ms MS] [--consumer-session-timeout-ms MS] [--rebalance-seconds S] [--heartbeat-seconds S]
[--strategies ...]
[--kafka-jars PATH] [--master URL | --remote sc://HOST:PORT]``
replays membership histories on Spark and writes the evaluation and ``report.html``;
``assignors demo [--out DIR]`` does it on a generated sample history.

They reach the ``assignors`` command through the entry-point group ``assignors.commands``
(``register_evaluate``, ``register_demo``). Registering imports neither pyspark, pandas nor
pyarrow: the commands import them when run, and say which extra to install when one is missing.
"""

from __future__ import annotations

import argparse
import importlib
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assignors import AssignorError, ConfigurationError
from assignors.cli import CliError
from assignors.cli import main as assignors_main
from assignors.collect import CLUSTER_FILE, read_cluster_file
from assignors.consumer_group import KAFKA_VERSION
from assignors.consumer_group import STRATEGIES as SERVER_STRATEGIES
from assignors.kafka_java import kafka_classpath
from assignors.metrics import CLIENT_PAUSE_FACTORS, DEFAULT_PAUSE_MODEL
from assignors.tables import ACTUAL_COLUMNS, HANDOVERS_COLUMNS, MEMBERSHIP_COLUMNS, TOPICS_COLUMNS, WEIGHTS_COLUMNS
from spark_udfs.demo.sample import DEFAULT_GROUPS, DEFAULT_SNAPSHOTS
from spark_udfs.jobs.evaluate import print_summary, run_demo, run_evaluation
from spark_udfs.replay.group_replay import (
    ALL_STRATEGIES,
    JAVA_STRATEGIES,
    WEIGHTED_STRATEGIES,
    default_strategies,
    strategy_assignor,
)
from spark_udfs.replay.timing import OPTION_FIELDS, cluster_kafka_version, timing_model
from spark_udfs.report.ranking import DEFAULT_RANK_BY, RANK_KEYS, RankingError, parse_rank_by
from spark_udfs.session import SessionError, first_line, get_session
from spark_udfs.tables.paths import local_path
from spark_udfs.tables.reading import read_table
from spark_udfs.tables.schemas import SchemaError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pyspark.sql import SparkSession

    from spark_udfs.report.summary import Summary

__all__ = ["main", "register_demo", "register_evaluate"]

SPARK_EXTRA_MODULES = ("pyspark", "pandas", "pyarrow")


def require_spark() -> None:
    """Raise a one-line :class:`CliError` naming the extra when pyspark, pandas or pyarrow is missing."""
    for name in SPARK_EXTRA_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            msg = f"this command needs the spark extra ({name} is not installed): pip install 'assignors[spark]'"
            raise CliError(msg) from None


def _session(args: argparse.Namespace) -> SparkSession:
    try:
        return get_session(args.master, remote=args.remote)
    except SessionError as error:
        raise CliError(str(error)) from None


def _file_in_the_way(folder: Path) -> Path | None:
    """The first of ``folder`` and its parents that exists and is not a directory, if any."""
    return next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)


def _check_out(out: str, *, replace: bool = False) -> None:
    """Refuse, before Spark starts, an ``--out`` that is a file (or under one) or, unless ``replace``, that
    already holds an evaluation."""
    local = local_path(out)
    if local is None:
        return  # a URI: Spark's write refuses an existing evaluation (see run_evaluation)
    blocker = _file_in_the_way(local)
    if blocker is not None:
        where = "" if blocker == local else f" ({blocker} is a file)"
        msg = f"--out {out}: not a directory{where}"
        raise CliError(msg)
    if not replace and (local / "evaluation").exists():
        msg = f"{local / 'evaluation'} already holds an evaluation; choose another --out or remove it"
        raise CliError(msg)


def _check_report(report: str | None) -> None:
    """Refuse, before Spark starts, a ``--report`` that is a directory or whose folder cannot be made."""
    if report is None:
        return
    path = Path(report)
    if path.is_dir():
        msg = f"--report {report}: is a directory; give the file to write, e.g. {path / 'report.html'}"
        raise CliError(msg)
    blocker = _file_in_the_way(path.parent)
    if blocker is not None:
        msg = f"--report {report}: {blocker} is a file"
        raise CliError(msg)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        msg = f"--report {report}: cannot make its folder: {error.strerror or error}"
        raise CliError(msg) from None


def _spark_errors(error: Exception) -> CliError:
    """One line for an error Spark raised (its first line), whatever the session: classic or Connect."""
    return CliError(f"Spark failed: {type(error).__name__}: {first_line(error)}")


_KAFKA_VERSION = re.compile(r"\d+\.\d+(\.\d+)?([-+][0-9A-Za-z.-]+)?")


def _check_kafka_version(version: str | None, strategies: Sequence[str]) -> None:
    """Refuse, before Spark starts, a ``--kafka-version`` that is no version, or one a server strategy run is not
    modelled for (one line, exit status 2)."""
    if version is None:
        return
    if not _KAFKA_VERSION.fullmatch(version):
        msg = f"--kafka-version {version!r}: not a Kafka version such as {KAFKA_VERSION}"
        raise CliError(msg)
    for name in strategies:
        if name in SERVER_STRATEGIES:
            try:
                strategy_assignor(name, kafka_version=version)
            except ConfigurationError as error:
                msg = f"--kafka-version {version}: {error}"
                raise CliError(msg) from None


def _handovers_path(args: argparse.Namespace) -> str | None:
    """``--handovers``, or the ``handovers`` table ``assignors collect`` wrote beside a local ``--actual``."""
    if args.handovers:
        if not args.actual:
            msg = "--handovers needs --actual: the hand-overs are the recorded groups' own"
            raise CliError(msg)
        return str(args.handovers)
    if args.actual and "://" not in str(args.actual):
        beside = Path(args.actual).parent / "handovers"
        if beside.is_dir() and any(beside.glob("*.parquet")):
            return str(beside)
    return None


def _cluster_kafka(args: argparse.Namespace) -> dict[str, Any]:
    """The Kafka version of the cluster ``assignors collect`` read (its ``cluster.json`` beside a local
    ``--actual`` or ``--membership``), and its source; nothing when there is no such file."""
    for table in (args.actual, args.membership):
        if not table or "://" in str(table):
            continue
        path = Path(table).parent / CLUSTER_FILE
        if path.is_file():
            try:
                cluster = read_cluster_file(path)
            except ConfigurationError as error:
                raise CliError(str(error)) from None
            version, source = cluster_kafka_version(cluster, str(path), args.strategies)
            return {"kafka_version": version, "kafka_source": source}
    return {}


def _kafka_jars(location: str | None, strategies: Sequence[str]) -> tuple[str, ...] | None:
    """``--kafka-jars`` read as Kafka's client jars, checked before Spark starts (with ``java``); a Java strategy
    without them is one line too."""
    if not location:
        missing = [name for name in strategies if name in JAVA_STRATEGIES]
        if missing:
            msg = f"--strategies {missing[0]} needs --kafka-jars: it runs Kafka's own Java class on Kafka's jars"
            raise CliError(msg)
        return None
    try:
        jars = kafka_classpath(location)
        for name in strategies:
            if name in JAVA_STRATEGIES:
                strategy_assignor(name, kafka_jars=jars)
    except ConfigurationError as error:
        msg = f"--kafka-jars {location}: {error}"
        raise CliError(msg) from None
    return jars


def _cmd_evaluate(args: argparse.Namespace) -> int:
    require_spark()
    # the default resolved here (with --weights: weighted-sticky too), so what follows reads a list
    java = bool(args.kafka_jars)
    args.strategies = list(args.strategies or default_strategies(weighted=bool(args.weights), java=java))
    jars = _kafka_jars(args.kafka_jars, args.strategies)
    weighted = [name for name in args.strategies if name in WEIGHTED_STRATEGIES]
    if weighted and not args.weights:  # before Spark starts
        msg = f"--strategies {weighted[0]} needs --weights: it balances the partitions' weights, which the table gives"
        raise CliError(msg)
    if "moved_weight" in args.rank_by and not args.weights:
        msg = "--rank-by moved_weight needs --weights: the weight moved is measured in the table's weights"
        raise CliError(msg)
    _check_kafka_version(args.kafka_version, args.strategies)
    costs = _costs(args)  # bad timing options fail before Spark starts
    if args.kafka_version is None:
        costs.update(_cluster_kafka(args))
    _check_out(args.out)
    _check_report(args.report)
    handovers_path = _handovers_path(args)
    spark = _session(args)
    try:
        membership = read_table(spark, args.membership, MEMBERSHIP_COLUMNS)
        topics = read_table(spark, args.topics, TOPICS_COLUMNS)
        actual = read_table(spark, args.actual, ACTUAL_COLUMNS) if args.actual else None
        handovers = read_table(spark, handovers_path, HANDOVERS_COLUMNS) if handovers_path else None
        weights = read_table(spark, args.weights, WEIGHTS_COLUMNS) if args.weights else None
        summary = run_evaluation(
            spark,
            membership,
            topics,
            args.out,
            strategies=args.strategies,
            actual=actual,
            handovers=handovers,
            kafka_jars=jars,
            report=args.report,
            weights=weights,
            replace=False,
            **costs,
        )
    except (SchemaError, FileNotFoundError, FileExistsError, AssignorError) as error:
        raise CliError(str(error)) from None
    except Exception as error:  # noqa: BLE001 - no traceback reaches a user: Spark's own errors in one line
        raise _spark_errors(error) from None
    print_summary(summary, args.out, report=args.report)
    _check_evaluated(summary, f"the membership table {args.membership}")
    return 0


def _check_evaluated(summary: Summary, where: str) -> None:
    """Exit status 2 when no group could be evaluated: none at all, or every group with an input error."""
    if summary.strategies:
        return
    if not summary.groups and not summary.error_groups:
        msg = f"no group to evaluate: {where} has no rows"
    else:
        msg = f"no group could be evaluated: all {len(summary.error_groups)} groups have input errors (listed above)"
    raise CliError(msg)


def _cmd_demo(args: argparse.Namespace) -> int:
    require_spark()
    _check_kafka_version(args.kafka_version, ALL_STRATEGIES)
    costs = _costs(args)
    _check_out(args.out, replace=True)  # the demo writes its own sample over the last one
    _check_report(args.report)
    spark = _session(args)
    print(f"generating a sample history of {args.groups} groups x {args.snapshots} snapshots; evaluating on Spark")
    try:
        summary = run_demo(spark, args.out, groups=args.groups, snapshots=args.snapshots, report=args.report, **costs)
    except AssignorError as error:
        raise CliError(str(error)) from None
    except Exception as error:  # noqa: BLE001 - no traceback reaches a user: Spark's own errors in one line
        raise _spark_errors(error) from None
    print_summary(summary, args.out, report=args.report)
    _check_evaluated(summary, "the sample history")
    return 0


def _costs(args: argparse.Namespace) -> dict[str, Any]:
    """The score and the timing: the pause model with the timing options given, each recorded as your option."""
    options = {option: getattr(args, option) for option in OPTION_FIELDS}
    try:
        model = timing_model(DEFAULT_PAUSE_MODEL.for_client(args.client), options, cli=True)
    except AssignorError as error:
        raise CliError(str(error)) from None
    return {
        "rank_by": args.rank_by,
        "pause_model": model,
        "kafka_version": args.kafka_version,
        "kafka_source": None if args.kafka_version is None else "your option --kafka-version",
    }


def _rank_by(text: str) -> tuple[str, ...]:
    try:
        return parse_rank_by(text)
    except RankingError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _duration(text: str, unit: str) -> float:
    """A finite number >= 0 of ``unit``; anything else is a usage error naming the unit."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        msg = f"{text!r} is not a number of {unit} >= 0"
        raise argparse.ArgumentTypeError(msg)
    return value


def _seconds(text: str) -> float:
    return _duration(text, "seconds")


def _millis(text: str) -> float:
    """A Kafka setting in milliseconds, >= 0."""
    return _duration(text, "milliseconds")


def _count(text: str) -> int:
    """A count >= 1 (``--groups``, ``--snapshots``): anything else is a usage error."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        msg = f"{text!r} is not a whole number >= 1"
        raise argparse.ArgumentTypeError(msg)
    return value


CLIENTS: tuple[str, ...] = ("java", *sorted(CLIENT_PAUSE_FACTORS))
"""``--client``'s choices: Kafka's Java consumer and the clients ``make calibrate`` measured
(``assignors.metrics.CLIENT_PAUSE_FACTORS``)."""


def _add_score_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rank-by",
        type=_rank_by,
        default=DEFAULT_RANK_BY,
        metavar="FIGURE,...",
        help=(
            f"the ranking's score, lower is better, compared in order (default: {','.join(DEFAULT_RANK_BY)}); "
            f"figures: {', '.join(RANK_KEYS)}"
        ),
    )
    model = DEFAULT_PAUSE_MODEL
    timing = parser.add_argument_group(
        "timing (the pause model, docs/evaluation.md; the report lists every parameter and its source)"
    )
    timing.add_argument(
        "--client",
        choices=CLIENTS,
        default="java",
        help=(
            "the consumers' client, whose poll loop the pause model's measured factors follow (default: java, "
            "Kafka's own; kafka-python stops fetching what it keeps while it rejoins a cooperative rebalance's "
            "second round; a client not measured, such as librdkafka, is priced as java)"
        ),
    )
    timing.add_argument(
        "--heartbeat-interval-ms",
        type=_millis,
        metavar="MS",
        help=f"the classic consumers' heartbeat.interval.ms (default: Kafka's, {model.heartbeat_seconds * 1000:g})",
    )
    timing.add_argument(
        "--session-timeout-ms",
        type=_millis,
        metavar="MS",
        help=f"the classic consumers' session.timeout.ms (default: Kafka's, {model.session_seconds * 1000:g})",
    )
    timing.add_argument(
        "--consumer-heartbeat-interval-ms",
        type=_millis,
        metavar="MS",
        help=(
            "the broker's group.consumer.heartbeat.interval.ms, KIP-848 "
            f"(default: Kafka's, {model.consumer_heartbeat_seconds * 1000:g})"
        ),
    )
    timing.add_argument(
        "--consumer-session-timeout-ms",
        type=_millis,
        metavar="MS",
        help=(
            "the broker's group.consumer.session.timeout.ms, KIP-848 "
            f"(default: Kafka's, {model.consumer_session_seconds * 1000:g})"
        ),
    )
    timing.add_argument(
        "--rebalance-seconds",
        type=_seconds,
        metavar="S",
        help="the classic consumers' heartbeat interval in seconds, which paces a classic rebalance "
        "(--heartbeat-interval-ms in seconds; it priced one rebalance round before the model was measured)",
    )
    timing.add_argument(
        "--heartbeat-seconds",
        type=_seconds,
        metavar="S",
        help="the consumer protocol's heartbeat interval (KIP-848) in seconds (--consumer-heartbeat-interval-ms "
        "in seconds)",
    )
    timing.add_argument(
        "--kafka-version",
        metavar="X.Y.Z",
        help=(
            "the brokers' Kafka version: uniform and consumer-range replay as it runs them (default: the release "
            "assignors collect read from the cluster, in cluster.json beside a local --actual or --membership; "
            f"else the project's pinned Kafka, {KAFKA_VERSION})"
        ),
    )


def _add_session_options(parser: argparse.ArgumentParser, default: str) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--master", help=f"Spark master URL (default: {default}); not with an active session")
    where.add_argument("--remote", help="a Spark Connect server, sc://HOST:PORT (instead of --master)")
    parser.add_argument(
        "--report", help="where to write report.html (default: inside --out when it is local, else ./report.html)"
    )


def register_evaluate(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``assignors evaluate``."""
    evaluate = subparsers.add_parser("evaluate", help="replay membership histories on Spark and compare strategies")
    evaluate.add_argument("--membership", required=True, help="membership table: Parquet, or CSV with a header")
    evaluate.add_argument("--topics", required=True, help="topics table: Parquet, or CSV with a header")
    evaluate.add_argument("--out", required=True, help="output directory (evaluation/ and report.html)")
    evaluate.add_argument(
        "--actual", help="recorded assignments (the actual table of assignors collect): adds 'actual'"
    )
    evaluate.add_argument(
        "--handovers",
        help="KIP-848's recorded hand-overs (the handovers table of assignors collect; default: the handovers "
        "directory beside a local --actual, when there is one): with --actual, the KIP-848 pause factors are "
        "derived from them",
    )
    evaluate.add_argument(
        "--strategies",
        nargs="+",
        choices=list(default_strategies(weighted=True, java=True)),
        default=None,  # evaluate_history's default too
        help="default: all (the classic four, and uniform and consumer-range under the consumer protocol, KIP-848; "
        "with --weights also weighted-sticky, which needs them; with --kafka-jars also java-sticky and "
        "java-cooperative-sticky, Kafka's own Java classes)",
    )
    evaluate.add_argument(
        "--kafka-jars",
        metavar="PATH",
        help="Kafka's client jars (a Kafka installation, its libs directory, or a classpath): replays Kafka's own "
        "Java StickyAssignor and CooperativeStickyAssignor (what Java consumers run) beside ours and says by how much "
        "they differ on this history; needs java where Spark's workers run",
    )
    evaluate.add_argument(
        "--weights",
        help="partition weights (e.g. bytes/s): topic, partition (empty: every partition), weight, valid_from",
    )
    _add_score_options(evaluate)
    _add_session_options(evaluate, "the active session, else local[*]")
    evaluate.set_defaults(run=_cmd_evaluate)


def register_demo(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``assignors demo``."""
    demo = subparsers.add_parser("demo", help="evaluate a generated sample history (what `make demo` runs)")
    demo.add_argument("--out", default="demo-output", help="output directory (default: demo-output)")
    demo.add_argument(
        "--groups", type=_count, default=DEFAULT_GROUPS, help=f"number of groups (default: {DEFAULT_GROUPS})"
    )
    demo.add_argument(
        "--snapshots",
        type=_count,
        default=DEFAULT_SNAPSHOTS,
        help=f"snapshots per group (default: {DEFAULT_SNAPSHOTS})",
    )
    _add_score_options(demo)
    _add_session_options(demo, "the active session, else local[*]")
    demo.set_defaults(run=_cmd_demo)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``assignors`` command line with the Spark commands registered directly (no entry points needed).

    ``spark-submit src/spark_udfs/submit.py`` runs this: the wheel on ``--py-files`` is importable
    there, but not installed, so its entry points are not visible.
    """
    return assignors_main(argv, commands=(register_demo, register_evaluate))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
