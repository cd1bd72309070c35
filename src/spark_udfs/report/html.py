"""The report as one self-contained HTML file: plotly charts with plotly.js inlined, so it opens offline.

The page is built here from its tables (ranking, balance, every group, self-check) and the chart
sections of :mod:`spark_udfs.report.charts`; the building blocks (style, charts, tables, one look
per strategy: :func:`strategy_styles`) are in :mod:`spark_udfs.report.page`.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from assignors.tables import ACTUAL_STRATEGY
from spark_udfs.report.charts import distribution_section, group_section, timeline_section
from spark_udfs.report.page import SORT_SCRIPT, STYLE, Charts, strategy_styles, table
from spark_udfs.report.ranking import COLUMN_DEFINITIONS, RANK_KEYS
from spark_udfs.report.summary import adoption, recommended
from spark_udfs.report.text import PAUSE_MODEL_NOTE, headline, implementation, java_comparisons, kafka_version

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spark_udfs.report.ranking import StrategySummary
    from spark_udfs.report.summary import Summary

__all__ = ["render_html", "strategy_styles"]


def _ranking(summary: Summary) -> str:
    shown = [c for c in RANK_KEYS if c != "moved_weight" or summary.weighted]  # the weight moved: with weights
    figures = list(summary.rank_by) + [c for c in shown if c not in summary.rank_by]
    columns = ["rank", "strategy", "protocol", "rebalances", *figures]
    header = [(c, COLUMN_DEFINITIONS[c]) for c in columns]
    rows = [
        [position, s.strategy, s.protocol, s.rebalances, *(getattr(s, f) for f in figures)]
        for position, s in enumerate(summary.strategies, 1)
    ]
    ranked = ", then ".join(summary.rank_by)
    definitions = "".join(f"<dt>{html.escape(c)}</dt><dd>{html.escape(COLUMN_DEFINITIONS[c])}</dd>" for c in columns)
    if summary.weighted:
        unit = "weighted by the weights table"
    elif summary.weights_given:
        unit = "in partitions: the weights table weighs none of the partitions evaluated"
    else:
        unit = "in partitions (no weights table was given)"
    steps = "".join(
        f"<dt>{html.escape(s.strategy)} ({html.escape(s.protocol)})</dt><dd>{html.escape(text)}</dd>"
        for s in summary.strategies
        if (text := adoption(s.strategy)) is not None
    )
    return (
        f"<p>Score: <b>{html.escape(ranked)}</b> (lower is better); the score's columns are shaded. "
        f"Imbalance is {unit}. <code>--rank-by</code> chooses the score from: "
        f"{html.escape(', '.join(RANK_KEYS))}.</p>"
        + table(header, rows, table_id="ranking-table", score=summary.rank_by)
        + f'<dl class="defs">{definitions}</dl>'
        + (f'<h3 id="adopting">What adopting each strategy takes</h3><dl class="defs">{steps}</dl>' if steps else "")
    )


_PARAMETERS_HEADER = (
    ("parameter", "the pause model's parameter (assignors.metrics.PauseModel), or the Kafka version"),
    ("value", "its value: seconds for an interval, heartbeats of its interval for a factor"),
    ("source", "where the value came from: measured, Kafka's default, your option, or the cluster's records"),
    ("what it is", "the Kafka setting it stands for, or what the factor counts"),
)


def _timing(summary: Summary) -> str:
    """The "Timing parameters" section: each parameter's value and source, then what --actual allowed to derive."""
    rows = [[p.parameter, p.text, p.source, p.setting] for p in summary.parameters]
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in summary.timing_notes)
    return (
        f"<p>{html.escape(PAUSE_MODEL_NOTE)}.</p>"
        + table(_PARAMETERS_HEADER, rows, table_id="parameters-table")
        + (f'<ul id="timing-notes">{notes}</ul>' if notes else "")
    )


