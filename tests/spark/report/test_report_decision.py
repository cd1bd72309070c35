"""The report tells the whole decision: what adopting a strategy takes, which strategy leaves each group worst
balanced, pause per group under one strategy (never a sum over alternatives), the weights sentence only with weights.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors.tables import OUTPUT_COLUMNS
from spark_udfs.report.aggregation import summarize
from spark_udfs.report.html import render_html
from spark_udfs.report.ranking import StrategySummary, eager_apart_note, rank
from spark_udfs.report.summary import ADOPTION, DrillDown, GroupBalance, Summary, adoption
from spark_udfs.report.text import headline, java_comparisons, render_text
from spark_udfs.tables.schemas import ddl

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T0 = dt.datetime(2026, 1, 1, 12, 0)  # noqa: DTZ001 - Spark timestamps are naive (UTC session)


def strategy(name: str, protocol: str, pause: float, *, weighted: bool = False) -> StrategySummary:
    return StrategySummary(name, protocol, 1, pause, 1.0, 0, 0, 0, 0, 0, 1, 0, 0.0, weighted)


RANKED = [strategy("uniform", "CONSUMER", 10.0), strategy("cooperative-sticky", "COOPERATIVE", 20.0)]


def test_ours_and_kafkas_sticky_assignors_are_compared_by_how_much() -> None:
    """One sentence per pair that both ran: the figures side by side, ours' difference in percent of Kafka's."""
    ours = dataclasses.replace(strategy("sticky", "EAGER", 90.0), moved=9, revoked=40, imbalance=1.25)
    kafka = dataclasses.replace(strategy("java-sticky", "EAGER", 100.0), moved=10, revoked=40, imbalance=1.5)
    coop = strategy("cooperative-sticky", "COOPERATIVE", 5.0)
    summary = Summary(1, 1, [], [ours, kafka, coop], rank_by=("pause",))
    assert java_comparisons(summary) == [
        (
            "sticky (ours) and Kafka's StickyAssignor (java-sticky) on this history: different figures; pause 90 "
            "partition-seconds against 100 partition-seconds (-10%), partitions moved 9 against 10 (-10%), revoked "
            "40 for both, worst load 1.25x against 1.50x the mean"
        )
    ]  # cooperative-sticky ran without its Kafka twin: no sentence
    same = dataclasses.replace(coop, strategy="java-cooperative-sticky")
    (line,) = java_comparisons(dataclasses.replace(summary, strategies=[coop, same]))
    assert line.startswith("cooperative-sticky (ours) and Kafka's CooperativeStickyAssignor (java-cooperative-sticky)")
    assert ": the same figures; pause 5 partition-seconds for both, partitions moved 0 for both" in line
    assert line in render_text(dataclasses.replace(summary, strategies=[coop, same]))
    assert html.escape(line) in render_html(dataclasses.replace(summary, strategies=[coop, same]))


def test_what_eager_rests_on_is_said_under_the_headline_with_its_bound() -> None:
    """range's 100 revoked partitions each waiting 0.3 heartbeats more (of 3 s) add at most 90: 110 against
    cooperative-sticky's 50, which would then pause least; the COOPERATIVE row is not touched."""
    eager = dataclasses.replace(strategy("range", "EAGER", 20.0), revoked=100)
    coop = dataclasses.replace(strategy("cooperative-sticky", "COOPERATIVE", 50.0), revoked=10)
    note = eager_apart_note([eager, coop], heartbeat_seconds=3.0, together=0.05, apart=0.35)
    assert note is not None
    assert note.startswith("EAGER's pause assumes the members learn of each rebalance on the same heartbeat")
    assert note.endswith(
        "the EAGER strategies would pause at most: range 110 partition-seconds; the lowest pause would then be "
        "cooperative-sticky's."
    )
    assert eager_apart_note([coop], heartbeat_seconds=3.0, together=0.05, apart=0.35) is None  # no EAGER row
    assert eager_apart_note([eager, coop], heartbeat_seconds=3.0, together=0.35, apart=0.35) is None
    summary = Summary(1, 1, [], rank([eager, coop], ("pause",)), rank_by=("pause",), caveats=[note])
    lines = render_text(summary).splitlines()
    assert lines.index(note) < lines.index("What each row predicts:")  # beside the recommendation
    assert f'<p class="caveat">{html.escape(note)}</p>' in render_html(summary)


