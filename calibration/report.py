"""docs/calibration.md (and calibration/results.json) from the recorded runs."""

from __future__ import annotations

import datetime as dt
import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assignors import Cluster, Subscription, TopicPartition
from assignors.consumer_group import CoordinatorTable, server_assignor
from assignors.consumer_group._java_order import java_string_hash, one_per_bucket
from assignors.kafka_java import kafka_classpath
from assignors.metrics import CLIENT_PAUSE_FACTORS, DEFAULT_PAUSE_MODEL, PauseModel
from calibration.fit import EXCLUDED, FITTED, HISTORY, client_of, fit_clients, fit_factors, measured_as_today
from calibration.measure import (
    MAX_STEADY_STALLS,
    STALL_S,
    STEP_STALL_S,
    Observed,
    observe,
    stall_share,
    steady_stalls,
)
from calibration.predict import Predicted, predict
from calibration.scenarios import SCENARIOS, STRATEGIES
from spark_udfs.replay.actual import ActualRow, actual_rows  # noqa: TID251 - priced as `evaluate --actual` prices
from spark_udfs.replay.group_input import MemberRow, TopicHistory  # noqa: TID251 - its input rows

__all__ = ["model_for", "render", "rows_of"]

RUN_SETTINGS = "the calibration run's setting"
ROOT = Path(__file__).resolve().parents[1]


def model_for(settings: Mapping[str, Any], base: PauseModel = DEFAULT_PAUSE_MODEL) -> PauseModel:
    """``base`` at the run's settings (the intervals the groups ran with)."""
    return base.with_settings(
        RUN_SETTINGS,
        heartbeat_seconds=settings["heartbeat_ms"] / 1000,
        session_seconds=settings["session_ms"] / 1000,
        consumer_heartbeat_seconds=settings["broker_heartbeat_ms"] / 1000,
        consumer_session_seconds=settings["broker_session_ms"] / 1000,
    )


def kafka_jars(version: str) -> tuple[str, ...]:
    """The repo's build of Kafka ``version`` (``make jvm``, which ``make calibrate`` runs first): a Java group's
    sticky assignors are replayed with Kafka's own classes on it (:func:`assignors.kafka_java.java_assignor`).

    Raises:
        SystemExit: no such build (the message says how to make it).
    """
    listing = ROOT / "jvm" / "target" / f"kafka-{version}" / "classpath.txt"
    if not listing.is_file():
        msg = f"no {listing}: run `make jvm KAFKA_VERSION={version}` (the Java groups' sticky rows replay Kafka's own)"
        raise SystemExit(msg)
    return kafka_classpath(listing)


