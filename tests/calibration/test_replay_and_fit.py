"""The calibration's replay of a scenario's membership table, its fit, and the member processes' arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from calibration.fit import fit_factors
from calibration.predict import predict
from calibration.report import model_for
from calibration.scenarios import SCENARIOS, SETTINGS, STRATEGIES

from assignors.metrics import rebalance_pause
from assignors.testing._groups import TimedMemberSpec

SETTINGS_JSON = {
    "heartbeat_ms": 1000,
    "session_ms": 10_000,
    "broker_heartbeat_ms": 2000,
    "broker_session_ms": 10_000,
    "produce_interval_s": 0.1,
}


def _step(holdings: dict[str, list[int]], *, measured: bool, crashed: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "measured": measured,
        "t0": 0.0,
        "end": 1.0,
        "settled_at": 0.5,
        "stopped": [],
        "crashed": list(crashed),
        "counts": {"t": 6},
        "members": {name: {"member_id": f"{name}-1", "instance": None, "topics": ["t"]} for name in holdings},
        "holdings": {name: [["t", p] for p in parts] for name, parts in holdings.items()},
    }


def test_a_leave_replayed_by_hand() -> None:
    """range over a, b, c (ids a-1 < b-1 < c-1): 0-1, 2-3, 4-5; c leaves: a takes 0-2, b 3-5."""
    steps = [
        _step({"a": [0, 1], "b": [2, 3], "c": [4, 5]}, measured=False),
        _step({"a": [0, 1, 2], "b": [3, 4, 5]}, measured=True),
    ]
    run = {"product": "range", "steps": steps}
    model = model_for(SETTINGS_JSON)
    (found,) = predict(run, model)
    assert (found.moved, found.orphaned, found.revoked, found.survivors_owned, found.rounds) == (1, 2, 4, 4, 1)
    assert found.same_assignment is True
    assert found.pause_before == 4 * 5.0  # EAGER: survivors_owned x R
    assert found.pause_after == pytest.approx(rebalance_pause("EAGER", model, moved=1, survivors_owned=4, orphaned=2))
    # the same history with c crashed: its orphans wait the session timeout first
    steps[1]["crashed"] = ["c"]
    (crashed,) = predict(run, model)
    assert crashed.pause_after == pytest.approx(found.pause_after + 2 * 10.0)
    # a group the replay would assign otherwise is named
    steps[1]["holdings"] = {"a": [["t", p] for p in (3, 4, 5)], "b": [["t", p] for p in (0, 1, 2)]}
    assert predict(run, model)[0].same_assignment is False


def test_a_step_that_changes_nothing_does_not_rebalance() -> None:
    same = {"a": [0, 1, 2], "b": [3, 4, 5]}
    run = {"product": "uniform", "steps": [_step(same, measured=False), _step(same, measured=True)]}
    (found,) = predict(run, model_for(SETTINGS_JSON))
    assert not found.rebalanced
    assert (found.moved, found.revoked, found.pause_before, found.pause_after) == (0, 0, 0.0, 0.0)


def _observed_run(product: str, scenario: str, pause: float, holdings_after: dict[str, list[int]]) -> dict[str, Any]:
    """A run whose one measured step released c's partitions 4-5 at 0.0 and x fetched them at ``pause / 2``."""
    before = _step({"a": [0, 1, 2], "b": [3], "c": [4, 5]}, measured=False)
    after = _step(holdings_after, measured=True)
    after["t0"], after["end"] = 0.0, 5.0
    events = [
        {"t": -1.0, "e": "assigned", "m": "c", "partitions": [["t", 4], ["t", 5]], "gen": 1},
        {"t": 0.0, "e": "revoked", "m": "c", "partitions": [["t", 4], ["t", 5]], "gen": 1},
        {"t": 0.1, "e": "assigned", "m": "b", "partitions": [["t", 4], ["t", 5]], "gen": 2},
        {"t": pause / 2, "e": "fetched", "m": "b", "partitions": [["t", 4], ["t", 5]]},
    ]
    return {
        "scenario": scenario,
        "product": product,
        "protocol": "consumer" if product == "uniform" else "classic",
        "steps": [before, after],
        "events": events,
        "members": {"c": {"ended_at": 0.0, "crashed": False}},
    }


def test_the_fit_reads_the_wait_per_partition_from_single_event_steps() -> None:
    after = {"a": [0, 1, 2], "b": [3, 4, 5]}
    runs = {
        "settings": SETTINGS_JSON,
        "runs": [
            _observed_run("uniform", "leave", 3.0, after),  # 2 orphans, 1.5 s each
            _observed_run("uniform", "wave", 30.0, after),  # compound: not fitted
        ],
    }
    factors = fit_factors(runs)
    # the first fetch came 1.4 s after the assignment: fetch_seconds; (1.5 - 1.4) / 2 s heartbeat
    assert factors["fetch_seconds"] == pytest.approx(1.4)
    assert factors["consumer_orphan_heartbeats"] == pytest.approx(0.05)
    assert factors["consumer_move_heartbeats"] == 0.0  # no step moved anything


def test_the_scenarios_are_well_formed() -> None:
    kinds = {"start", "stop", "crash", "subscribe", "grow", "sleep"}
    for scenario in SCENARIOS:
        started = {action[1] for action in scenario.setup if action[0] == "start"}
        for step in scenario.steps:
            for action in step:
                assert action[0] in kinds, (scenario.name, action)
                if action[0] in {"stop", "crash", "subscribe"}:
                    assert action[1] in started, (scenario.name, action)
                if action[0] == "start":
                    started.add(action[1])
        assert 6 <= len(started) <= 12, scenario.name
    assert len({s.label for s in STRATEGIES}) == len(STRATEGIES)
    assert {s.protocol for s in STRATEGIES} == {"classic", "consumer"}
    assert SETTINGS.broker_config()["group.consumer.session.timeout.ms"] == "10000"


def test_a_timed_member_passes_its_settings(tmp_path: Path) -> None:
    spec = TimedMemberSpec("m0", "kafka-python", "g", ("t",), strategy="sticky", group_instance_id="s0")
    spec = TimedMemberSpec(**{**spec.__dict__, "metadata_max_age_ms": 5000, "fetched": True})
    argv = spec.argv("127.0.0.1:9092", tmp_path / "control")
    assert argv[argv.index("--group-instance-id") + 1] == "s0"
    assert argv[argv.index("--metadata-max-age-ms") + 1] == "5000"
    assert argv[argv.index("--heartbeat-interval-ms") + 1] == "500"
    assert "--fetched" in argv
    assert "--fetched" not in TimedMemberSpec("m1", "aiokafka", "g", ("t",)).argv("b", tmp_path / "c")
