"""``make calibrate``'s prediction is the evaluation's: the same membership table through ``calibration.predict``
and through the evaluation's per-group replay gives the same moved, orphaned, revoked, rounds and pause, step by
step, for every strategy. docs/calibration.md scores the former against real groups, so its accuracy is the
evaluation's (crashes and static restarts aside: a membership table does not show them)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from calibration.predict import predict
from hypothesis import given, settings
from hypothesis import strategies as st

from assignors.metrics import DEFAULT_PAUSE_MODEL, PauseModel
from spark_udfs.replay.group_input import MemberRow, TopicHistory
from spark_udfs.replay.group_replay import replay_group

T0 = dt.datetime(2026, 11, 28, tzinfo=dt.UTC)
COUNTS = {"t": 6, "u": 4}
STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "consumer-range")
NAMES = ("a", "b", "c", "d", "e", "f")

Membership = dict[str, tuple[str, ...]]


def _run(name: str, steps: list[Membership]) -> dict[str, Any]:
    """A calibration run of ``steps`` (the first one not measured, as the runner records a group's start)."""
    return {
        "product": name,
        "steps": [
            {
                "measured": number > 0,
                "t0": float(number),
                "end": number + 1.0,
                "settled_at": number + 0.5,
                "stopped": [],
                "crashed": [],
                "counts": COUNTS,
                "members": {m: {"member_id": m, "instance": None, "topics": list(t)} for m, t in step.items()},
                "holdings": {},
            }
            for number, step in enumerate(steps)
        ],
    }


def _rows(steps: list[Membership]) -> list[MemberRow]:
    return [
        MemberRow(T0 + dt.timedelta(minutes=number), member, topics)
        for number, step in enumerate(steps)
        for member, topics in sorted(step.items())
    ]


def _check(name: str, steps: list[Membership], model: PauseModel) -> None:
    predicted = predict(_run(name, steps), model)
    history = TopicHistory([(topic, count, None) for topic, count in COUNTS.items()])
    out, _ = replay_group("g", _rows(steps), history, [name], timing=model)
    assert [row["error"] for row in out] == [None] * len(steps)
    assert len(predicted) == len(steps) - 1
    for step, row in zip(predicted, out[1:], strict=True):
        fields = ("moved", "orphaned", "revoked", "rounds")
        assert tuple(getattr(step, f) for f in fields) == tuple(row[f] for f in fields), (name, steps)
        assert step.rebalanced == row["rebalanced"]
        assert step.pause_after == pytest.approx(row["pause_partition_seconds"], abs=1e-3), (name, steps)


memberships = st.dictionaries(
    st.sampled_from(NAMES),
    st.sampled_from((("t",), ("u",), ("t", "u"))),
    min_size=1,
    max_size=5,
)


@pytest.mark.parametrize("name", STRATEGIES)
@settings(max_examples=40, deadline=None)
@given(steps=st.lists(memberships, min_size=2, max_size=6))
def test_the_calibration_predicts_what_the_evaluation_replays(name: str, steps: list[Membership]) -> None:
    _check(name, steps, DEFAULT_PAUSE_MODEL)


@pytest.mark.parametrize("name", STRATEGIES)
def test_a_join_a_leave_a_subscription_change_and_a_wave(name: str) -> None:
    """The calibration's kinds of step in one history, at the calibration's own settings."""
    both = ("t", "u")
    steps: list[Membership] = [
        {"a": both, "b": both, "c": both},
        {"a": both, "b": both, "c": both, "d": both},  # a join
        {"a": both, "b": both, "d": both},  # a leave
        {"a": both, "b": ("t",), "d": both},  # a subscription change
        {"a": both, "e": both, "f": ("t",)},  # a wave: b and d replaced by e and f
    ]
    model = DEFAULT_PAUSE_MODEL.with_settings("test", heartbeat_seconds=1.0, consumer_heartbeat_seconds=2.0)
    _check(name, steps, model)