def rows_of(runs: Mapping[str, Any], model: PauseModel, jars: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One row per scenario, strategy and step: observed and predicted side by side (each group priced with its
    client's model, :meth:`PauseModel.for_client`; a Java group's sticky assignor replayed with Kafka's own class
    on ``jars``, default the repo's build of the run's Kafka, :func:`kafka_jars`)."""
    interval = float(runs["settings"]["produce_interval_s"])
    jars = jars if jars is not None else kafka_jars(str(runs["kafka_version"]))
    rows: list[dict[str, Any]] = []
    for run in runs["runs"]:
        observed = observe(run, interval=interval)
        predicted = predict(run, model.for_client(client_of(run)), kafka_jars=jars)
        rows.extend(_row(run, obs, pred) for obs, pred in zip(observed, predicted, strict=True))
    return rows


def _row(run: Mapping[str, Any], obs: Observed, pred: Predicted) -> dict[str, Any]:
    return {
        "scenario": run["scenario"],
        "strategy": run["strategy"],
        "product": run["product"],
        "protocol": run["protocol"],
        "step": obs.index,
        "settled": obs.settled,
        "seconds": obs.seconds,
        "observed": {
            "pause": obs.pause,
            "unowned": obs.unowned,
            "moved": obs.moved,
            "orphaned": obs.orphaned,
            "revoked": obs.revoked,
            "rounds": obs.rounds,
            "spread": obs.spread,
            "survivors": round(obs.pause_kept - obs.pause_restarted + obs.pause_moved, 3),
        },
        "predicted": {
            "rebalanced": pred.rebalanced,
            "moved": pred.moved,
            "orphaned": pred.orphaned,
            "revoked": pred.revoked,
            "rounds": pred.rounds,
            "pause_before": pred.pause_before,
            "pause_after": pred.pause_after,
            "same_assignment": pred.same_assignment,
            "rebalances": pred.rebalances,
            "survivors": pred.pause_survivors,
        },
    }


def records_pause(run: Mapping[str, Any], records: Mapping[str, Any] | None, model: PauseModel) -> float | None:
    """The pause ``assignors evaluate --actual`` prices from the group's own records (what ``assignors collect`` read
    from ``__consumer_offsets``; :func:`calibration.__main__.collect` keeps them): its ``actual`` strategy's
    partition-seconds over the generations recorded after the group formed (the first step) up to the scenario's
    end, priced by ``model``. None without records."""
    if not records or not records.get("actual"):
        return None

    def at(seconds: float) -> dt.datetime:  # naive UTC, as collect writes its timestamps
        return dt.datetime.fromtimestamp(seconds, dt.UTC).replace(tzinfo=None)

    members = [
        MemberRow(at(ts), member, tuple(topics), instance) for ts, member, topics, instance in records["membership"]
    ]
    recorded = [
        ActualRow(at(ts), generation, protocol, member, instance, tuple(assigned))
        for ts, generation, protocol, member, instance, assigned in records["actual"]
    ]
    history = TopicHistory(
        (topic, count, None if since is None else at(since)) for topic, count, since in records["topics"]
    )
    formed = at(float(run["steps"][0]["end_wall"]))
    rows = actual_rows(str(run["group_id"]), members, recorded, history, timing=model)
    return round(sum(float(r["pause_partition_seconds"] or 0.0) for r in rows if r["snapshot_ts"] > formed), 3)


def records_totals(runs: Mapping[str, Any], model: PauseModel) -> dict[tuple[str, str], float]:
    """Per scenario and strategy, :func:`records_pause` of its group, priced with its client's model."""
    collected = runs.get("collected") or {}
    found: dict[tuple[str, str], float] = {}
    for run in runs["runs"]:
        priced = records_pause(run, collected.get(run["group_id"], {}).get("records"), model.for_client(client_of(run)))
        if priced is not None:
            found[(run["scenario"], run["strategy"])] = priced
    return found


def _totals(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["scenario"], row["strategy"])
        t = found.setdefault(
            key,
            {
                "product": row["product"],
                "protocol": row["protocol"],
                "steps": 0,
                "settled": True,
                "pause": 0.0,
                "before": 0.0,
                "after": 0.0,
                "moved": 0,
                "moved_p": 0,
                "revoked": 0,
                "revoked_p": 0,
                "orphaned": 0,
                "orphaned_p": 0,
                "same": 0,
                "compared": 0,
                "steps_equal": 0,
                "learned": 0.0,
                "survivors": 0.0,
                "survivors_p": 0.0,
            },
        )
        o, p = row["observed"], row["predicted"]
        t["steps"] += 1
        t["settled"] = t["settled"] and row["settled"]
        t["pause"] += o["pause"]
        t["learned"] = max(t["learned"], float(o.get("spread", 0.0)))
        t["survivors"] += o.get("survivors", 0.0)
        t["survivors_p"] += p.get("survivors", 0.0)
        t["before"] += p["pause_before"]
        t["after"] += p["pause_after"]
        for name in ("moved", "revoked", "orphaned"):
            t[name] += o[name]
            t[name + "_p"] += p[name]
        t["steps_equal"] += int(o["moved"] == p["moved"] and o["revoked"] == p["revoked"])
        if p["same_assignment"] is not None:
            t["compared"] += 1
            t["same"] += int(bool(p["same_assignment"]))
    return found


def _ranks(totals: Mapping[tuple[str, str], Mapping[str, Any]], column: str) -> dict[tuple[str, str], int]:
    ranks: dict[tuple[str, str], int] = {}
    for scenario in {key[0] for key in totals}:
        keys = sorted((k for k in totals if k[0] == scenario), key=lambda k: (round(totals[k][column], 1), k[1]))
        ranks.update((key, rank) for rank, key in enumerate(keys, start=1))
    return ranks


def _error(predicted: float, observed: float) -> str:
    if observed == 0:
        return "exact" if predicted == 0 else "n/a"
    return f"{(predicted - observed) / observed * 100:+.0f}%"


