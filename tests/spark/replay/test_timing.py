"""The pause model in the replay: options onto its intervals with their sources, the parameters as the reports print
them, what the cluster's records allow to derive (``--actual``), the Kafka version the server strategies replay as,
and which implementation each row predicts. Pure Python: no Spark session."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import ConfigurationError
from assignors.metrics import DEFAULT_PAUSE_MODEL, MEASURED, InvalidWeightError, PauseModel
from assignors.tables import PARAMETERS_COLUMNS
from spark_udfs.replay import MemberRow, TopicHistory, replay_group
from spark_udfs.replay.actual import MIN_OBSERVATIONS, ActualRow, actual_rows, derived_model, observed_durations
from spark_udfs.replay.timing import PauseTiming, parameter_rows, parameters_text, pause_model, timing_model
from spark_udfs.report.ranking import StrategySummary
from spark_udfs.report.summary import Summary
from spark_udfs.report.text import implementation, render_text

T0 = dt.datetime(2026, 1, 1, 12, 0)  # noqa: DTZ001 - Spark timestamps are naive (UTC session)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def test_options_set_the_models_intervals_with_their_sources() -> None:
    """The old options keep a meaning (the intervals that pace each protocol); the *_ms ones take Kafka's settings."""
    model = timing_model(
        None,
        {"rebalance_seconds": 2.0, "heartbeat_seconds": None, "consumer_session_timeout_ms": 30_000.0},
        cli=True,
    )
    assert (model.heartbeat_seconds, model.consumer_heartbeat_seconds, model.consumer_session_seconds) == (
        2.0,
        5.0,
        30.0,
    )
    assert model.source("heartbeat_seconds") == "your option --rebalance-seconds"
    assert model.source("consumer_session_seconds") == "your option --consumer-session-timeout-ms"
    assert model.source("consumer_heartbeat_seconds") == "Kafka's default group.consumer.heartbeat.interval.ms=5000"
    assert model.source("eager_heartbeats") == MEASURED
    python = timing_model(None, {"heartbeat_seconds": 1.5})
    assert (python.consumer_heartbeat_seconds, python.source("consumer_heartbeat_seconds")) == (
        1.5,
        "your option heartbeat_seconds",
    )
    same = timing_model(None, {"rebalance_seconds": 2.0, "heartbeat_interval_ms": 2000.0}, cli=True)
    assert same.heartbeat_seconds == 2.0
    with pytest.raises(ConfigurationError, match="--rebalance-seconds and --heartbeat-interval-ms both set"):
        timing_model(None, {"rebalance_seconds": 2.0, "heartbeat_interval_ms": 3000.0}, cli=True)
    with pytest.raises(ConfigurationError, match="unknown timing option 'rebalance_ms'"):
        timing_model(None, {"rebalance_ms": 1.0})
    with pytest.raises(InvalidWeightError, match="heartbeat_seconds"):
        timing_model(None, {"rebalance_seconds": -1.0})
    assert timing_model() is DEFAULT_PAUSE_MODEL


def test_pause_timing_is_read_as_a_model() -> None:
    """The two old durations: the classic heartbeat and KIP-848's, every other parameter the measured one's."""
    model = pause_model(PauseTiming(3.0, 0.5))
    assert (model.heartbeat_seconds, model.consumer_heartbeat_seconds) == (3.0, 0.5)
    assert model.source("heartbeat_seconds") == "PauseTiming"
    assert model.eager_heartbeats == DEFAULT_PAUSE_MODEL.eager_heartbeats
    assert pause_model(DEFAULT_PAUSE_MODEL) is DEFAULT_PAUSE_MODEL


FIXED = PauseModel(
    eager_heartbeats=0.12,
    cooperative_heartbeats=0.97,
    cooperative_orphan_heartbeats=0.91,
    consumer_move_heartbeats=0.65,
    consumer_orphan_heartbeats=0.62,
    fetch_seconds=0.09,
    eager_orphan_heartbeats=0.74,
    cooperative_kept_heartbeats=0.03,
    static_rejoin_seconds=0.25,
    eager_crash_heartbeats=0.55,
)
"""The factors ``make calibrate`` measured for Kafka 4.4.0, fixed here: the text is pinned whatever a recalibration
gives (their sources stay the defaults')."""


