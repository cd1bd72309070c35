"""The pure replay (no JVM): pinned histories computed by hand, bad input, and equality with the library."""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import (
    Assignment,
    Cluster,
    ConsumerPartitionAssignor,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
    get_assignor,
    parse_topic_partition,
)
from assignors.metrics import DEFAULT_PAUSE_MODEL, InvalidWeightError, PauseModel, balance, movement, rebalance_pause
from spark_udfs import MemberRow, TopicHistory, replay_group
from spark_udfs.demo.sample import _Group, _Member, _restart
from spark_udfs.replay import OUTPUT_COLUMNS, member_rows, replay_frame, rows_to_frame
from spark_udfs.replay.timing import PauseTiming
from spark_udfs.replay.weights import WeightHistory

T0 = dt.datetime(2026, 1, 1, 12, 0)  # noqa: DTZ001 - Spark timestamps are naive


def at(minute: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minute)


def pick(rows: list[dict[str, Any]], strategy: str, *fields: str) -> list[tuple[Any, ...]]:
    return [tuple(r[f] for f in fields) for r in rows if r["strategy"] == strategy]


SIX = TopicHistory([("t", 6, None)])
JOIN_STAY_LEAVE = [
    MemberRow(at(0), "a", ("t",)),
    MemberRow(at(1), "a", ("t",)),
    MemberRow(at(1), "b", ("t",)),
    MemberRow(at(2), "b", ("t",)),
    MemberRow(at(2), "a", ("t",)),
    MemberRow(at(3), "b", ("t",)),
]
FIELDS = ("generation", "rebalanced", "moved", "orphaned", "revoked", "rounds", "min_load", "max_load")


def test_eager_history_by_hand() -> None:
    """a alone holds 6; b joins: range gives b t-3..5 (3 moved, all 6 revoked); no change; a leaves: 3 orphaned."""
    rows, _ = replay_group("g", JOIN_STAY_LEAVE, SIX, ["range"])
    assert pick(rows, "range", *FIELDS) == [
        (1, True, 0, 0, 0, 1, 6, 6),
        (2, True, 3, 0, 6, 1, 3, 3),
        (2, False, 0, 0, 0, 0, 3, 3),
        (3, True, 0, 3, 3, 1, 6, 6),
    ]
    assert all(r["valid"] and r["error"] is None and r["partitions"] == 6 for r in rows)


def test_cooperative_history_by_hand() -> None:
    """Cooperative: the join revokes only the 3 that move and takes two rounds (two generations)."""
    rows, detail = replay_group("g", JOIN_STAY_LEAVE, SIX, ["cooperative-sticky"], detail=True)
    assert pick(rows, "cooperative-sticky", *FIELDS) == [
        (1, True, 0, 0, 0, 1, 6, 6),
        (3, True, 3, 0, 3, 2, 3, 3),
        (3, False, 0, 0, 0, 0, 3, 3),
        (4, True, 0, 3, 0, 1, 6, 6),
    ]
    last = [(d["member"], d["partitions"]) for d in detail if d["snapshot_ts"] == at(3)]
    assert last == [("b", ["t-3", "t-4", "t-5", "t-0", "t-1", "t-2"])]


def test_static_member_restart_keeps_identity_and_does_not_rebalance() -> None:
    rows = [
        MemberRow(at(0), "a-1", ("t",), "a"),
        MemberRow(at(0), "b-1", ("t",), "b"),
        MemberRow(at(1), "a-2", ("t",), "a"),  # a restarted: new member id, same instance id
        MemberRow(at(1), "b-1", ("t",), "b"),
    ]
    out, detail = replay_group("g", rows, SIX, ["sticky"], detail=True)
    assert pick(out, "sticky", "generation", "rebalanced", "moved") == [(1, True, 0), (1, False, 0)]
    assert [d["member"] for d in detail if d["snapshot_ts"] == at(1)] == ["a-2", "b-1"]


def test_partition_increase_and_valid_from() -> None:
    history = TopicHistory([("t", 2, None), ("t", 4, at(1))])
    rows = [MemberRow(at(0), "a", ("t",)), MemberRow(at(1), "a", ("t",))]
    out, _ = replay_group("g", rows, history, ["range"])
    assert pick(out, "range", "partitions", "rebalanced", "moved") == [(2, True, 0), (4, True, 0)]


