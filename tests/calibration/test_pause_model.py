"""The calibrated pause model (assignors.metrics.PauseModel, rebalance_pause) and the calibration's measurement."""

from __future__ import annotations

import math
from typing import Any

import pytest
from calibration.measure import STALL_S, STEP_STALL_S, observe
from calibration.measure import _hand_overs as hand_overs
from calibration.scenarios import SETTINGS
from hypothesis import given
from hypothesis import strategies as st

from assignors import RebalanceProtocol, TopicPartition, get_assignor
from assignors.metrics import (
    CALIBRATION_SETTINGS,
    CLIENT_PAUSE_FACTORS,
    DEFAULT_PAUSE_MODEL,
    KAFKA_DEFAULT,
    KAFKA_DEFAULT_SETTINGS,
    MEASURED,
    InvalidWeightError,
    PauseModel,
    leader_share,
    movement,
    pause_partition_seconds,
    rebalance_pause,
    rejoined_partitions,
    restart_pause,
)
from assignors.testing import Group, groups

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
    eager_orphan_heartbeats=3.0,
    cooperative_kept_heartbeats=0.0,
    static_rejoin_seconds=0.5,
    eager_crash_heartbeats=1.0,
)
FIELDS = (
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
    "eager_orphan_heartbeats",
    "cooperative_kept_heartbeats",
    "static_rejoin_seconds",
    "eager_crash_heartbeats",
)


def test_rebalance_pause_by_hand() -> None:
    # EAGER: every survivor's partition waits one rejoin (1 heartbeat), an orphan 3; a crash's the session first
    assert rebalance_pause("EAGER", UNIT, moved=2, survivors_owned=10, orphaned=3) == 10.0 + 9.0
    assert rebalance_pause("EAGER", UNIT, moved=2, survivors_owned=10, crashed=3) == 10.0 + 3 * 13.0
    # COOPERATIVE: moved wait two heartbeats, orphans one; the Java consumer's kept partitions nothing
    assert rebalance_pause("COOPERATIVE", UNIT, moved=2, survivors_owned=10, orphaned=3) == 4.0 + 3.0
    assert rebalance_pause("COOPERATIVE", UNIT, moved=0, survivors_owned=10, crashed=1) == 11.0
    # CONSUMER: moved wait 1.5 broker heartbeats, orphans half of one, crashed the broker's session first
    assert rebalance_pause("CONSUMER", UNIT, moved=2, survivors_owned=10, orphaned=4) == 6.0 + 4.0
    assert rebalance_pause("consumer", UNIT, moved=0, survivors_owned=10, crashed=1) == 21.0


def test_eager_survivors_of_a_crash_learn_apart() -> None:
    """After a join or a LeaveGroup the survivors learn of the rebalance together; after a session timeout apart."""
    model = UNIT.with_settings("test", eager_heartbeats=0.2, eager_crash_heartbeats=0.6)
    assert rebalance_pause("EAGER", model, moved=2, survivors_owned=10) == pytest.approx(2.0)
    assert rebalance_pause("EAGER", model, moved=2, survivors_owned=10, orphaned=1) == pytest.approx(2.0 + 3.0)
    assert rebalance_pause("EAGER", model, moved=2, survivors_owned=10, crashed=1) == pytest.approx(6.0 + 13.0)
    # the other protocols do not revoke for it
    assert rebalance_pause("COOPERATIVE", model, moved=2, survivors_owned=10, crashed=1) == 4.0 + 11.0
    assert rebalance_pause("CONSUMER", model, moved=2, survivors_owned=10, crashed=1) == 6.0 + 21.0


@given(
    st.integers(0, 500), st.integers(0, 50), st.integers(1, 50), st.sampled_from(["EAGER", "COOPERATIVE", "CONSUMER"])
)
def test_a_crash_never_costs_less_than_a_leave(survivors: int, moved: int, gone: int, protocol: str) -> None:
    """The measured model prices a departure's crash (the session timeout first, and under EAGER the survivors
    learning apart) at least as high as the same departure by LeaveGroup."""
    model = DEFAULT_PAUSE_MODEL
    assert model.eager_crash_heartbeats >= model.eager_heartbeats
    moved = min(moved, survivors)
    left = rebalance_pause(protocol, model, moved=moved, survivors_owned=survivors, orphaned=gone)
    crashed = rebalance_pause(protocol, model, moved=moved, survivors_owned=survivors, crashed=gone)
    assert crashed >= left


