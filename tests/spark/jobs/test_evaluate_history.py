"""The Spark layer on a local session and over Spark Connect: Spark equals the pure replay, UDFs in SQL, bad input,
schema errors, paths as URIs, the CLI end to end; local and Connect outputs equal row for row."""

from __future__ import annotations

import datetime as dt
import inspect
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from assignors.tables import WEIGHTS_COLUMNS
from spark_udfs import MemberRow, TopicHistory, replay_group
from spark_udfs.cli import main, register_evaluate
from spark_udfs.demo.sample import generate_history
from spark_udfs.replay import (
    ALL_STRATEGIES,
    MEMBERSHIP_COLUMNS,
    OUTPUT_COLUMNS,
    STRATEGIES,
    TOPICS_COLUMNS,
    ddl,
    default_strategies,
)
from spark_udfs.replay.timing import PauseTiming
from spark_udfs.replay.weights import WeightHistory
from spark_udfs.udfs import SchemaError, evaluate_history, register_udfs

pytestmark = pytest.mark.xdist_group("spark")  # one worker holds the JVMs (make unit: --dist loadgroup)

MEMBERSHIP_DDL = ddl(MEMBERSHIP_COLUMNS)
TOPICS_DDL = ddl(TOPICS_COLUMNS)
T0 = dt.datetime(2026, 1, 1, 12, 0)  # noqa: DTZ001 - Spark timestamps are naive (UTC session)


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["group_id"] or "", row["strategy"], row["snapshot_ts"] or T0)


def _comparable(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (round(v, 9) if isinstance(v, float) else v) for k, v in row.items() if k != "assign_ms"}


def test_spark_equals_the_pure_replay(session: SparkSession) -> None:
    """Every column but the timing, weighted and pause columns included (weights with valid_from, R = 3 s, H = 2 s);
    with weights the default strategies include weighted-sticky."""
    spark = session
    history = generate_history(12, 10, seed=3)
    membership = spark.createDataFrame(history.membership, MEMBERSHIP_DDL)
    topics = spark.createDataFrame(history.topics, TOPICS_DDL)
    weights = spark.createDataFrame(history.weights, ddl(WEIGHTS_COLUMNS))
    timing = PauseTiming(rebalance_seconds=3.0, heartbeat_seconds=2.0)
    result, detail = evaluate_history(
        membership, topics, detail=True, weights=weights, rebalance_seconds=3.0, heartbeat_seconds=2.0
    )
    got = sorted((_comparable(r.asDict()) for r in result.collect()), key=_key)
    expected: list[dict[str, Any]] = []
    topic_history = TopicHistory(history.topics)
    weight_history = WeightHistory(history.weights)
    for group in sorted({row[0] for row in history.membership}):
        rows = [MemberRow(ts, m, tuple(t), i, r) for g, ts, m, t, i, r in history.membership if g == group]
        strategies = default_strategies(weighted=True)
        replayed = replay_group(group, rows, topic_history, strategies, weights=weight_history, timing=timing)
        expected.extend(replayed[0])
    assert got == sorted((_comparable(r) for r in expected), key=_key)
    assert any(r["weighted_spread"] for r in got)
    assert any(r["pause_partition_seconds"] for r in got)
    assert any(r["topic_spread"] for r in got)
    assert list(result.columns) == [name for name, _ in OUTPUT_COLUMNS]
    assert detail.count() == (len(ALL_STRATEGIES) + 1) * len(history.membership)
    assert {r["strategy"] for r in got} == {*ALL_STRATEGIES, "weighted-sticky"}


def test_bad_groups_are_reported_and_the_rest_is_evaluated(session: SparkSession) -> None:
    spark = session
    rows = [
        ("good", T0, "a", ["t"], None, None),
        ("no-count", T0, "a", ["missing"], None, None),
        ("twice", T0, "a", ["t"], None, None),
        ("twice", T0, "a", ["t"], None, None),
        (None, T0, "a", ["t"], None, None),
    ]
    membership = spark.createDataFrame(rows, MEMBERSHIP_DDL)
    topics = spark.createDataFrame([("t", 4, None)], TOPICS_DDL)
    evaluation = evaluate_history(membership, topics, strategies=STRATEGIES)
    result = {(r["group_id"], r["strategy"]): r for r in evaluation.collect()}
    assert len(result) == 4 * 4
    assert result["good", "range"]["error"] is None
    assert result["good", "range"]["assigned"] == 4
    assert "no partition count" in result["no-count", "sticky"]["error"]
    assert "appears twice" in result["twice", "roundrobin"]["error"]
    assert result[None, "cooperative-sticky"]["error"] == "group_id is null or empty"