PAUSE = ("rebalanced", "moved", "revoked", "pause_partition_seconds")


FIVE = PauseModel(
    heartbeat_seconds=5.0,
    eager_heartbeats=1.0,
    eager_orphan_heartbeats=1.0,
    cooperative_heartbeats=2.0,
    cooperative_orphan_heartbeats=0.5,
    cooperative_kept_heartbeats=0.0,
    fetch_seconds=0.0,
)
"""A classic rebalance stops for one 5 s heartbeat, a cooperative move two, a departed member's partition half."""


def test_pause_cost_by_hand() -> None:
    """:data:`FIVE`. Range (EAGER): b joins, a's 6 stop 5 s: 30; no change: 0; a leaves with a LeaveGroup: b's 3
    stop and a's 3 orphaned wait the same rebalance: 6 x 5 = 30.

    Cooperative-sticky: only the 3 moved partitions stop, for two heartbeats: 3 * 2 * 5 = 30; the
    leave moves nothing and orphans a's 3, each waiting half a heartbeat: 7.5. The old R = 2 s as a model
    (:class:`PauseTiming`): the classic heartbeat is 2 s under the measured factors: EAGER stops the survivors'
    partitions for ``eager_heartbeats`` and a leaver's for ``eager_orphan_heartbeats``, each plus the fetch.
    """
    rows, _ = replay_group("g", JOIN_STAY_LEAVE, SIX, ["range", "cooperative-sticky"], timing=FIVE)
    assert pick(rows, "range", *PAUSE) == [
        (True, 0, 0, 0.0),
        (True, 3, 6, 30.0),
        (False, 0, 0, 0.0),
        (True, 0, 3, 30.0),
    ]
    assert [r[3] for r in pick(rows, "cooperative-sticky", *PAUSE)] == [0.0, 30.0, 0.0, 7.5]
    fast, _ = replay_group("g", JOIN_STAY_LEAVE, SIX, ["range"], timing=PauseTiming(rebalance_seconds=2.0))
    m = DEFAULT_PAUSE_MODEL
    stop = m.eager_heartbeats * 2.0 + m.fetch_seconds
    orphan = m.eager_orphan_heartbeats * 2.0 + m.fetch_seconds  # a leaver's partitions wait the survivors' rejoin
    assert [r["pause_partition_seconds"] for r in fast] == pytest.approx([0.0, 6 * stop, 0.0, 3 * stop + 3 * orphan])


def test_topic_spread_by_hand() -> None:
    """Range on o (4) and p (4) with three members: o-0,1 / o-2 / o-3 and the same for p: each topic 1, sum 2.

    Loads are 4, 2, 2 (spread 2). Then c subscribes to o only: p goes a p-0,1, b p-2,3 and c is no
    subscriber of p, so p's spread is 0 although c holds none of it; o (a 2, b 1, c 1) has 1;
    loads 4, 3, 1 (spread 3).
    """
    history = TopicHistory([("o", 4, None), ("p", 4, None)])
    rows = [MemberRow(at(0), m, ("o", "p")) for m in "abc"]
    rows += [MemberRow(at(1), "a", ("o", "p")), MemberRow(at(1), "b", ("o", "p")), MemberRow(at(1), "c", ("o",))]
    out, _ = replay_group("g", rows, history, ["range"])
    assert pick(out, "range", "load_spread", "topic_spread", "topic_spread_sum") == [(2, 1, 2), (3, 1, 1)]


def test_weighted_columns_by_hand() -> None:
    """t weighs 1 per partition; from minute 2, t-0 weighs 4 (its own row wins over the topic's).

    Range: a alone 6; a t-0..2 = 3, b t-3..5 = 3; at minute 2 (no rebalance) a = 4+1+1 = 6, b = 3:
    spread 3, ratio 6 / 4.5; a leaves: b holds all, 4 + 5 = 9.
    """
    weights = WeightHistory([("t", None, 1.0, None), ("t", 0, 4.0, at(2))])
    out, _ = replay_group("g", JOIN_STAY_LEAVE, SIX, ["range"], weights=weights)
    columns = ("weighted_max_load", "weighted_min_load", "weighted_spread", "weighted_max_mean_ratio")
    assert pick(out, "range", *columns) == [
        (6.0, 6.0, 0.0, 1.0),
        (3.0, 3.0, 0.0, 1.0),
        (6.0, 3.0, 3.0, 6.0 / 4.5),
        (9.0, 9.0, 0.0, 1.0),
    ]
    plain, _ = replay_group("g", JOIN_STAY_LEAVE, SIX, ["range"])
    assert all(r[c] is None for r in plain for c in columns)