_HOLDINGS = st.dictionaries(
    st.sampled_from("abcdef"), st.lists(st.builds(TopicPartition, st.sampled_from("tu"), st.integers(0, 5)), max_size=5)
)
_TOPICS = st.dictionaries(st.sampled_from("abcdef"), st.sampled_from([("t",), ("t", "u"), ("u",)]))


@given(_HOLDINGS, _HOLDINGS, _TOPICS, _TOPICS)
def test_rejoined_partitions_by_protocol(
    before: dict[str, list[TopicPartition]],
    after: dict[str, list[TopicPartition]],
    topics_before: dict[str, tuple[str, ...]],
    topics_now: dict[str, tuple[str, ...]],
) -> None:
    """What rejoins on its own: under EAGER all the changed members owned, under COOPERATIVE what they keep unless
    Movement.retained_revoking counts it already (they give some up too), under KIP-848 nothing priced; with the
    same members and subscriptions, the leader's share."""
    counts = {p: rejoined_partitions(p, before, after, topics_before, topics_now) for p in ("EAGER", "COOPERATIVE")}
    assert rejoined_partitions("CONSUMER", before, after, topics_before, topics_now) == 0
    assert 0 <= counts["COOPERATIVE"] <= counts["EAGER"]
    changed = [i for i in topics_now if i in topics_before and topics_now[i] != topics_before[i]]
    owned = {i: len(before.get(i, ())) for i in before}
    held = {i: sum(tp in set(after[i]) for tp in before[i]) for i in before if i in after}
    steady = any(k == owned[i] for i, k in held.items())  # then retained_revoking counts what the givers keep
    kept = {i: 0 if steady and k < owned[i] else k for i, k in held.items()}
    if before and topics_now == topics_before:
        present = [i for i in before if i in after]
        assert counts["EAGER"] == leader_share(sum(owned[i] for i in present), len(before))
        assert counts["COOPERATIVE"] == leader_share(sum(kept[i] for i in present), len(before))
    else:
        assert counts["EAGER"] == sum(owned.get(i, 0) for i in changed)
        assert counts["COOPERATIVE"] == sum(kept.get(i, 0) for i in changed)


@given(st.integers(0, 10_000), st.integers(0, 500))
def test_the_leaders_share_is_an_average_members(survivors: int, members: int) -> None:
    share = leader_share(survivors, members)
    assert 0 <= share <= survivors
    if members:
        assert abs(share * members - survivors) <= members / 2  # the nearest whole share
    else:
        assert share == 0


def test_a_client_that_stops_its_kept_partitions() -> None:
    """kafka-python's kept partitions wait while a cooperative rebalance that moves anything runs its second round."""
    stalls = UNIT.with_settings("test", cooperative_kept_heartbeats=0.5)
    # 8 kept of 10 (2 moved): 8 x 0.5 heartbeats on top of the moved partitions' 2 x 2
    assert rebalance_pause("COOPERATIVE", stalls, moved=2, survivors_owned=10) == 4.0 + 4.0
    # nothing moved: one round, nobody revokes, nothing stops
    assert rebalance_pause("COOPERATIVE", stalls, moved=0, survivors_owned=10, orphaned=2) == 2.0
    # the other protocols do not know it
    assert rebalance_pause("EAGER", stalls, moved=2, survivors_owned=10) == 10.0
    assert rebalance_pause("CONSUMER", stalls, moved=2, survivors_owned=10) == 6.0