def test_wrong_schema_fails_fast_listing_the_expected_schema(session: SparkSession) -> None:
    spark = session
    membership = spark.createDataFrame([("g", "a")], "group_id string, member string")
    topics = spark.createDataFrame([("t", 4, None)], TOPICS_DDL)
    with pytest.raises(SchemaError, match=r"missing column 'snapshot_ts'.*Expected schema: group_id string"):
        evaluate_history(membership, topics)


def test_weights_table_is_checked(session: SparkSession) -> None:
    spark = session
    membership = spark.createDataFrame([("g", T0, "a", ["t"], None, None)], MEMBERSHIP_DDL)
    topics = spark.createDataFrame([("t", 4, None)], TOPICS_DDL)
    wrong = spark.createDataFrame([("t", "0", 1.0)], "topic string, partition string, weight double")
    with pytest.raises(SchemaError, match=r"^weights table: column 'partition' is string, expected int\. Expected"):
        evaluate_history(membership, topics, weights=wrong)  # valid_from may be left out: null
    numeric = spark.createDataFrame([("t", None, 2)], "topic string, partition int, weight int")
    row = evaluate_history(membership, topics, weights=numeric, strategies=["range"]).collect()[0]
    assert (row["weighted_max_load"], row["weighted_max_mean_ratio"]) == (8.0, 1.0)
    # the optional columns left out of every table (group_instance_id, rack_id, valid_from): read as null
    short = spark.createDataFrame(
        [("g", T0, "a", ["t"])], "group_id string, snapshot_ts timestamp, member_id string, topics array<string>"
    )
    counts = spark.createDataFrame([("t", 4)], "topic string, partitions int")
    again = evaluate_history(short, counts, weights=numeric, strategies=["range"]).collect()[0]
    assert again.asDict() == {**row.asDict(), "assign_ms": again["assign_ms"]}


def test_udfs_in_sql(session: SparkSession) -> None:
    spark = session
    register_udfs(spark)
    snapshot = (
        "named_struct('members', array("
        "named_struct('member_id', 'c1', 'topics', array('t'), 'group_instance_id', cast(null as string), "
        "'rack_id', cast(null as string)), "
        "named_struct('member_id', 'c2', 'topics', array('t'), 'group_instance_id', cast(null as string), "
        "'rack_id', cast(null as string))), "
        "'topics', array(named_struct('topic', 't', 'partitions', 3)))"
    )
    query = (
        "select a.assignment as assignment, assignment_balance(a.assignment) as b, "
        "assignment_movement(a.assignment, s.assignment) as m "
        "from (select assign_snapshot('range', {0}) as a, assign_snapshot('roundrobin', {0}) as s)"
    )
    row = spark.sql(query.format(snapshot)).collect()[0]
    assert [(e["member"], list(e["partitions"])) for e in row["assignment"]] == [
        ("c1", ["t-0", "t-1"]),
        ("c2", ["t-2"]),
    ]
    assert (row["b"]["min_load"], row["b"]["max_load"], row["b"]["load_spread"]) == (1, 2, 1)
    assert (row["m"]["moved"], row["m"]["retained"]) == (2, 1)  # roundrobin: c1 t-0,t-2; c2 t-1
    bad = spark.sql("select assign_snapshot('nope', " + snapshot + ") as a").collect()[0]["a"]
    assert bad["assignment"] is None
    assert "unknown assignor" in bad["error"]


