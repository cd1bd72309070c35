"""The calibration's replay of a scenario's membership table, its fit, and the member processes' arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from calibration.fit import _factors, compact, fit_clients, fit_factors, write_factors
from calibration.measure import Observed, stall_share, steady_stalls
from calibration.predict import predict
from calibration.report import (
    _handovers,
    _runs_disagree,
    _spread,
    _why,
    comparable,
    model_for,
    previous_totals,
    records_pause,
    records_totals,
    uniform_steps,
)
from calibration.runner import Group
from calibration.scenarios import SCENARIOS, SETTINGS, STRATEGIES
from hypothesis import given
from hypothesis import strategies as st

from assignors.metrics import PauseModel, rebalance_pause, restart_pause
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
    # the same history with c crashed: its orphans wait the session timeout first, the survivors learn apart
    steps[1]["crashed"] = ["c"]
    (crashed,) = predict(run, model)
    assert crashed.pause_after == pytest.approx(rebalance_pause("EAGER", model, moved=1, survivors_owned=4, crashed=2))
    assert crashed.pause_after >= found.pause_after + 2 * 10.0
    # a group the replay would assign otherwise is named
    steps[1]["holdings"] = {"a": [["t", p] for p in (3, 4, 5)], "b": [["t", p] for p in (0, 1, 2)]}
    assert predict(run, model)[0].same_assignment is False


def test_a_step_that_changes_nothing_does_not_rebalance() -> None:
    same = {"a": [0, 1, 2], "b": [3, 4, 5]}
    run = {"product": "uniform", "steps": [_step(same, measured=False), _step(same, measured=True)]}
    (found,) = predict(run, model_for(SETTINGS_JSON))
    assert not found.rebalanced
    assert (found.moved, found.revoked, found.pause_before, found.pause_after) == (0, 0, 0.0, 0.0)


def test_a_deploy_wave_is_two_rebalances_in_sequence() -> None:
    """range over a, b, c (0-1, 2-3, 4-5); c leaves and d joins in one snapshot change: with ``sequence`` the broker
    sees the leave first (a takes 0-2, b 3-5), then the join (a 0-1, b 2-3, d 4-5); by default (the evaluation's
    replay) one rebalance."""
    steps = [
        _step({"a": [0, 1], "b": [2, 3], "c": [4, 5]}, measured=False),
        _step({"a": [0, 1], "b": [2, 3], "d": [4, 5]}, measured=True),
    ]
    run = {"product": "range", "steps": steps}
    model = model_for(SETTINGS_JSON)
    (wave,) = predict(run, model, sequence=True)
    assert wave.rebalances == 2
    # the step as a whole: c's 2 partitions orphaned, nothing moved between survivors; revoked: every survivor's
    # partitions, twice (EAGER revokes everything in each rebalance)
    assert (wave.moved, wave.orphaned, wave.revoked, wave.survivors_owned) == (0, 2, 4 + 6, 4)
    leave = rebalance_pause("EAGER", model, moved=1, survivors_owned=4, orphaned=2)
    join = rebalance_pause("EAGER", model, moved=2, survivors_owned=6)
    assert wave.pause_after == pytest.approx(leave + join)
    (single,) = predict(run, model)
    assert single.rebalances == 1
    assert single.pause_after == pytest.approx(rebalance_pause("EAGER", model, moved=0, survivors_owned=4, orphaned=2))
    assert single.same_assignment is wave.same_assignment is True


def test_a_static_restart_is_priced_for_its_downtime() -> None:
    """a (group.instance.id s-a) stops at 10.0 and is back at 12.5: no rebalance; its 3 partitions wait 2.5 s and
    the rejoin."""
    steps = [
        _step({"a": [0, 1, 2], "b": [3, 4, 5]}, measured=False),
        _step({"a": [0, 1, 2], "b": [3, 4, 5]}, measured=True),
    ]
    for step in steps:
        step["members"]["a"]["instance"] = "s-a"
    steps[1] |= {"t0": 10.0, "end": 20.0, "stopped": ["a"]}
    run: dict[str, Any] = {"product": "cooperative-sticky", "steps": steps, "members": {"a": {"started_at": 12.5}}}
    model = model_for(SETTINGS_JSON)
    (found,) = predict(run, model)
    assert not found.rebalanced
    assert (found.moved, found.revoked, found.rebalances) == (0, 0, 0)
    assert found.pause_after == pytest.approx(restart_pause(model, restarted=3, downtime_seconds=2.5))
    # a start before the step (the set-up's) is no restart
    run["members"]["a"]["started_at"] = 1.0
    assert predict(run, model)[0].pause_after == 0.0


def _obs(**values: Any) -> Observed:
    fields = {"index": 1, "pause": 0.0, "unowned": 0.0, "moved": 0, "orphaned": 0, "revoked": 0, "rounds": 1}
    return Observed(**{**fields, "settled": True, "seconds": 1.0, "paused_partitions": 0, **values})


def test_the_factors_are_ratios_of_sums_by_hand() -> None:
    """Per kind of partition, its partition-seconds over its partitions, less the session timeouts and downtimes."""
    eager = [
        _obs(
            revoked=10,
            kept=8,
            moved=2,
            pause_kept=8 * 0.3,
            pause_moved=2 * 0.3,
            orphaned=2,
            pause_orphaned=2 * 1.1,
        ),
        _obs(revoked=10, kept=10, pause_kept=10 * 0.9),  # a slower one: the mean, not the median
        # a crash: the survivors learn of it apart (the orphans' session timeout is taken off)
        _obs(revoked=10, kept=10, pause_kept=10 * 0.7, orphaned=1, crashed=1, pause_orphaned=10.0 + 1.1),
        _obs(revoked=10, kept=5, pause_kept=5 * 1.3, orphaned=1, crashed=1, pause_orphaned=10.0 + 1.1),
        _obs(
            kept=10, restarted=4, pause_restarted=4 * 2.6, pause_kept=4 * 2.6, downtime=4 * 2.0
        ),  # static: no rebalance
    ]
    coop = [
        # of the 8 kept, 5 are a revoking member's (it waits for a steady one's heartbeat), 3 a steady member's
        _obs(moved=2, kept=8, pause_moved=2 * 1.1, pause_kept=5 * 0.8, kept_revoking=5, pause_kept_revoking=5 * 0.8),
        _obs(kept=10, orphaned=2, crashed=2, pause_orphaned=2 * (10.0 + 0.6)),  # crashed: the session first
    ]
    consumer = [_obs(moved=4, kept=6, pause_moved=4 * 1.5)]
    found = _factors({"EAGER": eager, "COOPERATIVE": coop, "CONSUMER": consumer}, SETTINGS_JSON, 0.1)
    assert found == {
        "eager_heartbeats": pytest.approx(((8 + 2) * 0.3 + 10 * 0.9) / 20 - 0.1),
        "eager_crash_heartbeats": pytest.approx((10 * 0.7 + 5 * 1.3) / 15 - 0.1),
        "eager_orphan_heartbeats": pytest.approx(1.0),
        "cooperative_heartbeats": pytest.approx(1.0),
        "cooperative_orphan_heartbeats": pytest.approx(0.5),
        "cooperative_kept_heartbeats": pytest.approx(0.8),
        "consumer_move_heartbeats": pytest.approx((1.5 - 0.1) / 2),
        "consumer_orphan_heartbeats": None,  # no step orphaned anything under KIP-848
        "static_rejoin_seconds": pytest.approx(0.6),
    }


def test_the_fit_writes_the_model(tmp_path: Path) -> None:
    """``python -m calibration.fit --write``: the defaults and the clients' factors that differ, nothing else."""
    source = Path(__file__).resolve().parents[2] / "src" / "assignors" / "_core" / "load.py"
    copy = tmp_path / "load.py"
    copy.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    reference = {"eager_heartbeats": 0.25, "fetch_seconds": 0.125}
    clients = {
        "java": {"eager_heartbeats": 0.25},
        "kafka-python": {"eager_heartbeats": 0.25, "static_rejoin_seconds": 3.5},
    }
    write_factors(reference, clients, copy)
    text = copy.read_text(encoding="utf-8")
    assert "    eager_heartbeats: float = 0.25\n" in text
    assert "    fetch_seconds: float = 0.125\n" in text
    assert 'CLIENT_PAUSE_FACTORS: Mapping[str, Mapping[str, float]] = {\n    "kafka-python": {\n' in text
    assert '        "static_rejoin_seconds": 3.5,\n    },\n}\n' in text
    assert text.count('eager_heartbeats": 0.25') == 0  # equal to the reference's: not repeated per client
    untouched = [
        line for line in source.read_text(encoding="utf-8").splitlines() if "cooperative_heartbeats: float" in line
    ]
    assert untouched[0] in text