def test_the_text_reports_timing_parameters_and_implementations_pinned() -> None:
    """A worked summary: every parameter's name, value and source, aligned; the Kafka version names uniform's."""
    model = timing_model(FIXED, {"rebalance_seconds": 2.0, "consumer_session_timeout_ms": 30_000.0}, cli=True)
    summary = Summary(
        1,
        2,
        [],
        [
            StrategySummary("range", "EAGER", 1, 1.98, 1.0, 2, 6, 0, 0, 0, 1, 0, 0.0),
            StrategySummary("uniform", "CONSUMER", 1, 3.34, 1.0, 1, 1, 0, 0, 0, 1, 0, 0.0),
        ],
        parameters=parameter_rows(model, "4.0.0", "your option --kafka-version"),
        timing_notes=["consumer_move_heartbeats kept (measured): not derivable"],
    )
    text = render_text(summary).splitlines()
    predicts = text.index("What each row predicts:")
    assert text[predicts + 1 : predicts + 3] == [
        (
            "  range: ours, as the kafka-python and aiokafka adapters run it "
            "(assignors.kafka_python, assignors.aiokafka); identical to Kafka's Java RangeAssignor, "
            "which Java and librdkafka consumers run"
        ),
        "  uniform: the broker's UniformAssignor (KIP-848) as Kafka 4.0.0 runs it, whatever the client",
    ]
    start = text.index("Timing parameters (name, value, source):")
    assert text[start + 1 : start + 16] == [
        "  heartbeat_seconds                  2  your option --rebalance-seconds",
        "  session_seconds                   45  Kafka's default session.timeout.ms=45000",
        "  consumer_heartbeat_seconds         5  Kafka's default group.consumer.heartbeat.interval.ms=5000",
        "  consumer_session_seconds          30  your option --consumer-session-timeout-ms",
        "  eager_heartbeats                0.12  measured",
        "  cooperative_heartbeats          0.97  measured",
        "  cooperative_orphan_heartbeats   0.91  measured",
        "  consumer_move_heartbeats        0.65  measured",
        "  consumer_orphan_heartbeats      0.62  measured",
        "  fetch_seconds                   0.09  measured",
        "  eager_orphan_heartbeats         0.74  measured",
        "  cooperative_kept_heartbeats     0.03  measured",
        "  static_rejoin_seconds           0.25  measured",
        "  eager_crash_heartbeats          0.55  measured",
        "  kafka_version                  4.0.0  your option --kafka-version",
    ]
    assert text[start + 16].startswith("  pause_partition_seconds is assignors.metrics.rebalance_pause")
    assert "every departure is priced as a LeaveGroup" in text[start + 16]
    assert text[start + 17] == "  consumer_move_heartbeats kept (measured): not derivable"
    assert parameters_text([]) == []


def test_each_strategy_names_the_implementation_it_predicts() -> None:
    assert "Kafka's StickyAssignor, which ours matches or beats in balance" in (implementation("sticky") or "")
    assert "as Kafka 4.4.0 runs it" in (implementation("consumer-range") or "")
    assert implementation("no-such-strategy") is None


# -- the Kafka version -------------------------------------------------------------------------------------------
KAFKA_18688 = [MemberRow(at(0), "b", ("t",)), *(MemberRow(at(60), m, ("t",)) for m in "ab")]
"""b holds t's 3 partitions; a joins. After KAFKA-18688 (4.0.1 on) b keeps its extra and gives a one partition;
before it (3.8 to 4.0.0) the first member in order, a, takes the extra: two move."""


@pytest.mark.parametrize(("version", "moved"), [("4.4.0", 1), ("4.0.1", 1), ("4.0.0", 2), ("3.9.1", 2)])
def test_uniform_replays_as_the_brokers_version(version: str, moved: int) -> None:
    rows, _ = replay_group("g", KAFKA_18688, TopicHistory([("t", 3, None)]), ["uniform"], kafka_version=version)
    assert [r["moved"] for r in rows] == [0, moved]
    assert all(r["error"] is None for r in rows)


def test_an_unmodelled_version_is_the_groups_error_never_a_crash() -> None:
    rows, _ = replay_group("g", KAFKA_18688, TopicHistory([("t", 3, None)]), ["consumer-range"], kafka_version="3.8.0")
    assert {r["error"] for r in rows} == {
        (
            "kafka_version='3.8.0': KIP-848's server range is modelled from Kafka 3.9.0 on (KAFKA-16944); "
            "3.7 and 3.8 had a sticky range"
        )
    }