@pytest.mark.usefixtures("session")
def test_cli_evaluate_end_to_end_on_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Runs in the active session: the local one, or the Connect one."""
    (tmp_path / "membership.csv").write_text(
        "group_id,snapshot_ts,member_id,topics,group_instance_id,rack_id\n"
        "g1,2026-01-01T12:00:00,a,t;u,,\n"
        "g1,2026-01-01T12:05:00,a,t;u,,\n"
        "g1,2026-01-01T12:05:00,b,t;u,,\n"
        "g2,2026-01-01T12:00:00,x,missing,,\n",
        encoding="utf-8",
    )
    (tmp_path / "topics.csv").write_text("topic,partitions,valid_from\nt,4,\nu,2,\n", encoding="utf-8")
    out = tmp_path / "out"
    status = main([
        "evaluate", "--membership", str(tmp_path / "membership.csv"), "--topics", str(tmp_path / "topics.csv"),
        "--out", str(out), "--strategies", "range", "cooperative-sticky",
    ])  # fmt: skip
    printed = capsys.readouterr().out
    assert status == 0
    assert "2 groups, 3 snapshots, 1 groups with input errors" in printed
    assert (out / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert "missing" in (out / "report.html").read_text(encoding="utf-8")
    assert any((out / "evaluation").glob("*.parquet"))


@pytest.mark.usefixtures("session")
def test_cli_evaluate_reports_a_wrong_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.csv").write_text("group,when\ng,2026-01-01\n", encoding="utf-8")
    (tmp_path / "t.csv").write_text("topic,partitions,valid_from\nt,4,\n", encoding="utf-8")
    status = main(["evaluate", "--membership", str(tmp_path / "m.csv"), "--topics", str(tmp_path / "t.csv"),
                   "--out", str(tmp_path / "o")])  # fmt: skip
    assert status == 2
    assert "Expected schema" in capsys.readouterr().err


def _rows(frame: Any) -> list[dict[str, Any]]:
    """A DataFrame's rows as dicts, sorted, timings left out (they are measured, not computed)."""
    return sorted((_comparable(r.asDict(recursive=True)) for r in frame.collect()), key=_key)