def test_the_previous_run_gives_each_row_its_spread(tmp_path: Path) -> None:
    earlier = tmp_path / "results.json"
    rows: list[dict[str, Any]] = [
        {"scenario": "leave", "strategy": "java range", "observed": {"pause": 4.0}},
        {"scenario": "join", "strategy": "java range", "observed": {"pause": 1.0}},
        {"scenario": "join", "strategy": "java range", "observed": {"pause": 2.0}},
    ]
    earlier.write_text(json.dumps({"kafka_version": "4.4.0", "seconds": 1.0, "rows": rows}), encoding="utf-8")
    previous = previous_totals(earlier)
    assert previous["totals"] == {"leave|java range": 4.0, "join|java range": 3.0}
    assert previous["steps"] == {"leave|java range": 1, "join|java range": 2}
    # a scenario played with another number of steps since (its script changed) is no longer comparable
    now = [*rows[1:], *({"scenario": "leave", "strategy": "java range"} for _ in range(3))]
    assert comparable(previous, now) == {"join|java range": 3.0}
    assert comparable(previous, rows) == previous["totals"]
    assert comparable({"totals": {"leave|java range": 4.0}}, now) == {"leave|java range": 4.0}  # steps not counted
    assert previous_totals(tmp_path / "absent.json") == {}
    assert _spread(8.0, 4.0) == 0.5
    assert _spread(3.0, None) is None
    assert _why({"after": 10.0, "pause": 9.0}, "leave") == ""  # within 25%: no reason needed
    # the runs range over more than 25% and the model is within 25% of that range: their spread
    assert _why({"after": 5.5, "pause": 8.0, "earlier": 4.0}, "leave") == (
        "the measurement ranges 4.0-8.0 over 2 runs; the model is within 25% of that"
    )
    assert _why({"after": 11.0, "pause": 5.0, "runs": [9.0, 6.0, 5.0]}, "join") == (
        "the measurement ranges 5.0-9.0 over 3 runs; the model is within 25% of that"
    )
    # beyond 25% of every run, on one side of them all: the model's miss, however much the runs differ
    assert _why({"after": 2.0, "pause": 8.0, "earlier": 4.0, "moved": 2, "moved_p": 3}, "leave") == (
        "the replay moves 3 partitions, the group moved 2"
    )
    assert _why({"after": 4.0, "pause": 8.0}, "wave") == (  # no other run: nothing to say of the spread
        "the broker's rebalances interleave with the new members' start-up"
    )
    assert _why({"after": 4.0, "pause": 8.0, "moved": 2, "moved_p": 3}, "join") == (
        "the replay moves 3 partitions, the group moved 2"
    )
    # the survivors' part accounts for the gap: 7 observed, 3 priced of a gap of 4
    survivors = {"after": 4.0, "pause": 8.0, "survivors": 7.0, "survivors_p": 3.0, "learned": 0.8}
    assert _why(survivors, "leave") == (
        "the survivors' partitions waited 7.0 partition-seconds, the model's mean 3.0 (members learned of a "
        "rebalance up to 0.8 s apart)"
    )
    orphans = {"after": 4.0, "pause": 8.0, "survivors": 1.0, "survivors_p": 1.0}
    assert _why(orphans, "wave") == "the broker's rebalances interleave with the new members' start-up"
    assert _why(orphans, "leave") == (
        "the orphaned and restarted partitions waited 7.0 partition-seconds, the model's mean 3.0"
    )