def _predicts(summary: Summary) -> str:
    """Which implementation each strategy's rows predict."""
    version = kafka_version(summary)
    items = "".join(
        f"<dt>{html.escape(s.strategy)}</dt><dd>{html.escape(text)}</dd>"
        for s in summary.strategies
        if (text := implementation(s.strategy, version)) is not None
    )
    compared = "".join(f"<li>{html.escape(line)}</li>" for line in java_comparisons(summary))
    if not items:
        return ""
    return f'<h3 id="predicts">What each row predicts</h3><dl class="defs">{items}</dl>' + (
        f'<ul id="java-comparison">{compared}</ul>' if compared else ""
    )


_BALANCE_HEADER = (
    ("group", "the consumer group"),
    ("worst balanced under", "the strategy that leaves this group worst balanced"),
    ("its worst imbalance", "that strategy's worst max/mean load ratio in this group"),
    ("best balanced under", "the strategy that leaves this group best balanced"),
    ("best worst imbalance", "that strategy's worst max/mean load ratio in this group"),
)


def _balance(summary: Summary) -> str:
    """Per group, the strategy that leaves it worst balanced: the global worst alone can hide one."""
    if not summary.balance_by_group:
        return "<p>Every strategy leaves every group equally balanced (the same worst max/mean load ratio).</p>"
    counts = ", ".join(
        f"{html.escape(name)} in {count:,}"
        for name, count in sorted(summary.worst_balanced.items(), key=lambda item: (-item[1], item[0]))
    )
    rows = [
        [g.group_id, g.worst_strategy, g.worst_imbalance, g.best_strategy, g.best_imbalance]
        for g in summary.balance_by_group
    ]
    shown = len(rows)
    more = (
        f" The table shows the {shown:,} where the strategies differ most."
        if summary.balance_group_count > shown
        else ""
    )
    return (
        f"<p>In {summary.balance_group_count:,} groups the strategies leave a different worst imbalance. "
        f"The strategy that leaves a group worst balanced: {counts}.{more}</p>"
        f'<div class="scroll">{table(_BALANCE_HEADER, rows, table_id="balance-table")}</div>'
    )


_GROUP_HEADER = (
    ("group", "the consumer group"),
    ("strategy", "the assignor replayed"),
    ("rebalances", "snapshots that rebalanced"),
    ("pause", "total partition-seconds not consumed"),
    ("worst pause", "most partition-seconds of one rebalance"),
    ("worst moved", "most partitions moved in one rebalance"),
    ("worst revoked", "most partitions revoked in one rebalance"),
    ("worst load spread", "worst max - min partitions per member"),
    ("worst topic spread", "worst per-topic max - min"),
    ("worst imbalance", "worst max/mean load ratio"),
)


def _groups(summary: Summary) -> str:
    rows = [
        [
            g.group_id,
            g.strategy,
            g.rebalances,
            g.pause,
            g.worst_pause,
            g.worst_moved,
            g.worst_revoked,
            g.worst_load_spread,
            g.worst_topic_spread,
            g.worst_imbalance,
        ]
        for g in summary.group_table
    ]
    shown = len(rows)
    more = (
        f"<p>The {shown:,} rows with the most pause cost of {summary.group_count:,}; the Parquet output has all.</p>"
        if summary.group_count > shown
        else ""
    )
    return more + f'<div class="scroll">{table(_GROUP_HEADER, rows, table_id="group-table")}</div>'


def _self_check(summary: Summary) -> str:
    """Match rate per group and the mismatches: does our replay of range/roundrobin reproduce the recording?"""
    matched = sum(g.matched for g in summary.self_check)
    checked = sum(g.checked for g in summary.self_check)
    rates = table(
        [
            ("group", "the consumer group"),
            ("reproduced", "recorded snapshots our assignor reproduced exactly"),
            ("checked", "recorded range/roundrobin snapshots"),
            ("match rate", "reproduced / checked"),
        ],
        [[g.group_id, g.matched, g.checked, f"{g.rate:.0%}"] for g in summary.self_check],
        table_id="self-check-table",
    )
    listed = [
        [g.group_id, assignor or "", str(ts) if ts is not None else "", generation, what]
        for g in summary.self_check
        for ts, generation, assignor, what in g.mismatches
    ]
    mismatches = (
        table(
            [
                ("group", "the consumer group"),
                ("assignor", "the recorded assignor"),
                ("snapshot", "the recorded snapshot (UTC)"),
                ("generation", "its generation"),
                ("what differs", "member: recorded [...], replayed [...]"),
            ],
            listed,
            table_id="mismatch-table",
        )
        if listed
        else "<p>No mismatches.</p>"
    )
    return (
        f"<p>{matched:,} of {checked:,} recorded range/roundrobin snapshots reproduced by our assignors. "
        "A mismatch means the membership, the partition counts or the assignor differ from what the tables say "
        "(for example rack-aware range with partition racks the tables lack).</p>"
        f'<div class="scroll">{rates}</div><h3>Mismatches (first five per group)</h3>'
        f'<div class="scroll">{mismatches}</div>'
    )


