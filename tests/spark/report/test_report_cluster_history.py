"""The two commands of docs/cluster-history.md, run as written, on a real Kafka broker and a local Spark session.

The history here is scripted to the millisecond so the report's figures can be pinned: the test produces records
in the format Kafka's group coordinator writes to ``__consumer_offsets`` (keys and values from
:func:`assignors.offsets_topic.encode_record`, CreateTime timestamps) to a topic of its own on the broker; the
documented ``collect`` command gets ``--topic`` for it and the broker's address for ``broker:9092``. Then the
documented ``evaluate`` command runs on what ``collect`` wrote, and the test reads the evaluation's ``actual``
rows, the self-check and the report's headline. What a real group coordinator writes is read in
tests/integration/test_collect.py and by ``make kafka-demo`` (tests/integration/test_kafka_demo.py).
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from assignors import Cluster, RangeAssignor, Subscription
from assignors.cli import main
from assignors.consumer_protocol import encode_subscription
from assignors.metrics import DEFAULT_PAUSE_MODEL
from assignors.offsets_topic import GroupMetadata, MemberMetadata, OffsetCommit, Record, encode_record
from assignors.testing import KafkaBroker
from helpers.kafka_jvm import classpath

pytest.importorskip("confluent_kafka", reason="collect reads Kafka through confluent-kafka (the collect extra)")

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.slow]

DOC = Path(__file__).resolve().parents[3] / "docs" / "cluster-history.md"
TOPIC = "offsets-copy"
T0 = 1_760_000_000_000  # ms


def documented_commands() -> list[list[str]]:
    """The ``assignors`` lines of the first ``sh`` block under "## Two commands"."""
    section = DOC.read_text(encoding="utf-8").split("## Two commands", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, "docs/cluster-history.md lost its sh block under '## Two commands'"
    return [shlex.split(line) for line in block.group(1).splitlines() if line.startswith("assignors ")]


def _generation(generation: int, members: list[str], step: int) -> GroupMetadata:
    """What range gave ``members`` on orders (4 partitions), as the coordinator records it."""
    result = RangeAssignor().assign(Cluster({"orders": 4}), {m: Subscription(["orders"]) for m in members})
    return GroupMetadata(
        "app",
        generation,
        "consumer",
        "range",
        members[0],
        T0 + step,
        tuple(
            MemberMetadata(m, None, "client", "/127.0.0.1", 30000, 10000, Subscription(["orders"]), result[m],
                           encode_subscription(Subscription(["orders"])))
            for m in members
        ),
    )  # fmt: skip


RECORDS: list[tuple[int, Record]] = [  # (CreateTime offset in ms, record)
    (0, _generation(1, ["m1"], 0)),
    (500, OffsetCommit("app", "orders", 0, 17)),
    (60_000, _generation(2, ["m1", "m2"], 60_000)),
    (120_000, _generation(3, ["m1", "m2", "m3"], 120_000)),
]


def test_the_documented_commands_give_tables_then_a_report(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    collect, evaluate = documented_commands()
    assert collect[:2] == ["assignors", "collect"]
    assert evaluate[:2] == ["assignors", "evaluate"]
    monkeypatch.chdir(tmp_path)  # the documented paths are relative
    with KafkaBroker(classpath=classpath()) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})  # kept: its futures die with it
        for future in admin.create_topics([NewTopic(TOPIC, 1, 1)]).values():
            future.result(60)
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
        for delay, record in RECORDS:
            key, value = encode_record(record)
            producer.produce(TOPIC, value=value, key=key, timestamp=T0 + delay)
        assert producer.flush(15) == 0
        argv = [cluster.bootstrap_servers if arg == "broker:9092" else arg for arg in collect[1:]]
        assert main([*argv, "--topic", TOPIC]) == 0
    collected = capsys.readouterr().out
    assert "next: assignors evaluate --membership history/membership" in collected
    # its own process, started here: Spark resolves the relative paths against its JVM's directory
    finished = subprocess.run(  # noqa: S603 - this interpreter and the documented arguments
        [sys.executable, "-m", "assignors", *evaluate[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    printed = finished.stdout
    headline = printed.splitlines()[0]
    # The measured model at Kafka's defaults (docs/evaluation.md). EAGER: m1's 4 partitions stop for 0.034 of a
    # 3 s heartbeat plus a 0.057 s fetch (0.159 s) when m2 joins, then m1's 2 and m2's 2 when m3 joins: 1.27.
    # Range and sticky replay the same (roundrobin moves 4); cooperative-sticky's 3 moves wait 0.973 heartbeats
    # plus the fetch, 2.98 s each: 8.9 (Kafka's Java consumer keeps fetching what it keeps); KIP-848's strategies
    # move 3, each 0.651 of a 5 s heartbeat plus the fetch: 9.9. Range ties sticky on pause, imbalance and moved and
    # wins by name; 3 members on 4 partitions: the worst holds 2 = 1.5x the mean.
    assert headline == (
        "Your cluster did pause 1 partition-seconds, worst load 1.50x the mean, partitions moved 3 (EAGER); "
        "range (EAGER) would have done pause 1 partition-seconds, worst load 1.50x the mean, "
        "partitions moved 3."
    )
    assert "self-check: 3 of 3 recorded range/roundrobin snapshots reproduced" in printed
    # what EAGER's pause rests on, beside the recommendation, in the terminal and on the page
    assert "EAGER's pause assumes the members learn of each rebalance on the same heartbeat" in printed
    assert '<p class="caveat">EAGER&#x27;s pause assumes' in (tmp_path / "report" / "report.html").read_text(
        encoding="utf-8"
    )

    evaluation = spark.read.parquet(str(tmp_path / "report" / "evaluation"))
    actual = evaluation.where("strategy = 'actual'").orderBy("snapshot_ts").collect()
    replayed = evaluation.where("strategy = 'range'").orderBy("snapshot_ts").collect()
    assert [(r["generation"], r["members"], r["max_load"], r["moved"], r["revoked"]) for r in actual] == [
        (1, 1, 4, 0, 0),
        (2, 2, 2, 2, 4),
        (3, 3, 2, 1, 4),  # m3 takes orders-3 from m2
    ]
    stop = DEFAULT_PAUSE_MODEL.eager_heartbeats * 3 + DEFAULT_PAUSE_MODEL.fetch_seconds  # 0.45 s
    assert [r["pause_partition_seconds"] for r in actual] == pytest.approx([0.0, 4 * stop, 4 * stop])
    # the cluster's records are the membership's own: nothing to derive, every parameter kept, and said so
    assert "eager_heartbeats kept (measured): the cluster's records show 0 EAGER rebalances" in printed
    # what range did on the cluster is what our range does on the recorded membership
    columns = ("members", "assigned", "max_load", "load_spread", "moved", "revoked", "pause_partition_seconds")
    assert [[r[c] for c in columns] for r in actual] == [[r[c] for c in columns] for r in replayed]
    checks = spark.read.parquet(str(tmp_path / "report" / "self_check")).collect()
    assert sorted((r["generation"], r["matched"]) for r in checks) == [(1, True), (2, True), (3, True)]
    page = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert headline in page
    assert 'id="self-check-table"' in page
    assert dt.datetime.fromtimestamp(T0 / 1000, tz=dt.UTC).year == 2025  # the snapshots' time, for the reader