def test_weights_history_picks_the_latest_row_per_partition() -> None:
    rows = [("t", None, 2.0, at(1)), ("t", None, 1.0, None), ("t", 3, 9.0, at(5)), ("u", 0, 1.0, None)]
    weights = WeightHistory(rows)
    assert weights.at(at(0), ["t"]) == {("t", None): 1.0}
    assert weights.at(at(1), ["t", "u"]) == {("t", None): 2.0, ("u", 0): 1.0}
    assert weights.at(at(6), ["t"]) == {("t", None): 2.0, ("t", 3): 9.0}


@pytest.mark.parametrize(
    ("row", "needle"),
    [
        ((None, 0, 1.0, None), "topic is null or empty"),
        (("t", -1, 1.0, None), "partition must be >= 0 or null"),
        (("t", 0, -1.0, None), "weight is -1.0"),
        (("t", 0, None, None), "weight is None"),
        (("t", None, float("inf"), None), "weight is inf"),
    ],
)
def test_bad_weights_rows_are_refused_naming_the_row(row: tuple[Any, ...], needle: str) -> None:
    with pytest.raises(InvalidWeightError, match=re.escape(needle)) as caught:
        WeightHistory([("ok", None, 1.0, None), row])
    assert "weights row 2 (" in str(caught.value)  # counted from 1, as a person counts rows


@pytest.mark.parametrize(
    ("rows", "history", "needle"),
    [
        ([MemberRow(at(0), None, ("t",))], SIX, "null or empty member_id"),
        ([MemberRow(at(0), "", ("t",))], SIX, "null or empty member_id"),
        ([MemberRow(at(0), "a", ("nope",))], SIX, "topic 'nope', which has no partition count"),
        ([MemberRow(at(0), "a", ("t",)), MemberRow(at(0), "a", ("t",))], SIX, "member 'a' appears twice"),
        ([MemberRow(at(0), "a", ("t",), "i"), MemberRow(at(0), "b", ("t",), "i")], SIX, "'i' is used by two"),
        # the same rows again in a later snapshot (read once, reused): the duplicate checks still run
        (
            [MemberRow(at(0), "a", ("t",)), MemberRow(at(1), "a", ("t",)), MemberRow(at(1), "a", ("t",))],
            SIX,
            f"snapshot {at(1)}: member 'a' appears twice",
        ),
        (
            [
                MemberRow(at(0), "b", ("t",), "i"),
                MemberRow(at(1), "a", ("t",), "i"),
                MemberRow(at(1), "b", ("t",), "i"),
            ],
            SIX,
            f"snapshot {at(1)}: group_instance_id 'i' is used by two",
        ),
        ([MemberRow(None, "a", ("t",))], SIX, "a member row has a null snapshot_ts (member_id='a')"),
        ([MemberRow(at(0), "a", ("t",))], TopicHistory([("t", -3, None)]), "has -3 partitions"),
        (
            [MemberRow(at(0), "a", ("t",)), MemberRow(at(1), "a", ("t",))],
            TopicHistory([("t", 8, None), ("t", 4, at(1))]),
            "topic 't' shrinks from 8 to 4 partitions",
        ),
        ([MemberRow(at(0), "a", ("t",)), MemberRow(at(5), "a", ("",))], SIX, "null or empty topic name"),
    ],
)
def test_bad_input_gives_error_rows_for_every_snapshot(
    rows: list[MemberRow], history: TopicHistory, needle: str
) -> None:
    out, detail = replay_group("g", rows, history, ["range", "sticky"], detail=True)
    snapshots = {r.snapshot_ts for r in rows}
    assert len(out) == 2 * len(snapshots)
    assert all(needle in r["error"] and r["group_id"] == "g" and r["moved"] is None for r in out)
    assert detail == []


def test_null_group_id_is_an_error_group() -> None:
    out, _ = replay_group(None, [MemberRow(at(0), "a", ("t",))], SIX, ["range"])
    assert [(r["group_id"], r["error"]) for r in out] == [(None, "group_id is null or empty")]


