"""The report as one self-contained HTML file: plotly charts with plotly.js inlined, so it opens offline.

Every chart is interactive (hover values, zoom, legend toggles). Each strategy keeps one
colour, dash style and marker symbol in every chart, so strategies whose lines coincide
stay distinguishable. Tables with the class ``sortable`` sort by a click on a header.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spark_udfs.ranking import COLUMN_DEFINITIONS, RANK_KEYS
from spark_udfs.summary import ACTUAL, DISTRIBUTIONS, adoption, headline, recommended

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from spark_udfs.ranking import StrategySummary
    from spark_udfs.summary import DrillDown, Summary

__all__ = ["render_html", "strategy_styles"]

_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
_SYMBOLS = ("circle", "square", "diamond", "x", "triangle-up", "cross", "star", "hexagon")
_TIME_AXIS = "time (UTC)"
_CONFIG = {"responsive": True, "displaylogo": False, "toImageButtonOptions": {"format": "png"}}

_STYLE = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f3f3f3}
th.score{background:#dbe9f6}td.name,th.name{text-align:left}
table.sortable th{cursor:pointer;user-select:none}table.sortable th:after{content:" \\2195";color:#999}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:12px}
.chart{min-height:320px;border:1px solid #eee}
dl.defs{font-size:13px;display:grid;grid-template-columns:max-content 1fr;gap:2px 12px}
dl.defs dt{font-weight:600}dl.defs dd{margin:0}.scroll{max-height:520px;overflow:auto}
section.group{border-top:2px solid #ddd;margin-top:18px}
p.headline{font-size:18px;font-weight:600;background:#eef5ee;border-left:4px solid #2ca02c;padding:8px 12px}
"""