def test_fit_clients_leaves_out_what_a_client_does_not_measure() -> None:
    after = {"a": [0, 1, 2], "b": [3, 4, 5]}
    runs = {"settings": SETTINGS_JSON, "runs": [_observed_run("uniform", "leave", 3.0, after)]}
    found = fit_clients(runs)
    assert set(found) == {"java"}
    assert set(found["java"]) == {"consumer_orphan_heartbeats"}


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
        "strategy": "java consumer uniform" if product == "uniform" else f"java {product}",
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
    assert SETTINGS.broker_config()["group.consumer.assignment.interval.ms"] == "0"  # one target per change


def test_a_timed_member_passes_its_settings(tmp_path: Path) -> None:
    spec = TimedMemberSpec("m0", "kafka-python", "g", ("t",), strategy="sticky", group_instance_id="s0")
    spec = TimedMemberSpec(**{**spec.__dict__, "metadata_max_age_ms": 5000, "fetched": True})
    argv = spec.argv("127.0.0.1:9092", tmp_path / "control")
    assert argv[argv.index("--group-instance-id") + 1] == "s0"
    assert argv[argv.index("--metadata-max-age-ms") + 1] == "5000"
    assert argv[argv.index("--heartbeat-interval-ms") + 1] == "500"
    assert "--fetched" in argv
    assert "--fetched" not in TimedMemberSpec("m1", "aiokafka", "g", ("t",)).argv("b", tmp_path / "c")


