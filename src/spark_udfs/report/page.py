"""The report page's building blocks: its style and table-sorting script, one look per strategy, charts, tables.

Every chart is interactive (hover values, zoom, legend toggles). Each strategy keeps one
colour, dash style and marker symbol in every chart (:func:`strategy_styles`), so strategies
whose lines coincide stay distinguishable. Tables with the class ``sortable`` sort by a click on
a header.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from spark_udfs.report.summary import Summary

__all__ = ["SORT_SCRIPT", "STYLE", "TIME_AXIS", "Charts", "Sorted", "drawing_order", "line", "strategy_styles", "table"]

_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
_SYMBOLS = ("circle", "square", "diamond", "x", "triangle-up", "cross", "star", "hexagon")
TIME_AXIS = "time (UTC)"
_CONFIG = {"responsive": True, "displaylogo": False, "toImageButtonOptions": {"format": "png"}}

STYLE = """
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

SORT_SCRIPT = """
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


def line(name: str, style: dict[str, Any], x: Sequence[Any], y: Sequence[Any], **extra: Any) -> dict[str, Any]:
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


def drawing_order(summary: Summary, styles: dict[str, dict[str, Any]]) -> list[tuple[str, int]]:
    """``(strategy, legend rank)`` widest line first, so thinner coinciding lines are drawn on top.

    The legend keeps the ranking's order (plotly's ``legendrank``).
    """
    ranks = {s.strategy: 1000 + i for i, s in enumerate(summary.strategies)}
    return sorted(ranks.items(), key=lambda item: (-styles[item[0]]["width"], item[0]))


class Charts:
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
class Sorted:
    """A cell that shows ``text`` and sorts by ``value``."""

    text: str
    value: float | None


def _cell(value: Any, *, name: bool = False) -> str:
    if isinstance(value, Sorted):
        sort = "" if value.value is None else f' data-v="{value.value!r}"'
        return f"<td{sort}>{html.escape(value.text)}</td>"
    if isinstance(value, float):
        text = f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"  # noqa: PLR2004
        return f'<td data-v="{value!r}">{text}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td data-v="{value}">{value:,}</td>'
    css = ' class="name"' if name else ""
    return f"<td{css}>{html.escape(str(value))}</td>"


def table(
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