def test_replay_frame_types_and_detail() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "group_id": ["g", "g"],
            "snapshot_ts": pd.to_datetime([at(0), at(1)]),
            "member_id": ["a", "a"],
            "topics": [["t"], ["t"]],
            "group_instance_id": [None, None],
            "rack_id": [None, None],
        }
    )
    out = replay_frame(frame, SIX, ["range"], detail=True)
    assert list(out.columns) == [name for name, _ in OUTPUT_COLUMNS] + ["detail"]
    assert str(out["moved"].dtype) == "Int64"
    assert out["detail"].iloc[1] == [{"member": "a", "partitions": [f"t-{p}" for p in range(6)]}]
    errors = rows_to_frame(replay_group("g", [MemberRow(None, "a", ())], SIX, ["range"])[0], OUTPUT_COLUMNS)
    assert errors["moved"].isna().all()


def test_member_rows_convert_each_timestamp_as_the_row_by_row_loop() -> None:
    """member_rows converts a datetime64 column's distinct values once; every row gets what converting it alone
    gives (NaT: None), in the frame's order; an object column is read row by row."""
    pd = pytest.importorskip("pandas")
    stamps = [at(1), at(0), None, at(1), at(2), None, at(0)]
    column = pd.to_datetime(pd.Series(stamps))
    frame = pd.DataFrame(
        {
            "group_id": ["g"] * 7,
            "snapshot_ts": column,
            "member_id": [f"m{i}" for i in range(7)],
            "topics": [["t"], None, ["t", "u"], ["t"], [], ["u"], ["t"]],
            "group_instance_id": [None, "i", None, None, None, None, None],
            "rack_id": [None, None, "r", None, None, None, None],
        }
    )
    expected = [None if pd.isna(ts) else ts.to_pydatetime() for ts in column]
    assert [row.snapshot_ts for row in member_rows(frame)] == expected == stamps
    rows = member_rows(frame)
    assert [(r.member_id, r.topics, r.group_instance_id, r.rack_id) for r in rows][:3] == [
        ("m0", ("t",), None, None),
        ("m1", None, "i", None),
        ("m2", ("t", "u"), None, "r"),
    ]
    aware = frame.assign(snapshot_ts=column.dt.tz_localize("UTC"))
    assert [row.snapshot_ts for row in member_rows(aware)] == [
        None if pd.isna(ts) else ts.to_pydatetime() for ts in aware["snapshot_ts"]
    ]
    loose = frame.assign(snapshot_ts=pd.Series(list(column), dtype="object"))
    assert [row.snapshot_ts for row in member_rows(loose)] == expected


# --- the replay equals the library, snapshot by snapshot ---------------------------------

IDENTITIES = ["m0", "m1", "m2", "m3", "m4"]
COUNTS = {"t0": 5, "t1": 3}


Plain = tuple[dt.datetime, str, tuple[str, ...]]


@st.composite
def histories(draw: st.DrawFn) -> list[Plain]:
    rows: list[Plain] = []
    for step in range(draw(st.integers(1, 5))):
        present = draw(st.sets(st.sampled_from(IDENTITIES), min_size=1))
        for identity in sorted(present):
            topics = draw(st.sampled_from([("t0",), ("t1",), ("t0", "t1")]))
            rows.append((at(step), identity, topics))
    return rows


def _direct(name: str, rows: list[Plain]) -> list[dict[str, tuple[TopicPartition, ...]]]:
    """Each snapshot's assignment, written out as a real group runs it, member by member.

    Every member has its own assignor instance, told its assignment after each round
    (``on_assignment``) and asked for its user data before the next. EAGER members report
    nothing owned (they revoked everything before joining): a sticky member's memory is its
    user data. COOPERATIVE members report what they still own and rejoin until nothing moves.
    """
    cluster = Cluster(COUNTS)
    leader_side = get_assignor(name)
    cooperative = name == "cooperative-sticky"
    instances: dict[str, ConsumerPartitionAssignor] = {}
    owned: dict[str, tuple[TopicPartition, ...]] = {}
    generations: dict[str, int] = {}
    generation = -1
    previous_key: object = None
    results = []
    for ts in sorted({r[0] for r in rows}):
        members = {member: topics for when, member, topics in rows if when == ts}
        key = sorted(members.items())
        if key != previous_key:
            for m in members:
                if m not in owned:  # a new consumer process: no memory
                    instances[m] = get_assignor(name)
            holding = {m: tuple(tp for tp in owned.get(m, ()) if cooperative and tp.topic in t)
                       for m, t in members.items()}  # fmt: skip
            while True:
                subs = {m: Subscription(t, user_data=instances[m].subscription_user_data(t),
                                        owned_partitions=holding[m], generation_id=generations.get(m, -1))
                        for m, t in members.items()}  # fmt: skip
                result: dict[str, Assignment] = leader_side.assign(cluster, subs)
                generation = max(generation, 0) + 1
                for m in members:
                    instances[m].on_assignment(result[m], generation)
                    generations[m] = generation
                lost = any(set(holding[m]) - set(result[m].partitions) for m in members)
                holding = {m: result[m].partitions for m in members}
                if not cooperative or not lost:
                    break
            owned = holding
        previous_key = key
        results.append(dict(owned))
    return results


