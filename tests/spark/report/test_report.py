"""The report's summary: a pinned ranking on a small history, its score, distributions, drill-down and text."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

from assignors.metrics import DEFAULT_PAUSE_MODEL, PauseModel
from spark_udfs.replay import MEMBERSHIP_COLUMNS, STRATEGIES, TOPICS_COLUMNS, ddl
from spark_udfs.report.aggregation import summarize
from spark_udfs.report.html import render_html
from spark_udfs.report.ranking import DEFAULT_RANK_BY, RANK_KEYS, RankingError, StrategySummary, parse_rank_by, rank
from spark_udfs.report.summary import SelfCheckGroup, Summary, member_events
from spark_udfs.report.text import headline, render_text
from spark_udfs.udfs import evaluate_history

pytestmark = pytest.mark.xdist_group("spark")  # beside the Connect server (make unit: --dist loadgroup)

T0 = dt.datetime(2026, 1, 1, 12, 0)  # noqa: DTZ001 - Spark timestamps are naive (UTC session)


def at(minute: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minute)


# a alone on o (3) and p (3); then b joins.
HISTORY = [
    ("g", at(0), "a", ["o", "p"], None, None),
    ("g", at(1), "a", ["o", "p"], None, None),
    ("g", at(1), "b", ["o", "p"], None, None),
]
TOPICS = [("o", 3, None), ("p", 3, None)]
ROUNDS = PauseModel(
    heartbeat_seconds=5.0,
    eager_heartbeats=1.0,
    cooperative_heartbeats=2.0,
    cooperative_orphan_heartbeats=1.0,
    eager_orphan_heartbeats=1.0,
    cooperative_kept_heartbeats=0.0,
    fetch_seconds=0.0,
)
"""A classic rebalance round is one 5 s heartbeat (a cooperative move takes two, a kept partition none), no fetch:
round numbers."""


def _evaluated(session: SparkSession) -> tuple[DataFrame, DataFrame]:
    membership = session.createDataFrame(HISTORY, ddl(MEMBERSHIP_COLUMNS))
    topics = session.createDataFrame(TOPICS, ddl(TOPICS_COLUMNS))
    return evaluate_history(membership, topics, strategies=STRATEGIES, pause_model=ROUNDS).cache(), membership


@pytest.fixture
def evaluation(session: SparkSession) -> tuple[DataFrame, DataFrame]:
    """The small history evaluated on a local session, then over Spark Connect."""
    return _evaluated(session)


@pytest.fixture
def local_evaluation(spark: SparkSession) -> tuple[DataFrame, DataFrame]:
    """The small history evaluated on the local session only: for what reads the summary, not the session (the
    summary itself is compared on both sessions by test_ranking_pinned_on_a_small_history)."""
    return _evaluated(spark)


def test_ranking_pinned_on_a_small_history(evaluation: tuple[DataFrame, DataFrame]) -> None:
    """b joins a (6 partitions), priced by :data:`ROUNDS`. Worked by hand:

    - range: a keeps o-0,1 and p-0,1, b takes o-2, p-2: moved 2; EAGER stops a's 6: pause 30;
      loads 4 and 2: imbalance 4 / 3.
    - roundrobin: a o-0, o-2, p-1; b o-1, p-0, p-2: moved 3, pause 30, imbalance 1.
    - sticky: 3 and 3, moved 3, pause 30 (EAGER: 6 x 5), imbalance 1.
    - cooperative-sticky: moved 3, revoked 3, pause 3 x 2 rounds x 5 = 30, imbalance 1.

    Default score (pause, imbalance, moved): pause ties at 30; range is the least even; the
    other three tie and their names decide.
    """
    frame, membership = evaluation
    summary = summarize(frame, membership)
    assert [s.strategy for s in summary.strategies] == ["cooperative-sticky", "roundrobin", "sticky", "range"]
    figures = {s.strategy: (s.pause, s.imbalance, s.moved, s.revoked, s.rebalances) for s in summary.strategies}
    pause, imbalance, *rest = figures["range"]
    assert (pause, rest) == (30.0, [2, 6, 2])
    assert math.isclose(imbalance, 4 / 3)
    assert figures["roundrobin"] == (30.0, 1.0, 3, 6, 2)
    assert figures["cooperative-sticky"] == (30.0, 1.0, 3, 3, 2)
    p95 = {s.strategy: s.imbalance_p95 for s in summary.strategies}  # of two snapshots: a alone, then a and b
    assert math.isclose(p95.pop("range"), 4 / 3)
    assert p95 == dict.fromkeys(["cooperative-sticky", "roundrobin", "sticky"], 1.0)
    assert not summary.weighted
    by_moved = summarize(frame, rank_by=["moved"], top=0)
    assert [s.strategy for s in by_moved.strategies] == ["range", "cooperative-sticky", "roundrobin", "sticky"]
    by_revoked = summarize(frame, rank_by="revoked,moved", top=0)
    assert [s.strategy for s in by_revoked.strategies] == ["cooperative-sticky", "range", "roundrobin", "sticky"]
    by_p95 = rank(summary.strategies, ["imbalance_p95"])  # no second summary: the figure is in this one
    assert [s.strategy for s in by_p95] == ["cooperative-sticky", "roundrobin", "sticky", "range"]


def test_distributions_drilldown_and_group_table(local_evaluation: tuple[DataFrame, DataFrame]) -> None:
    """One later rebalance per strategy: its quantiles are that value; the first snapshot is left out."""
    frame, membership = local_evaluation
    summary = summarize(frame, membership, top=3)
    moved = summary.distributions["range"]["moved"]
    assert (moved.count, moved.p50, moved.p95, moved.max) == (1, 2.0, 2.0, 2.0)
    assert summary.distributions["cooperative-sticky"]["revoked"].max == 3.0
    spread = summary.distributions["range"]["load_spread"]  # per snapshot: 0 (a alone), then 4 - 2
    assert (spread.count, spread.cdf[0], spread.max) == (2, 0.0, 2.0)
    [group] = summary.drilldown
    # its pause under the recommended strategy (ties on the score, wins by name), not a sum over the alternatives
    assert (group.group_id, group.pause, group.strategy) == ("g", 30.0, "cooperative-sticky")
    assert group.members == {"a": [(at(0), "join"), (at(1), "present")], "b": [(at(1), "join")]}
    assert group.rebalances["range"] == [(at(0), 0, 0, 0.0), (at(1), 2, 6, 30.0)]
    assert summary.group_count == 4
    assert [(g.strategy, g.worst_moved, g.worst_revoked) for g in summary.group_table] == [
        ("cooperative-sticky", 3, 3),
        ("range", 2, 6),
        ("roundrobin", 3, 6),
        ("sticky", 3, 6),
    ]
    points = summary.timeline["range"]
    assert [(p.ts, p.moved, p.pause) for p in points] == [(at(0), 0, 0.0), (at(1), 2, 30.0)]


def test_text_and_html_show_the_score(local_evaluation: tuple[DataFrame, DataFrame]) -> None:
    frame, membership = local_evaluation
    summary = summarize(frame, membership, notes=["R = 5 s"])
    text = render_text(summary)
    answer = (
        "Recommended: cooperative-sticky (COOPERATIVE). Ranked by pause, then imbalance, then moved, it ties with "
        "the runner-up roundrobin on every figure of the score and wins by name. Its figures: pause 30 "
        "partition-seconds, worst load 1.00x the mean, partitions moved 3."
    )
    assert headline(summary) == answer
    assert text.splitlines()[0] == answer
    assert "ranked by pause, then imbalance, then moved" in text
    assert text.splitlines()[6].split()[:2] == ["1", "cooperative-sticky"]
    by_moved = summarize(frame, rank_by=["moved", "pause"], top=0)
    assert headline(by_moved) == (
        "Recommended: range (EAGER). Ranked by moved, then pause, it has the lowest partitions moved: 2 against 3 "
        "for the runner-up cooperative-sticky (COOPERATIVE), 1.5x less."
    )
    page = render_html(summary)
    assert f'<p class="headline" id="headline">{answer}</p>' in page
    # p50 / p95 / max per strategy, in the ranking's order, sorting by p95
    three, two = '<td data-v="3.0">3 / 3 / 3</td>', '<td data-v="2.0">2 / 2 / 2</td>'
    moved = '<td class="name">per rebalance</td>' + three * 3 + two
    assert moved in page
    assert page.startswith("<!DOCTYPE html>")
    assert "cdn.plot.ly" not in page.split("Plotly.newPlot", 1)[1]  # figures load nothing from the network
    assert 'id="ranking-table"' in page
    assert "R = 5 s" in page


def _strategy(name: str, protocol: str, pause: float, imbalance: float, moved: int) -> StrategySummary:
    return StrategySummary(name, protocol, 1, pause, imbalance, moved, moved, 0, 0, 0, 1, 0, 0.0)


def test_headline_compares_the_cluster_with_the_best_strategy() -> None:
    """With the strategy 'actual': "your cluster did X; strategy Y would have done Z", in the score's figures."""
    strategies = [
        _strategy("cooperative-sticky", "COOPERATIVE", 40.0, 1.25, 8),
        _strategy("actual", "EAGER", 600.0, 2.0, 30),
        _strategy("range", "EAGER", 600.0, 2.0, 30),
    ]
    summary = Summary(1, 4, [], strategies)
    assert headline(summary) == (
        "Your cluster did pause 600 partition-seconds, worst load 2.00x the mean, partitions moved 30 (EAGER); "
        "cooperative-sticky (COOPERATIVE) would have done pause 40 partition-seconds, worst load 1.25x the mean, "
        "partitions moved 8."
    )
    replayed_only = Summary(1, 4, [], [s for s in strategies if s.strategy != "actual"], rank_by=("moved", "pause"))
    traded = [_strategy("uniform", "CONSUMER", 20.0, 3.0, 8), strategies[0]]  # ties on moved, wins on pause
    assert headline(Summary(1, 4, [], traded)) == (
        "Recommended: uniform (CONSUMER). Ranked by pause, then imbalance, then moved, it has the lowest pause: "
        "20 partition-seconds against 40 partition-seconds for the runner-up cooperative-sticky (COOPERATIVE), "
        "2.0x less; it is behind on worst load (3.00x the mean against 1.25x the mean)."
    )
    assert headline(replayed_only) == (
        "Recommended: cooperative-sticky (COOPERATIVE). Ranked by moved, then pause, it has the lowest partitions "
        "moved: 8 against 30 for the runner-up range (EAGER), 3.8x less."
    )
    assert headline(Summary(0, 0, [], [])) is None
    alone = Summary(1, 1, [], [_strategy("range", "EAGER", 0.0, 1.0, 0)])
    assert headline(alone) == (
        "Recommended: range (EAGER). Its figures: pause 0 partition-seconds, worst load 1.00x the mean, "
        "partitions moved 0."
    )


