"""The ``assignors`` command.

``assignors assign --input snapshot.json [--strategy NAME ...] [--json]`` assigns one
group snapshot with each strategy and prints every member's partitions and the
balance and movement figures, where the group settles (a COOPERATIVE strategy's
follow-up rounds included). Bad input is one line on stderr and exit status 2.

``assignors simulate --scenario FILE [--json]`` runs a consumer-group scenario (JSON
events: join, leave, crash, restart, subscribe, add_partitions) through the group
simulator and prints its timeline, round by round (heartbeat by heartbeat once a member
speaks the consumer protocol, KIP-848: its assignors are ``["consumer"]``, ``["uniform"]``
or ``["consumer-range"]``).

Other packages add commands through the entry-point group ``assignors.commands`` (loaded in
name order): each entry is a callable ``register(subparsers)`` that adds one sub-parser and
sets ``run=FUNC`` with ``FUNC(args) -> int``. The Spark layer registers ``evaluate``, ``demo``
and ``collect`` this way, so this module never names it. A command may raise
:class:`CliError` (or an :class:`~assignors.AssignorError`) to print one line and exit with 2.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import logging
import sys
from typing import TYPE_CHECKING, Any

from assignors._assign import assign_snapshot
from assignors._builtin.registry import assignor_names
from assignors._classic.timeline import timeline_json
from assignors._core.errors import AssignorError, UsageError
from assignors._core.files import read_json, read_text
from assignors._core.snapshot import parse_snapshot
from assignors._groups.scenario import parse_scenario
from assignors._groups.simulator import GroupSimulator

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    Register = Callable[[Any], None]

__all__ = ["COMMAND_GROUP", "EXIT_USAGE", "CliError", "main", "read_json", "read_text"]

logger = logging.getLogger(__name__)

EXIT_USAGE = 2
COMMAND_GROUP = "assignors.commands"


CliError = UsageError
"""The old name of :class:`~assignors.UsageError` (printed as one line, exit status 2)."""


def _cmd_assign(args: argparse.Namespace) -> int:
    snapshot = parse_snapshot(read_json(args.input))
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
    """Run the scenario on :class:`~assignors.rebalance.GroupSimulator`; a group where a member speaks the
    consumer protocol (KIP-848) prints the heartbeat-level timeline of its consumer-protocol model."""
    scenario = parse_scenario(read_json(args.scenario))
    simulator = GroupSimulator(scenario.partitions, session_timeout_s=scenario.session_timeout_s)
    timeline = simulator.run(scenario.events)
    heartbeats = simulator.consumer_group
    if heartbeats is not None:
        print(json.dumps(heartbeats.timeline.to_json(), indent=2) if args.json else heartbeats.timeline.render())
        return 0
    print(json.dumps(timeline_json(timeline), indent=2) if args.json else timeline.render())
    return 0


def plugin_commands() -> list[Register]:
    """The ``register`` callables of the ``assignors.commands`` entry points, in name order.

    An entry point that cannot be loaded (a stale or broken installation) is left out with a
    warning, so the built-in commands and ``--help`` keep working.
    """
    registrars: list[Register] = []
    for entry in sorted(importlib.metadata.entry_points(group=COMMAND_GROUP), key=lambda e: (e.name, e.value)):
        try:
            registrars.append(entry.load())
        except Exception as error:  # noqa: BLE001 - one broken plugin must not break the command line
            logger.warning("assignors: command %r (%s) is not available: %s", entry.name, entry.value, error)
    return registrars


def _parser(commands_from: Iterable[Register]) -> argparse.ArgumentParser:
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
    for register in commands_from:
        register(commands)
    return parser


def main(argv: Sequence[str] | None = None, *, commands: Iterable[Register] | None = None) -> int:
    """Run the command line; returns the exit status.

    ``commands`` are the ``register`` callables of the extra commands (default: the
    ``assignors.commands`` entry points).
    """
    args = _parser(plugin_commands() if commands is None else commands).parse_args(argv)
    try:
        status: int = args.run(args)
    except (CliError, AssignorError) as error:
        # one line whatever the input: a name holding a line break (a JSON key "\n") is printed escaped
        one_line = str(error).replace("\r", "\\r").replace("\n", "\\n")
        print(f"assignors {args.command}: error: {one_line}", file=sys.stderr)
        return EXIT_USAGE
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