def test_only_what_the_givers_keep_waits_for_the_second_round() -> None:
    """Given ``retained_revoking`` (Movement.retained_revoking), only those kept partitions wait: their members rejoin
    the second round at once and wait for the others' heartbeat (make calibrate: kafka-python's waited 0.66-1.09
    heartbeats each, the other kept partitions none)."""
    stalls = UNIT.with_settings("test", cooperative_kept_heartbeats=0.5)
    assert rebalance_pause("COOPERATIVE", stalls, moved=2, survivors_owned=10, retained_revoking=6) == 4.0 + 3.0
    # every survivor gave something up: they all rejoin at once, nobody waits
    assert rebalance_pause("COOPERATIVE", stalls, moved=2, survivors_owned=10, retained_revoking=0) == 4.0
    # a giver whose partitions were released (a topic unsubscribed), nothing moved: it still rejoins and waits
    assert rebalance_pause("COOPERATIVE", stalls, moved=0, survivors_owned=10, retained_revoking=4) == 2.0
    # Kafka's Java consumer keeps fetching them
    assert rebalance_pause("COOPERATIVE", DEFAULT_PAUSE_MODEL, moved=0, survivors_owned=10, retained_revoking=4) == 0.0
    assert rebalance_pause("EAGER", stalls, moved=2, survivors_owned=10, retained_revoking=6) == 10.0


def test_restart_pause_by_hand() -> None:
    assert restart_pause(UNIT, restarted=4, downtime_seconds=2.0) == 4 * 2.5
    assert restart_pause(UNIT, restarted=0, downtime_seconds=2.0) == 0.0
    assert restart_pause(restarted=2, downtime_seconds=0.0) == 2 * DEFAULT_PAUSE_MODEL.static_rejoin_seconds


def test_fetch_seconds_is_per_partition_that_changes_hands() -> None:
    model = UNIT.with_settings("test", fetch_seconds=0.5)
    assert rebalance_pause("CONSUMER", model, moved=2, survivors_owned=10, orphaned=1) == 2 * 3.5 + 1.5


def test_sources_name_every_parameter() -> None:
    parameters = DEFAULT_PAUSE_MODEL.parameters()
    assert tuple(parameters) == FIELDS
    assert parameters["heartbeat_seconds"] == (3.0, KAFKA_DEFAULT + " heartbeat.interval.ms=3000")
    assert parameters["consumer_heartbeat_seconds"] == (
        5.0,
        KAFKA_DEFAULT + " group.consumer.heartbeat.interval.ms=5000",
    )
    for name, (setting, seconds) in KAFKA_DEFAULT_SETTINGS.items():
        assert parameters[name] == (seconds, f"{KAFKA_DEFAULT} {setting}={round(seconds * 1000)}")
    assert all(parameters[name][1] == MEASURED for name in FIELDS if name not in KAFKA_DEFAULT_SETTINGS)
    given_model = DEFAULT_PAUSE_MODEL.with_settings("--heartbeat-seconds", consumer_heartbeat_seconds=2.0)
    assert given_model.parameters()["consumer_heartbeat_seconds"] == (2.0, "--heartbeat-seconds")
    assert given_model.parameters()["heartbeat_seconds"] == parameters["heartbeat_seconds"]


def test_the_calibration_runs_at_the_settings_the_model_names() -> None:
    """One place for the intervals: the scenarios' settings are CALIBRATION_SETTINGS in ms."""
    assert SETTINGS.heartbeat_ms == CALIBRATION_SETTINGS["heartbeat_seconds"] * 1000
    assert SETTINGS.session_ms == CALIBRATION_SETTINGS["session_seconds"] * 1000
    assert SETTINGS.broker_heartbeat_ms == CALIBRATION_SETTINGS["consumer_heartbeat_seconds"] * 1000
    assert SETTINGS.broker_session_ms == CALIBRATION_SETTINGS["consumer_session_seconds"] * 1000
    assert set(CALIBRATION_SETTINGS) == set(KAFKA_DEFAULT_SETTINGS)


