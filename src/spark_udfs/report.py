"""The evaluation's summary and a self-contained HTML report (inline SVG charts, no scripts)."""

from __future__ import annotations

import datetime as dt
import html
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pyspark.sql import DataFrame

__all__ = ["StrategySummary", "Summary", "render_html", "render_text", "summarize"]

_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


@dataclass(frozen=True, slots=True)
class StrategySummary:
    """One strategy over the whole history."""

    strategy: str
    rebalances: int
    moved: int
    orphaned: int
    revoked: int
    rounds: int
    worst_spread: int
    mean_stddev: float
    invalid: int
    assign_ms: float

    @property
    def churn(self) -> int:
        """Partitions that changed hands or were given up: ``moved + revoked``."""
        return self.moved + self.revoked


@dataclass(frozen=True, slots=True)
class Summary:
    """What the report shows, collected from the evaluation output (small)."""

    groups: int
    snapshots: int
    error_groups: list[tuple[str | None, str]]
    strategies: list[StrategySummary]  # ranked: least churn first, then least worst imbalance
    timeline: dict[str, list[tuple[dt.datetime, int, int, float]]]  # strategy -> (ts, moved, revoked, mean spread)
    top_groups: list[tuple[str, str, int, int]]  # (group, strategy, revoked, moved)


def summarize(evaluation: DataFrame, *, top: int = 10) -> Summary:
    """Aggregate the evaluation output on Spark and collect the small result."""
    from pyspark.sql import functions as sf

    ok = evaluation.where(sf.col("error").isNull())
    per_strategy = (
        ok.groupBy("strategy")
        .agg(
            sf.sum(sf.col("rebalanced").cast("int")).alias("rebalances"),
            sf.sum("moved").alias("moved"),
            sf.sum("orphaned").alias("orphaned"),
            sf.sum("revoked").alias("revoked"),
            sf.sum("rounds").alias("rounds"),
            sf.max("load_spread").alias("worst_spread"),
            sf.avg("load_stddev").alias("mean_stddev"),
            sf.sum((~sf.col("valid")).cast("int")).alias("invalid"),
            sf.sum("assign_ms").alias("assign_ms"),
        )
        .collect()
    )
    strategies = sorted(
        (
            StrategySummary(
                r["strategy"],
                int(r["rebalances"] or 0),
                int(r["moved"] or 0),
                int(r["orphaned"] or 0),
                int(r["revoked"] or 0),
                int(r["rounds"] or 0),
                int(r["worst_spread"] or 0),
                float(r["mean_stddev"] or 0.0),
                int(r["invalid"] or 0),
                float(r["assign_ms"] or 0.0),
            )
            for r in per_strategy
        ),
        key=lambda s: (s.churn, s.worst_spread, s.strategy),
    )
    timeline: dict[str, list[tuple[dt.datetime, int, int, float]]] = {}
    points = (
        ok.groupBy("strategy", "snapshot_ts")
        .agg(sf.sum("moved").alias("moved"), sf.sum("revoked").alias("revoked"), sf.avg("load_spread").alias("spread"))
        .orderBy("strategy", "snapshot_ts")
        .collect()
    )
    for r in points:
        timeline.setdefault(r["strategy"], []).append(
            (r["snapshot_ts"], int(r["moved"] or 0), int(r["revoked"] or 0), float(r["spread"] or 0.0))
        )
    churn = (
        ok.groupBy("group_id", "strategy")
        .agg(sf.sum("revoked").alias("revoked"), sf.sum("moved").alias("moved"))
        .orderBy(sf.desc("revoked"), sf.desc("moved"), "group_id", "strategy")
        .limit(top)
        .collect()
    )
    errors = (
        evaluation.where(sf.col("error").isNotNull())
        .groupBy("group_id")
        .agg(sf.min("error").alias("error"))
        .orderBy("group_id")
        .collect()
    )
    counts = evaluation.agg(
        sf.countDistinct("group_id").alias("groups"),
        sf.countDistinct("group_id", "snapshot_ts").alias("snapshots"),
    ).collect()[0]
    return Summary(
        int(counts["groups"]),
        int(counts["snapshots"]),
        [(r["group_id"], r["error"]) for r in errors],
        strategies,
        timeline,
        [(r["group_id"], r["strategy"], int(r["revoked"] or 0), int(r["moved"] or 0)) for r in churn],
    )


def render_text(summary: Summary) -> str:
    """A short plain-text summary for the terminal."""
    lines = [
        f"{summary.groups} groups, {summary.snapshots} snapshots, {len(summary.error_groups)} groups with input errors",
        "",
        f"{'rank':<5}{'strategy':<20}{'moved':>9}{'revoked':>9}{'orphaned':>9}{'worst spread':>13}{'invalid':>8}",
    ]
    for rank, s in enumerate(summary.strategies, 1):
        lines.append(
            f"{rank:<5}{s.strategy:<20}{s.moved:>9}{s.revoked:>9}{s.orphaned:>9}{s.worst_spread:>13}{s.invalid:>8}"
        )
    return "\n".join(lines)