def _strategies_text(strategies: Sequence[StrategySummary]) -> str:
    return ", ".join(f"{s.strategy} ({s.protocol})" for s in strategies)


def render_html(summary: Summary, *, title: str = "Kafka assignor evaluation") -> str:
    """The self-contained report: ranking, distributions, time series, drill-down, every group, input errors."""
    from plotly.offline import get_plotlyjs

    styles = strategy_styles(s.strategy for s in summary.strategies)
    for group in summary.drilldown:
        styles = strategy_styles([*styles, *group.rebalances])
    charts = Charts()
    ranking = _ranking(summary)
    distributions = distribution_section(summary, charts, styles)
    timeline = timeline_section(summary, charts, styles)
    drilldown = "".join(group_section(g, charts, styles) for g in summary.drilldown) or "<p>No rebalances.</p>"
    errors = (
        table(
            [("group", "the consumer group"), ("error", "why its input could not be replayed")],
            [[g if g is not None else "(null)", e] for g, e in summary.error_groups],
            table_id="error-table",
        )
        if summary.error_groups
        else "<p>None: every group was evaluated.</p>"
    )
    notes = "".join(f"<p>{html.escape(n)}</p>" for n in summary.notes)
    answer = headline(summary)
    best = recommended(summary)
    adopt = adoption(best) if best is not None else None
    notes = "".join(f'<p class="caveat">{html.escape(c)}</p>' for c in summary.caveats) + notes
    if adopt:
        notes = f'<p id="adoption">{html.escape(adopt)}</p>' + notes
    if answer:
        notes = f'<p class="headline" id="headline">{html.escape(answer)}</p>' + notes
    reference = next((g.strategy for g in summary.drilldown if g.strategy), "")
    measured = (
        " (the cluster's own assignments)"
        if reference == ACTUAL_STRATEGY
        else " (the recommended strategy)"
        if reference
        else ""
    )
    drill_heading = f"Groups with the most pause cost{f' under {reference}' if reference else ''}{measured}"
    return "\n".join(
        [
            "<!DOCTYPE html>",
            f'<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<style>{STYLE}</style>",
            f'<script type="text/javascript">{get_plotlyjs()}</script></head><body>',
            f"<h1>{html.escape(title)}</h1>",
            (
                f"<p>{summary.groups:,} groups, {summary.snapshots:,} snapshots, {len(summary.error_groups)} groups "
                f"with input errors. Strategies: {html.escape(_strategies_text(summary.strategies))}.</p>"
            ),
            notes,
            '<h2 id="ranking">Ranking</h2>',
            ranking,
            _predicts(summary),
            *(['<h2 id="timing">Timing parameters</h2>', _timing(summary)] if summary.parameters else []),
            '<h2 id="balance">Which strategy leaves each group worst balanced</h2>',
            _balance(summary),
            '<h2 id="distributions">Distributions</h2>',
            distributions,
            '<h2 id="timeline">Over time</h2>',
            timeline,
            f'<h2 id="drilldown">{html.escape(drill_heading)}</h2>',
            drilldown,
            '<h2 id="groups">Every group</h2>',
            _groups(summary),
            *(
                ['<h2 id="self-check">Self-check of the recorded assignments</h2>', _self_check(summary)]
                if summary.self_check
                else []
            ),
            '<h2 id="errors">Groups with input errors</h2>',
            errors,
            f"<script>{SORT_SCRIPT}</script>",
            "<script>" + "\n".join(charts.calls) + "</script>",
            "</body></html>",
        ]
    )
