"""The report's chart sections: the distributions, the time series over all groups, and one group's drill-down.

Each returns its HTML and adds its figures to the page's :class:`spark_udfs.report.page.Charts`.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from spark_udfs.report.page import TIME_AXIS, Sorted, drawing_order, line, table
from spark_udfs.report.summary import DISTRIBUTIONS

if TYPE_CHECKING:
    from spark_udfs.report.page import Charts
    from spark_udfs.report.summary import DrillDown, Summary

__all__ = ["distribution_section", "group_section", "timeline_section"]


def _number(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) < 100 else f"{value:,.0f}"  # noqa: PLR2004


def distribution_section(summary: Summary, charts: Charts, styles: dict[str, dict[str, Any]]) -> str:
    header = [
        ("measure", "what is measured"),
        ("over", "per rebalance (a group's first, fresh assignment left out) or per snapshot"),
        *((s.strategy, f"{s.strategy}: p50 / p95 / max (sorts by p95)") for s in summary.strategies),
    ]
    rows = []
    figures = []
    for measure, (scope, unit) in DISTRIBUTIONS.items():
        cells: list[Any] = [f"{measure} ({unit})", scope]
        for s in summary.strategies:
            q = summary.distributions.get(s.strategy, {}).get(measure)
            text = "" if q is None else f"{_number(q.p50)} / {_number(q.p95)} / {_number(q.max)}"
            cells.append(Sorted(text, q.p95 if q is not None else None))
        rows.append(cells)
        traces = []
        for name, legend_rank in drawing_order(summary, styles):
            q = summary.distributions.get(name, {}).get(measure)
            if q is None:
                continue
            hover = f"%{{x:,.4g}} {unit}<br>%{{y}} % at or below<extra>{name}</extra>"
            traces.append(
                line(
                    name,
                    styles[name],
                    q.cdf,
                    list(range(101)),
                    line_shape="hv",
                    hovertemplate=hover,
                    legendrank=legend_rank,
                )
            )
        if traces:
            layout = {"xaxis": {"title": {"text": unit}}, "yaxis": {"title": {"text": f"% of {scope[4:]}s"}}}
            figures.append(charts.figure(f"{measure} {scope}: cumulative distribution", traces, layout))
    return (
        "<p>p50 / p95 / max of each measure per strategy (the median, 95 % at or below, the worst); the charts "
        "show the whole cumulative distribution (per-rebalance measures leave out each group's first, fresh "
        "assignment).</p>"
        f'<div class="scroll">{table(header, rows, table_id="distribution-table")}</div>'
        f'<div class="charts">{"".join(figures)}</div>'
    )


_TIMELINE = (
    ("pause", "Pause cost", "partition-seconds"),
    ("moved", "Partitions moved between live members", "partitions"),
    ("revoked", "Partitions revoked from live members", "partitions"),
    ("load_spread", "Mean load spread", "partitions (max - min per member)"),
    ("topic_spread", "Worst per-topic spread", "partitions (max - min per subscriber)"),
    ("imbalance", "Mean max/mean load ratio", "ratio (1 = even)"),
)


def timeline_section(summary: Summary, charts: Charts, styles: dict[str, dict[str, Any]]) -> str:
    figures = []
    for field, title, unit in _TIMELINE:
        traces = [
            line(name, styles[name], [p.ts for p in points], [getattr(p, field) for p in points], legendrank=rank)
            for name, rank in drawing_order(summary, styles)
            if (points := summary.timeline.get(name))
        ]
        layout = {
            "xaxis": {"title": {"text": TIME_AXIS}, "type": "date"},
            "yaxis": {"title": {"text": unit}},
            "hovermode": "x unified",
        }
        figures.append(charts.figure(f"{title} (all groups)", traces, layout))
    return f'<div class="charts">{"".join(figures)}</div>'


_EVENTS = {"join": ("triangle-up", "#2ca02c"), "leave": ("x", "#d62728"), "restart": ("circle-open", "#ff7f0e")}


def group_section(group: DrillDown, charts: Charts, styles: dict[str, dict[str, Any]]) -> str:
    under = f"under {group.strategy}" if group.strategy else "in total"
    heading = f"{html.escape(group.group_id)}: {group.pause:,.0f} partition-seconds of pause {html.escape(under)}"
    parts = [f'<section class="group"><h3>{heading}</h3>']
    if group.members:
        labels = {
            identity: identity if len(identity) <= 32 else identity[:14] + "..." + identity[-14:]  # noqa: PLR2004
            for identity in group.members
        }
        xs: list[Any] = []
        ys: list[Any] = []
        for identity, events in sorted(group.members.items()):
            present = [ts for ts, kind in events if kind != "leave"]
            xs += [*present, None]
            ys += [labels[identity]] * len(present) + [None]
        traces: list[dict[str, Any]] = [
            {
                "type": "scatter",
                "mode": "lines",
                "name": "member present",
                "x": xs,
                "y": ys,
                "line": {"color": "#9ab", "width": 6},
                "connectgaps": False,
                "hoverinfo": "skip",
            }
        ]
        for kind, (symbol, color) in _EVENTS.items():
            points = [(ts, labels[i]) for i, events in sorted(group.members.items()) for ts, k in events if k == kind]
            traces.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": kind,
                    "x": [p[0] for p in points],
                    "y": [p[1] for p in points],
                    "marker": {"symbol": symbol, "color": color, "size": 10},
                    "hovertemplate": f"{kind}: %{{y}}<br>%{{x}}<extra></extra>",
                }
            )
        height = max(260, 60 + 18 * len(group.members))
        layout = {
            "xaxis": {"title": {"text": TIME_AXIS}, "type": "date"},
            "yaxis": {"title": {"text": "member"}, "type": "category", "automargin": True},
        }
        parts.append(charts.figure(f"{group.group_id}: members (joins, leaves, restarts)", traces, layout, height))
    traces = []
    for row, (index, label) in enumerate(((1, "moved"), (2, "revoked"), (3, "pause")), start=1):
        for name in sorted(group.rebalances, key=lambda n: (-styles[n]["width"], n)):
            steps = group.rebalances[name]
            hover = f"{label}: %{{y:,}}<extra>{name}</extra>"
            axis = f"y{row}" if row > 1 else "y"
            x, y = [s[0] for s in steps], [s[index] for s in steps]
            traces.append(line(name, styles[name], x, y, yaxis=axis, showlegend=row == 1, hovertemplate=hover))
    layout = {
        "grid": {"rows": 3, "columns": 1, "pattern": "coupled"},
        "xaxis": {"title": {"text": TIME_AXIS}, "type": "date"},
        "yaxis": {"title": {"text": "moved"}},
        "yaxis2": {"title": {"text": "revoked"}},
        "yaxis3": {"title": {"text": "pause (p-s)"}},
        "hovermode": "x unified",
    }
    parts.append(charts.figure(f"{group.group_id}: per rebalance, each strategy", traces, layout, 680))
    parts.append("</section>")
    return "".join(parts)