# -- what the cluster's records show (--actual) ------------------------------------------------------------------
def _actual(step: float, generation: int, assignor: str, owned: dict[str, list[str]]) -> list[ActualRow]:
    return [ActualRow(at(step), generation, assignor, m, None, tuple(p)) for m, p in owned.items()]


def test_cooperative_hand_overs_are_timed_between_the_two_generations() -> None:
    """c joins a COOPERATIVE group: generation 2 (at 10 s) revokes t-2 from a and t-5 from b, generation 3 (at
    13.5 s) gives them to c: two hand-overs of 3.5 s each. Membership from the same records: no rebalance length."""
    owned1 = {"a": ["t-0", "t-1", "t-2"], "b": ["t-3", "t-4", "t-5"]}
    owned2 = {"a": ["t-0", "t-1"], "b": ["t-3", "t-4"], "c": []}
    owned3 = {"a": ["t-0", "t-1"], "b": ["t-3", "t-4"], "c": ["t-2", "t-5"]}
    actual = [
        *_actual(0, 1, "cooperative-sticky", owned1),
        *_actual(10, 2, "cooperative-sticky", owned2),
        *_actual(13.5, 3, "cooperative-sticky", owned3),
    ]
    members = [MemberRow(r.snapshot_ts, r.member_id, ("t",)) for r in actual]
    assert observed_durations("g", members, actual) == [
        {"group_id": "g", "kind": "cooperative_move", "seconds": 3.5},
        {"group_id": "g", "kind": "cooperative_move", "seconds": 3.5},
    ]
    eager = [*_actual(0, 1, "range", owned1), *_actual(10, 2, "range", owned3)]
    assert observed_durations("g", members, eager) == []  # EAGER moves directly: nothing waits between generations


def test_a_rebalance_is_timed_from_the_membership_that_shows_it() -> None:
    """A membership table of its own shows c at 4 s; the EAGER generation with c completes at 10 s: 6 s. A
    snapshot that shows another member set, or one before the last generation, does not count."""
    members = [
        *(MemberRow(at(0), m, ("t",)) for m in "ab"),
        *(MemberRow(at(2), m, ("t",)) for m in "abd"),  # d came and went: not generation 2's members
        *(MemberRow(at(4), m, ("t",)) for m in "abc"),
        *(MemberRow(at(10), m, ("t",)) for m in "abc"),
    ]
    actual = [
        *_actual(0, 1, "range", {"a": ["t-0", "t-1"], "b": ["t-2"]}),
        *_actual(10, 2, "range", {"a": ["t-0"], "b": ["t-1"], "c": ["t-2"]}),
    ]
    assert observed_durations("g", members, actual) == [{"group_id": "g", "kind": "eager_rebalance", "seconds": 6.0}]


def test_derived_factors_price_the_median_observed() -> None:
    """Five cooperative hand-overs, median 2.09 s: (2.09 - 0.09 fetch) / 3 s heartbeat = 2/3 heartbeat; the
    rebalances seen 4 times (< 5) keep the measured factor; KIP-848's are never derivable from the tables."""
    observed = {"cooperative_move": (5, 2.09), "eager_rebalance": (4, 1.0)}
    model, notes = derived_model(FIXED, observed)
    assert model.cooperative_heartbeats == pytest.approx(2 / 3)
    assert model.source("cooperative_heartbeats") == "the cluster's records (5 cooperative hand-overs, median 2.09 s)"
    assert (model.eager_heartbeats, model.source("eager_heartbeats")) == (0.12, MEASURED)
    assert notes[0] == (
        "eager_heartbeats kept (measured): the cluster's records show 4 EAGER rebalances (from the membership "
        f"snapshot that shows a change to the EAGER generation that completes it); at least {MIN_OBSERVATIONS} are "
        "needed"
    )
    assert notes[1].startswith("cooperative_orphan_heartbeats kept (measured): the cluster's records show 0 ")
    assert notes[2].startswith("cooperative_heartbeats = 0.666667 from the cluster's records (5 cooperative")
    assert notes[3].startswith("consumer_move_heartbeats kept (measured): not derivable from KIP-848 hand-overs")
    given_model = FIXED.with_settings("yours", cooperative_heartbeats=1.5)
    kept, why = derived_model(given_model, observed)
    assert (kept.cooperative_heartbeats, why[2]) == (
        1.5,
        "cooperative_heartbeats kept (yours): given, so not derived from 5 cooperative hand-overs",
    )