def test_self_check_match_rate_and_mismatches_in_the_report(
    session: SparkSession, evaluation: tuple[DataFrame, DataFrame]
) -> None:
    """Group g: 1 of 2 recorded range snapshots reproduced; h: 1 of 1. The report lists g's mismatch."""
    from assignors.tables import SELF_CHECK_COLUMNS

    mismatch = "a: recorded [t-0, t-2], replayed [t-0, t-1]"
    rows = [
        ("h", at(0), "roundrobin", 7, True, []),
        ("g", at(0), "range", 1, True, []),
        ("g", at(1), "range", 2, False, [mismatch, "b: recorded [t-1], replayed [t-2]"]),
    ]
    checks = session.createDataFrame(rows, ddl(SELF_CHECK_COLUMNS))  # the evaluation's own session
    found = summarize(evaluation[0], top=0, self_check=checks).self_check
    assert found == [  # worst match rate first
        SelfCheckGroup("g", 1, 2, [(at(1), 2, "range", mismatch + "; b: recorded [t-1], replayed [t-2]")]),
        SelfCheckGroup("h", 1, 1, []),
    ]
    page = render_html(Summary(1, 2, [], [], self_check=found))
    assert 'id="self-check-table"' in page
    assert "2 of 3 recorded range/roundrobin snapshots reproduced" in page
    assert '<td data-v="1">1</td><td data-v="2">2</td><td>50%</td>' in page
    assert "a: recorded [t-0, t-2], replayed [t-0, t-1]" in page
    text = render_text(Summary(1, 2, [], [], self_check=found))
    assert text.splitlines()[-2:] == [
        "self-check: 2 of 3 recorded range/roundrobin snapshots reproduced",
        "  g: 1/2 (50%)",
    ]


