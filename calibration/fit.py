"""The pause model's factors from the measurement: least squares per protocol over every measured step.

Per step, the observed pause less what the crashed members' session timeouts account for (``crashed`` partitions
times the session timeout of the protocol) is regressed on the step's partition counts, without intercept:

- EAGER: ``survivors_owned + orphaned`` (every partition a survivor held, and every orphan, waits one rejoin);
- COOPERATIVE: ``moved`` and ``orphaned`` (two factors);
- CONSUMER: ``moved`` and ``orphaned`` (two factors).

Each fitted wait ``w`` (seconds per partition) is then ``factor * interval + fetch_seconds``: ``fetch_seconds`` is
the median delay from an ``assigned`` call to the new holder's first fetch, the interval the protocol's heartbeat
(classic ``heartbeat.interval.ms``, the broker's ``group.consumer.heartbeat.interval.ms``). The static-restart
scenario is left out: its pauses are restarts, which no membership table shows.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from calibration.measure import Observed, first_fetch_delays, observe

__all__ = ["EXCLUDED", "PROTOCOL_OF", "fit_factors"]

EXCLUDED = ("static",)
PROTOCOL_OF = {
    "range": "EAGER",
    "roundrobin": "EAGER",
    "sticky": "EAGER",
    "cooperative-sticky": "COOPERATIVE",
    "uniform": "CONSUMER",
    "consumer-range": "CONSUMER",
}


def _least_squares(xs: Sequence[tuple[float, ...]], ys: Sequence[float]) -> tuple[float, ...]:
    """Non-negative least squares without intercept for one or two unknowns (a small closed form)."""
    if not xs:
        return ()
    width = len(xs[0])
    if width == 1:
        sxx = sum(x[0] * x[0] for x in xs)
        return (max(0.0, sum(x[0] * y for x, y in zip(xs, ys, strict=True)) / sxx) if sxx else 0.0,)
    a = sum(x[0] * x[0] for x in xs)
    b = sum(x[0] * x[1] for x in xs)
    d = sum(x[1] * x[1] for x in xs)
    e = sum(x[0] * y for x, y in zip(xs, ys, strict=True))
    f = sum(x[1] * y for x, y in zip(xs, ys, strict=True))
    det = a * d - b * b
    if abs(det) < 1e-9:  # one column carries no information: fit the other alone
        (second,) = _least_squares([(x[1],) for x in xs], ys)
        return 0.0, second
    first, second = (e * d - b * f) / det, (a * f - b * e) / det
    if first < 0:
        return 0.0, _least_squares([(x[1],) for x in xs], ys)[0]
    if second < 0:
        return _least_squares([(x[0],) for x in xs], ys)[0], 0.0
    return first, second


def fit_factors(runs: Mapping[str, Any]) -> dict[str, float]:
    """The measured factors of :class:`assignors.metrics.PauseModel` from recorded runs (``python -m calibration``)."""
    settings = runs["settings"]
    interval = float(settings["produce_interval_s"])
    heartbeat = settings["heartbeat_ms"] / 1000
    consumer_heartbeat = settings["broker_heartbeat_ms"] / 1000
    session = {"EAGER": settings["session_ms"] / 1000, "COOPERATIVE": settings["session_ms"] / 1000}
    session["CONSUMER"] = settings["broker_session_ms"] / 1000
    steps: dict[str, list[Observed]] = {"EAGER": [], "COOPERATIVE": [], "CONSUMER": []}
    delays: list[float] = []
    for run in runs["runs"]:
        if run["scenario"] in EXCLUDED:
            continue
        protocol = PROTOCOL_OF[run["product"]]
        steps[protocol].extend(o for o in observe(run, interval=interval) if o.settled)
        delays.extend(first_fetch_delays(run))
    fetch = statistics.median(delays) if delays else 0.0

    def target(o: Observed, protocol: str) -> float:
        return float(o.pause - o.crashed * session[protocol])

    (eager,) = _least_squares(
        [(float(o.survivors_owned + o.orphaned),) for o in steps["EAGER"]], [target(o, "EAGER") for o in steps["EAGER"]]
    ) or (0.0,)
    coop = _least_squares(
        [(float(o.moved), float(o.orphaned)) for o in steps["COOPERATIVE"]],
        [target(o, "COOPERATIVE") for o in steps["COOPERATIVE"]],
    ) or (0.0, 0.0)
    consumer = _least_squares(
        [(float(o.moved), float(o.orphaned)) for o in steps["CONSUMER"]],
        [target(o, "CONSUMER") for o in steps["CONSUMER"]],
    ) or (0.0, 0.0)

    def factor(wait: float, interval_s: float) -> float:
        return round(max(0.0, wait - fetch) / interval_s, 3) if interval_s else 0.0

    return {
        "eager_heartbeats": factor(eager, heartbeat),
        "cooperative_heartbeats": factor(coop[0], heartbeat),
        "cooperative_orphan_heartbeats": factor(coop[1], heartbeat),
        "consumer_move_heartbeats": factor(consumer[0], consumer_heartbeat),
        "consumer_orphan_heartbeats": factor(consumer[1], consumer_heartbeat),
        "fetch_seconds": round(fetch, 3),
    }