@given(
    st.lists(
        st.tuples(st.sampled_from(["EAGER", "COOPERATIVE", "CONSUMER"]), st.floats(0, 1e6), st.integers(0, 10**6)),
        min_size=1,
        max_size=6,
    ),
    st.floats(0.0, 60.0),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
)
def test_the_eager_bound_only_raises_eager_pauses(
    rows: list[tuple[str, float, int]], heartbeat: float, together: float, apart: float
) -> None:
    """Every EAGER row's bound is its pause plus its revoked partitions' extra wait; the lowest named is the least of
    the shifted pauses (the first by name on a tie); nothing when no row is EAGER or apart adds nothing."""
    strategies = [
        dataclasses.replace(strategy(f"s{i}", protocol, pause), revoked=revoked)
        for i, (protocol, pause, revoked) in enumerate(rows)
    ]
    note = eager_apart_note(strategies, heartbeat_seconds=heartbeat, together=together, apart=apart)
    extra = max(0.0, apart - together) * heartbeat
    if extra == 0.0 or all(s.protocol != "EAGER" for s in strategies):
        assert note is None
        return
    assert note is not None
    shifted = {s.strategy: s.pause + (s.revoked * extra if s.protocol == "EAGER" else 0.0) for s in strategies}
    for s in strategies:
        if s.protocol == "EAGER":
            assert f"{s.strategy} {shifted[s.strategy]:,.0f} partition-seconds" in note
    lowest = min(sorted(shifted), key=lambda name: shifted[name])
    assert note.endswith(f"the lowest pause would then be {lowest}'s.")


def test_every_strategy_says_what_adopting_it_takes() -> None:
    assert sorted(ADOPTION) == [
        "consumer-range", "cooperative-sticky", "java-cooperative-sticky", "java-sticky", "range", "roundrobin",
        "sticky", "uniform", "weighted-sticky"
    ]  # fmt: skip
    assert (
        adoption("java-sticky")
        == (adoption("sticky") or "").replace("Adopting sticky", "Adopting java-sticky")[:-1]
        + " (Java consumers then run exactly these rows: Kafka's own class)."
    )
    weighted = adoption("weighted-sticky") or ""
    for needed in ("kafka-python", "aiokafka", 'assignors.kafka_python.for_kafka_python("weighted-sticky")',
                   'assignors.aiokafka.for_aiokafka("weighted-sticky")', "adapter.bind(consumer, window_s=30)",
                   "COOPERATIVE", "A group with Java or librdkafka members"):  # fmt: skip
        assert needed in weighted
    assert adoption("actual") is None
    uniform, ranged = adoption("uniform"), adoption("consumer-range")
    assert uniform is not None
    assert ranged is not None
    for text in (uniform, ranged):
        assert "brokers on Apache Kafka 4.0 or later" in text
        assert "KIP-848" in text
        assert "group.protocol=consumer" in text
    assert "group.remote.assignor=uniform (the broker's default)" in uniform
    assert "group.remote.assignor=range (this report's consumer-range)" in ranged
    assert "consumer-range" not in uniform
    assert adoption("cooperative-sticky") == (
        "Adopting cooperative-sticky takes partition.assignment.strategy="
        "org.apache.kafka.clients.consumer.CooperativeStickyAssignor on every consumer (classic protocol, "
        "COOPERATIVE, KIP-429; clients 2.4 or later). From an eager assignor it takes two rolling restarts: first "
        "list both, the cooperative one first (e.g. CooperativeStickyAssignor,RangeAssignor: the group stays EAGER "
        "while any member lists an eager assignor), then, once every consumer runs that list, remove the eager "
        "assignor."
    )


def test_weighted_sticky_is_recommended_by_the_95th_percentile_load_with_what_adopting_it_takes() -> None:
    """Ranked by imbalance_p95 (then pause), weighted-sticky wins where its worst snapshot ties with sticky's."""
    both = [
        dataclasses.replace(strategy("sticky", "EAGER", 30.0, weighted=True), imbalance=7.0, imbalance_p95=2.92),
        dataclasses.replace(
            strategy("weighted-sticky", "COOPERATIVE", 40.0, weighted=True), imbalance=7.0, imbalance_p95=1.98
        ),
    ]
    summary = Summary(1, 2, [], rank(both, ("imbalance_p95", "pause")), rank_by=("imbalance_p95", "pause"))
    assert headline(summary) == (
        "Recommended: weighted-sticky (COOPERATIVE). Ranked by imbalance_p95, then pause, it has the lowest "
        "95th-percentile load: 1.98x the mean against 2.92x the mean for the runner-up sticky (EAGER), 1.5x less; "
        "it is behind on pause (40 partition-seconds against 30 partition-seconds)."
    )
    assert adoption("weighted-sticky") in render_text(summary).splitlines()
    page = render_html(summary)
    assert '<p id="adoption">' + html.escape(adoption("weighted-sticky") or "") + "</p>" in page
    assert "imbalance_p95" in page


def test_the_terminal_and_the_page_say_what_adopting_the_recommended_strategy_takes() -> None:
    summary = Summary(2, 4, [], RANKED)
    text = render_text(summary)
    assert text.splitlines()[0].startswith("Recommended: uniform (CONSUMER).")
    assert adoption("uniform") in text.splitlines()
    page = render_html(summary)
    assert f'<p id="adoption">{html.escape(adoption("uniform") or "")}</p>' in page
    assert '<h3 id="adopting">What adopting each strategy takes</h3>' in page
    assert "<dt>cooperative-sticky (COOPERATIVE)</dt><dd>Adopting cooperative-sticky takes " in page