def test_each_client_has_its_own_factors() -> None:
    assert DEFAULT_PAUSE_MODEL.for_client("java") is DEFAULT_PAUSE_MODEL
    assert DEFAULT_PAUSE_MODEL.for_client("librdkafka") is DEFAULT_PAUSE_MODEL  # not measured: Java's
    for client, factors in CLIENT_PAUSE_FACTORS.items():
        own = DEFAULT_PAUSE_MODEL.for_client(client)
        assert factors
        for name in FIELDS:
            value, source = own.parameters()[name]
            if name in factors:
                assert (value, source) == (factors[name], f"{MEASURED} ({client})")
            else:
                assert (value, source) == DEFAULT_PAUSE_MODEL.parameters()[name]
    # the Java consumer keeps fetching what it keeps; kafka-python does not
    assert (
        DEFAULT_PAUSE_MODEL.cooperative_kept_heartbeats
        < CLIENT_PAUSE_FACTORS["kafka-python"]["cooperative_kept_heartbeats"]
    )


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: PauseModel(heartbeat_seconds=-1.0), "heartbeat_seconds"),
        (lambda: PauseModel(fetch_seconds=math.nan), "fetch_seconds"),
        (lambda: PauseModel(static_rejoin_seconds=-0.1), "static_rejoin_seconds"),
        (lambda: DEFAULT_PAUSE_MODEL.with_settings("x", heartbeat=1.0), "no field 'heartbeat'"),
        (lambda: DEFAULT_PAUSE_MODEL.with_settings("x", session_seconds=math.inf), "session_seconds"),
        (lambda: DEFAULT_PAUSE_MODEL.with_settings("x", eager_orphan_heartbeats=-1), "eager_orphan_heartbeats"),
        (lambda: rebalance_pause("EAGER", moved=-1, survivors_owned=0), "moved"),
        (lambda: rebalance_pause("EAGER", moved=0, survivors_owned=0, crashed=-2), "crashed"),
        (lambda: rebalance_pause("COOPERATIVE", moved=0, survivors_owned=3, retained_revoking=-1), "retained_revoking"),
        (lambda: rebalance_pause("COOPERATIVE", moved=0, survivors_owned=3, retained_revoking=4), "retained_revoking"),
        (lambda: rebalance_pause("STATIC", moved=0, survivors_owned=0), "STATIC"),
        (lambda: restart_pause(restarted=-1, downtime_seconds=1.0), "restarted"),
        (lambda: leader_share(-1, 3), "survivors_owned"),
        (lambda: leader_share(3, -1), "members"),
        (lambda: restart_pause(restarted=1, downtime_seconds=math.nan), "downtime_seconds"),
    ],
)
def test_bad_input_names_the_field(call: Any, needle: str) -> None:
    with pytest.raises(InvalidWeightError, match=needle):
        call()


counts = st.integers(min_value=0, max_value=500)
seconds = st.floats(min_value=0.0, max_value=100.0, allow_nan=False)
protocols = st.sampled_from(["EAGER", "COOPERATIVE", "CONSUMER"])
clients = st.sampled_from(["java", *sorted(CLIENT_PAUSE_FACTORS)])


def _model(client: str, heartbeat: float, session: float) -> PauseModel:
    return DEFAULT_PAUSE_MODEL.for_client(client).with_settings(
        "test",
        heartbeat_seconds=heartbeat,
        consumer_heartbeat_seconds=heartbeat,
        session_seconds=session,
        consumer_session_seconds=session,
    )