def test_runs_pool_through_their_compact_form() -> None:
    """The fit reads the same from a raw run and from its compact form; two runs pool their partitions."""
    after = {"a": [0, 1, 2], "b": [3, 4, 5]}
    one = {"settings": SETTINGS_JSON, "runs": [_observed_run("uniform", "leave", 3.0, after)]}
    other = {"settings": SETTINGS_JSON, "runs": [_observed_run("uniform", "leave", 5.0, after)]}
    assert fit_factors(json.loads(json.dumps(compact(one)))) == fit_factors(one)
    # the orphans waited 1.5 s and 2.5 s; fetch_seconds is the median of the first fetches' delays (1.4, 2.4)
    pooled = fit_factors([one, compact(other)])
    assert pooled["fetch_seconds"] == pytest.approx(1.9)
    assert pooled["consumer_orphan_heartbeats"] == pytest.approx((2.0 - 1.9) / 2)
    moved = {"settings": {**SETTINGS_JSON, "heartbeat_ms": 3000}, "runs": []}
    with pytest.raises(ValueError, match="different settings"):
        fit_factors([one, moved])
    with pytest.raises(ValueError, match="no recorded run"):
        fit_factors([])


@pytest.mark.parametrize(("protocol", "quiet"), [("classic", 2.0), ("consumer", 3.0)])
def test_a_group_is_settled_only_after_a_heartbeat_without_listener_calls(protocol: str, quiet: float) -> None:
    """A KIP-848 member learns of a new target on its next heartbeat (2 s here): a quiet of 2 s took a subscription
    change's group as settled before its revocations came."""
    strategy = next(s for s in STRATEGIES if s.protocol == protocol)
    group = Group.__new__(Group)
    group.strategy, group.settings = strategy, SETTINGS
    assert group.quiet_s() == quiet