def previous_totals(path: Path) -> dict[str, Any]:
    """The observed pause per scenario and strategy of an earlier run's ``results.json`` (``{}`` without one)."""
    if not path.is_file():
        return {}
    earlier = json.loads(path.read_text(encoding="utf-8"))
    totals: dict[str, float] = {}
    steps: dict[str, int] = {}
    for row in earlier.get("rows", ()):
        key = f"{row['scenario']}|{row['strategy']}"
        totals[key] = totals.get(key, 0.0) + float(row["observed"]["pause"])
        steps[key] = steps.get(key, 0) + 1
    return {
        "kafka_version": earlier.get("kafka_version"),
        "seconds": earlier.get("seconds"),
        "totals": totals,
        "steps": steps,
    }


def history_totals(folder: Path = HISTORY) -> dict[str, list[float]]:
    """Per ``scenario|strategy``, the observed pause of each run kept in ``folder`` that played today's scenarios
    (:func:`~calibration.fit.measured_as_today`): the one-event scenarios the fit reads, summed over their steps."""
    found: dict[str, list[float]] = {}
    for path in sorted(folder.glob("*.json")):
        one = json.loads(path.read_text(encoding="utf-8"))
        if not measured_as_today(one):
            continue
        for group in one["groups"]:
            key = f"{group['scenario']}|{group['strategy']}"
            found.setdefault(key, []).append(round(sum(float(step["pause"]) for step in group["steps"]), 3))
    return found


def _history_runs(totals: Mapping[tuple[str, str], Mapping[str, Any]]) -> str:
    """How many runs the history gives a row ("N runs"), or "runs" when none."""
    counts = {len(t.get("runs") or ()) for t in totals.values()} - {0}
    return f"{max(counts)} runs" if counts else "runs"