def test_rank_is_by_the_score_then_the_name() -> None:
    def s(name: str, pause: float, imbalance: float, moved: int) -> StrategySummary:
        return StrategySummary(name, "EAGER", 1, pause, imbalance, moved, moved, 0, 0, 0, 1, 0, 0.0)

    strategies = [s("b", 10.0, 1.5, 3), s("a", 10.0, 1.5, 3), s("c", 10.0, 1.2, 9), s("d", 5.0, 3.0, 9)]
    assert [x.strategy for x in rank(strategies)] == ["d", "c", "a", "b"]
    assert [x.strategy for x in rank(strategies, ["moved", "imbalance"])] == ["a", "b", "c", "d"]
    assert DEFAULT_RANK_BY == ("pause", "imbalance", "moved")


@pytest.mark.parametrize(
    ("text", "needle"),
    [("", "needs at least one of"), ("pause,churn", "unknown figure 'churn'"), ("moved, moved", "twice")],
)
def test_rank_by_is_checked(text: str, needle: str) -> None:
    with pytest.raises(RankingError, match=needle):
        parse_rank_by(text)
    assert parse_rank_by(" pause , moved ") == ("pause", "moved")
    assert set(RANK_KEYS) >= {"pause", "imbalance", "moved", "revoked", "topic_spread"}


