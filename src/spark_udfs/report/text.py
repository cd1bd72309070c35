"""The summary as text: the headline (which strategy to adopt, and why) and the terminal's ranking table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assignors.consumer_group import KAFKA_VERSION
from assignors.kafka_java import JAVA_ASSIGNORS
from assignors.tables import ACTUAL_STRATEGY
from spark_udfs.replay.group_replay import JAVA_PREFIX, JAVA_STRATEGIES
from spark_udfs.replay.timing import KAFKA_VERSION_PARAMETER, parameters_text
from spark_udfs.report.summary import SHOWN_ERROR_GROUPS, Summary, adoption, recommended

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spark_udfs.report.ranking import StrategySummary

__all__ = [
    "IMPLEMENTATIONS",
    "PAUSE_MODEL_NOTE",
    "headline",
    "implementation",
    "java_comparisons",
    "kafka_version",
    "render_text",
]

_OURS = "ours, as the kafka-python and aiokafka adapters run it (assignors.kafka_python, assignors.aiokafka)"
IMPLEMENTATIONS: dict[str, str] = {
    "range": f"{_OURS}; identical to Kafka's Java RangeAssignor, which Java and librdkafka consumers run",
    "roundrobin": f"{_OURS}; identical to Kafka's Java RoundRobinAssignor, which Java and librdkafka consumers run",
    "sticky": (
        f"{_OURS}; Java consumers run Kafka's StickyAssignor, which ours matches or beats in balance (the two "
        "can move different partitions)"
    ),
    "cooperative-sticky": (
        f"{_OURS}; Java consumers run Kafka's CooperativeStickyAssignor, which ours matches or beats in balance "
        "(the two can move different partitions)"
    ),
    "weighted-sticky": f"{_OURS}; Kafka has no such assignor",
    "java-sticky": (
        "Kafka's own Java StickyAssignor, unmodified (the kafka-clients jar of --kafka-jars), which Java consumers "
        "run; librdkafka's sticky assignor is a port of it"
    ),
    "java-cooperative-sticky": (
        "Kafka's own Java CooperativeStickyAssignor, unmodified (the kafka-clients jar of --kafka-jars), which Java "
        "consumers run"
    ),
    "uniform": "the broker's UniformAssignor (KIP-848) as Kafka {version} runs it, whatever the client",
    "consumer-range": "the broker's RangeAssignor (KIP-848) as Kafka {version} runs it, whatever the client",
    ACTUAL_STRATEGY: "the cluster's own recorded assignments",
}
"""Which implementation each strategy's rows predict (``{version}``: the Kafka version the replay used)."""

PAUSE_MODEL_NOTE = (
    "pause_partition_seconds is assignors.metrics.rebalance_pause under these parameters: moved partitions "
    "and, per protocol, orphaned ones (a departed member's); every departure is priced as a LeaveGroup, the "
    "membership table does not say which members crashed"
)
"""How the pause is priced, said above the timing parameters in both reports."""


def kafka_version(summary: Summary) -> str:
    """The Kafka version the server strategies replayed as (the pinned one for a summary without parameters)."""
    return next((p.text for p in summary.parameters if p.parameter == KAFKA_VERSION_PARAMETER), KAFKA_VERSION)


def implementation(strategy: str, version: str = KAFKA_VERSION) -> str | None:
    """Which implementation the rows of ``strategy`` predict (None for a name this report does not know)."""
    text = IMPLEMENTATIONS.get(strategy)
    return None if text is None else text.format(version=version)


JAVA_TWINS: tuple[tuple[str, str, str], ...] = tuple(
    (name.removeprefix(JAVA_PREFIX), name, JAVA_ASSIGNORS[name.removeprefix(JAVA_PREFIX)]) for name in JAVA_STRATEGIES
)
"""This project's sticky assignors, their Kafka twins replayed on the same history, and Kafka's class names."""


def _against(ours: float, kafka: float, unit: str = "") -> str:
    """``ours against kafka`` with ours' difference in percent of Kafka's (``the same`` when equal)."""
    if ours == kafka:
        return f"{ours:,.0f}{unit} for both"
    change = f" ({(ours - kafka) / kafka:+.0%})" if kafka else ""
    return f"{ours:,.0f}{unit} against {kafka:,.0f}{unit}{change}"