@given(
    protocol=protocols,
    client=clients,
    moved=counts,
    extra=counts,
    orphaned=counts,
    crashed=counts,
    heartbeat=seconds,
    session=seconds,
)
def test_rebalance_pause_properties(
    protocol: str, client: str, moved: int, extra: int, orphaned: int, crashed: int, heartbeat: float, session: float
) -> None:
    """Non-negative; the survivors', the orphans' and the crashed partitions' parts add up (the survivors' priced as
    a crash's survivors when one crashed); a crash never costs less than a leave; nothing changed, no pause (but
    under EAGER, where every survivor rejoins)."""
    model = _model(client, heartbeat, session)
    survivors = moved + extra
    total = rebalance_pause(protocol, model, moved=moved, survivors_owned=survivors, orphaned=orphaned, crashed=crashed)
    assert total >= 0.0
    crash_only = rebalance_pause(protocol, model, moved=0, survivors_owned=0, crashed=crashed)
    survivors_part = rebalance_pause(protocol, model, moved=moved, survivors_owned=survivors)
    if crashed:  # one crashed member or many: the survivors learn of it alike
        one = rebalance_pause(protocol, model, moved=0, survivors_owned=0, crashed=1)
        survivors_part = rebalance_pause(protocol, model, moved=moved, survivors_owned=survivors, crashed=1) - one
        assert survivors_part >= rebalance_pause(protocol, model, moved=moved, survivors_owned=survivors) - 1e-9
    orphans_part = rebalance_pause(protocol, model, moved=0, survivors_owned=0, orphaned=orphaned)
    parts = survivors_part + orphans_part + crash_only
    assert math.isclose(total, parts, rel_tol=1e-9, abs_tol=1e-9)
    leave = rebalance_pause(protocol, model, moved=0, survivors_owned=0, orphaned=orphaned)
    crash = rebalance_pause(protocol, model, moved=0, survivors_owned=0, crashed=orphaned)
    assert crash >= leave
    if protocol != "EAGER":
        assert rebalance_pause(protocol, model, moved=0, survivors_owned=survivors) == 0.0


@given(protocol=protocols, client=clients, moved=counts, extra=counts, orphaned=counts, more=st.integers(1, 50))
def test_rebalance_pause_grows_with_every_count(
    protocol: str, client: str, moved: int, extra: int, orphaned: int, more: int
) -> None:
    """More of any kind of partition never costs less (the kept partitions' stall is priced per kept partition)."""
    model = DEFAULT_PAUSE_MODEL.for_client(client)
    base = rebalance_pause(protocol, model, moved=moved, survivors_owned=moved + extra, orphaned=orphaned)
    for grown in (
        {"moved": moved + more, "survivors_owned": moved + more + extra, "orphaned": orphaned},
        {"moved": moved, "survivors_owned": moved + extra + more, "orphaned": orphaned},
        {"moved": moved, "survivors_owned": moved + extra, "orphaned": orphaned + more},
        {"moved": moved, "survivors_owned": moved + extra, "orphaned": orphaned, "crashed": more},
    ):
        assert rebalance_pause(protocol, model, **grown) >= base


@given(protocol=protocols, moved=counts, extra=counts, orphaned=counts, crashed=counts)
def test_the_java_model_is_linear(protocol: str, moved: int, extra: int, orphaned: int, crashed: int) -> None:
    """With Kafka's Java consumer (kept partitions free under COOPERATIVE) twice every count costs twice."""
    model = DEFAULT_PAUSE_MODEL.with_settings("test", cooperative_kept_heartbeats=0.0)
    counts_ = {"moved": moved, "survivors_owned": moved + extra, "orphaned": orphaned, "crashed": crashed}
    once = rebalance_pause(protocol, model, **counts_)
    twice = rebalance_pause(protocol, model, **{k: 2 * v for k, v in counts_.items()})
    assert math.isclose(twice, 2 * once, rel_tol=1e-9, abs_tol=1e-9)


@given(group=groups(), other=groups(), client=clients)
def test_retained_revoking_prices_at_most_the_bound(group: Group, other: Group, client: str) -> None:
    """Given the movement's own count, the pause never exceeds the bound a caller with the totals only gets."""
    model = DEFAULT_PAUSE_MODEL.for_client(client)
    before = get_assignor("cooperative-sticky").assign(group.cluster, group.subscriptions)
    after = get_assignor("cooperative-sticky").assign(other.cluster, other.subscriptions)
    moves = movement(before, after)
    counts_ = {"moved": moves.moved, "survivors_owned": moves.revoked(RebalanceProtocol.EAGER)}
    exact = rebalance_pause("COOPERATIVE", model, **counts_, retained_revoking=moves.retained_revoking)
    bound = rebalance_pause("COOPERATIVE", model, **counts_)
    assert exact >= 0.0
    if moves.moved:
        assert exact <= bound + 1e-9