def test_steady_stalls_are_the_fetch_gaps_of_a_settled_group() -> None:
    """From a step's settle to its end nothing happens to the group: a fetch gap over STALL_S is the machine's."""
    regular = [round(10.0 + i * 0.1, 1) for i in range(41)]  # 10.0 .. 14.0 every 0.1 s
    gapped = [t for t in regular if not 11.0 < t < 13.0]  # a 2 s gap: stalled 2 - 0.1 s
    step = {**_step({"m0": [0, 1]}, measured=True), "settled_at": 10.0, "end": 14.0}
    setup = {**step, "measured": False}  # the group's formation: not watched, whatever it does
    unsettled = {**step, "settled_at": None}
    events = [{"e": "fetched", "m": "m0", "t": t, "partitions": [["t", 0]]} for t in gapped]
    events += [{"e": "fetched", "m": "m1", "t": t, "partitions": [["t", 1]]} for t in (11.0, 13.0)]  # not its holder
    events += [{"e": "fetched", "m": "m0", "t": t, "partitions": [["t", 1]]} for t in regular]
    stalled, watched = steady_stalls({"steps": [setup, step, unsettled], "events": events}, interval=0.1)
    assert stalled == pytest.approx(1.9)
    assert watched == pytest.approx(8.0)  # two partitions, 4 s each; the unsettled step watches nothing
    quiet = {"steps": [setup, step], "events": [e for e in events if e["partitions"] == [["t", 1]]]}
    assert steady_stalls(quiet, interval=0.1)[0] == pytest.approx(4.0 - 0.1)  # t-0 never fetched: all of it
    # a first step from empty (a KIP-848 group goes on reconciling after its first quiet) is the formation too
    assert steady_stalls({"steps": [step], "events": events}, interval=0.1) == (0.0, 0.0)
    assert stall_share([{"steps": [setup, step], "events": events}], interval=0.1) == pytest.approx(1.9 / 8.0)
    assert stall_share([], interval=0.1) == 0.0


def test_the_report_sets_the_records_hand_overs_beside_the_members_measure() -> None:
    """The handovers table's KIP-848 hand-overs, as ``assignors evaluate --actual`` derives a factor from them:
    mean 1.5 s, less the 0.1 s fetch, over the run's 2 s broker heartbeat: 0.7."""
    collected = {"g1": {"handovers": {"consumer_move": [1.0, 2.3, 1.2]}}, "g2": {"handovers": {}}}
    runs = {"settings": SETTINGS_JSON, "runs": [], "collected": collected}
    (line,) = _handovers(runs, PauseModel(fetch_seconds=0.1), {"consumer_move_heartbeats": 0.0})
    assert line.startswith(
        "- KIP-848's hand-overs in the records (`assignors collect`'s `handovers` table): 3 consumer moves, mean 1.50 "
        "s (median 1.20 s): `consumer_move_heartbeats` 0.700 as `assignors evaluate --actual` derives it, 0.000 as "
        "the members measured it"
    )
    assert _handovers({**runs, "collected": {"g": {"snapshots": 3}}}, PauseModel(), {}) == []  # recorded before it
    assert _handovers({**runs, "collected": {"error": "boom"}}, PauseModel(), {}) == []