def java_comparisons(summary: Summary) -> list[str]:
    """Where this project's sticky assignors and Kafka's own (replayed with ``--kafka-jars``) differ on this
    history, and by how much: one sentence per pair that both ran (none without Kafka's jars)."""
    found = {s.strategy: s for s in summary.strategies}
    lines = []
    for ours_name, java_name, kafka_class in JAVA_TWINS:
        ours, kafka = found.get(ours_name), found.get(java_name)
        if ours is None or kafka is None:
            continue
        same = (ours.pause, ours.moved, ours.revoked, ours.imbalance) == (
            kafka.pause,
            kafka.moved,
            kafka.revoked,
            kafka.imbalance,
        )
        verdict = "the same figures" if same else "different figures"
        lines.append(
            f"{ours_name} (ours) and Kafka's {kafka_class} ({java_name}) on this history: {verdict}; pause "
            f"{_against(ours.pause, kafka.pause, ' partition-seconds')}, partitions moved "
            f"{_against(ours.moved, kafka.moved)}, revoked {_against(ours.revoked, kafka.revoked)}, worst load "
            f"{ours.imbalance:.2f}x against {kafka.imbalance:.2f}x the mean"
        )
    return lines


_FIGURES: dict[str, tuple[str, str]] = {
    "pause": ("pause", "{:,.0f} partition-seconds"),
    "imbalance": ("worst load", "{:.2f}x the mean"),
    "imbalance_p95": ("95th-percentile load", "{:.2f}x the mean"),
    "moved": ("partitions moved", "{:,.0f}"),
    "moved_weight": ("weight moved", "{:,.0f}"),
    "revoked": ("partitions revoked", "{:,.0f}"),
    "orphaned": ("partitions orphaned", "{:,.0f}"),
    "topic_spread": ("worst per-topic spread", "{:,.0f} partitions"),
    "load_spread": ("worst load spread", "{:,.0f} partitions"),
    "rounds": ("rebalance rounds", "{:,.0f}"),
    "invalid": ("invalid assignments", "{:,.0f}"),
    "assign_ms": ("time in the assignor", "{:,.0f} ms"),
}
"""How the headline words each figure of the score: (label, value format)."""


def _value(strategy: StrategySummary, key: str) -> str:
    value = getattr(strategy, key)
    return "not measured (no weights table)" if value is None else _FIGURES[key][1].format(float(value))


def _figures(strategy: StrategySummary, keys: Sequence[str]) -> str:
    return ", ".join(f"{_FIGURES[key][0]} {_value(strategy, key)}" for key in keys)


def _why(best: StrategySummary, second: StrategySummary, keys: Sequence[str]) -> str:
    """The first figure of the score on which ``best`` beats ``second``, and those (later) where it is behind."""
    decisive = next((k for k in keys if float(getattr(best, k)) != float(getattr(second, k))), None)
    if decisive is None:
        return f"it ties with the runner-up {second.strategy} on every figure of the score and wins by name"
    ours, theirs = float(getattr(best, decisive)), float(getattr(second, decisive))
    factor = f", {theirs / ours:.1f}x less" if ours > 0 and theirs / ours >= 1.1 else ""  # noqa: PLR2004
    behind = [k for k in keys if float(getattr(best, k)) > float(getattr(second, k))]
    trade = (
        "; it is behind on "
        + " and ".join(f"{_FIGURES[k][0]} ({_value(best, k)} against {_value(second, k)})" for k in behind)
        if behind
        else ""
    )
    return (
        f"it has the lowest {_FIGURES[decisive][0]}: {_value(best, decisive)} against {_value(second, decisive)} "
        f"for the runner-up {second.strategy} ({second.protocol}){factor}{trade}"
    )


