"""The pause model's factors from the measurement: per protocol, the median wait per partition over single-event steps.

A step's wait per partition is its observed pause, less what the crashed members' session timeouts account for
(``crashed`` partitions times the protocol's session timeout), divided by the partitions it priced:

- EAGER: ``survivors_owned + orphaned`` (every partition a survivor held, and every orphan, waits one rejoin);
- COOPERATIVE and CONSUMER: ``moved`` over the steps that moved partitions and orphaned none (a join), and
  ``orphaned`` over the steps that orphaned partitions and moved none (a leave, a crash).

The median over steps, not a least-squares fit: one compound step (a deploy wave or a subscription change that the
broker runs as several rebalances) would otherwise set the factor of every step. Only the scenarios of one event per
step are used (:data:`FITTED`); the others are compound or restarts, and their rows say so. Each wait ``w`` (seconds
per partition) is then ``factor * interval + fetch_seconds``: ``fetch_seconds`` is the median delay from an
``assigned`` call to the new holder's first fetch, the interval the protocol's heartbeat (classic
``heartbeat.interval.ms``, the broker's ``group.consumer.heartbeat.interval.ms``).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from calibration.measure import Observed, first_fetch_delays, observe

__all__ = ["EXCLUDED", "FITTED", "PROTOCOL_OF", "fit_factors"]

EXCLUDED = ("static",)
"""Not scored: a static member's restart is no membership change."""
FITTED = ("join", "leave", "crash", "rolling")
"""The scenarios whose steps are one event each: the factors are fitted on them."""
PROTOCOL_OF = {
    "range": "EAGER",
    "roundrobin": "EAGER",
    "sticky": "EAGER",
    "cooperative-sticky": "COOPERATIVE",
    "uniform": "CONSUMER",
    "consumer-range": "CONSUMER",
}


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
        if run["scenario"] not in FITTED:
            continue
        protocol = PROTOCOL_OF[run["product"]]
        steps[protocol].extend(o for o in observe(run, interval=interval) if o.settled)
        delays.extend(first_fetch_delays(run))
    fetch = statistics.median(delays) if delays else 0.0

    def waits(protocol: str, count: str, other: str | None = None) -> float:
        found = []
        for o in steps[protocol]:
            priced = o.survivors_owned + o.orphaned if count == "eager" else getattr(o, count)
            if priced and (other is None or getattr(o, other) == 0):
                found.append((o.pause - o.crashed * session[protocol]) / priced)
        return max(0.0, statistics.median(found)) if found else 0.0

    eager = waits("EAGER", "eager")
    coop = (waits("COOPERATIVE", "moved", "orphaned"), waits("COOPERATIVE", "orphaned", "moved"))
    consumer = (waits("CONSUMER", "moved", "orphaned"), waits("CONSUMER", "orphaned", "moved"))

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