def test_a_java_groups_sticky_assignor_is_replayed_with_kafkas_own_class() -> None:
    """A Java group held what Kafka's StickyAssignor gives (here: that class's own rebalances, step by step); on a
    history where ours moves one partition less, the replay with Kafka's jars holds the members' assignment at
    every step, ours does not; a Python client's group (aiokafka) is replayed with ours whatever the jars."""
    from calibration.report import kafka_jars

    from assignors import Cluster, StickyAssignor, Subscription
    from assignors.kafka_java import java_assignor
    from assignors.metrics import movement
    from assignors.rebalance import rebalance
    from helpers.kafka_jvm import build_dir

    jars = kafka_jars(build_dir().name.removeprefix("kafka-"))
    plan = [{"m0": "xz"}, {"m0": "xz", "m1": "xy"}, {"m0": "xz", "m1": "xy", "m2": "xyz"}, {"m0": "xz", "m2": "xyz"}]
    counts = {"x": 7, "y": 5, "z": 3}
    cluster = Cluster(counts)
    moved = {}
    held: dict[str, list[dict[str, Any]]] = {}
    for kind, assignor in (("kafka", java_assignor("sticky", jars)), ("ours", StickyAssignor())):
        owned: dict[str, Any] = {}
        generation, total = -1, 0
        before: dict[str, tuple[Any, ...]] = {}
        for members in plan:
            subscriptions = {m: Subscription(list(topics)) for m, topics in members.items()}
            result = rebalance(assignor, cluster, subscriptions, owned, generation=generation)
            generation = result.generation
            owned = {m: result.assignment[m] for m in members}
            after = {m: tuple(a.partitions) for m, a in owned.items()}
            total += movement(before, after, members_after=after.keys()).moved
            before = after
            held.setdefault(kind, []).append({m: [[tp.topic, tp.partition] for tp in p] for m, p in after.items()})
        moved[kind] = total
    assert moved["ours"] < moved["kafka"]  # the two differ on this history
    steps = [
        {
            "measured": i > 0,
            "t0": 0.0,
            "end": 1.0,
            "settled_at": 0.5,
            "stopped": [],
            "crashed": [],
            "counts": counts,
            "members": {m: {"member_id": m, "instance": None, "topics": list(t)} for m, t in members.items()},
            "holdings": held["kafka"][i],
        }
        for i, members in enumerate(plan)
    ]
    model = model_for(SETTINGS_JSON)
    java = {"strategy": "java sticky", "product": "sticky", "steps": steps}
    assert all(p.same_assignment for p in predict(java, model, kafka_jars=jars))
    assert not all(p.same_assignment for p in predict(java, model))  # ours, without the jars
    python = {**java, "strategy": "aiokafka sticky"}
    assert [p.same_assignment for p in predict(python, model, kafka_jars=jars)] == [
        p.same_assignment for p in predict(java, model)
    ]


def _uniform_run(holdings: dict[str, list[list[object]]]) -> dict[str, object]:
    """Member "q" holds t's 4 partitions, "a" joins and takes t-2 and t-3, then "b" joins."""
    topics = ["t"]
    q, a, b = ({"member_id": m, "topics": topics} for m in "qab")
    return {
        "product": "uniform",
        "topic_ids": {"t": "AAAAAAAAAAAAAAAAAAAAAQ"},
        "steps": [
            {"members": {"m0": q}, "counts": {"t": 4}, "holdings": {"m0": [["t", p] for p in range(4)]}},
            {"members": {"m0": q, "m1": a}, "counts": {"t": 4},
             "holdings": {"m0": [["t", 0], ["t", 1]], "m1": [["t", 2], ["t", 3]]}},
            {"members": {"m0": q, "m1": a, "m2": b}, "counts": {"t": 4}, "holdings": holdings},
        ],
    }  # fmt: skip


def test_uniform_steps_count_the_steps_the_replay_holds_with_the_coordinators_table_and_without() -> None:
    """Members "a" and "q" share a bucket of the coordinator's HashMap (hashes 97 and 113) and a slot of its table of
    members, which iterates the slot's last member first: "a" came after "q", so the coordinator puts "a", "q", then
    "b", who joins. Kafka's target is then a: t-2 and t-3, b: t-1, q: t-0; without the group's history (a table
    holding the three, added in Java's string order: "q" iterated first) it would be a: t-2, b: t-3, q: t-0 and t-1.
    Kafka's TimelineHashMap iterates these histories so (test_coordinator_order_follows_its_table)."""
    brokers = {"m0": [["t", 0]], "m1": [["t", 2], ["t", 3]], "m2": [["t", 1]]}
    assert uniform_steps({"runs": [_uniform_run(brokers)]}) == (2, 2, 1, 2)
    without = {"m0": [["t", 0], ["t", 1]], "m1": [["t", 2]], "m2": [["t", 3]]}
    assert uniform_steps({"runs": [_uniform_run(without)]}) == (2, 1, 2, 2)