@given(
    median=st.floats(min_value=0.0, max_value=600.0, allow_nan=False),
    heartbeat=st.floats(min_value=0.01, max_value=60.0, allow_nan=False),
)
def test_a_derived_factor_prices_a_wait_at_the_median_observed(median: float, heartbeat: float) -> None:
    base = PauseModel(heartbeat_seconds=heartbeat)
    model, _ = derived_model(base, {"cooperative_move": (MIN_OBSERVATIONS, median)})
    priced = model.cooperative_heartbeats * model.heartbeat_seconds + model.fetch_seconds
    assert priced == pytest.approx(max(median, base.fetch_seconds), rel=1e-9, abs=1e-9)


def test_kip848_factors_are_derived_from_the_handovers_table() -> None:
    """With a handovers table: six KIP-848 hand-overs, mean 1.09 s: (1.09 - 0.09 fetch) / the broker's 5 s
    heartbeat = 0.2; two orphans (< 5) keep the measured factor, and the note says so instead of "not derivable"."""
    observed = {"consumer_move": (6, 1.09), "consumer_orphan": (2, 0.4)}
    model, notes = derived_model(FIXED, observed, handovers=True)
    assert model.consumer_move_heartbeats == pytest.approx(0.2)
    assert model.source("consumer_move_heartbeats") == "the cluster's records (6 KIP-848 hand-overs, mean 1.09 s)"
    assert (model.consumer_orphan_heartbeats, model.source("consumer_orphan_heartbeats")) == (
        FIXED.consumer_orphan_heartbeats,
        MEASURED,
    )
    assert any(n.startswith("consumer_orphan_heartbeats kept (measured): the cluster's records show 2 ") for n in notes)
    assert not any("not derivable" in note for note in notes)
    # without the table the same observations are not read
    unchanged, _ = derived_model(FIXED, observed)
    assert unchanged.consumer_move_heartbeats == FIXED.consumer_move_heartbeats


@given(
    median=st.floats(min_value=0.0, max_value=600.0, allow_nan=False),
    heartbeat=st.floats(min_value=0.01, max_value=60.0, allow_nan=False),
)
def test_a_derived_kip848_factor_prices_a_hand_over_at_the_median_observed(median: float, heartbeat: float) -> None:
    base = PauseModel(consumer_heartbeat_seconds=heartbeat)
    model, _ = derived_model(base, {"consumer_move": (MIN_OBSERVATIONS, median)}, handovers=True)
    priced = model.consumer_move_heartbeats * model.consumer_heartbeat_seconds + model.fetch_seconds
    assert priced == pytest.approx(max(median, base.fetch_seconds), rel=1e-9, abs=1e-9)


def test_the_docs_define_the_parameters_tables_columns_in_order() -> None:
    """docs/evaluation.md's "Timing parameters" table names every column of PARAMETERS_COLUMNS, in order."""
    doc = (Path(__file__).resolve().parents[3] / "docs" / "evaluation.md").read_text(encoding="utf-8")
    lines = doc[doc.index("| column | type | meaning |") :].splitlines()[2:]
    rows = [line.strip("|").split(" | ") for line in lines[: lines.index("")]]
    assert [(row[0].strip().strip("*`"), row[1].strip()) for row in rows] == list(PARAMETERS_COLUMNS)


def test_the_actual_cooperative_generation_prices_what_it_withholds() -> None:
    """Generation 2 revokes t-2 from a and t-5 from b and holds them nowhere (KIP-429's first round): 2 hand-overs
    at one 3 s heartbeat each, 6 p-s, though nothing "moved"; generation 3 hands them to c from nobody: 0."""
    owned = (
        {"a": ["t-0", "t-1", "t-2"], "b": ["t-3", "t-4", "t-5"]},
        {"a": ["t-0", "t-1"], "b": ["t-3", "t-4"], "c": []},
        {"a": ["t-0", "t-1"], "b": ["t-3", "t-4"], "c": ["t-2", "t-5"]},
    )
    actual = [row for step, o in enumerate(owned) for row in _actual(step * 10, step + 1, "cooperative-sticky", o)]
    members = [MemberRow(r.snapshot_ts, r.member_id, ("t",)) for r in actual]
    model = PauseModel(
        heartbeat_seconds=3.0, cooperative_heartbeats=1.0, fetch_seconds=0.0, cooperative_kept_heartbeats=0.0
    )
    rows = actual_rows("g", members, actual, TopicHistory([("t", 6, None)]), timing=model)
    assert [(r["moved"], r["pause_partition_seconds"]) for r in rows] == [(0, 0.0), (0, 6.0), (0, 0.0)]