@pytest.mark.parametrize("name", ["range", "roundrobin", "sticky", "cooperative-sticky"])
@given(rows=histories())
def test_replay_equals_the_library_snapshot_by_snapshot(name: str, rows: list[Plain]) -> None:
    history = TopicHistory([(t, c, None) for t, c in COUNTS.items()])
    # kafka-python's factors: its kept partitions wait while it rejoins (Java's do not), so the pause tells apart what
    # waits under COOPERATIVE
    model = DEFAULT_PAUSE_MODEL.for_client("kafka-python")
    out, detail = replay_group("g", [MemberRow(*row) for row in rows], history, [name], detail=True, timing=model)
    assert all(r["error"] is None and r["valid"] for r in out)
    expected = _direct(name, rows)
    stamps = sorted({r[0] for r in rows})
    previous: dict[str, tuple[TopicPartition, ...]] | None = None
    last: dict[str, tuple[str, ...]] = {}  # each member's topics at the last rebalance
    for ts, want, row in zip(stamps, expected, out, strict=True):
        got = {d["member"]: sorted(parse_topic_partition(p) for p in d["partitions"]) for d in detail
               if d["snapshot_ts"] == ts}  # fmt: skip
        assert got == {member: sorted(partitions) for member, partitions in want.items()}
        # The new columns are the library's measures of the same assignments.
        subscriptions = {member: topics for when, member, topics in rows if when == ts}
        assert row["topic_spread_sum"] == balance(want, subscriptions).topic_spread_sum
        pause = 0.0
        if previous is not None and row["rebalanced"]:
            m = movement(previous, want)
            survivors = m.revoked(RebalanceProtocol.EAGER)
            # members whose subscription changed since the last rebalance rejoin on their own: under EAGER they
            # revoke everything, under COOPERATIVE what they keep waits in the join
            changed = [m for m, topics in subscriptions.items() if set(last.get(m, topics)) != set(topics)]
            if row["protocol"] == "EAGER":
                rejoined = sum(len(previous.get(member, ())) for member in changed)
            else:  # what they keep, unless retained_revoking counts it (they give some up, another member nothing)
                held = {k: len(set(previous[k]) & set(want[k])) for k in previous if k in want}
                steady = any(count == len(previous[k]) for k, count in held.items())
                rejoined = sum(
                    held.get(k, 0) for k in changed if not (steady and held.get(k, 0) < len(previous.get(k, ())))
                )
            pause = rebalance_pause(
                row["protocol"],
                model,
                moved=m.moved,
                survivors_owned=survivors,
                orphaned=m.orphaned,
                rejoined=min(rejoined, survivors),
                retained_revoking=m.retained_revoking,
            )
        assert row["pause_partition_seconds"] == pause
        if row["rebalanced"]:
            last = subscriptions
        previous = want


