"""The ``assignors`` command.

``assignors assign --input snapshot.json [--strategy NAME ...] [--json]`` assigns one
group snapshot with each strategy and prints every member's partitions and the
balance and movement figures, where the group settles (a COOPERATIVE strategy's
follow-up rounds included). Bad input is one line on stderr and exit status 2.

``assignors simulate --scenario FILE [--json]`` runs a consumer-group scenario (JSON
events: join, leave, crash, restart, subscribe, add_partitions) through the group
simulator and prints its timeline, round by round.

``assignors evaluate --membership PATH --topics PATH --out DIR [--strategies ...] [--master URL]``
replays membership histories on Spark and writes the evaluation and ``report.html``;
``assignors demo [--out DIR]`` does it on a generated sample history. Both need the
``spark`` extra and import it only when run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assignors._assign import assign_snapshot
from assignors._errors import AssignorError, UsageError
from assignors._registry import assignor_names
from assignors._snapshot import parse_snapshot

if TYPE_CHECKING:
    from collections.abc import Sequence


__all__ = ["main"]

EXIT_USAGE = 2


CliError = UsageError
"""The old name of :class:`~assignors.UsageError` (printed as one line, exit status 2)."""


def _load_json(path: str) -> object:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        msg = f"{path}: cannot read: {error.strerror or error}"
        raise CliError(msg) from None
    except UnicodeDecodeError as error:
        msg = f"{path}: not UTF-8 text ({error.reason} at byte {error.start})"
        raise CliError(msg) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        msg = f"{path}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        raise CliError(msg) from None


def _cmd_assign(args: argparse.Namespace) -> int:
    snapshot = parse_snapshot(_load_json(args.input))
    strategies: list[str] = args.strategy or list(assignor_names())
    reports = [assign_snapshot(snapshot, name) for name in strategies]
    if args.json:
        print(json.dumps([report.to_json() for report in reports], indent=2))
    else:
        counts = snapshot.cluster.partitions_per_topic
        print(f"{len(snapshot.subscriptions)} members, {len(counts)} topics, {sum(counts.values())} partitions")
        for report in reports:
            print(report.render())
    return 0


def _cmd_simulate(args: argparse.Namespace) -> int:
    from assignors.rebalance import parse_scenario, timeline_json

    scenario = parse_scenario(_load_json(args.scenario))
    timeline = scenario.run()
    if args.json:
        print(json.dumps(timeline_json(timeline), indent=2))
    else:
        print(timeline.render())
    return 0


def _spark() -> Any:
    try:
        from spark_udfs import job
        from spark_udfs.session import get_session
    except ImportError as error:
        msg = f"this command needs the spark extra (pip install 'assignors[spark]'): {error}"
        raise CliError(msg) from None
    return job, get_session


def _cmd_evaluate(args: argparse.Namespace) -> int:
    job, get_session = _spark()
    from spark_udfs.replay import MEMBERSHIP_COLUMNS, TOPICS_COLUMNS
    from spark_udfs.udfs import SchemaError

    spark = get_session(args.master)
    try:
        membership = job.read_table(spark, args.membership, MEMBERSHIP_COLUMNS)
        topics = job.read_table(spark, args.topics, TOPICS_COLUMNS)
        summary = job.run_evaluation(spark, membership, topics, args.out, strategies=args.strategies)
    except (SchemaError, FileNotFoundError) as error:
        raise CliError(str(error)) from None
    job.print_summary(summary, args.out)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    job, get_session = _spark()
    spark = get_session(args.master)
    print(f"generating a sample history of {args.groups} groups x {args.snapshots} snapshots; evaluating on Spark")
    summary = job.run_demo(spark, args.out, groups=args.groups, snapshots=args.snapshots)
    job.print_summary(summary, args.out)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assignors", description="Kafka consumer partition assignors.")
    commands = parser.add_subparsers(dest="command", required=True)
    assign = commands.add_parser("assign", help="assign one group snapshot (JSON) with each strategy")
    assign.add_argument("--input", required=True, help="snapshot JSON: topics and members")
    assign.add_argument(
        "--strategy",
        action="append",
        choices=assignor_names(),
        help="a strategy to run (repeatable; default: all)",
    )
    assign.add_argument("--json", action="store_true", help="print the reports as JSON")
    assign.set_defaults(run=_cmd_assign)
    simulate = commands.add_parser("simulate", help="run a consumer-group scenario and print its timeline")
    simulate.add_argument("--scenario", required=True, help="scenario JSON: topics, session_timeout_s, events")
    simulate.add_argument("--json", action="store_true", help="print the timeline as JSON")
    simulate.set_defaults(run=_cmd_simulate)
    evaluate = commands.add_parser("evaluate", help="replay membership histories on Spark and compare strategies")
    evaluate.add_argument("--membership", required=True, help="membership table: Parquet, or CSV with a header")
    evaluate.add_argument("--topics", required=True, help="topics table: Parquet, or CSV with a header")
    evaluate.add_argument("--out", required=True, help="output directory (evaluation/ and report.html)")
    evaluate.add_argument(
        "--strategies", nargs="+", choices=assignor_names(), default=list(assignor_names()), help="default: all"
    )
    evaluate.add_argument("--master", help="Spark master URL (default: the active session, else local[*])")
    evaluate.set_defaults(run=_cmd_evaluate)
    demo = commands.add_parser("demo", help="evaluate a generated sample history (what `make demo` runs)")
    demo.add_argument("--out", default="demo-output", help="output directory (default: demo-output)")
    demo.add_argument("--groups", type=int, default=300, help="number of groups (default: 300)")
    demo.add_argument("--snapshots", type=int, default=48, help="snapshots per group (default: 48)")
    demo.add_argument("--master", help="Spark master URL (default: local[*])")
    demo.set_defaults(run=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except (CliError, AssignorError) as error:
        print(f"assignors {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
