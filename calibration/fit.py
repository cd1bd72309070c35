"""The pause model's factors from the measurement: per protocol and kind of partition, the mean wait per partition.

Each step's observed pause is split by what happened to each partition the group consumed before it
(:class:`calibration.measure.Observed`): kept by its member, moved to another, orphaned (its member left or crashed),
or restarted (its static member stopped and came back). A factor is a ratio of sums over the steps of one event
each (:data:`FITTED`): the partition-seconds of one kind divided by the partitions of that kind, less what the
crashed members' session timeouts and the restarted members' downtime account for. The ratio of sums is the
estimate of the mean wait per partition, so a row's predicted total (its steps' partitions times the wait) is
unbiased; the median of the steps' waits, which an earlier fit used, undershot every row whose steps are skewed
(an eager rebalance whose members learn of it a heartbeat apart costs ten times one whose members learn together).
The wait is then ``factor * interval + fetch_seconds`` (``fetch_seconds`` is the median delay from an ``assigned``
call to the new holder's first fetch, the interval the protocol's heartbeat):

- EAGER: from the kept and moved partitions of the steps that rebalanced (every partition a survivor held waits
  for the last member to rejoin), ``eager_crash_heartbeats`` on the steps a crash started (the survivors learn of
  it up to a heartbeat apart), ``eager_heartbeats`` on the others (joins and LeaveGroups: they learn together, see
  :func:`learning_spread`); ``eager_orphan_heartbeats`` from the orphans (they wait from
  the LeaveGroup, or the session timeout, until the last survivor rejoined).
- COOPERATIVE: ``cooperative_heartbeats`` from the moved partitions, ``cooperative_orphan_heartbeats`` from the
  orphans, ``cooperative_kept_heartbeats`` from the partitions kept by members that gave some up while another
  member gave none up (``Observed.kept_revoking``: they rejoin the second round at once and wait for the others'
  heartbeat; 0 when a client keeps fetching them, as Kafka's Java consumer does). The compacts written before the
  measurement split them out (2026-11-29 21:34 and earlier; 22:18's was written again from its raw runs) hold no
  such partition and add nothing to it.
- CONSUMER (KIP-848): ``consumer_move_heartbeats`` from the moved partitions, ``consumer_orphan_heartbeats`` from
  the orphans.
- ``static_rejoin_seconds``: a restarted static member's partitions' wait less its downtime (no interval: the
  member's own start-up, join and first fetch).

:func:`fit_factors` fits the reference client's (Kafka's Java consumer, :data:`REFERENCE`) factors:
``assignors.metrics.DEFAULT_PAUSE_MODEL``. :func:`fit_clients` fits each client's own, where its runs measure
them (the Python clients' poll loops differ from Java's). Both pool every recorded run given: ``python -m
calibration.fit --write`` fits on every run in ``calibration/history/`` (one :func:`compact` per ``make calibrate``)
and writes the factors into ``assignors._core.load``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import statistics
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from calibration.measure import Observed, first_fetch_delays, observe
from calibration.scenarios import SCENARIOS, STRATEGIES

__all__ = [
    "EXCLUDED",
    "FITTED",
    "HISTORY",
    "PROTOCOL_OF",
    "REFERENCE",
    "client_of",
    "compact",
    "fit_clients",
    "fit_factors",
    "learning_spread",
    "measured_as_today",
    "write_factors",
]

EXCLUDED: tuple[str, ...] = ()
"""Scenarios not scored (none: a static restart is priced by ``restart_pause``)."""
FITTED = ("join", "spaced", "leave", "crash", "rolling", "static")
"""The scenarios whose steps are one event each: the factors are fitted on them."""
REFERENCE = "java"
"""The client whose factors are ``DEFAULT_PAUSE_MODEL``'s: Kafka's own consumer."""
PROTOCOL_OF = {
    "range": "EAGER",
    "roundrobin": "EAGER",
    "sticky": "EAGER",
    "cooperative-sticky": "COOPERATIVE",
    "uniform": "CONSUMER",
    "consumer-range": "CONSUMER",
}

_CLIENT_OF = {strategy.label: strategy.client for strategy in STRATEGIES}


def client_of(run: Mapping[str, Any]) -> str:
    """The client of a recorded run: ``java``, ``kafka-python`` or ``aiokafka``."""
    return _CLIENT_OF.get(str(run["strategy"]), str(run["strategy"]).split(" ", 1)[0])


def _ratio(pairs: Iterable[tuple[float, int]]) -> float | None:
    """sum(seconds) / sum(partitions), None without partitions."""
    seconds = partitions = 0.0
    for part, count in pairs:
        seconds += part
        partitions += count
    return seconds / partitions if partitions else None


def _factors(
    steps: Mapping[str, Sequence[Observed]],
    settings: Mapping[str, Any],
    fetch: float,
) -> dict[str, float | None]:
    """Every factor the steps measure (None where they measure nothing)."""
    heartbeat = settings["heartbeat_ms"] / 1000
    consumer_heartbeat = settings["broker_heartbeat_ms"] / 1000
    session = {"EAGER": settings["session_ms"] / 1000, "COOPERATIVE": settings["session_ms"] / 1000}
    session["CONSUMER"] = settings["broker_session_ms"] / 1000

    def orphans(protocol: str) -> float | None:
        return _ratio((o.pause_orphaned - o.crashed * session[protocol], o.orphaned) for o in steps[protocol])

    def factor(wait: float | None, interval_s: float) -> float | None:
        if wait is None:
            return None
        return round(max(0.0, wait - fetch) / interval_s, 3) if interval_s else 0.0

    eager = [o for o in steps["EAGER"] if o.revoked or o.orphaned]  # a static restart rebalances nothing

    def survivors(*, crash: bool) -> float | None:
        return _ratio(
            (o.pause_kept - o.pause_restarted + o.pause_moved, o.kept - o.restarted + o.moved)
            for o in eager
            if bool(o.crashed) == crash
        )

    coop = steps["COOPERATIVE"]
    kept = _ratio((o.pause_kept_revoking, o.kept_revoking) for o in coop)
    every = [o for protocol in steps.values() for o in protocol]
    rejoin = _ratio((o.pause_restarted - o.downtime, o.restarted) for o in every)
    return {
        "eager_heartbeats": factor(survivors(crash=False), heartbeat),
        "eager_crash_heartbeats": factor(survivors(crash=True), heartbeat),
        "eager_orphan_heartbeats": factor(orphans("EAGER"), heartbeat),
        "cooperative_heartbeats": factor(_ratio((o.pause_moved, o.moved) for o in coop), heartbeat),
        "cooperative_orphan_heartbeats": factor(orphans("COOPERATIVE"), heartbeat),
        "cooperative_kept_heartbeats": None if kept is None else round(max(0.0, kept) / heartbeat, 3),
        "consumer_move_heartbeats": factor(
            _ratio((o.pause_moved, o.moved) for o in steps["CONSUMER"]), consumer_heartbeat
        ),
        "consumer_orphan_heartbeats": factor(orphans("CONSUMER"), consumer_heartbeat),
        "static_rejoin_seconds": None if rejoin is None else round(max(0.0, rejoin), 3),
    }


def compact(runs: Mapping[str, Any]) -> dict[str, Any]:
    """What the fit reads of one recorded run (``python -m calibration``'s runs.json, 40 MB of events): its settings
    and, per group of the fitted scenarios, every step as measured and the first-fetch delays; a few hundred kB,
    kept in ``calibration/history/`` so that the factors can be fitted again without the broker."""
    interval = float(runs["settings"]["produce_interval_s"])
    groups = []
    for run in runs["runs"]:
        if run["scenario"] not in FITTED:
            continue
        groups.append(
            {
                "scenario": run["scenario"],
                "strategy": run["strategy"],
                "product": run["product"],
                "steps": [dataclasses.asdict(o) for o in observe(run, interval=interval)],
                "fetch_delays": [round(d, 4) for d in first_fetch_delays(run)],
            }
        )
    return {"kafka_version": runs.get("kafka_version"), "settings": dict(runs["settings"]), "groups": groups}


def _compacts(source: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Recorded runs (raw or :func:`compact`), one or several, as compacts that share one set of settings."""
    found = [source] if isinstance(source, Mapping) else list(source)
    found = [one if "groups" in one else compact(one) for one in found]
    if not found:
        msg = "no recorded run to fit"
        raise ValueError(msg)
    settings = [_settings(one) for one in found]
    for one in settings[1:]:
        if one != settings[0]:
            msg = f"runs with different settings cannot be pooled: {one} != {settings[0]}"
            raise ValueError(msg)
    return found


def _settings(one: Mapping[str, Any]) -> dict[str, Any]:
    """A compact's settings; a run recorded before ``assignment_interval_ms`` was (2026-11-29 21:34 and earlier) ran
    at 0, the test broker's own setting then."""
    return {"assignment_interval_ms": 0, **one["settings"]}


def measured_as_today(one: Mapping[str, Any]) -> bool:
    """Whether a compact's fitted scenarios are today's (``calibration.scenarios.SCENARIOS``), each as many steps:
    the runs of 2026-11-28 played one leave and one crash, and no ``spaced``, their groups one at a time, and are
    not pooled (one of them measured ``eager_heartbeats`` 0.129, today's runs 0.01-0.08)."""
    steps = {scenario.name: len(scenario.steps) for scenario in SCENARIOS if scenario.name in FITTED}
    found = {str(group["scenario"]): len(group["steps"]) for group in one["groups"]}
    return found == steps


def _steps(
    source: Mapping[str, Any] | Sequence[Mapping[str, Any]], client: str | None
) -> tuple[dict[str, list[Observed]], list[float]]:
    steps: dict[str, list[Observed]] = {"EAGER": [], "COOPERATIVE": [], "CONSUMER": []}
    delays: list[float] = []
    for one in _compacts(source):
        for group in one["groups"]:
            if group["scenario"] not in FITTED or (client is not None and client_of(group) != client):
                continue
            protocol = PROTOCOL_OF[group["product"]]
            steps[protocol].extend(o for o in map(_observed, group["steps"]) if o.settled)
            delays.extend(group["fetch_delays"])
    return steps, delays


def _observed(fields: Mapping[str, Any]) -> Observed:
    return Observed(**{name: fields[name] for name in _OBSERVED if name in fields})


_OBSERVED = tuple(f.name for f in dataclasses.fields(Observed))


def fit_factors(runs: Mapping[str, Any] | Sequence[Mapping[str, Any]], client: str = REFERENCE) -> dict[str, float]:
    """The measured factors of :class:`assignors.metrics.PauseModel` from recorded runs (``python -m calibration``;
    one, or several pooled, raw or :func:`compact`), from ``client``'s groups (a factor they do not measure is 0.0)."""
    steps, delays = _steps(runs, client)
    fetch = statistics.median(delays) if delays else 0.0
    settings = _settings(_compacts(runs)[0])
    found = {name: value or 0.0 for name, value in _factors(steps, settings, fetch).items()}
    return {**found, "fetch_seconds": round(fetch, 3)}


def fit_clients(runs: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Per client, the factors its own runs measure (a factor they do not measure is left out): ``fetch_seconds``
    stays the reference client's (the broker's fetch path, not the client's poll loop, sets it)."""
    pooled = _compacts(runs)
    fetch = fit_factors(pooled)["fetch_seconds"]
    found: dict[str, dict[str, float]] = {}
    for client in sorted({client_of(group) for one in pooled for group in one["groups"]}):
        steps, _ = _steps(pooled, client)
        found[client] = {k: v for k, v in _factors(steps, _settings(pooled[0]), fetch).items() if v is not None}
    return found


def learning_spread(
    runs: Mapping[str, Any] | Sequence[Mapping[str, Any]], client: str = REFERENCE
) -> dict[str, list[tuple[float, float, float]]]:
    """Per fitted scenario, per EAGER step of ``client``'s groups that rebalanced: (heartbeat intervals since the
    step before settled, the survivors' spread of learning of the rebalance, their mean wait per partition; both in
    intervals), sorted. What the EAGER factors rest on: on 2026-11-29 the Java members learned of a join together
    (spread at most 0.14 intervals) from 4 to 14 intervals after the rebalance before (``spaced``), and of a crash up
    to an interval apart (0.89-1.0 in 11 of 12 steps, 13-15 intervals after)."""
    pooled = _compacts(runs)
    heartbeat = pooled[0]["settings"]["heartbeat_ms"] / 1000
    found: dict[str, list[tuple[float, float, float]]] = {}
    for one in pooled:
        for group in one["groups"]:
            if client_of(group) != client or PROTOCOL_OF[group["product"]] != "EAGER":
                continue
            for o in map(_observed, group["steps"]):
                waited = o.kept + o.moved
                if o.settled and o.since is not None and o.revoked and waited:
                    wait = (o.pause_kept + o.pause_moved) / waited / heartbeat
                    found.setdefault(group["scenario"], []).append((o.since / heartbeat, o.spread / heartbeat, wait))
    return {scenario: sorted(rows) for scenario, rows in sorted(found.items())}


HISTORY = Path(__file__).resolve().parent / "history"
"""Every recorded run's :func:`compact` (``python -m calibration`` adds one): what ``--write`` fits on."""
LOAD = Path(__file__).resolve().parents[1] / "src" / "assignors" / "_core" / "load.py"
"""Where ``DEFAULT_PAUSE_MODEL``'s factors and ``CLIENT_PAUSE_FACTORS`` are written (``--write``)."""


def write_factors(
    reference: Mapping[str, float], clients: Mapping[str, Mapping[str, float]], path: Path = LOAD
) -> None:
    """Put fitted factors into ``assignors._core.load``: ``PauseModel``'s defaults, and per client other than the
    reference the factors that differ from the reference's."""
    text = path.read_text(encoding="utf-8")
    for name, value in sorted(reference.items()):
        text, found = re.subn(rf"^(    {name}: float = )[0-9.e-]+$", rf"\g<1>{value}", text, flags=re.MULTILINE)
        if found != 1:
            msg = f"{path} has no line `    {name}: float = ...`"
            raise RuntimeError(msg)
    head = "CLIENT_PAUSE_FACTORS: Mapping[str, Mapping[str, float]] = {\n"
    start = text.index(head)
    end = text.index("\n}\n", start) + 3
    body = head
    for client, factors in sorted(clients.items()):
        own = {k: v for k, v in sorted(factors.items()) if client != REFERENCE and v != reference.get(k)}
        if own:
            body += f'    "{client}": {{\n' + "".join(f'        "{k}": {v},\n' for k, v in own.items()) + "    },\n"
    path.write_text(text[:start] + body + "}\n" + text[end:], encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m calibration.fit [--write] [runs ...]``: every client's factors as JSON, pooled over the recorded
    runs given (raw runs.json or compact files; default: every file in ``calibration/history/``); ``--write`` puts
    them into ``assignors._core.load`` (``DEFAULT_PAUSE_MODEL`` and ``CLIENT_PAUSE_FACTORS``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    write = "--write" in args
    paths = [Path(a) for a in args if a != "--write"]
    if paths:
        runs = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
    else:  # the history's runs measured as today
        every = {path: json.loads(path.read_text(encoding="utf-8")) for path in sorted(HISTORY.glob("*.json"))}
        paths = [path for path, one in every.items() if measured_as_today(one)]
        runs = [every[path] for path in paths]
    reference, clients = fit_factors(runs), fit_clients(runs)
    spread = {k: [[round(x, 2) for x in row] for row in rows] for k, rows in learning_spread(runs).items()}
    found = {"runs": [str(p) for p in paths], "reference": reference, "clients": clients, "learning_spread": spread}
    print(json.dumps(found, indent=1))
    if write:
        write_factors(reference, clients)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