@given(client=clients, restarted=counts, downtime=seconds, later=seconds)
def test_restart_pause_properties(client: str, restarted: int, downtime: float, later: float) -> None:
    """Each restarted partition waits the downtime plus the client's rejoin; longer down never costs less."""
    model = DEFAULT_PAUSE_MODEL.for_client(client)
    pause = restart_pause(model, restarted=restarted, downtime_seconds=downtime)
    assert math.isclose(pause, restarted * (downtime + model.static_rejoin_seconds), rel_tol=1e-9, abs_tol=1e-9)
    assert pause >= restarted * downtime
    assert restart_pause(model, restarted=restarted, downtime_seconds=downtime + later) >= pause


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
    # a stall while held: a gap over STEP_STALL_S between the holder's fetches, less the producer's interval
    stalled = [(0.0, 1, "x"), (0.1, 2, "x"), (0.2, 2, "x"), (0.2 + STALL_S + 0.5, 2, "x")]
    assert hand_overs(stalled, 0.0, 5.0, interval=0.1) == pytest.approx((STALL_S + 0.4, 0.0))
    # ... shorter than STALL_S (what a settled group's stalls are counted from) too: kafka-python's members that
    # rejoined on their own stopped fetching what they kept for 0.78-0.97 s in some steps
    short = [(0.0, 1, "x"), (0.1, 2, "x"), (0.2, 2, "x"), (0.2 + STEP_STALL_S + 0.1, 2, "x")]
    assert STEP_STALL_S + 0.1 < STALL_S
    assert hand_overs(short, 0.0, 5.0, interval=0.1) == pytest.approx((STEP_STALL_S, 0.0))
    assert hand_overs(short, 2.0, 5.0, interval=0.1) == (0.0, 0.0)  # a stall that ends before the step is not its
    # the ordinary rhythm of a consumed partition is no pause
    steady = [(0.0, 1, "x"), *((i * STEP_STALL_S * 0.9, 2, "x") for i in range(1, 10))]
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


def test_observe_what_a_giver_keeps_by_hand() -> None:
    """x holds 0-1, y 2-3; w joins at 10.0 (cooperative): x gives 1 up at 10.1 and, rejoining the second round at
    once, fetches its 0 again only at 11.6, after y's heartbeat; y gives nothing up and never stops."""
    events = [_call(0.5, "assigned", "x", 0, 1), _call(0.5, "assigned", "y", 2, 3)]
    events += [_fetch(t / 10, "x", 0, 1) for t in range(10, 101)]
    events += [_fetch(t / 10, "x", 0) for t in range(116, 130)]
    events += [_fetch(t / 10, "y", 2, 3) for t in range(10, 130)]
    events += [_call(10.1, "revoked", "x", 1), _call(11.2, "assigned", "w", 1, gen=3)]
    events += [_fetch(t / 10, "w", 1) for t in range(113, 130)]
    step0 = {"measured": False, "t0": 0.0, "end": 9.5, "settled_at": 0.5, "stopped": [], "crashed": []}
    step0 |= {"members": {"x": {}, "y": {}}, "holdings": {"x": [["t", 0], ["t", 1]], "y": [["t", 2], ["t", 3]]}}
    step1 = {"measured": True, "t0": 9.95, "end": 13.0, "settled_at": 11.3, "stopped": [], "crashed": []}
    holdings = {"x": [["t", 0]], "y": [["t", 2], ["t", 3]], "w": [["t", 1]]}
    step1 |= {"members": {"x": {}, "y": {}, "w": {}}, "holdings": holdings}
    run = {"steps": [step0, step1], "events": sorted(events, key=lambda e: e["t"]), "members": {}}
    (found,) = observe(run, interval=0.1)
    assert (found.moved, found.kept, found.kept_revoking) == (1, 3, 1)
    assert found.pause_kept_revoking == found.pause_kept > 0.0  # x's 0 stalled; y's 2 and 3 never did
    # had y given something up too, every survivor would rejoin at once: nobody waits
    step1["holdings"] = {"x": [["t", 0]], "y": [["t", 2]], "w": [["t", 1], ["t", 3]]}
    assert observe(run, interval=0.1)[0].kept_revoking == 0