def test_local_and_connect_outputs_are_equal_row_for_row(
    spark: SparkSession, connect_spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = generate_history(10, 8, seed=11)
    local, local_detail = evaluate_history(
        spark.createDataFrame(history.membership, MEMBERSHIP_DDL),
        spark.createDataFrame(history.topics, TOPICS_DDL),
        detail=True,
    )
    expected, expected_detail = _rows(local), sorted(map(str, local_detail.collect()))
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
    remote, remote_detail = evaluate_history(
        connect_spark.createDataFrame(history.membership, MEMBERSHIP_DDL),
        connect_spark.createDataFrame(history.topics, TOPICS_DDL),
        detail=True,
    )
    got = _rows(remote)
    assert len(got) == len(ALL_STRATEGIES) * len({(g, ts) for g, ts, *_ in history.membership})
    assert got == expected
    assert sorted(map(str, remote_detail.collect())) == expected_detail
    assert all(not math.isnan(r["load_stddev"]) for r in got)


def _write_csv(tmp_path: Path) -> tuple[Path, Path]:
    membership = tmp_path / "membership.csv"
    membership.write_text(
        "group_id,snapshot_ts,member_id,topics,group_instance_id,rack_id\n"
        "g1,2026-01-01T12:00:00,a,t;u,,\n"
        "g1,2026-01-01T12:05:00,a,t;u,,\n"
        "g1,2026-01-01T12:05:00,b,t;u,,\n",
        encoding="utf-8",
    )
    topics = tmp_path / "topics.csv"
    topics.write_text("topic,partitions,valid_from\nt,4,\nu,2,\n", encoding="utf-8")
    return membership, topics


def test_inputs_and_output_as_file_uris(
    session: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Paths are Spark's business: file:// URIs in and out (hdfs://, s3a:// go the same way)."""
    membership, topics = _write_csv(tmp_path)
    out = tmp_path / "out"
    status = main([
        "evaluate", "--membership", membership.as_uri(), "--topics", topics.as_uri(), "--out", out.as_uri(),
        "--strategies", "range",
    ])  # fmt: skip
    printed = capsys.readouterr().out
    assert status == 0
    assert "1 groups, 2 snapshots, 0 groups with input errors" in printed
    assert f"wrote {out.as_uri()}/evaluation and {out / 'report.html'}" in printed
    assert (out / "report.html").is_file()
    written = session.read.parquet(str(out / "evaluation"))
    assert sorted((r["snapshot_ts"].minute, r["members"], r["max_load"]) for r in written.collect()) == [
        (0, 1, 6),
        (5, 2, 3),
    ]


@pytest.mark.usefixtures("session")
def test_a_missing_input_is_one_line_in_sparks_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, topics = _write_csv(tmp_path)
    missing = (tmp_path / "nowhere").as_uri()
    status = main(["evaluate", "--membership", missing, "--topics", str(topics), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith(f"assignors evaluate: error: {missing}: [PATH_NOT_FOUND] Path does not exist: ")
    assert err.count("\n") == 1


@pytest.mark.usefixtures("session")
def test_a_csv_without_a_required_column_says_it_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No `topics` column: missing (it used to read as a null string column, "column 'topics' is string")."""
    (tmp_path / "m.csv").write_text("group_id,snapshot_ts,member_id\ng,2026-01-01T12:00:00,a\n", encoding="utf-8")
    (tmp_path / "t.csv").write_text("topic,partitions\nt,4\n", encoding="utf-8")  # valid_from may be left out
    status = main(["evaluate", "--membership", str(tmp_path / "m.csv"), "--topics", str(tmp_path / "t.csv"),
                   "--out", str(tmp_path / "o")])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("assignors evaluate: error: membership table: missing column 'topics'. Expected schema:")


def test_topic_rows_that_clash_are_an_error_of_the_groups_using_them(session: SparkSession) -> None:
    spark = session
    membership = spark.createDataFrame(
        [("uses-t", T0, "a", ["t"], None, None), ("uses-u", T0, "a", ["u"], None, None)], MEMBERSHIP_DDL
    )
    topics = spark.createDataFrame([("t", 4, None), ("u", 2, None), ("t", 6, None)], TOPICS_DDL)
    result = {(r["group_id"], r["strategy"]): r for r in evaluate_history(membership, topics).collect()}
    assert result["uses-t", "sticky"]["error"] == (
        "snapshot 2026-01-01 12:00:00: topic 't' has rows with one valid_from and different partition counts (4, 6)"
    )
    assert (result["uses-u", "sticky"]["error"], result["uses-u", "sticky"]["assigned"]) == (None, 2)


@pytest.mark.usefixtures("spark")
def test_master_with_an_active_session_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["demo", "--master", "local[1]", "--groups", "1", "--snapshots", "1"])
    assert status == 2
    assert capsys.readouterr().err == (
        "assignors demo: error: a session on local[2] is already active in this process; it cannot be moved to"
        " local[1]: leave out --master/--remote to use it, or stop it first\n"
    )


def test_loopback_and_same_python_only_for_local_masters() -> None:
    from spark_udfs.session import settings_for

    environment, settings = settings_for("local[2]")
    assert environment == {
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    assert settings["spark.driver.host"] == settings["spark.driver.bindAddress"] == "127.0.0.1"
    for master in ("spark://spark-master.example:7077", "yarn", "k8s://https://api.example:6443"):
        environment, settings = settings_for(master)
        assert environment == {}
        assert not any(key.startswith("spark.driver.") for key in settings)
        assert settings["spark.sql.session.timeZone"] == "UTC"


@pytest.mark.connect
def test_cli_remote_runs_over_spark_connect(
    spark: SparkSession, connect_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`assignors evaluate --remote sc://HOST:PORT` in its own process; its output equals the local run's."""
    membership, topics = _write_csv(tmp_path)
    args = ["evaluate", "--membership", str(membership), "--topics", str(topics), "--strategies", "range", "sticky"]
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "assignors", *args, "--out", str(tmp_path / "remote"), "--remote", connect_url],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "1 groups, 2 snapshots, 0 groups with input errors" in done.stdout
    assert main([*args, "--out", str(tmp_path / "local")]) == 0
    capsys.readouterr()
    remote = _rows(spark.read.parquet(str(tmp_path / "remote" / "evaluation")))
    assert remote == _rows(spark.read.parquet(str(tmp_path / "local" / "evaluation")))
    assert len(remote) == 4


def test_evaluate_history_and_assignors_evaluate_default_to_the_same_six_strategies() -> None:
    """One default: the classic four and KIP-848's two, in the API as on the command line (with weights also
    weighted-sticky, which --strategies offers)."""
    import argparse

    parser = argparse.ArgumentParser()
    register_evaluate(parser.add_subparsers())
    args = parser.parse_args(["evaluate", "--membership", "m", "--topics", "t", "--out", "o"])
    default = inspect.signature(evaluate_history).parameters["strategies"].default
    assert args.strategies is default is None
    assert default_strategies(weighted=False) == ALL_STRATEGIES
    assert default_strategies(weighted=True) == (*ALL_STRATEGIES, "weighted-sticky")
    chosen = parser.parse_args(["evaluate", "--membership", "m", "--topics", "t", "--out", "o", "--strategies",
                                "sticky", "weighted-sticky"])  # fmt: skip
    assert chosen.strategies == ["sticky", "weighted-sticky"]
    assert (*STRATEGIES, "uniform", "consumer-range") == ALL_STRATEGIES