_SORT_SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('thead th').forEach(function (th, column) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var ascending = th.getAttribute('data-order') !== 'asc';
      th.setAttribute('data-order', ascending ? 'asc' : 'desc');
      function key(row) {
        var cell = row.cells[column];
        var raw = cell.getAttribute('data-v');
        var number = parseFloat(raw === null ? cell.textContent : raw);
        return isNaN(number) ? cell.textContent : number;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var order = (typeof x === 'number' && typeof y === 'number') ? x - y : String(x).localeCompare(String(y));
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def strategy_styles(names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """One colour, dash, marker, line width and marker size per strategy, by name order, identical in every chart.

    Widths and sizes shrink along the order and traces are drawn in that order, so where the
    lines of several strategies coincide (the EAGER assignors pause alike) each stays visible
    as a thinner line inside the previous one.
    """
    ordered = sorted(set(names))
    step = 1 / max(len(ordered) - 1, 1)  # 1 for the first strategy, 0 for the last
    return {
        name: {
            "color": _COLORS[i % len(_COLORS)],
            "dash": _DASHES[i % len(_DASHES)],
            "symbol": _SYMBOLS[i % len(_SYMBOLS)],
            "width": round(1.5 + 3.5 * (len(ordered) - 1 - i) * step, 2),
            "size": round(5 + 6 * (len(ordered) - 1 - i) * step, 2),
        }
        for i, name in enumerate(ordered)
    }


def _line(name: str, style: dict[str, Any], x: Sequence[Any], y: Sequence[Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "scatter",
        "mode": "lines+markers",
        "name": name,
        "legendgroup": name,
        "x": list(x),
        "y": list(y),
        "line": {"color": style["color"], "dash": style["dash"], "width": style["width"]},
        "marker": {"symbol": style["symbol"], "size": style["size"], "color": style["color"], "maxdisplayed": 40},
        **extra,
    }


def _drawing_order(summary: Summary, styles: dict[str, dict[str, Any]]) -> list[tuple[str, int]]:
    """``(strategy, legend rank)`` widest line first, so thinner coinciding lines are drawn on top.

    The legend keeps the ranking's order (plotly's ``legendrank``).
    """
    ranks = {s.strategy: 1000 + i for i, s in enumerate(summary.strategies)}
    return sorted(ranks.items(), key=lambda item: (-styles[item[0]]["width"], item[0]))


class _Charts:
    """Collects the figures of the page; each becomes a ``div.chart`` with its ``Plotly.newPlot`` call."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def figure(self, title: str, traces: list[dict[str, Any]], layout: dict[str, Any], height: int = 400) -> str:
        chart_id = f"chart-{len(self.calls) + 1}"
        base = {
            "title": {"text": title, "font": {"size": 14}, "x": 0.01, "xanchor": "left"},
            "height": height,
            "margin": {"l": 64, "r": 16, "t": 48, "b": 96},
            "legend": {"orientation": "h", "y": -0.3, "yanchor": "top"},
            "template": "plotly_white",
        }
        payload = json.dumps({"data": traces, "layout": {**base, **layout}}, default=str).replace("<", "\\u003c")
        self.calls.append(
            f"(function(){{var f={payload};Plotly.newPlot({json.dumps(chart_id)},f.data,f.layout,"
            f"{json.dumps(_CONFIG)});}})();"
        )
        return f'<div class="chart" id="{chart_id}" data-title="{html.escape(title)}"></div>'


@dataclass(frozen=True, slots=True)
class _Sorted:
    """A cell that shows ``text`` and sorts by ``value``."""

    text: str
    value: float | None


def _cell(value: Any, *, name: bool = False) -> str:
    if isinstance(value, _Sorted):
        sort = "" if value.value is None else f' data-v="{value.value!r}"'
        return f"<td{sort}>{html.escape(value.text)}</td>"
    if isinstance(value, float):
        text = f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"  # noqa: PLR2004
        return f'<td data-v="{value!r}">{text}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td data-v="{value}">{value:,}</td>'
    css = ' class="name"' if name else ""
    return f"<td{css}>{html.escape(str(value))}</td>"


def _table(
    header: Sequence[tuple[str, str]], rows: Iterable[Sequence[Any]], *, table_id: str, score: Sequence[str] = ()
) -> str:
    """``header`` is ``(label, definition)``; the first two columns are names (left-aligned)."""
    heads = []
    for index, (label, definition) in enumerate(header):
        css = ["score"] if label in score else []
        css += ["name"] if index < 2 else []  # noqa: PLR2004
        attribute = f' class="{" ".join(css)}"' if css else ""
        heads.append(f'<th{attribute} title="{html.escape(definition)}">{html.escape(label)}</th>')
    body = "".join("<tr>" + "".join(_cell(c, name=i < 2) for i, c in enumerate(row)) + "</tr>" for row in rows)  # noqa: PLR2004
    return (
        f'<table class="sortable" id="{table_id}"><thead><tr>{"".join(heads)}</tr></thead><tbody>{body}</tbody></table>'
    )


_RANK_COLUMNS = (
    "pause",
    "imbalance",
    "moved",
    "revoked",
    "orphaned",
    "topic_spread",
    "load_spread",
    "rounds",
    "invalid",
    "assign_ms",
)


def _ranking(summary: Summary) -> str:
    figures = list(summary.rank_by) + [c for c in _RANK_COLUMNS if c not in summary.rank_by]
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
        + _table(header, rows, table_id="ranking-table", score=summary.rank_by)
        + f'<dl class="defs">{definitions}</dl>'
        + (f'<h3 id="adopting">What adopting each strategy takes</h3><dl class="defs">{steps}</dl>' if steps else "")
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
        f'<div class="scroll">{_table(_BALANCE_HEADER, rows, table_id="balance-table")}</div>'
    )


def _number(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) < 100 else f"{value:,.0f}"  # noqa: PLR2004


def _distributions(summary: Summary, charts: _Charts, styles: dict[str, dict[str, Any]]) -> str:
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
            cells.append(_Sorted(text, q.p95 if q is not None else None))
        rows.append(cells)
        traces = []
        for name, legend_rank in _drawing_order(summary, styles):
            q = summary.distributions.get(name, {}).get(measure)
            if q is None:
                continue
            hover = f"%{{x:,.4g}} {unit}<br>%{{y}} % at or below<extra>{name}</extra>"
            traces.append(
                _line(
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
        f'<div class="scroll">{_table(header, rows, table_id="distribution-table")}</div>'
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


def _timeline(summary: Summary, charts: _Charts, styles: dict[str, dict[str, Any]]) -> str:
    figures = []
    for field, title, unit in _TIMELINE:
        traces = [
            _line(name, styles[name], [p.ts for p in points], [getattr(p, field) for p in points], legendrank=rank)
            for name, rank in _drawing_order(summary, styles)
            if (points := summary.timeline.get(name))
        ]
        layout = {
            "xaxis": {"title": {"text": _TIME_AXIS}, "type": "date"},
            "yaxis": {"title": {"text": unit}},
            "hovermode": "x unified",
        }
        figures.append(charts.figure(f"{title} (all groups)", traces, layout))
    return f'<div class="charts">{"".join(figures)}</div>'


_EVENTS = {"join": ("triangle-up", "#2ca02c"), "leave": ("x", "#d62728"), "restart": ("circle-open", "#ff7f0e")}


def _group_section(group: DrillDown, charts: _Charts, styles: dict[str, dict[str, Any]]) -> str:
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
            "xaxis": {"title": {"text": _TIME_AXIS}, "type": "date"},
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
            traces.append(_line(name, styles[name], x, y, yaxis=axis, showlegend=row == 1, hovertemplate=hover))
    layout = {
        "grid": {"rows": 3, "columns": 1, "pattern": "coupled"},
        "xaxis": {"title": {"text": _TIME_AXIS}, "type": "date"},
        "yaxis": {"title": {"text": "moved"}},
        "yaxis2": {"title": {"text": "revoked"}},
        "yaxis3": {"title": {"text": "pause (p-s)"}},
        "hovermode": "x unified",
    }
    parts.append(charts.figure(f"{group.group_id}: per rebalance, each strategy", traces, layout, 680))
    parts.append("</section>")
    return "".join(parts)


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
    return more + f'<div class="scroll">{_table(_GROUP_HEADER, rows, table_id="group-table")}</div>'


def _self_check(summary: Summary) -> str:
    """Match rate per group and the mismatches: does our replay of range/roundrobin reproduce the recording?"""
    matched = sum(g.matched for g in summary.self_check)
    checked = sum(g.checked for g in summary.self_check)
    rates = _table(
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
        _table(
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
    charts = _Charts()
    ranking = _ranking(summary)
    distributions = _distributions(summary, charts, styles)
    timeline = _timeline(summary, charts, styles)
    drilldown = "".join(_group_section(g, charts, styles) for g in summary.drilldown) or "<p>No rebalances.</p>"
    errors = (
        _table(
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
    if adopt:
        notes = f'<p id="adoption">{html.escape(adopt)}</p>' + notes
    if answer:
        notes = f'<p class="headline" id="headline">{html.escape(answer)}</p>' + notes
    reference = next((g.strategy for g in summary.drilldown if g.strategy), "")
    measured = (
        " (the cluster's own assignments)"
        if reference == ACTUAL
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
            f"<style>{_STYLE}</style>",
            f'<script type="text/javascript">{get_plotlyjs()}</script></head><body>',
            f"<h1>{html.escape(title)}</h1>",
            (
                f"<p>{summary.groups:,} groups, {summary.snapshots:,} snapshots, {len(summary.error_groups)} groups "
                f"with input errors. Strategies: {html.escape(_strategies_text(summary.strategies))}.</p>"
            ),
            notes,
            '<h2 id="ranking">Ranking</h2>',
            ranking,
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
            f"<script>{_SORT_SCRIPT}</script>",
            "<script>" + "\n".join(charts.calls) + "</script>",
            "</body></html>",
        ]
    )