def _chart(title: str, series: dict[str, list[tuple[dt.datetime, float]]], width: int = 860, height: int = 220) -> str:
    """An inline SVG line chart of one measure per strategy over time."""
    left, right, top, bottom = 56, 150, 28, 30
    all_points = [p for points in series.values() for p in points]
    if not all_points:
        return f"<h3>{html.escape(title)}</h3><p>No data.</p>"
    times = sorted({t for t, _ in all_points})
    t0, t1 = times[0], times[-1]
    span = (t1 - t0).total_seconds() or 1.0
    peak = max(v for _, v in all_points) or 1.0

    def x(t: dt.datetime) -> float:
        return left + (width - left - right) * (t - t0).total_seconds() / span

    def y(v: float) -> float:
        return top + (height - top - bottom) * (1 - v / peak)

    parts = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
            f'aria-label="{html.escape(title)}">'
        ),
        f'<text x="{left}" y="16" font-size="13" font-weight="bold">{html.escape(title)}</text>',
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="#999"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="#999"/>',
        f'<text x="{left - 6}" y="{top + 4}" font-size="10" text-anchor="end">{peak:g}</text>',
        f'<text x="{left - 6}" y="{height - bottom}" font-size="10" text-anchor="end">0</text>',
        f'<text x="{left}" y="{height - 10}" font-size="10">{t0:%Y-%m-%d %H:%M}</text>',
        f'<text x="{width - right}" y="{height - 10}" font-size="10" text-anchor="end">{t1:%Y-%m-%d %H:%M}</text>',
    ]
    for index, (name, points) in enumerate(sorted(series.items())):
        color = _COLORS[index % len(_COLORS)]
        path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in sorted(points))
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{path}"/>')
        legend_y = top + 14 * index
        parts.append(
            f'<rect x="{width - right + 12}" y="{legend_y}" width="10" height="10" fill="{color}"/>'
            f'<text x="{width - right + 26}" y="{legend_y + 9}" font-size="11">{html.escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(summary: Summary, *, title: str = "Kafka assignor evaluation") -> str:
    """The self-contained report: ranking, charts over time, churn leaders, input errors."""
    ranking = _table(
        ["rank", "strategy", "churn (moved+revoked)", "moved", "revoked", "orphaned", "rebalances", "rounds",
         "worst load spread", "mean load stddev", "invalid", "assign ms"],
        [
            [rank, s.strategy, s.churn, s.moved, s.revoked, s.orphaned, s.rebalances, s.rounds, s.worst_spread,
             f"{s.mean_stddev:.3f}", s.invalid, f"{s.assign_ms:.0f}"]
            for rank, s in enumerate(summary.strategies, 1)
        ],
    )  # fmt: skip
    moved = {name: [(t, float(m)) for t, m, _, _ in pts] for name, pts in summary.timeline.items()}
    revoked = {name: [(t, float(r)) for t, _, r, _ in pts] for name, pts in summary.timeline.items()}
    spread = {name: [(t, s) for t, _, _, s in pts] for name, pts in summary.timeline.items()}
    leaders = _table(["group", "strategy", "revoked", "moved"], summary.top_groups)
    errors = (
        _table(["group", "error"], [[g if g is not None else "(null)", e] for g, e in summary.error_groups])
        if summary.error_groups
        else "<p>None: every group was evaluated.</p>"
    )
    from spark_udfs.offsets import actual_headline

    headline = actual_headline(summary.strategies)
    style = (
        "body{font-family:system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f3f3f3}"
        "td:nth-child(2),td:first-child{text-align:left}svg{display:block;margin:12px 0}"
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            f'<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>',
            f"<style>{style}</style></head><body>",
            f"<h1>{html.escape(title)}</h1>",
            f"<p><strong>{html.escape(headline.capitalize())}.</strong></p>" if headline else "",
            (
                f"<p>{summary.groups} groups, {summary.snapshots} snapshots; strategies ranked by total churn "
                "(partitions moved between live members plus partitions revoked), then by worst load spread.</p>"
            ),
            "<h2>Ranking</h2>",
            ranking,
            "<h2>Over time (all groups)</h2>",
            _chart("Partitions moved between live members", moved),
            _chart("Partitions revoked", revoked),
            _chart("Mean load spread (max - min partitions per member)", spread),
            "<h2>Groups with the most churn</h2>",
            leaders,
            "<h2>Groups with input errors</h2>",
            errors,
            "</body></html>",
        ]
    )