def test_member_events_by_hand() -> None:
    """x stays; y (static) restarts with a new member id; z leaves and w joins."""
    rows = [
        ("g", at(0), "x", None),
        ("g", at(0), "y-1", "y"),
        ("g", at(0), "z", None),
        ("g", at(1), "x", None),
        ("g", at(1), "y-2", "y"),
        ("g", at(1), "w", None),
        (None, at(1), "ignored", None),
    ]
    assert member_events(rows) == {
        "g": {
            "x": [(at(0), "join"), (at(1), "present")],
            "y": [(at(0), "join"), (at(1), "restart")],
            "z": [(at(0), "join"), (at(1), "leave")],
            "w": [(at(1), "join")],
        }
    }


def test_an_empty_summary_renders() -> None:
    page = render_html(Summary(0, 0, [], []))
    assert "No rebalances." in page
    assert "None: every group was evaluated." in page


def test_cli_evaluate_with_weights_rank_by_and_durations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Weights from CSV (empty partition: the whole topic). ``--rebalance-seconds 2`` is the classic heartbeat: under
    the measured factors range's join stops a's 6 for 0.12 heartbeats and a 0.09 s fetch, 6 x 0.33 = 1.98 p-s, and
    the parameters say where each value came from."""
    from spark_udfs.cli import main

    (tmp_path / "m.csv").write_text(
        "group_id,snapshot_ts,member_id,topics,group_instance_id,rack_id\n"
        "g,2026-01-01T12:00:00,a,o;p,,\ng,2026-01-01T12:01:00,a,o;p,,\ng,2026-01-01T12:01:00,b,o;p,,\n",
        encoding="utf-8",
    )
    (tmp_path / "t.csv").write_text("topic,partitions,valid_from\no,3,\np,3,\n", encoding="utf-8")
    (tmp_path / "w.csv").write_text("topic,partition,weight,valid_from\no,,10,\np,,1,\n", encoding="utf-8")
    out = tmp_path / "out"
    argv = ["evaluate", "--membership", str(tmp_path / "m.csv"), "--topics", str(tmp_path / "t.csv"),
            "--weights", str(tmp_path / "w.csv"), "--out", str(out), "--strategies", "range", "roundrobin",
            "--rank-by", "moved", "--rebalance-seconds", "2"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "ranked by moved" in printed
    lines = [line.split() for line in printed.splitlines() if line[:1].isdigit() and "groups" not in line]
    stop = f"{6 * (DEFAULT_PAUSE_MODEL.eager_heartbeats * 2 + DEFAULT_PAUSE_MODEL.fetch_seconds):.2f}"  # 1.98
    assert [(row[1], row[2]) for row in lines] == [("range", stop), ("roundrobin", stop)]
    # the weight moved when b joins: range hands over o-2 and p-2 (10 + 1), roundrobin o-1, p-0 and p-2 (10 + 1 + 1)
    assert "weight moved" in printed
    assert [(row[1], row[4], row[-1]) for row in lines] == [("range", "2", "11"), ("roundrobin", "3", "12")]
    words = [line.split() for line in printed.splitlines()]
    assert ["heartbeat_seconds", "2", "your", "option", "--rebalance-seconds"] in words
    assert [
        "kafka_version",
        "4.4.0",
        "the",
        "project's",
        "pinned",
        "Kafka",
        "(no",
        "server",
        "strategy",
        "was",
        "replayed)",
    ] in words
    written = json.loads((out / "parameters.json").read_text(encoding="utf-8"))
    assert written[0] == {
        "parameter": "heartbeat_seconds",
        "value": 2.0,
        "text": "2",
        "source": "your option --rebalance-seconds",
        "setting": "heartbeat.interval.ms (classic consumers)",
    }
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "weighted by the weights table" in page
    assert '<h2 id="timing">Timing parameters</h2>' in page
    with pytest.raises(SystemExit):
        main([*argv[:-2], "--rebalance-seconds", "-1"])


def test_summarize_caches_its_input_only_while_it_runs(
    local_evaluation: tuple[DataFrame, DataFrame], tmp_path: Path
) -> None:
    """summarize keeps the evaluation in memory for its jobs and lets go after; a frame the caller cached stays so.

    The figures are the same either way (the cache holds the rows as read: same partitions, same order).
    """
    output, membership = local_evaluation  # over Spark Connect: test_cli_remote_runs_over_spark_connect
    output.write.parquet(str(tmp_path / "evaluation"))
    read = output.sparkSession.read.parquet(str(tmp_path / "evaluation"))
    plain = summarize(read, membership)
    assert not read.is_cached
    kept = read.cache()
    try:
        assert summarize(kept, membership) == plain
        assert kept.is_cached
    finally:
        kept.unpersist()


def test_figures_aggregated_together_equal_a_job_each(local_evaluation: tuple[DataFrame, DataFrame]) -> None:
    """summarize aggregates the per-snapshot quantiles beside the strategies' figures and reads the drill-down's
    pause from the per-(group, strategy) figures: the same values, to the bit, as a job each on the same rows.

    The small history copied 80 times into 8 groups, the pauses scaled by uneven fractions, every group's rows of
    each strategy in both partitions: their sums depend on the order they are added in.
    """
    from spark_udfs.report.aggregation import _found_quantiles, _imbalance, _quantiles
    from spark_udfs.report.summary import DISTRIBUTIONS

    output, _ = local_evaluation
    copies = output.sparkSession.range(80).withColumnRenamed("id", "copy")
    frame = (
        output.crossJoin(copies)
        .withColumn("group_id", sf.concat(sf.col("group_id"), (sf.col("copy") % 8).cast("string")))
        .withColumn("pause_partition_seconds", sf.col("pause_partition_seconds") * (1 + sf.col("copy") / 7))
        .drop("copy")
        .repartition(2)
        .cache()  # summarize keeps the caller's cache: both read the same partitions in the same order
    )
    try:
        summary = summarize(frame, top=3)
        ok = frame.where(sf.col("error").isNull()).withColumn("imbalance", _imbalance())
        spread = frame.withColumn("part", sf.spark_partition_id()).groupBy("group_id", "strategy")
        assert spread.agg(sf.countDistinct("part").alias("n")).agg(sf.min("n")).first() == (2,)
        measures = [m for m, (scope, _) in DISTRIBUTIONS.items() if scope == "per snapshot"]
        alone = _found_quantiles(ok.groupBy("strategy").agg(*_quantiles(measures)).collect(), measures)
        assert {s: {m: q[m] for m in measures} for s, q in summary.distributions.items()} == alone
        [strategy] = {g.strategy for g in summary.drilldown}
        pauses = ok.where(sf.col("strategy") == strategy).groupBy("group_id").agg(sf.sum("pause_partition_seconds"))
        sums: dict[str, float] = dict(pauses.collect())
        assert len(set(sums.values())) > 1
        assert [(g.group_id, g.pause) for g in summary.drilldown] == [
            (g.group_id, sums[g.group_id]) for g in summary.drilldown
        ]
    finally:
        frame.unpersist()


def test_summarize_runs_every_job_in_the_callers_job_group(local_evaluation: tuple[DataFrame, DataFrame]) -> None:
    """summarize runs its independent collects from threads; each inherits the caller's job group (what a caller
    watches, cancels or reports progress by), so no job of summarize runs outside it, and the summary is the one a
    second call gives."""
    output, membership = local_evaluation
    context = output.sparkSession.sparkContext
    tracker = context.statusTracker()
    outside = set(tracker.getJobIdsForGroup(None))
    context.setJobGroup("summarize-under-test", "summarize's jobs")
    try:
        first = summarize(output, membership, top=2)
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type] # clears it
    assert set(tracker.getJobIdsForGroup(None)) == outside
    assert len(tracker.getJobIdsForGroup("summarize-under-test")) >= 10
    assert summarize(output, membership, top=2) == first


def test_rank_by_moved_weight_needs_weights(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without a weights table there is no weight moved to rank by: one line, exit 2, before Spark starts."""
    from spark_udfs.cli import main

    argv = ["evaluate", "--membership", str(tmp_path / "m.csv"), "--topics", str(tmp_path / "t.csv"),
            "--out", str(tmp_path / "out"), "--rank-by", "moved_weight,pause"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    said = "--rank-by moved_weight needs --weights: the weight moved is measured in the table's weights"
    assert err == [f"assignors evaluate: error: {said}"]
    assert not (tmp_path / "out").exists()


def test_groups_snapshots_and_errors_counted_in_one_job(spark: SparkSession) -> None:
    """_groups: countDistinct's counts (nulls count for nothing) and each group's least error, by group."""
    from spark_udfs.report.aggregation import _groups

    rows = [
        ("b", at(0), "bad topics row"),
        ("b", at(0), "another"),
        ("b", at(1), None),
        ("a", at(0), None),
        ("a", at(0), None),
        ("é", at(2), "late"),
        ("c", None, None),
        (None, at(3), "no group"),
    ]
    frame = spark.createDataFrame(rows, "group_id string, snapshot_ts timestamp, error string")
    expected_counts = frame.agg(
        sf.countDistinct("group_id").alias("g"), sf.countDistinct("group_id", "snapshot_ts").alias("s")
    ).collect()[0]
    expected_errors = (
        frame.where(sf.col("error").isNotNull()).groupBy("group_id").agg(sf.min("error").alias("e")).orderBy("group_id")
    )
    groups, snapshots, errors = _groups(frame)
    assert (groups, snapshots) == (expected_counts["g"], expected_counts["s"]) == (4, 4)
    assert errors == [(r["group_id"], r["e"]) for r in expected_errors.collect()]
    assert errors == [(None, "no group"), ("b", "another"), ("é", "late")]


def test_the_timeline_spans_the_first_to_the_last_snapshot(local_evaluation: tuple[DataFrame, DataFrame]) -> None:
    from spark_udfs.report.aggregation import _strategies

    evaluation, _ = local_evaluation
    ok = evaluation.withColumn("imbalance", sf.lit(1.0))
    found, bounds, _ = _strategies(ok)
    assert sorted(s.strategy for s in found) == sorted(STRATEGIES)
    assert bounds == (int(at(0).replace(tzinfo=dt.UTC).timestamp()), int(at(1).replace(tzinfo=dt.UTC).timestamp()))
    assert _strategies(ok.where(sf.lit(False))) == ([], (None, None), {})