_SECONDS = st.floats(min_value=0.1, max_value=1000.0, allow_nan=False)


@given(pause=_SECONDS, others=st.lists(_SECONDS, min_size=1, max_size=8), after=_SECONDS, listed=st.booleans())
def test_a_miss_is_put_on_the_runs_spread_only_where_the_model_is_within_25_percent_of_their_range(
    pause: float, others: list[float], after: float, *, listed: bool
) -> None:
    """Only a prediction within 25% of some figure in the runs' range is the runs' own disagreement; one beyond 25%
    of every run, on one side of them all, is the model's miss, however much the runs differ; runs within 25% of
    each other have no spread to put a miss on."""
    total = {"pause": pause, "after": after, **({"runs": others} if listed else {"earlier": others[0]})}
    runs = [*(others if listed else others[:1]), pause]
    low, high = min(runs), max(runs)
    if _runs_disagree(total):
        nearest = min(max(after, low), high)  # the runs' range's figure closest to the prediction
        assert abs(after - nearest) <= 0.25 * nearest * (1 + 1e-9)
        assert high - low > 0.25 * high
    if after < 0.75 * low or after > 1.25 * high or high - low <= 0.25 * high:
        assert not _runs_disagree(total)
    assert not _runs_disagree({"pause": pause, "after": after})  # no other run: nothing to put on it


def test_the_records_are_priced_as_evaluate_actual_prices_them_after_the_group_formed() -> None:
    """A classic group's records: formed by m1 and m2 (generation 1, before the first step ended), then m3 joins
    (generation 2): only the later generation counts, priced by ``rebalance_pause`` like any rebalance."""
    model = PauseModel(heartbeat_seconds=1.0, eager_heartbeats=0.5, fetch_seconds=0.1)
    records = {
        "membership": [
            [100.0, "m1", ["a"], None],
            [100.0, "m2", ["a"], None],
            [200.0, "m1", ["a"], None],
            [200.0, "m2", ["a"], None],
            [200.0, "m3", ["a"], None],
        ],
        "actual": [
            [100.0, 1, "range", "m1", None, ["a-0", "a-1", "a-2"]],
            [100.0, 1, "range", "m2", None, ["a-3", "a-4", "a-5"]],
            [200.0, 2, "range", "m1", None, ["a-0", "a-1"]],
            [200.0, 2, "range", "m2", None, ["a-2", "a-3"]],
            [200.0, 2, "range", "m3", None, ["a-4", "a-5"]],
        ],
        "topics": [["a", 6, None]],
    }
    run = {"group_id": "g", "scenario": "join", "strategy": "java range", "product": "range",
           "steps": [{"end_wall": 150.0}, {"end_wall": 250.0}]}  # fmt: skip
    # the survivors m1 and m2 revoked all 6 (EAGER), of which 3 moved: a-2 to m2, a-4 and a-5 to m3
    expected = rebalance_pause("EAGER", model, moved=3, survivors_owned=6)
    assert expected > 0
    assert records_pause(run, records, model) == round(expected, 3)
    formed_later = {**run, "steps": [{"end_wall": 250.0}]}  # generation 2 was the group forming: nothing priced
    assert records_pause(formed_later, records, model) == 0.0
    assert records_pause(run, None, model) is None
    assert records_pause(run, {**records, "actual": []}, model) is None
    collected = {"runs": [run], "collected": {"g": {"records": records}, "other": {}}}
    assert records_totals(collected, model) == {("join", "java range"): round(expected, 3)}
