"""weighted-sticky on Spark: the job equals the pure replay beside a bad group, which does not stop it; the command
refuses the strategy without weights in one line, before Spark starts.

(``test_evaluate_history.py``'s Spark-equals-replay test runs it too, on a generated history: with weights the
default strategies include it.)"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from assignors import ConfigurationError
from assignors.tables import WEIGHTS_COLUMNS
from helpers.weighted_history import MEMBERSHIP, T0, TOPIC_ROWS, WEIGHT_ROWS
from spark_udfs import MemberRow, TopicHistory, replay_group
from spark_udfs.cli import main
from spark_udfs.replay import MEMBERSHIP_COLUMNS, TOPICS_COLUMNS, WeightHistory, ddl
from spark_udfs.udfs import evaluate_history

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import SparkSession

pytestmark = pytest.mark.xdist_group("spark")  # one worker holds the JVMs (make unit: --dist loadgroup)

STRATEGIES = ("sticky", "cooperative-sticky", "weighted-sticky")


def _comparable(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (round(v, 9) if isinstance(v, float) else v) for k, v in row.items() if k != "assign_ms"}


def test_spark_equals_the_pure_replay_and_a_bad_group_does_not_stop_it(spark: SparkSession) -> None:
    """The worked example (tests/spark/replay/test_weighted_sticky_replay.py) beside a group whose topic is missing."""
    bad = [("bad", T0, "a", ["t"], None, None), ("bad", T0, "b", ["missing"], None, None)]
    membership = spark.createDataFrame(MEMBERSHIP + bad, ddl(MEMBERSHIP_COLUMNS))
    topics = spark.createDataFrame(TOPIC_ROWS, ddl(TOPICS_COLUMNS))
    weights = spark.createDataFrame(WEIGHT_ROWS, ddl(WEIGHTS_COLUMNS))
    got = [r.asDict() for r in evaluate_history(membership, topics, strategies=STRATEGIES, weights=weights).collect()]
    rows = [MemberRow(ts, member, tuple(subscribed)) for _, ts, member, subscribed, _, _ in MEMBERSHIP]
    expected, _ = replay_group("g", rows, TopicHistory(TOPIC_ROWS), STRATEGIES, weights=WeightHistory(WEIGHT_ROWS))
    key = "strategy", "snapshot_ts"
    assert sorted((_comparable(r) for r in got if r["group_id"] == "g"), key=lambda r: [r[k] for k in key]) == sorted(
        (_comparable(r) for r in expected), key=lambda r: [r[k] for k in key]
    )
    errors = {(r["strategy"], r["error"]) for r in got if r["group_id"] == "bad"}
    assert {s for s, _ in errors} == set(STRATEGIES)
    assert all("missing" in error for _, error in errors)


def test_weighted_sticky_without_weights_is_one_line_and_exit_2(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before any table is read (the paths do not exist); evaluate_history says the same."""
    args = ["evaluate", "--membership", str(tmp_path / "m"), "--topics", str(tmp_path / "t"), "--out"]
    assert main([*args, str(tmp_path / "out"), "--strategies", "sticky", "weighted-sticky"]) == 2
    assert capsys.readouterr().err == (
        "assignors evaluate: error: --strategies weighted-sticky needs --weights: it balances the partitions' "
        "weights, which the table gives\n"
    )
    membership = spark.createDataFrame([("g", T0, "a", ["t"], None, None)], ddl(MEMBERSHIP_COLUMNS))
    topics = spark.createDataFrame([("t", 6, None)], ddl(TOPICS_COLUMNS))
    with pytest.raises(ConfigurationError, match="strategy 'weighted-sticky' needs a weights table"):
        evaluate_history(membership, topics, strategies=["weighted-sticky"])
