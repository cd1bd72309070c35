"""The evaluation on Spark says which timing parameters it priced the pause with and where each came from, derives
what ``--actual``'s records allow, and replays ``uniform`` as the ``--kafka-version`` broker runs it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from assignors import ConfigurationError
from assignors.metrics import DEFAULT_PAUSE_MODEL
from assignors.tables import HANDOVERS_COLUMNS, PARAMETERS_COLUMNS, column_names
from spark_udfs.cli import main
from spark_udfs.replay import MEMBERSHIP_COLUMNS, TOPICS_COLUMNS, ddl
from spark_udfs.udfs import evaluate_history

pytestmark = pytest.mark.xdist_group("spark")  # one worker holds the JVMs (make unit: --dist loadgroup)

T0 = dt.datetime(2026, 1, 1, 12, 0)  # noqa: DTZ001 - Spark timestamps are naive (UTC session)


def test_the_kafka_version_decides_uniforms_moves_through_evaluate_history(spark: SparkSession) -> None:
    """b holds t's 3 partitions, a joins: Kafka 4.4 (KAFKA-18688, the default) moves 1, Kafka 4.0.0 moves 2."""
    rows = [("g", T0, "b", ["t"], None, None)]
    rows += [("g", T0 + dt.timedelta(minutes=1), m, ["t"], None, None) for m in "ab"]
    membership = spark.createDataFrame(rows, ddl(MEMBERSHIP_COLUMNS))
    topics = spark.createDataFrame([("t", 3, None)], ddl(TOPICS_COLUMNS))

    def moved(version: str | None) -> int:
        frame = evaluate_history(membership, topics, strategies=["uniform"], kafka_version=version)
        return int(frame.selectExpr("sum(moved) AS moved").collect()[0]["moved"])

    assert (moved(None), moved("4.0.0")) == (1, 2)


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("4.x", "--kafka-version '4.x': not a Kafka version such as 4.4.0"),
        (
            "3.8.0",
            (
                "--kafka-version 3.8.0: kafka_version='3.8.0': KIP-848's server range is modelled from Kafka 3.9.0 on "
                "(KAFKA-16944); 3.7 and 3.8 had a sticky range"
            ),
        ),
    ],
)
def test_a_bad_kafka_version_is_one_line_before_spark_starts(
    version: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["evaluate", "--membership", "m", "--topics", "t", "--out", str(tmp_path / "o"), "--kafka-version", version]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"assignors evaluate: error: {message}\n"
    assert not (tmp_path / "o").exists()


def test_conflicting_timing_options_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["evaluate", "--membership", "m", "--topics", "t", "--out", str(tmp_path / "o")]
    assert main([*argv, "--rebalance-seconds", "2", "--heartbeat-interval-ms", "3000"]) == 2
    assert capsys.readouterr().err == (
        "assignors evaluate: error: --rebalance-seconds and --heartbeat-interval-ms both set heartbeat_seconds "
        "(heartbeat.interval.ms (classic consumers)) and disagree; give one\n"
    )


def test_actual_derives_what_its_records_show_and_the_outputs_say_so(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A COOPERATIVE group: a holds t-0..9; b joins; generation 2 (at 10 s) revokes t-5..9 from a, generation 3
    (2.5 s later) gives them to b: 5 hand-overs of 2.5 s, enough to derive cooperative_heartbeats =
    (2.5 - 0.09 s fetch) / 3 s heartbeat = 0.803333. The membership is the records' own: no rebalance length. The
    handovers table (a KIP-848 group's, as ``assignors collect`` writes it) holds 5 hand-overs of 1.2 s (mean):
    consumer_move_heartbeats = (1.2 - fetch) / the 2 s broker heartbeat given."""
    times = ("2026-01-01T12:00:00", "2026-01-01T12:00:10", "2026-01-01T12:00:12.500")
    (tmp_path / "m.csv").write_text(
        "group_id,snapshot_ts,member_id,topics\n"
        f"g,{times[0]},a,t\ng,{times[1]},a,t\ng,{times[1]},b,t\ng,{times[2]},a,t\ng,{times[2]},b,t\n",
        encoding="utf-8",
    )
    first, kept, handed = (
        ";".join(f"t-{p}" for p in range(10)),
        ";".join(f"t-{p}" for p in range(5)),
        "t-5;t-6;t-7;t-8;t-9",
    )
    (tmp_path / "a.csv").write_text(
        "group_id,snapshot_ts,generation,protocol,leader,member_id,assigned\n"
        f"g,{times[0]},1,cooperative-sticky,a,a,{first}\n"
        f"g,{times[1]},2,cooperative-sticky,a,a,{kept}\ng,{times[1]},2,cooperative-sticky,a,b,\n"
        f"g,{times[2]},3,cooperative-sticky,a,a,{kept}\ng,{times[2]},3,cooperative-sticky,a,b,{handed}\n",
        encoding="utf-8",
    )
    (tmp_path / "t.csv").write_text("topic,partitions,valid_from\nt,10,\n", encoding="utf-8")
    (tmp_path / "h.csv").write_text(
        "group_id,assigned_ts,member_id,partition,kind,seconds\n"
        + "".join(f"g,{times[1]},b,u-{p},consumer_move,{s}\n" for p, s in enumerate((1.0, 1.1, 1.2, 1.3, 1.4)))
        + f"g,{times[2]},a,u-9,consumer_orphan,0.5\n"
        + f"elsewhere,{times[2]},a,u-9,consumer_move,99.0\n",  # a group not evaluated: not read
        encoding="utf-8",
    )
    out = tmp_path / "out"
    argv = ["evaluate", "--membership", str(tmp_path / "m.csv"), "--topics", str(tmp_path / "t.csv"),
            "--actual", str(tmp_path / "a.csv"), "--handovers", str(tmp_path / "h.csv"),
            "--out", str(out), "--strategies", "cooperative-sticky", "uniform",
            "--kafka-version", "4.0.0", "--consumer-heartbeat-interval-ms", "2000"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    start = printed.index("Timing parameters (name, value, source):")
    words = [line.split(maxsplit=2) for line in printed[start + 1 : start + 16]]
    m = DEFAULT_PAUSE_MODEL
    derived = (2.5 - m.fetch_seconds) / 3.0  # 0.803333 at the measured 0.09 s fetch
    moved = (1.2 - m.fetch_seconds) / 2.0
    assert words == [
        ["heartbeat_seconds", "3", "Kafka's default heartbeat.interval.ms=3000"],
        ["session_seconds", "45", "Kafka's default session.timeout.ms=45000"],
        ["consumer_heartbeat_seconds", "2", "your option --consumer-heartbeat-interval-ms"],
        ["consumer_session_seconds", "45", "Kafka's default group.consumer.session.timeout.ms=45000"],
        ["eager_heartbeats", f"{m.eager_heartbeats:g}", "measured"],
        ["cooperative_heartbeats", f"{derived:g}", "the cluster's records (5 cooperative hand-overs, median 2.5 s)"],
        ["cooperative_orphan_heartbeats", f"{m.cooperative_orphan_heartbeats:g}", "measured"],
        ["consumer_move_heartbeats", f"{moved:g}", "the cluster's records (5 KIP-848 hand-overs, mean 1.2 s)"],
        ["consumer_orphan_heartbeats", f"{m.consumer_orphan_heartbeats:g}", "measured"],
        ["fetch_seconds", f"{m.fetch_seconds:g}", "measured"],
        ["eager_orphan_heartbeats", f"{m.eager_orphan_heartbeats:g}", "measured"],
        ["cooperative_kept_heartbeats", f"{m.cooperative_kept_heartbeats:g}", "measured"],
        ["static_rejoin_seconds", f"{m.static_rejoin_seconds:g}", "measured"],
        ["eager_crash_heartbeats", f"{m.eager_crash_heartbeats:g}", "measured"],
        ["kafka_version", "4.0.0", "your option --kafka-version"],
    ]
    notes = printed[start + 17 :]
    assert notes[0].startswith("  eager_heartbeats kept (measured): the cluster's records show 0 EAGER rebalances")
    assert any(
        n.startswith("  consumer_orphan_heartbeats kept (measured): the cluster's records show 1 ") for n in notes
    )
    assert "  uniform: the broker's UniformAssignor (KIP-848) as Kafka 4.0.0 runs it, whatever the client" in printed
    written = json.loads((out / "parameters.json").read_text(encoding="utf-8"))
    assert [(r["parameter"], r["text"]) for r in written] == [(w[0], w[1]) for w in words]
    assert written[-1]["value"] is None
    table = spark.read.parquet(str(out / "parameters"))
    assert tuple(table.columns) == column_names(PARAMETERS_COLUMNS)
    assert table.count() == len(written)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert '<td class="name">cooperative_heartbeats</td>' in page
    assert "the cluster&#x27;s records (5 cooperative hand-overs, median 2.5 s)" in page


def _cluster_file(directory: Path, release: str) -> None:
    from assignors.collect import RELEASE_LEVELS, write_cluster_file
    from assignors.collect._version import cluster_version

    level = next(level for level, name in RELEASE_LEVELS.items() if name == release)
    version = cluster_version({"metadata.version": (7, level)}, {"group.version": 1}, "b:9092", "2026-11-29T12:00:00")
    write_cluster_file(directory, version)


def test_the_release_collect_read_is_the_replays_and_the_option_wins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """b holds t's 3 partitions, a joins; ``cluster.json`` beside the membership says Kafka 4.0: uniform replays as
    4.0.2 (KAFKA-18688's fix: 1 move; 4.0.0 would move 2), the parameter names the cluster; ``--kafka-version
    4.0.0`` wins over it."""
    (tmp_path / "m.csv").write_text(
        "group_id,snapshot_ts,member_id,topics\ng,2026-01-01T12:00:00,b,t\n"
        "g,2026-01-01T12:01:00,a,t\ng,2026-01-01T12:01:00,b,t\n",
        encoding="utf-8",
    )
    (tmp_path / "t.csv").write_text("topic,partitions,valid_from\nt,3,\n", encoding="utf-8")
    _cluster_file(tmp_path, "4.0")
    base = ["evaluate", "--membership", str(tmp_path / "m.csv"), "--topics", str(tmp_path / "t.csv"),
            "--strategies", "uniform"]  # fmt: skip
    for out, option, version, moved in (("o1", [], "4.0.2", 1), ("o2", ["--kafka-version", "4.0.0"], "4.0.0", 2)):
        assert main([*base, "--out", str(tmp_path / out), *option]) == 0
        capsys.readouterr()
        written = json.loads((tmp_path / out / "parameters.json").read_text(encoding="utf-8"))
        row = written[-1]
        assert (row["parameter"], row["text"]) == ("kafka_version", version)
        evaluation = pq.read_table(tmp_path / out / "evaluation").to_pylist()
        assert sum(r["moved"] for r in evaluation) == moved
    assert written[-1]["source"] == "your option --kafka-version"
    first = json.loads((tmp_path / "o1" / "parameters.json").read_text(encoding="utf-8"))[-1]["source"]
    assert first.startswith("the cluster's own answer (Apache Kafka 4.0 (metadata.version up to level 25")
    assert first.endswith(
        f"{tmp_path / 'cluster.json'}): 4.0.2, the newest 4.0 patch (4.0.0 replays uniform before KAFKA-18688: "
        "--kafka-version 4.0.0 if your brokers run it)"
    )


def test_the_client_option_prices_its_own_poll_loop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """a, b and c hold 3, 3 and 2 of t's 8 partitions; d joins: cooperative-sticky moves one from each of the two
    holding 3 to d, and the third gives nothing up, so the two rejoin the second round at once and the 2 partitions
    each keeps wait for the third's heartbeat: kafka-python stops fetching them (``--client kafka-python``), Kafka's
    Java consumer does not (the default)."""
    (tmp_path / "m.csv").write_text(
        "group_id,snapshot_ts,member_id,topics\n"
        + "".join(f"g,2026-01-01T12:00:00,{m},t\n" for m in "abc")
        + "".join(f"g,2026-01-01T12:01:00,{m},t\n" for m in "abcd"),
        encoding="utf-8",
    )
    (tmp_path / "t.csv").write_text("topic,partitions,valid_from\nt,8,\n", encoding="utf-8")
    base = ["evaluate", "--membership", str(tmp_path / "m.csv"), "--topics", str(tmp_path / "t.csv"),
            "--strategies", "cooperative-sticky"]  # fmt: skip
    pauses = {}
    for client in ("java", "kafka-python"):
        out = tmp_path / client
        assert main([*base, "--out", str(out), "--client", client]) == 0
        capsys.readouterr()
        written = {r["parameter"]: r for r in json.loads((out / "parameters.json").read_text(encoding="utf-8"))}
        model = DEFAULT_PAUSE_MODEL.for_client(client)
        kept = written["cooperative_kept_heartbeats"]
        assert (kept["value"], kept["source"]) == (
            model.cooperative_kept_heartbeats,
            "measured" if client == "java" else "measured (kafka-python)",
        )
        evaluation = pq.read_table(out / "evaluation").to_pylist()
        pauses[client] = sum(r["pause_partition_seconds"] or 0.0 for r in evaluation)
    m = DEFAULT_PAUSE_MODEL
    python = m.for_client("kafka-python")
    assert pauses["java"] == pytest.approx(2 * (m.cooperative_heartbeats * 3 + m.fetch_seconds))
    assert pauses["kafka-python"] == pytest.approx(
        2 * (python.cooperative_heartbeats * 3 + m.fetch_seconds) + 4 * python.cooperative_kept_heartbeats * 3
    )


def test_a_bad_cluster_file_is_one_line_before_spark_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cluster.json").write_text("{}", encoding="utf-8")
    argv = ["evaluate", "--membership", str(tmp_path / "m.csv"), "--topics", "t", "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"assignors evaluate: error: {tmp_path / 'cluster.json'}: no field 'release'\n"
    assert not (tmp_path / "o").exists()


def test_handovers_without_actual_is_one_line_before_spark_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["evaluate", "--membership", "m", "--topics", "t", "--out", str(tmp_path / "o"), "--handovers", "h"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "assignors evaluate: error: --handovers needs --actual: the hand-overs are the recorded groups' own\n"
    )
    assert not (tmp_path / "o").exists()


def test_handovers_without_actual_are_refused(spark: SparkSession) -> None:
    membership = spark.createDataFrame([("g", T0, "a", ["t"], None, None)], ddl(MEMBERSHIP_COLUMNS))
    topics = spark.createDataFrame([("t", 6, None)], ddl(TOPICS_COLUMNS))
    handovers = spark.createDataFrame([("g", T0, "a", "t-0", "consumer_move", 1.0)], ddl(HANDOVERS_COLUMNS))
    with pytest.raises(ConfigurationError, match="handovers needs actual"):
        evaluate_history(membership, topics, handovers=handovers)