@pytest.mark.parametrize(
    ("weights_given", "weighted", "said", "not_said"),
    [
        (False, False, "Imbalance is in partitions (no weights table was given).", "weights table weighs"),
        (True, True, "Imbalance is weighted by the weights table.", "no weights table was given"),
        (
            True,
            False,
            "Imbalance is in partitions: the weights table weighs none of the partitions evaluated.",
            "no weights table was given",
        ),
    ],
)
def test_the_weights_sentence_only_when_weights_were_given(
    *, weights_given: bool, weighted: bool, said: str, not_said: str
) -> None:
    ranked = [strategy("uniform", "CONSUMER", 10.0, weighted=weighted)]
    page = render_html(Summary(1, 1, [], ranked, weights_given=weights_given))
    assert said in page
    assert not_said not in page


def test_per_group_balance_and_the_drilldown_heading_are_rendered() -> None:
    balance = [GroupBalance("g1", "range", 1.5, "uniform", 1.0), GroupBalance("g2", "uniform", 1.25, "range", 1.0)]
    drill = [DrillDown("g2", 50.0, {}, {"uniform": [(T0, 1, 1, 50.0)]}, "uniform")]
    summary = Summary(
        3,
        3,
        [],
        RANKED,
        drilldown=drill,
        balance_by_group=balance,
        balance_group_count=2,
        worst_balanced={"range": 1, "uniform": 1},
    )
    text = render_text(summary)
    assert (
        "worst balanced: of 2 groups where the strategies' balance differs, the strategy that leaves each worst "
        "balanced: range 1, uniform 1"
    ) in text.splitlines()
    page = render_html(summary)
    assert '<h2 id="balance">Which strategy leaves each group worst balanced</h2>' in page
    assert "The strategy that leaves a group worst balanced: range in 1, uniform in 1." in page
    assert 'id="balance-table"' in page
    assert '<h2 id="drilldown">Groups with the most pause cost under uniform (the recommended strategy)</h2>' in page
    assert "<h3>g2: 50 partition-seconds of pause under uniform</h3>" in page
    assert "over all strategies" not in page


def row(group: str, name: str, protocol: str, *, max_load: int, pause: float) -> dict[str, Any]:
    values: dict[str, Any] = dict.fromkeys(column for column, _ in OUTPUT_COLUMNS)
    values.update(
        group_id=group,
        snapshot_ts=T0,
        strategy=name,
        protocol=protocol,
        generation=1,
        rebalanced=True,
        members=2,
        partitions=4,
        assigned=4,
        min_load=4 - max_load,
        max_load=max_load,
        load_spread=2 * max_load - 4,
        load_stddev=0.0,
        moved=0,
        orphaned=0,
        revoked=0,
        rounds=1,
        valid=True,
        assign_ms=0.0,
        topic_spread=0,
        topic_spread_sum=0,
        pause_partition_seconds=pause,
    )
    return values


def test_summarize_names_the_worst_balancing_strategy_per_group_and_no_sum_of_alternatives(
    spark: SparkSession,
) -> None:
    """range leaves g1 at 3 of 4 partitions on one of two members (1.5x), uniform g2; g3 ties; the drill-down
    is the recommended strategy's pause per group (uniform: 60 in all against range's 100)."""
    rows = [
        row("g1", "range", "EAGER", max_load=3, pause=100.0),
        row("g1", "uniform", "CONSUMER", max_load=2, pause=10.0),
        row("g2", "range", "EAGER", max_load=2, pause=0.0),
        row("g2", "uniform", "CONSUMER", max_load=3, pause=50.0),
        row("g3", "range", "EAGER", max_load=2, pause=0.0),
        row("g3", "uniform", "CONSUMER", max_load=2, pause=0.0),
    ]
    frame = spark.createDataFrame([tuple(r[c] for c, _ in OUTPUT_COLUMNS) for r in rows], ddl(OUTPUT_COLUMNS))
    summary = summarize(frame, top=2)
    assert [s.strategy for s in summary.strategies] == ["uniform", "range"]
    assert summary.balance_by_group == [
        GroupBalance("g1", "range", 1.5, "uniform", 1.0),
        GroupBalance("g2", "uniform", 1.5, "range", 1.0),
    ]
    assert summary.balance_group_count == 2
    assert summary.worst_balanced == {"range": 1, "uniform": 1}
    assert [(g.group_id, g.pause, g.strategy) for g in summary.drilldown] == [
        ("g2", 50.0, "uniform"),
        ("g1", 10.0, "uniform"),
    ]