def headline(summary: Summary) -> str | None:
    """The report's answer in the figures of the score: which strategy, and why.

    With recorded assignments: "Your cluster did X; STRATEGY would have done Z" (the best
    ranked replayed strategy). Otherwise: the strategy that ranks first, and the figure of
    the score that puts it ahead of the runner-up. None when nothing was evaluated.
    """
    keys = summary.rank_by
    replayed = [s for s in summary.strategies if s.strategy != ACTUAL_STRATEGY]
    recorded = next((s for s in summary.strategies if s.strategy == ACTUAL_STRATEGY), None)
    if not replayed:
        return None
    best = replayed[0]
    if recorded is not None:
        return (
            f"Your cluster did {_figures(recorded, keys)} ({recorded.protocol}); "
            f"{best.strategy} ({best.protocol}) would have done {_figures(best, keys)}."
        )
    text = f"Recommended: {best.strategy} ({best.protocol})."
    if len(replayed) > 1:
        second = replayed[1]
        text += f" Ranked by {', then '.join(keys)}, {_why(best, second, keys)}."
        if any(float(getattr(best, k)) != float(getattr(second, k)) for k in keys):
            return text  # it names the figures that decide and those where it is behind; the rest are equal
    return f"{text} Its figures: {_figures(best, keys)}."


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 or value == int(value) else f"{value:,.2f}"  # noqa: PLR2004


def render_text(summary: Summary) -> str:
    """A short plain-text summary for the terminal: the ranking and the figures of its score."""
    answer = headline(summary)
    best = recommended(summary)
    adopt = adoption(best) if best is not None else None
    width = max([20, *(len(s.strategy) + 1 for s in summary.strategies)])  # the names' column, 20 wide as it was
    lines = [
        *([answer, ""] if answer else []),
        f"{summary.groups} groups, {summary.snapshots} snapshots, {len(summary.error_groups)} groups with input errors",
        f"ranked by {', then '.join(summary.rank_by)} (lower is better)",
        "",
        (
            f"{'rank':<5}{'strategy':<{width}}{'pause p-s':>14}{'imbalance':>11}{'moved':>9}{'revoked':>9}"
            f"{'topic spread':>13}{'invalid':>8}" + (f"{'weight moved':>14}" if summary.weighted else "")
        ),
    ]
    for position, s in enumerate(summary.strategies, 1):
        weight = "" if s.moved_weight is None else _number(s.moved_weight)
        lines.append(
            f"{position:<5}{s.strategy:<{width}}{_number(s.pause):>14}{s.imbalance:>11.2f}{s.moved:>9}{s.revoked:>9}"
            f"{s.topic_spread:>13}{s.invalid:>8}" + (f"{weight:>14}" if summary.weighted else "")
        )
    if adopt:
        lines += ["", adopt]
    lines += [line for caveat in summary.caveats for line in ("", caveat)]
    if summary.strategies:
        version = kafka_version(summary)
        lines += ["", "What each row predicts:"]
        lines += [
            f"  {s.strategy}: {text}"
            for s in summary.strategies
            if (text := implementation(s.strategy, version)) is not None
        ]
        lines += [f"  {line}" for line in java_comparisons(summary)]
    if summary.parameters:
        lines += ["", "Timing parameters (name, value, source):", *parameters_text(summary.parameters)]
        lines += [f"  {PAUSE_MODEL_NOTE}", *(f"  {note}" for note in summary.timing_notes)]
    if summary.worst_balanced:
        counts = ", ".join(
            f"{name} {count}" for name, count in sorted(summary.worst_balanced.items(), key=lambda i: (-i[1], i[0]))
        )
        lines += [
            "",
            (
                f"worst balanced: of {summary.balance_group_count} groups where the strategies' balance differs, "
                f"the strategy that leaves each worst balanced: {counts}"
            ),
        ]
    if summary.error_groups:
        shown = summary.error_groups[:SHOWN_ERROR_GROUPS]
        more = len(summary.error_groups) - len(shown)
        lines += ["", f"groups with input errors ({len(summary.error_groups)}; first error of each):"]
        lines += [f"  {'(null group_id)' if group is None else group}: {error}" for group, error in shown]
        if more:
            lines.append(f"  ... and {more} more (every group's error is in the report and the evaluation)")
    if summary.self_check:
        matched = sum(g.matched for g in summary.self_check)
        checked = sum(g.checked for g in summary.self_check)
        lines += ["", f"self-check: {matched} of {checked} recorded range/roundrobin snapshots reproduced"]
        lines += [
            f"  {g.group_id}: {g.matched}/{g.checked} ({g.rate:.0%})"
            for g in summary.self_check
            if g.matched < g.checked
        ]
    return "\n".join(lines)