def comparable(previous: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Of :func:`previous_totals`, the totals of the scenarios played with as many steps as ``rows`` (this run's):
    a scenario whose script changed since (more events) is not the same measurement. A ``previous`` written before
    the steps were counted is taken as it is."""
    totals: Mapping[str, float] = previous.get("totals", {})
    counted: Mapping[str, int] | None = previous.get("steps")
    if counted is None:
        return dict(totals)
    steps: dict[str, int] = {}
    for row in rows:
        key = f"{row['scenario']}|{row['strategy']}"
        steps[key] = steps.get(key, 0) + 1
    return {key: total for key, total in totals.items() if counted.get(key) == steps.get(key)}


def render(
    runs: Mapping[str, Any],
    *,
    out: Path,
    summary: Path,
    model: PauseModel = DEFAULT_PAUSE_MODEL,
    previous: Mapping[str, Any] | None = None,
) -> None:
    """Write ``out`` (the markdown) and ``summary`` (every row as JSON); ``previous`` (:func:`previous_totals` of an
    earlier run of the same scenarios) gives each row the measurement's own run-to-run spread."""
    at_run = model_for(runs["settings"], model)
    rows = rows_of(runs, at_run)
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.write_text(
        json.dumps(
            {
                "kafka_version": runs["kafka_version"],
                "settings": runs["settings"],
                "broker_config": runs["broker_config"],
                "seconds": runs["seconds"],
                "rows": rows,
            },
            indent=1,
            sort_keys=True,
        )
        + "\n",
        encoding="utf-8",
    )
    out.write_text(markdown(runs, rows, at_run, previous or {}, history_totals()), encoding="utf-8")


def _summary(totals: Mapping[tuple[str, str], Mapping[str, Any]], *, compared: bool = False) -> list[str]:
    """The accuracy in a few lines: counts within 25%, moved/revoked agreement, rankings that agree."""
    scored = [k for k, t in totals.items() if k[0] not in EXCLUDED and t["settled"]]
    outside = [k for k in scored if not _close(totals[k]["after"], totals[k]["pause"])]
    noisy = [k for k in outside if _runs_disagree(totals[k])]
    missed = [k for k in outside if k not in noisy]
    pooled = [k for k in scored if len(totals[k].get("runs") or ()) >= 3]
    pooled_within = [k for k in pooled if _close(totals[k]["after"], statistics.fmean(totals[k]["runs"]))]
    steady = [k for k in scored if totals[k].get("spread") is not None and totals[k]["spread"] <= _TOLERANCE]
    steady_within = [k for k in steady if _close(totals[k]["after"], totals[k]["pause"])]
    within = [k for k in scored if _close(totals[k]["after"], totals[k]["pause"])]
    within_before = [k for k in scored if _close(totals[k]["before"], totals[k]["pause"])]
    counts = [k for k, t in totals.items() if t["steps_equal"] == t["steps"]]
    same = [k for k, t in totals.items() if t["same"] == t["compared"]]
    java = [k for k in totals if k[1] in ("java sticky", "java cooperative-sticky")]
    java_same = [k for k in java if k in same]
    single = [k for k in scored if k[0] in FITTED]
    single_within = [k for k in single if _close(totals[k]["after"], totals[k]["pause"])]

    def concordant(column: str) -> tuple[int, int]:
        """Pairs of strategies (same scenario) whose observed pauses differ by more than 25%, and of those the
        pairs the prediction orders alike."""
        decisive = alike = 0
        for a in scored:
            for b in scored:
                if a[0] != b[0] or not a < b:
                    continue
                observed_a, observed_b = totals[a]["pause"], totals[b]["pause"]
                if abs(observed_a - observed_b) <= 0.25 * max(observed_a, observed_b):
                    continue
                decisive += 1
                alike += (totals[a][column] - totals[b][column]) * (observed_a - observed_b) > 0
        return alike, decisive

    errors = sorted(
        abs(totals[k]["after"] - totals[k]["pause"]) / totals[k]["pause"] for k in scored if totals[k]["pause"]
    )
    median = errors[len(errors) // 2] if errors else 0.0
    noise = (
        [
            (
                f"- Of the {len(outside)} rows outside 25%, {len(noisy)} are rows whose runs range over more than 25% "
                "with the model within 25% of that range: the measurement's own spread (the runs: for the "
                f"one-event scenarios the {_history_runs(totals)} kept in `calibration/history`, for the others "
                "this one and the previous, column *previous run*). The other "
                f"{len(missed)} are the model's misses, beyond 25% of every run"
                + (f" ({', '.join(f'{k[0]} {k[1]}' for k in missed)})" if missed else "")
                + f". On the {len(steady)} rows that the two runs measured within 25% of each other, the model is "
                f"within 25% on {len(steady_within)}."
                + (
                    f" Against each row's mean over the runs kept (the {len(pooled)} rows of the one-event scenarios, "
                    f"{_history_runs(totals)}; the factors were fitted on the earlier of them): within 25% on "
                    f"{len(pooled_within)}."
                    if pooled
                    else ""
                )
            )
        ]
        if compared
        else []
    )
    return [
        "## Accuracy",
        "",
        (
            f"- Pause within 25% of observed: **{len(within)} of {len(scored)}** scenario x strategy rows with "
            f"the calibrated model (median error {median:.0%}); {len(within_before)} of {len(scored)} with today's "
            "constants (`pause_partition_seconds`). "
            + (f"Not scored: {', '.join(EXCLUDED)}; " if EXCLUDED else "")
            + "Groups that did not settle are not scored. On the scenarios of one membership event per step "
            f"({', '.join(FITTED)}): {len(single_within)} of {len(single)}; the others are compound (the notes say "
            "why)."
        ),
        *noise,
        *_records_summary(totals, scored),
        f"- Moved and revoked equal to observed at every step: {len(counts)} of {len(totals)} rows.",
        (
            f"- The replayed assignment is, member by member, what the members held at every compared step: "
            f"{len(same)} of {len(totals)} rows; the Java groups' sticky and cooperative-sticky, replayed with "
            f"Kafka's own classes: {len(java_same)} of {len(java)}."
        ),
        (
            f"- Ranking: of the {concordant('after')[1]} pairs of strategies (within a scenario) whose observed pauses "
            f"differ by more than 25%, the calibrated model orders {concordant('after')[0]} as observed, today's "
            f"constants {concordant('before')[0]} (pairs closer than that are ties within the measurement's spread)."
        ),
    ]


def _records_summary(
    totals: Mapping[tuple[str, str], Mapping[str, Any]], scored: Sequence[tuple[str, str]]
) -> list[str]:
    """The pause priced from the cluster's own records, against observed, in one line (none without records)."""
    priced = [k for k in scored if totals[k].get("records") is not None]
    if not priced:
        return []
    within = [k for k in priced if _close(totals[k]["records"], totals[k]["pause"])]
    by_scenario: dict[str, list[int]] = {}
    for k in priced:
        counted = by_scenario.setdefault(k[0], [0, 0])
        counted[0] += _close(totals[k]["records"], totals[k]["pause"])
        counted[1] += 1
    detail = ", ".join(f"{scenario} {n}/{of}" for scenario, (n, of) in by_scenario.items())
    return [
        (
            f"- From the cluster's own records (column *from the records*: `assignors collect` on the broker's "
            "`__consumer_offsets`, each recorded generation priced as `assignors evaluate --actual` prices it, with "
            f"the same model): within 25% of observed in **{len(within)} of {len(priced)}** rows ({detail}). The "
            "records show no crash (a departure is a LeaveGroup to them: the session timeout a crash waits is not "
            "priced) and no static member's restart (no rebalance); where the broker split a change into several "
            "rebalances (a deploy wave's leaves, then its joins), they show each."
        )
    ]


def uniform_steps(runs: Mapping[str, Any]) -> tuple[int, int, int, int]:
    """The broker's ``uniform``, step by step: each step after the group formed, replayed from what the members held
    before it (their previous target), with the broker's member ids and topic ids, and the coordinator's table of
    members followed through the group's steps (:class:`~assignors.consumer_group.CoordinatorTable`).

    Returns the steps, those whose replayed target is what the members held, those without the group's history
    (``coordinator_member_order``'s default table), and the steps where two member ids share a bucket of the
    coordinator's ``HashMap`` (where the table decides their order).
    """
    steps = exact = alone = shared = 0
    assignor = server_assignor("uniform")
    for run in runs["runs"]:
        if run["product"] != "uniform" or not run.get("topic_ids"):
            continue
        ids = run["topic_ids"]
        before: dict[str, tuple[TopicPartition, ...]] = {}
        table = CoordinatorTable()
        for index, step in enumerate(run["steps"]):
            members = {name: member["member_id"] for name, member in step["members"].items()}
            held = {
                members[n]: tuple(sorted(TopicPartition(t, p) for t, p in ps)) for n, ps in step["holdings"].items()
            }
            if index > 0:
                subscriptions = {
                    member_id: Subscription(step["members"][name]["topics"], owned_partitions=before.get(member_id, ()))
                    for name, member_id in members.items()
                }
                counts = {str(t): int(n) for t, n in step["counts"].items()}
                cluster = Cluster(counts, topic_ids={t: ids[t] for t in counts if t in ids})
                ours = assignor.assign(cluster, subscriptions, coordinator=table)
                steps += 1
                exact += {m: a.partitions for m, a in ours.items()} == held
                alone += {m: a.partitions for m, a in assignor.assign(cluster, subscriptions).items()} == held
                shared += not one_per_bucket([java_string_hash(m) for m in members.values()])
            table.update(members.values())
            before = held
    return steps, exact, alone, shared


def _uniform_steps(runs: Mapping[str, Any]) -> list[str]:
    steps, exact, alone, shared = uniform_steps(runs)
    if not steps:
        return []
    return [
        (
            f"- The broker's `uniform`, step by step (each step after the group formed, replayed from what the "
            f"members held before it, with the broker's member and topic ids and the coordinator's table of members "
            f"followed through the group's steps): the replayed target is what the members held at {exact} of "
            f"{steps} steps ({alone} without the group's history: a table holding the step's members, added in Java's "
            f"string order; {shared} steps have two member ids in one bucket of the coordinator's `HashMap`, where "
            "the table decides their order)."
        )
    ]


def _handovers(runs: Mapping[str, Any], model: PauseModel, measured: Mapping[str, float]) -> list[str]:
    """KIP-848's hand-overs as the records show them (``assignors collect``'s ``handovers`` table), the factors
    ``assignors evaluate --actual`` would derive from them, and the same factors as the members measured them
    (``measured``: this run's fit)."""
    found = runs.get("collected") or {}
    if "error" in found:
        return []
    seconds: dict[str, list[float]] = {}
    for group in found.values():
        for kind, values in (group.get("handovers") or {}).items():
            seconds.setdefault(kind, []).extend(values)
    if not seconds:
        return []
    interval = float(runs["settings"]["broker_heartbeat_ms"]) / 1000
    parts = []
    for kind, field in (
        ("consumer_move", "consumer_move_heartbeats"),
        ("consumer_orphan", "consumer_orphan_heartbeats"),
    ):
        values = seconds.get(kind, [])
        if not values:
            continue
        mean, median = statistics.fmean(values), statistics.median(values)
        derived = max(mean - model.fetch_seconds, 0.0) / interval
        parts.append(
            f"{len(values)} {kind.replace('_', ' ')}s, mean {mean:.2f} s (median {median:.2f} s): `{field}` "
            f"{derived:.3f} as "
            f"`assignors evaluate --actual` derives it, {measured.get(field, 0.0):.3f} as the members measured it "
            "(this run's fit: the mean, from each revoke to the new member's first fetch)"
        )
    return [f"- KIP-848's hand-overs in the records (`assignors collect`'s `handovers` table): {'; '.join(parts)}."]


def _collected(runs: Mapping[str, Any]) -> list[str]:
    """What ``assignors collect`` read from the broker's ``__consumer_offsets`` for the same groups."""
    found = runs.get("collected")
    if not found:
        return []
    if "error" in found:
        return [f"- `assignors collect` on the broker's `__consumer_offsets` failed: {found['error']}."]
    groups = list(found.values())
    agree = sum(bool(g["final_agrees"]) for g in groups)
    counts = [int(g["snapshots"]) for g in groups]
    return [
        (
            f"- The cluster's own records (`assignors collect` on the broker's `__consumer_offsets`): for {agree} of "
            f"{len(groups)} groups the last recorded assignment is what the members held at the end; "
            f"{min(counts, default=0)} to {max(counts, default=0)} snapshots recorded per group (every generation, "
            "or under KIP-848 every member's epoch)."
        )
    ]


def _close(predicted: float, observed: float) -> bool:
    if observed == 0:
        return predicted == 0
    return abs(predicted - observed) <= 0.25 * observed


def _spread(observed: float, earlier: float | None) -> float | None:
    """How far this run's observed pause is from the previous run's, as a fraction of the larger one."""
    if earlier is None or max(observed, earlier) == 0:
        return None
    return abs(observed - earlier) / max(observed, earlier)


def _band(total: Mapping[str, Any]) -> tuple[float, float, int] | None:
    """The observed pause's lowest and highest over the runs measured (``runs``: the runs kept in
    ``calibration/history``, for the scenarios the fit reads; else this run's and ``earlier``, the previous run's),
    and how many runs; None with fewer than two."""
    runs = [float(v) for v in total.get("runs") or ()]
    if not runs and total.get("earlier") is not None:
        runs = [float(total["earlier"])]
    if not runs:
        return None
    values = [*runs, float(total["pause"])]
    return min(values), max(values), max(len(runs), 2)


def _runs_disagree(total: Mapping[str, Any]) -> bool:
    """Whether a row outside 25% is the runs' own disagreement rather than the model's miss: the runs measured
    (:func:`_band`) range over more than 25% and the prediction is within 25% of some figure in that range.
    A prediction beyond 25% of every run, on one side of them all, is the model's miss."""
    band = _band(total)
    return band is not None and _disagree(band, total["after"])


def _disagree(band: tuple[float, float, int], predicted: float) -> bool:
    """:func:`_runs_disagree` on the runs' ``band`` (:func:`_band`) and the prediction."""
    low, high, _ = band
    return high - low > _TOLERANCE * high and 0.75 * low <= predicted <= 1.25 * high


def _attach_records(
    totals: Mapping[tuple[str, str], dict[str, Any]], runs: Mapping[str, Any], model: PauseModel
) -> None:
    """Each row's ``records``: :func:`records_totals`, where the run kept the group's records."""
    for key, priced in records_totals(runs, model).items():
        if key in totals:
            totals[key]["records"] = priced


def _records_cell(total: Mapping[str, Any]) -> str:
    """The pause priced from the group's own records, with its error; "-" without records."""
    priced = total.get("records")
    return "-" if priced is None else f"{priced:.1f} ({_error(priced, total['pause'])})"


def _why(total: Mapping[str, Any], scenario: str) -> str:
    """A row outside 25%: the measured reason."""
    if _close(total["after"], total["pause"]):
        return ""
    band = _band(total)
    if band is not None and _disagree(band, total["after"]):
        low, high, runs = band
        return f"the measurement ranges {low:.1f}-{high:.1f} over {runs} runs; the model is within 25% of that"
    if "moved_p" in total and total["moved_p"] != total["moved"]:
        return f"the replay moves {total['moved_p']} partitions, the group moved {total['moved']}"
    waited, priced = float(total.get("survivors", 0.0)), float(total.get("survivors_p", 0.0))
    gap = total["after"] - total["pause"]
    if abs(priced - waited) >= abs(gap) / 2 and (priced - waited) * gap > 0:
        return (
            f"the survivors' partitions waited {waited:.1f} partition-seconds, the model's mean {priced:.1f} "
            f"(members learned of a rebalance up to {total.get('learned', 0.0):.1f} s apart)"
        )
    if scenario in COMPOUND:
        return COMPOUND[scenario]
    return (
        f"the orphaned and restarted partitions waited {total['pause'] - waited:.1f} partition-seconds, the "
        f"model's mean {total['after'] - priced:.1f}"
    )


_TOLERANCE = 0.25
COMPOUND = {"wave": "the broker's rebalances interleave with the new members' start-up"}
"""The reason a compound scenario's row stays outside 25% when the measurement itself is steady."""


def markdown(
    runs: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    model: PauseModel,
    previous: Mapping[str, Any] | None = None,
    history: Mapping[str, Sequence[float]] | None = None,
) -> str:
    earlier = comparable(previous or {}, rows)
    totals = _totals(rows)
    for key, t in totals.items():
        t["earlier"] = earlier.get(f"{key[0]}|{key[1]}")
        t["spread"] = _spread(t["pause"], t["earlier"])
        t["runs"] = (history or {}).get(f"{key[0]}|{key[1]}", [])
    _attach_records(totals, runs, model)
    observed_rank = _ranks(totals, "pause")
    after_rank = _ranks(totals, "after")
    before_rank = _ranks(totals, "before")
    s = runs["settings"]
    fitted = fit_factors(runs)  # this run's own fit: beside the records' hand-overs, and in the parameters' table
    stalls = stall_share(runs["runs"], interval=float(s["produce_interval_s"]))
    lines = [
        "# Calibration: predicted against observed on real consumer groups",
        "",
        "<!-- generated by `make calibrate` (python -m calibration); do not edit -->",
        "",
        (
            "`make calibrate` plays scripted membership histories (`calibration/scenarios.py`) on a local Apache "
            "Kafka broker once per strategy: Kafka's own Java consumer with each classic assignor and with "
            "`group.protocol=consumer` (the broker's `uniform` and `range`), and Python consumers running this "
            "project's assignors through the kafka-python and aiokafka adapters. It measures each step from the "
            "members themselves (their rebalance listeners and the partitions each poll fetched), then replays the "
            "same membership table through the evaluation's engine and prices it with the pause model: each "
            "group's own assignor, so a Java group's `sticky` and `cooperative-sticky` are replayed with Kafka's "
            "own classes, as `assignors evaluate --kafka-jars` replays them (`java-sticky`, "
            "`java-cooperative-sticky`). Wherever the tables below disagree, the row or the note says why."
        ),
        "",
        *_summary(totals, compared=bool(earlier)),
        *_uniform_steps(runs),
        *_collected(runs),
        *_handovers(runs, model, fitted),
        "",
        (
            f"Apache Kafka {runs['kafka_version']}, one local broker (KRaft), {len(runs['runs'])} groups in "
            f"{runs['seconds']:.0f} s. Each scenario is played once per strategy, "
            + (
                f"{runs['at_once']} strategies' groups at once"
                if "at_once" in runs
                else "the strategies' groups at once"
            )
            + " (each with its own topics and group id); a producer writes a record to every partition every "
            f"{s['produce_interval_s']} s."
            + f" While settled, the formed groups stalled {stalls:.2%} of their partition-seconds (fetch gaps over "
            f"{STALL_S} s with nothing happening: "
            + ("the machine kept up" if stalls <= MAX_STEADY_STALLS else "the machine did NOT keep up")
            + f"; a run over {MAX_STEADY_STALLS:.0%} is refused)."
        ),
        "",
        (
            "Settings: classic members `session.timeout.ms` "
            f"{s['session_ms']}, `heartbeat.interval.ms` {s['heartbeat_ms']}, `metadata.max.age.ms` "
            f"{s['metadata_ms']}; broker "
            + ", ".join(f"`{k}` {v}" for k, v in sorted(runs["broker_config"].items()))
            + "."
        ),
        "",
        (
            "**Observed** pause: per partition the group consumed before the step, from the moment its holder "
            "gave it up (its listener's revoke or lost call, its crash or stop) to the first poll of the next "
            f"holder that fetched it, plus stalls while held (fetch gaps over {STEP_STALL_S} s). **Before**: today's "
            "constants (`pause_partition_seconds`, R = H = 5 s, orphaned partitions "
            "not counted). **After**: `rebalance_pause` with `PauseModel` at the run's settings (parameters "
            "below), on the scenario's membership table replayed, told what the table cannot say: which departures "
            "were crashes (`rebalance_pause(..., crashed=)`) and when a static member was down (`restart_pause`). "
            "**From the records**: the same model on the cluster's own records instead (`assignors collect` on the "
            "broker's `__consumer_offsets`: each generation, or under KIP-848 each member's epoch, after the group "
            "formed, priced as `assignors evaluate --actual` prices it, every departure as a LeaveGroup and no static "
            "restart, since the records show neither; `-` where the run kept none). "
            "Moved, revoked: observed / predicted, summed over the scenario's steps; `=` when every step "
            "agrees. Same assignment: the steps whose replayed assignment is, member by member, what the members "
            "held. Rank: by pause among the strategies of the scenario, observed / before / after."
        ),
        "",
    ]
    for scenario in SCENARIOS:
        keys = [k for k in totals if k[0] == scenario.name]
        if not keys:
            continue
        lines += [f"## {scenario.name}: {scenario.description}", ""]
        played = [run for run in runs["runs"] if run["scenario"] == scenario.name]
        stalled = [steady_stalls(run, interval=float(s["produce_interval_s"])) for run in played]
        watched = sum(w for _, w in stalled)
        if watched:
            lines += [
                (
                    f"While settled, its groups stalled {sum(x for x, _ in stalled) / watched:.2%} of their "
                    "partition-seconds."
                ),
                "",
            ]
        if scenario.notes:
            lines += [f"Note: {scenario.notes}.", ""]
        lines += [
            (
                "| strategy | implementation | observed pause | previous run | before | after (error) | from the "
                "records (error) | moved | revoked | same assignment | rank | outside 25% because |"
            ),
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- | --- |",
        ]
        order = {st.label: i for i, st in enumerate(STRATEGIES)}
        for key in sorted(keys, key=lambda k: order.get(k[1], 99)):
            t = totals[key]
            impl = next((st.implementation for st in STRATEGIES if st.label == key[1]), "")
            moved = f"{t['moved']} / {t['moved_p']}"
            revoked = f"{t['revoked']} / {t['revoked_p']}"
            agree = "=" if t["steps_equal"] == t["steps"] else f"{t['steps_equal']}/{t['steps']} steps"
            same = f"{t['same']}/{t['compared']}" if t["compared"] else "-"
            flag = "" if t["settled"] else " (did not settle)"
            prior = earlier.get(f"{key[0]}|{key[1]}")
            lines.append(
                f"| {key[1]}{flag} | {impl} | {t['pause']:.1f} | {'-' if prior is None else f'{prior:.1f}'} | "
                f"{t['before']:.1f} | {t['after']:.1f} ({_error(t['after'], t['pause'])}) | {_records_cell(t)} | "
                f"{moved} | "
                f"{revoked} {agree} | {same} | {observed_rank[key]} / {before_rank[key]} / {after_rank[key]} | "
                f"{_why(t, key[0])} |"
            )
        lines.append("")
    clients = fit_clients(runs)
    others = sorted(c for c in CLIENT_PAUSE_FACTORS if c in clients)
    lines += [
        "## The model's parameters",
        "",
        (
            "The factors are `assignors.metrics.DEFAULT_PAUSE_MODEL`'s (Kafka's Java consumer) and, for the Python "
            "clients, `CLIENT_PAUSE_FACTORS` (`PauseModel.for_client`), fitted by `calibration/fit.py` (`python -m "
            "calibration.fit --write`: per kind of partition, its partition-seconds over its partitions, summed over "
            "the single-event steps) on the earlier runs of this calibration kept in `calibration/history/` that "
            "played today's scenarios (`calibration.fit.measured_as_today`), so the tables above are out of sample; "
            "the intervals are this run's settings. `cooperative_kept_heartbeats` is per partition a member kept "
            "while it gave others up and another member gave none up (`Movement.retained_revoking`: such a member "
            "rejoins the second round at once and waits there for the others' heartbeat). *This run's fit*: the "
            "factors the same fit gives on this run alone. Each factor holds for groups paced like these (the wait per "
            "partition is the factor times the interval, plus `fetch_seconds`); at Kafka's defaults the intervals "
            "are 3 s (classic heartbeat), 5 s (KIP-848 heartbeat) and 45 s (both session timeouts)."
        ),
        "",
        "| parameter | value | source | this run's fit | "
        + " | ".join(f"{c}: value / this run's fit" for c in others)
        + " |",
        "| --- | ---: | --- | ---: | " + " | ".join("---:" for _ in others) + " |",
    ]
    for name, (value, source) in model.parameters().items():
        fit = f"{fitted[name]:g}" if name in fitted else ""
        cells = []
        for client in others:
            own = CLIENT_PAUSE_FACTORS[client]
            cells.append(f"{own[name]:g} / {clients[client].get(name, 0.0):g}" if name in own else "")
        lines.append(f"| `{name}` | {value:g} | {source} | {fit} | " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)
