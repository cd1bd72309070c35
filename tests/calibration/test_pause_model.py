"""The calibrated pause model (assignors.metrics.PauseModel, rebalance_pause) and the calibration's measurement."""

from __future__ import annotations

import math
from typing import Any

import pytest
from calibration.measure import STALL_S, observe
from calibration.measure import _hand_overs as hand_overs
from hypothesis import given
from hypothesis import strategies as st

from assignors.metrics import (
    DEFAULT_PAUSE_MODEL,
    KAFKA_DEFAULT,
    MEASURED,
    InvalidWeightError,
    PauseModel,
    pause_partition_seconds,
    rebalance_pause,
)

UNIT = PauseModel(
    heartbeat_seconds=1.0,
    session_seconds=10.0,
    consumer_heartbeat_seconds=2.0,
    consumer_session_seconds=20.0,
    eager_heartbeats=1.0,
    cooperative_heartbeats=2.0,
    cooperative_orphan_heartbeats=1.0,
    consumer_move_heartbeats=1.5,
    consumer_orphan_heartbeats=0.5,
    fetch_seconds=0.0,
)


def test_rebalance_pause_by_hand() -> None:
    # EAGER: every survivor's partition and every orphan wait one rejoin (1 heartbeat); a crash's wait the session
    assert rebalance_pause("EAGER", UNIT, moved=2, survivors_owned=10, orphaned=3) == 13.0
    assert rebalance_pause("EAGER", UNIT, moved=2, survivors_owned=10, crashed=3) == 10.0 + 3 * 11.0
    # COOPERATIVE: moved wait two heartbeats, orphans one
    assert rebalance_pause("COOPERATIVE", UNIT, moved=2, survivors_owned=10, orphaned=3) == 4.0 + 3.0
    assert rebalance_pause("COOPERATIVE", UNIT, moved=0, survivors_owned=10, crashed=1) == 11.0
    # CONSUMER: moved wait 1.5 broker heartbeats, orphans half of one, crashed the broker's session first
    assert rebalance_pause("CONSUMER", UNIT, moved=2, survivors_owned=10, orphaned=4) == 6.0 + 4.0
    assert rebalance_pause("consumer", UNIT, moved=0, survivors_owned=10, crashed=1) == 21.0


def test_fetch_seconds_is_per_partition_that_changes_hands() -> None:
    model = UNIT.with_settings("test", fetch_seconds=0.5)
    assert rebalance_pause("CONSUMER", model, moved=2, survivors_owned=10, orphaned=1) == 2 * 3.5 + 1.5


def test_sources_name_every_parameter() -> None:
    parameters = DEFAULT_PAUSE_MODEL.parameters()
    assert set(parameters) == {
        "heartbeat_seconds",
        "session_seconds",
        "consumer_heartbeat_seconds",
        "consumer_session_seconds",
        "eager_heartbeats",
        "cooperative_heartbeats",
        "cooperative_orphan_heartbeats",
        "consumer_move_heartbeats",
        "consumer_orphan_heartbeats",
        "fetch_seconds",
    }
    assert parameters["heartbeat_seconds"] == (3.0, KAFKA_DEFAULT + " heartbeat.interval.ms=3000")
    assert parameters["consumer_heartbeat_seconds"] == (
        5.0,
        KAFKA_DEFAULT + " group.consumer.heartbeat.interval.ms=5000",
    )
    assert parameters["eager_heartbeats"][1] == MEASURED
    given_model = DEFAULT_PAUSE_MODEL.with_settings("--heartbeat-seconds", consumer_heartbeat_seconds=2.0)
    assert given_model.parameters()["consumer_heartbeat_seconds"] == (2.0, "--heartbeat-seconds")
    assert given_model.parameters()["heartbeat_seconds"] == parameters["heartbeat_seconds"]


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: PauseModel(heartbeat_seconds=-1.0), "heartbeat_seconds"),
        (lambda: PauseModel(fetch_seconds=math.nan), "fetch_seconds"),
        (lambda: DEFAULT_PAUSE_MODEL.with_settings("x", heartbeat=1.0), "no field 'heartbeat'"),
        (lambda: DEFAULT_PAUSE_MODEL.with_settings("x", session_seconds=math.inf), "session_seconds"),
        (lambda: rebalance_pause("EAGER", moved=-1, survivors_owned=0), "moved"),
        (lambda: rebalance_pause("EAGER", moved=0, survivors_owned=0, crashed=-2), "crashed"),
        (lambda: rebalance_pause("STATIC", moved=0, survivors_owned=0), "STATIC"),
    ],
)
def test_bad_input_names_the_field(call: Any, needle: str) -> None:
    with pytest.raises(InvalidWeightError, match=needle):
        call()


counts = st.integers(min_value=0, max_value=500)
seconds = st.floats(min_value=0.0, max_value=100.0, allow_nan=False)