def test_a_partition_count_change_prices_the_leaders_rejoin() -> None:
    """The same members, a topic grown from 6 to 8: under EAGER the leader (an average member's share) revokes at
    once and waits as a leaver's partitions do, the others rejoin on their heartbeat."""
    history = TopicHistory([("t", 6, None), ("t", 8, at(1))])
    rows = [MemberRow(at(minute), m, ("t",)) for minute in (0, 2) for m in ("a", "b")]
    out, _ = replay_group("g", rows, history, ["range", "cooperative-sticky"])
    model = DEFAULT_PAUSE_MODEL
    fetch = model.fetch_seconds
    rejoin = model.eager_heartbeats * model.heartbeat_seconds + fetch
    orphan = model.eager_orphan_heartbeats * model.heartbeat_seconds + fetch
    eager = [r for r in out if r["strategy"] == "range"]
    assert [r["pause_partition_seconds"] for r in eager] == [0.0, pytest.approx(3 * rejoin + 3 * orphan)]
    # cooperative: nobody revokes for it, nothing moves; Kafka's Java consumer keeps fetching while it rejoins
    assert [r["pause_partition_seconds"] for r in out if r["strategy"] == "cooperative-sticky"] == [0.0, 0.0]
    # kafka-python's leader stops fetching what it keeps (3 of 6) until the other member joins on its heartbeat
    stops = DEFAULT_PAUSE_MODEL.for_client("kafka-python")
    out, _ = replay_group("g", rows, history, ["cooperative-sticky"], timing=stops)
    kept = 3 * stops.cooperative_kept_heartbeats * stops.heartbeat_seconds
    assert [r["pause_partition_seconds"] for r in out] == [0.0, pytest.approx(kept)]
    assert kept > 0


def test_ids_that_look_like_missing_values_are_ids() -> None:
    rows = [MemberRow(at(0), "nan", ("t",)), MemberRow(at(0), "NaT", ("t",))]
    out, _ = replay_group("nan", rows, SIX, ["range"])
    assert [(r["error"], r["members"]) for r in out] == [(None, 2)]


@pytest.mark.parametrize("static", [False, True])
def test_rolling_restart_restarts_every_member_once(static: bool) -> None:
    """The demo's rolling restart, one member after another by id: each is replaced exactly once, in place."""
    members = [_Member(f"m{i}", f"i{i}" if static else None, ["t"], "rack-a") for i in range(5)]
    group = _Group("g", "rolling", static, ["t", "u"], {"t": 6, "u": 6}, list(members))
    rnd = random.Random(1)  # noqa: S311 - the generator's own kind of randomness
    seen: list[list[str]] = []
    for member in members:
        _restart(group, member.member_id, rnd)
        seen.append([m.member_id for m in group.members])
    final = [m.member_id for m in group.members]
    assert len(set(final)) == 5
    assert not set(final) & {m.member_id for m in members}
    for step, ids in enumerate(seen):  # after step k, members k+1.. are still the originals
        assert ids[step + 1 :] == [m.member_id for m in members[step + 1 :]]
    assert [m.instance for m in group.members] == [m.instance for m in members]


def test_topic_rows_that_clash_are_an_input_error_whatever_their_order() -> None:
    """Two rows for one topic and valid_from with different counts: the groups using them then get an error."""
    rows = [("t", 4, None), ("t", 6, None), ("t", 8, at(2)), ("u", 3, None), ("u", 3, None)]
    members = [MemberRow(at(0), "a", ("t",)), MemberRow(at(2), "a", ("t",))]
    outputs = []
    for order in (rows, rows[::-1], rows[1:] + rows[:1]):
        out, _ = replay_group("g", members, TopicHistory(order), ["range"])
        outputs.append(out)
        assert [r["error"] for r in out] == [
            "snapshot 2026-01-01 12:00:00: topic 't' has rows with one valid_from and different partition counts (4, 6)"
        ] * 2
    assert outputs[0] == outputs[1] == outputs[2]
    history = TopicHistory(rows)
    assert history.clash_at("t", at(0)) == [4, 6]
    assert history.clash_at("t", at(2)) is None
    assert history.count_at("t", at(3)) == (True, 8)
    assert history.clash_at("u", at(0)) is None  # equal duplicates are one row
    only_later = [MemberRow(at(2), "a", ("t",)), MemberRow(at(3), "a", ("t", "u"))]
    out, _ = replay_group("g", only_later, history, ["range"])
    assert [(r["error"], r["partitions"]) for r in out] == [(None, 8), (None, 11)]


@pytest.mark.parametrize("enabled", [True, False])
def test_replay_restores_the_garbage_collector(enabled: bool) -> None:
    """replay_group pauses the cyclic collector while it replays and leaves it as it found it, error rows too."""
    import gc

    was = gc.isenabled()
    try:
        if enabled:
            gc.enable()
        else:
            gc.disable()
        for rows in (JOIN_STAY_LEAVE, [MemberRow(None, "a", ("t",))]):
            replay_group("g", rows, SIX, ["range", "sticky"])
            assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()
