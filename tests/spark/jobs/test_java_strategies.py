"""``--kafka-jars``: Kafka's own Java sticky assignors replayed on Spark beside ours, and the report says by how much
they differ on the history.

The Spark rows of ``java-sticky`` and ``java-cooperative-sticky`` are those of the plain replay with the same jars
(:func:`spark_udfs.replay.group_replay.replay_group`), whose assignor is Kafka's class (``tests/java/
test_kafka_java.py`` holds it to the Java oracle); the report's comparison is the evaluation's own totals.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from helpers.kafka_jvm import build_dir, classpath
from spark_udfs.cli import main
from spark_udfs.replay.group_input import MemberRow, TopicHistory
from spark_udfs.replay.group_replay import replay_group

pytestmark = pytest.mark.xdist_group("spark")  # one worker holds the JVMs (make unit: --dist loadgroup)

T0 = dt.datetime(2026, 1, 1, 12, 0)  # noqa: DTZ001 - Spark timestamps are naive (UTC session)

# Two groups. "hetero": members with different subscriptions join and leave, where Kafka's general assignment
# builder moves one partition more than ours (found by replaying random histories: 23 of 60 differed);
# "same": identical subscriptions, where both keep every partition they can.
STEPS = {
    "hetero": [
        ["m0:x;z"],
        ["m0:x;z", "m1:x;y"],
        ["m0:x;z", "m1:x;y", "m2:x;y;z"],
        ["m0:x;z", "m2:x;y;z"],
        ["m2:x;y;z"],
        ["m2:x;y;z", "m5:x;y;z"],
    ],
    "same": [["a:x;y"], ["a:x;y", "b:x;y"], ["a:x;y", "b:x;y", "c:x;y"], ["b:x;y", "c:x;y"]],
}


def _membership(path: Path) -> dict[str, list[MemberRow]]:
    lines: list[str] = ["group_id,snapshot_ts,member_id,topics"]
    rows: dict[str, list[MemberRow]] = {}
    for group, steps in STEPS.items():
        for step, members in enumerate(steps):
            ts = T0 + dt.timedelta(minutes=step)
            for member in members:
                name, topics = member.split(":")
                lines.append(f"{group},{ts.isoformat()},{name},{topics}")
                rows.setdefault(group, []).append(MemberRow(ts, name, tuple(topics.split(";"))))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rows


def test_kafkas_sticky_assignors_replay_beside_ours_and_the_report_says_by_how_much(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jars = build_dir() / "classpath.txt"
    classpath()  # the build is there (else: how to make it)
    rows = _membership(tmp_path / "m.csv")
    (tmp_path / "t.csv").write_text("topic,partitions,valid_from\nx,7,\ny,5,\nz,3,\n", encoding="utf-8")
    out = tmp_path / "out"
    argv = ["evaluate", "--membership", str(tmp_path / "m.csv"), "--topics", str(tmp_path / "t.csv"),
            "--out", str(out), "--kafka-jars", str(jars)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    evaluation = pq.read_table(out / "evaluation").to_pylist()
    assert {r["strategy"] for r in evaluation} >= {
        "sticky",
        "java-sticky",
        "cooperative-sticky",
        "java-cooperative-sticky",
    }
    assert all(r["error"] is None for r in evaluation)
    history = TopicHistory([("x", 7, None), ("y", 5, None), ("z", 3, None)])
    names = ["java-sticky", "java-cooperative-sticky"]
    figures = ("moved", "revoked", "orphaned", "max_load", "min_load", "rounds", "pause_partition_seconds")
    for group in STEPS:
        plain, _ = replay_group(group, rows[group], history, names, kafka_jars=[str(jars)])
        spark = sorted(
            (r for r in evaluation if r["group_id"] == group and r["strategy"] in names),
            key=lambda r: (names.index(r["strategy"]), r["snapshot_ts"]),
        )
        assert [[r[f] for f in figures] for r in spark] == [[r[f] for f in figures] for r in plain], group

    def total(strategy: str, figure: str) -> float:
        return float(sum(r[figure] for r in evaluation if r["strategy"] == strategy))

    hetero = {n: sum(r["moved"] for r in evaluation if r["group_id"] == "hetero" and r["strategy"] == n) for n in names}
    assert hetero == {"java-sticky": 15, "java-cooperative-sticky": 15}
    assert sum(r["moved"] for r in evaluation if r["group_id"] == "hetero" and r["strategy"] == "sticky") == 14
    line = next(x.strip() for x in printed.splitlines() if "Kafka's StickyAssignor (java-sticky)" in x)
    ours, kafka = total("sticky", "moved"), total("java-sticky", "moved")
    moved = f"{ours:,.0f} for both" if ours == kafka else f"{ours:,.0f} against {kafka:,.0f}"
    assert line.startswith("sticky (ours) and Kafka's StickyAssignor (java-sticky) on this history: different figures")
    assert f"partitions moved {moved}" in line
    assert "Kafka's own Java CooperativeStickyAssignor, unmodified" in printed
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="java-comparison"' in page


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--strategies", "java-sticky"], "--strategies java-sticky needs --kafka-jars: it runs Kafka's own Java"),
        (
            ["--kafka-jars", "/no/such/kafka"],
            "--kafka-jars /no/such/kafka: Kafka's jars /no/such/kafka: /no/such/kafka",
        ),
    ],
)
def test_java_strategies_without_kafkas_jars_are_one_line_before_spark_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    argv = ["evaluate", "--membership", "m", "--topics", "t", "--out", str(tmp_path / "o"), *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"assignors evaluate: error: {message}")
    assert not (tmp_path / "o").exists()
