"""``assignors collect --from-dump``: the command through the CLI's entry points, without a cluster."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from assignors.cli import main
from helpers.dumps import DUMP_LOG, FORMATTER_39

# The tables are Parquet: the command needs the collect extra (pyarrow), which core-test leaves out.
pq = pytest.importorskip("pyarrow.parquet", reason="needs the collect extra")


def test_from_dump_log_writes_the_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = tmp_path / "dump.txt"
    dump.write_text(DUMP_LOG, encoding="utf-8")
    counts = tmp_path / "counts.json"
    counts.write_text(json.dumps({"foo": 1, "bar": 3}), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["collect", "--from-dump", str(dump), "--out", str(out), "--topics", str(counts)]) == 0
    ts = dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=dt.UTC)
    assert pq.read_table(out / "membership").to_pylist() == [
        {
            "group_id": "group",
            "snapshot_ts": ts,
            "member_id": "member",
            "topics": ["foo"],
            "group_instance_id": "instance",
            "rack_id": "rack",
        }
    ]
    assert pq.read_table(out / "actual").column("assigned").to_pylist() == [["foo-0"]]
    assert pq.read_table(out / "topics").to_pylist() == [
        {"topic": "bar", "partitions": 3, "valid_from": None, "topic_id": None},  # classic records: no ids
        {"topic": "foo", "partitions": 1, "valid_from": None, "topic_id": None},
    ]
    printed = capsys.readouterr().out
    assert "group tombstones 1" in printed
    assert f"--actual {out / 'actual'}" in printed
    # a second run into the same directory would duplicate rows: refused
    assert main(["collect", "--from-dump", str(dump), "--out", str(out)]) == 2
    assert "already holds collected rows" in capsys.readouterr().err


def test_formatter_dump_without_timestamps_uses_current_state_timestamp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The formatter prints no CreateTime; its member bytes ({0,1}) are not ConsumerProtocol, so it is skipped."""
    dump = tmp_path / "formatter.json"
    dump.write_text(FORMATTER_39, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["collect", "--from-dump", str(dump), "--out", str(out)]) == 0
    assert pq.read_table(out / "membership").num_rows == 0
    assert "skipped: group 'group-id' generation 1: members[0]:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["collect", "--out", "x"], "needs --bootstrap-servers"),
        (["collect", "--from-dump", "nope.txt", "--out", "OUT", "--since", "yesterday"], "--since 'yesterday'"),
        (["collect", "--from-dump", "nope.txt", "--out", "OUT", "--groups", "("], "--groups '('"),
        (["collect", "--from-dump", "nope.txt", "--out", "OUT"], "--from-dump nope.txt: cannot read"),
    ],
)
def test_bad_options_are_one_line_and_status_2(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_a_missing_extra_is_one_line_naming_it() -> None:
    """Without confluent-kafka, collect says which extra to install (registering it imported nothing)."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules.update(dict.fromkeys(['confluent_kafka', 'pyarrow']))\n"
        "from assignors.cli import main; sys.exit(main(['collect', '--bootstrap-servers', 'h:1', '--out', 'o']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)  # noqa: S603
    assert done.returncode == 2
    assert done.stderr.strip().endswith("pip install 'assignors[collect]'")
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_tables_columns_are_the_evaluations(tmp_path: Path) -> None:
    """collect writes each table with the columns of their one home, which the evaluation reads (the topics with
    their ids: COLLECTED_TOPICS_COLUMNS)."""
    from assignors.collect._tables import TableWriter
    from assignors.tables import ACTUAL_COLUMNS, COLLECTED_TOPICS_COLUMNS, HANDOVERS_COLUMNS, MEMBERSHIP_COLUMNS

    schemas = TableWriter(str(tmp_path)).schemas
    expected = {
        "membership": MEMBERSHIP_COLUMNS,
        "actual": ACTUAL_COLUMNS,
        "topics": COLLECTED_TOPICS_COLUMNS,
        "handovers": HANDOVERS_COLUMNS,
    }
    assert {name: tuple(schema.names) for name, schema in schemas.items()} == {
        name: tuple(column for column, _ in columns) for name, columns in expected.items()
    }


def test_kip848_hand_overs_become_the_handovers_table_and_only_they(tmp_path: Path) -> None:
    """A flush writes the hand-overs the records showed beside the tables, as a part of its own; a history that
    has none (or cannot see records: the Admin route) leaves no handovers directory."""
    from assignors.collect._tables import TableWriter
    from assignors.offsets_topic import ConsumerGroupCurrentMemberAssignment, HistoryBuilder, TopicIdPartitions

    topic = "AAAAAAAAAAAAAAAAAAAAAQ"

    def current(member: str, assigned: tuple[int, ...], pending: tuple[int, ...] = ()) -> Any:
        held = (TopicIdPartitions(topic, assigned),) if assigned else ()
        revoking = (TopicIdPartitions(topic, pending),) if pending else ()
        return ConsumerGroupCurrentMemberAssignment("g", member, 1, 0, 0, held, revoking)

    builder = HistoryBuilder(topic_ids={topic: "foo"})
    for record, ms in [(current("a", (0, 1)), 1_000), (current("a", (0,), (1,)), 2_000), (current("b", (1,)), 2_250)]:
        builder.add(record, ms)
    writer = TableWriter(str(tmp_path / "out"))
    writer.flush(builder)
    rows = pq.read_table(tmp_path / "out" / "handovers").to_pylist()
    assert [(r["member_id"], r["partition"], r["kind"], r["seconds"]) for r in rows] == [
        ("b", "foo-1", "consumer_move", 0.25)
    ]
    assert rows[0]["assigned_ts"] == dt.datetime.fromtimestamp(2.25, tz=dt.UTC)
    writer.flush(builder)  # nothing new: no second part
    assert sorted(p.name for p in (tmp_path / "out" / "handovers").iterdir()) == ["part-00001.parquet"]
    quiet = TableWriter(str(tmp_path / "quiet"))
    quiet.flush(HistoryBuilder())
    assert not (tmp_path / "quiet" / "handovers").exists()