@given(
    protocol=st.sampled_from(["EAGER", "COOPERATIVE", "CONSUMER"]),
    moved=counts,
    extra=counts,
    orphaned=counts,
    crashed=counts,
    heartbeat=seconds,
    session=seconds,
)
def test_rebalance_pause_properties(
    protocol: str, moved: int, extra: int, orphaned: int, crashed: int, heartbeat: float, session: float
) -> None:
    """Non-negative; linear in each count; a crash never costs less than a leave; nothing changed, no pause."""
    model = DEFAULT_PAUSE_MODEL.with_settings(
        "test",
        heartbeat_seconds=heartbeat,
        consumer_heartbeat_seconds=heartbeat,
        session_seconds=session,
        consumer_session_seconds=session,
    )
    survivors = moved + extra
    total = rebalance_pause(protocol, model, moved=moved, survivors_owned=survivors, orphaned=orphaned, crashed=crashed)
    assert total >= 0.0
    parts = (
        rebalance_pause(protocol, model, moved=moved, survivors_owned=survivors)
        + rebalance_pause(protocol, model, moved=0, survivors_owned=0, orphaned=orphaned)
        + rebalance_pause(protocol, model, moved=0, survivors_owned=0, crashed=crashed)
    )
    assert math.isclose(total, parts, rel_tol=1e-9, abs_tol=1e-9)
    leave = rebalance_pause(protocol, model, moved=0, survivors_owned=0, orphaned=orphaned)
    crash = rebalance_pause(protocol, model, moved=0, survivors_owned=0, crashed=orphaned)
    assert crash >= leave
    if protocol != "EAGER":
        assert rebalance_pause(protocol, model, moved=0, survivors_owned=survivors) == 0.0


def test_the_old_constants_still_work() -> None:
    assert pause_partition_seconds("COOPERATIVE", moved=3, survivors_owned=12) == 30.0


# --- the measurement --------------------------------------------------------------------------------------------------
def test_hand_overs_from_release_to_the_next_holders_first_fetch() -> None:
    # x holds p, fetching every 0.1 s; revokes at 10.0; y is assigned at 10.5 and first fetches at 10.7
    line = [(t / 10, 2, "x") for t in range(90, 100)] + [(9.0, 1, "x"), (10.0, 0, "x"), (10.5, 1, "y"), (10.7, 2, "y")]
    line.sort()
    assert hand_overs(line, 9.5, 12.0, interval=0.1) == pytest.approx((0.7, 0.5))
    # a hand-over that starts before the step is not the step's
    assert hand_overs(line, 10.2, 12.0, interval=0.1) == (0.0, 0.0)
    # a fetch by the old holder after the release (its poll was in flight) does not end the hand-over
    late = sorted([*line, (10.1, 2, "x")])
    assert hand_overs(late, 9.5, 12.0, interval=0.1) == pytest.approx((0.7, 0.5))
    # released and never fetched again before the step ended: paused until the end
    assert hand_overs(line[:-2], 9.5, 12.0, interval=0.1) == pytest.approx((2.0, 0.0))
    # a stall while held: a gap over STALL_S between the holder's fetches, less the producer's interval
    stalled = [(0.0, 1, "x"), (0.1, 2, "x"), (0.2, 2, "x"), (0.2 + STALL_S + 0.5, 2, "x")]
    assert hand_overs(stalled, 0.0, 5.0, interval=0.1) == pytest.approx((STALL_S + 0.4, 0.0))
    # the ordinary rhythm of a consumed partition is no pause
    steady = [(0.0, 1, "x"), *((i * STALL_S * 0.9, 2, "x") for i in range(1, 10))]
    assert hand_overs(steady, 0.0, 10.0, interval=0.1) == (0.0, 0.0)


def _fetch(t: float, member: str, *partitions: int) -> dict[str, Any]:
    return {"t": t, "e": "fetched", "m": member, "partitions": [["t", p] for p in partitions]}


def _call(t: float, kind: str, member: str, *partitions: int, gen: int = 1) -> dict[str, Any]:
    return {"t": t, "e": kind, "m": member, "partitions": [["t", p] for p in partitions], "gen": gen}


def test_observe_a_leave_by_hand() -> None:
    """x and y hold 0-1 and 2-3; y leaves at 10.0 (cooperative: x keeps 0-1 and takes 2-3 at 11.0)."""
    events = [_call(0.5, "assigned", "x", 0, 1), _call(0.5, "assigned", "y", 2, 3)]
    events += [_fetch(t / 10, "x", 0, 1) for t in range(10, 120)]
    events += [_fetch(t / 10, "y", 2, 3) for t in range(10, 100)]
    events += [_call(10.0, "revoked", "y", 2, 3), _call(11.0, "assigned", "x", 2, 3, gen=2)]
    events += [_fetch(t / 10, "x", 2, 3) for t in range(110, 120)]
    step0 = {"measured": False, "t0": 0.0, "end": 9.5, "settled_at": 0.5, "stopped": [], "crashed": []}
    step0 |= {"members": {"x": {}, "y": {}}, "holdings": {"x": [["t", 0], ["t", 1]], "y": [["t", 2], ["t", 3]]}}
    step1 = {"measured": True, "t0": 9.95, "end": 12.0, "settled_at": 11.0, "stopped": ["y"], "crashed": []}
    step1 |= {"members": {"x": {}}, "holdings": {"x": [["t", p] for p in range(4)]}}
    run = {
        "steps": [step0, step1],
        "events": sorted(events, key=lambda e: e["t"]),
        "members": {},
        "protocol": "classic",
    }
    (found,) = observe(run, interval=0.1)
    assert (found.moved, found.orphaned, found.revoked, found.rounds, found.paused_partitions) == (0, 2, 0, 1, 2)
    # partitions 2 and 3: released at 10.0 (y's revoke), first fetched by x at 11.0
    assert found.pause == pytest.approx(2 * 1.0)
    assert found.unowned == pytest.approx(2 * 1.0)
    assert found.seconds == pytest.approx(11.0 - 9.95)
