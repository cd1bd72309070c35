"""Bad input to ``assignors evaluate`` through the real executable: a named error, the good groups evaluated.

Every case runs the installed ``assignors`` in a subprocess against one Spark Connect server (so no
JVM-only error type is on the path, and the cases share one JVM); one case also runs on a local
classic session. Each pins the exit status and the exact message, and that no traceback is printed.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers.spark_processes import loopback_env

EXECUTABLE = Path(sys.executable).with_name("assignors")
TIMESTAMP = "a timestamp (ISO 8601, e.g. 2024-05-01T12:00:00Z)"
INT32 = "an integer in 0..2147483647"
UTF8 = "UTF-8 text (the file's bytes here are not UTF-8: save it as UTF-8)"

GOOD_MEMBERSHIP = """group_id,snapshot_ts,member_id,topics
g1,2024-05-01T12:00:00Z,a,orders
g1,2024-05-01T12:00:00Z,b,orders
g2,2024-05-01T12:00:00Z,c,payments
g2,2024-05-01T13:00:00Z,c,payments
g2,2024-05-01T13:00:00Z,d,payments
g3,2024-05-01T12:00:00Z,e,audit
"""
GOOD_TOPICS = "topic,partitions\norders,6\npayments,4\naudit,3\n"


def evaluate(tmp_path: Path, where: list[str], **tables: str) -> tuple[int, str, str, Path]:
    """``assignors evaluate`` on CSV tables written from ``tables`` (``membership=``, ``topics=``, ``weights=``)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    args = []
    for name, text in tables.items():
        path = tmp_path / f"{name}.csv"
        path.write_text(text, encoding="utf-8")
        args += [f"--{name}", str(path)]
    out = tmp_path / "out"
    done = subprocess.run(  # noqa: S603 - the project's own executable
        [str(EXECUTABLE), "evaluate", *args, "--out", str(out), *where],
        capture_output=True,
        text=True,
        check=False,
        env=loopback_env(),
        timeout=600,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert "\tat org.apache" not in done.stderr, done.stderr  # no Java stack trace either
    return done.returncode, done.stdout, done.stderr, out


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """``assignors evaluate ARGS``, its output captured."""
    return subprocess.run(  # noqa: S603 - the project's own executable
        [str(EXECUTABLE), "evaluate", *args], capture_output=True, text=True, check=False, timeout=600
    )


def errors_listed(stdout: str) -> list[str]:
    """The terminal summary's lines naming the groups with input errors."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("groups with input errors"))
    listed = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        listed.append(line.strip())
    return listed


def evaluated_groups(out: Path) -> dict[str, set[str | None]]:
    """group -> the set of its rows' errors (None: evaluated) in OUT/evaluation."""
    rows = pq.read_table(out / "evaluation", columns=["group_id", "error"]).to_pylist()
    found: dict[str, set[str | None]] = {}
    for row in rows:
        found.setdefault(row["group_id"], set()).add(row["error"])
    return found


@pytest.fixture(scope="module")
def remote(connect_url: str) -> list[str]:
    return ["--remote", connect_url]


def test_a_bad_timestamp_is_its_groups_error_and_the_others_are_evaluated(tmp_path: Path, remote: list[str]) -> None:
    membership = GOOD_MEMBERSHIP.replace("g1,2024-05-01T12:00:00Z,b", "g1,yesterday at noon,b")
    status, stdout, stderr, out = evaluate(tmp_path, remote, membership=membership, topics=GOOD_TOPICS)
    assert status == 0, stderr
    path = tmp_path / "membership.csv"
    assert errors_listed(stdout) == [
        f"g1: membership table {path} line 3: column 'snapshot_ts' is 'yesterday at noon', expected {TIMESTAMP}"
    ]
    assert "3 groups, " in stdout
    groups = evaluated_groups(out)
    assert groups["g2"] == {None}
    assert groups["g3"] == {None}
    assert None not in groups["g1"]


def test_bad_topic_rows_fail_their_subscribers_only(tmp_path: Path, remote: list[str]) -> None:
    """'two', INT32 overflow and a bad valid_from: each subscribing group names the file line; audit's group runs."""
    topics = (
        "topic,partitions,valid_from\n"
        "orders,two,\n"
        "payments,3000000000,\n"
        "payments,4,not a time\n"
        "audit,3,2024-01-01T00:00:00Z\n"
    )
    status, stdout, stderr, out = evaluate(tmp_path, remote, membership=GOOD_MEMBERSHIP, topics=topics)
    assert status == 0, stderr
    path = tmp_path / "topics.csv"
    assert errors_listed(stdout) == [
        (
            f"g1: member 'a' subscribes to topic 'orders', whose row is not valid: topics table {path} line 2: "
            f"column 'partitions' is 'two', expected {INT32}"
        ),
        (
            f"g2: member 'c' subscribes to topic 'payments', whose row is not valid: topics table {path} line 3: "
            f"column 'partitions' is '3000000000', expected {INT32}"
        ),
    ]
    assert evaluated_groups(out)["g3"] == {None}


def test_a_legal_but_huge_partition_count_is_its_groups_error(tmp_path: Path, remote: list[str]) -> None:
    topics = GOOD_TOPICS.replace("orders,6", "orders,1000000000")
    status, stdout, stderr, out = evaluate(tmp_path, remote, membership=GOOD_MEMBERSHIP, topics=topics)
    assert status == 0, stderr
    assert errors_listed(stdout) == [
        (
            "g1: the group has 1,000,000,000 partitions, more than the ceiling of 10,000,000; if that is not a "
            "typo, raise it with the environment variable ASSIGNORS_MAX_PARTITIONS or "
            "assignors.set_size_limits(max_partitions=...)"
        )
    ]
    assert evaluated_groups(out)["g2"] == {None}


def test_every_group_failing_is_exit_2_after_listing_them(tmp_path: Path, remote: list[str]) -> None:
    topics = "topic,partitions\norders,-1\npayments,x\naudit,1.5\n"
    status, stdout, stderr, _ = evaluate(tmp_path, remote, membership=GOOD_MEMBERSHIP, topics=topics)
    assert status == 2
    assert [line.split(":")[0] for line in errors_listed(stdout)] == ["g1", "g2", "g3"]
    assert stderr.endswith(
        "assignors evaluate: error: no group could be evaluated: all 3 groups have input errors (listed above)\n"
    )


def test_duplicate_topics_rows_fail_every_group_naming_each_and_exit_2(tmp_path: Path, remote: list[str]) -> None:
    """Each topic twice with two counts: no group can be evaluated; the terminal names each and why."""
    topics = GOOD_TOPICS + "orders,7\npayments,5\naudit,2\n"
    status, stdout, stderr, _ = evaluate(tmp_path, remote, membership=GOOD_MEMBERSHIP, topics=topics)
    assert status == 2
    clash = "has rows with one valid_from and different partition counts"
    assert errors_listed(stdout) == [
        f"g1: snapshot 2024-05-01 12:00:00: topic 'orders' {clash} (6, 7)",
        f"g2: snapshot 2024-05-01 12:00:00: topic 'payments' {clash} (4, 5)",
        f"g3: snapshot 2024-05-01 12:00:00: topic 'audit' {clash} (2, 3)",
    ]
    assert stderr.endswith(
        "assignors evaluate: error: no group could be evaluated: all 3 groups have input errors (listed above)\n"
    )


@pytest.mark.parametrize(
    ("weights", "line", "problem"),
    [
        (
            "topic,partition,weight\norders,,1.0\norders,1,heavy\n",
            3,
            "column 'weight' is 'heavy', expected a finite number >= 0",
        ),
        (
            "topic,partition,weight\norders,,1.0\norders,1,-1\n",
            3,
            "column 'weight' is '-1', expected a finite number >= 0",
        ),
        (
            "topic,partition,weight\norders,,1.0\n\norders,x,2\n",
            4,
            "column 'partition' is 'x', expected an integer in 0..2147483647 (empty: every partition)",
        ),
    ],
    ids=["not-a-number", "negative", "bad-partition-after-a-blank-line"],
)
def test_a_bad_weight_names_its_file_line(
    tmp_path: Path, remote: list[str], weights: str, line: int, problem: str
) -> None:
    status, stdout, stderr, _ = evaluate(
        tmp_path, remote, membership=GOOD_MEMBERSHIP, topics=GOOD_TOPICS, weights=weights
    )
    assert (status, stdout) == (2, "")
    path = tmp_path / "weights.csv"
    assert stderr.splitlines()[-1] == f"assignors evaluate: error: weights table {path} line {line}: {problem}"


def test_malformed_tables_are_one_line_each(tmp_path: Path, remote: list[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"not a parquet file \x00\x01\x02")
    good_topics = tmp_path / "topics.csv"
    good_topics.write_text(GOOD_TOPICS, encoding="utf-8")
    cases = [
        (empty, f"{empty}: an empty directory, no table to read"),
        (
            garbage,
            (
                f"{garbage}: not a Parquet file: it does not start and end with PAR1; "
                "a CSV table must be a .csv file or a directory of .csv files"
            ),
        ),
    ]
    for number, (membership, message) in enumerate(cases):
        done = run(
            "--membership", str(membership), "--topics", str(good_topics), "--out", str(tmp_path / f"out{number}"),
            *remote,
        )  # fmt: skip
        assert "Traceback" not in done.stderr
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr.splitlines()[-1] == f"assignors evaluate: error: {message}"
    missing = tmp_path / "nope.csv"
    done = run(
        "--membership", str(missing), "--topics", str(good_topics), "--out", str(tmp_path / "out-missing"), *remote
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    assert (done.returncode, done.stdout) == (2, "")
    last = done.stderr.splitlines()[-1]
    assert last.startswith(f"assignors evaluate: error: {missing}: [PATH_NOT_FOUND] Path does not exist: ")
    assert str(missing) in last.split("Path does not exist: ")[1]


def test_a_wrong_schema_and_a_header_only_table_are_exit_2(tmp_path: Path, remote: list[str]) -> None:
    status, stdout, stderr, _ = evaluate(tmp_path, remote, membership="foo,bar\n1,2\n", topics=GOOD_TOPICS)
    assert (status, stdout) == (2, "")
    assert stderr.splitlines()[-1] == (
        "assignors evaluate: error: membership table: missing column 'group_id'; missing column 'snapshot_ts'; "
        "missing column 'member_id'; missing column 'topics'. Expected schema: group_id string, snapshot_ts "
        "timestamp, member_id string, topics array<string>, group_instance_id string, rack_id string"
    )
    header = tmp_path / "header"
    header.mkdir()
    status, stdout, stderr, _ = evaluate(
        header, remote, membership="group_id,snapshot_ts,member_id,topics\n", topics=GOOD_TOPICS
    )
    assert status == 2
    assert "0 groups, 0 snapshots, 0 groups with input errors" in stdout
    assert stderr.splitlines()[-1] == (
        f"assignors evaluate: error: no group to evaluate: the membership table {header / 'membership.csv'} has no rows"
    )


def test_a_bad_timestamp_on_a_classic_local_session(tmp_path: Path) -> None:
    """The same bad row on a local JVM session: the classic path names it the same way."""
    membership = GOOD_MEMBERSHIP.replace("g3,2024-05-01T12:00:00Z", "g3,2024-13-45T99:00:00Z")
    local = ["--master", "local[1]"]
    status, stdout, stderr, out = evaluate(tmp_path, local, membership=membership, topics=GOOD_TOPICS)
    assert status == 0, stderr
    path = tmp_path / "membership.csv"
    assert errors_listed(stdout) == [
        f"g3: membership table {path} line 7: column 'snapshot_ts' is '2024-13-45T99:00:00Z', expected {TIMESTAMP}"
    ]
    assert evaluated_groups(out)["g1"] == {None}


def test_a_csv_that_is_not_utf8_names_the_value_spark_read_and_its_line(tmp_path: Path, remote: list[str]) -> None:
    """A Latin-1 export: 'café' and 'cafè' would both read as 'caf\ufffd', one member; the group is refused."""
    latin1 = GOOD_MEMBERSHIP + "g4,2024-05-01T12:00:00Z,café,audit\ng4,2024-05-01T12:00:00Z,cafè,audit\n"
    path = tmp_path / "membership.csv"
    path.write_bytes(latin1.encode("latin-1"))
    (tmp_path / "topics.csv").write_text(GOOD_TOPICS, encoding="utf-8")
    done = run(
        "--membership", str(path), "--topics", str(tmp_path / "topics.csv"), "--out", str(tmp_path / "out"), *remote
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert errors_listed(done.stdout) == [
        f"g4: membership table {path} line 8: column 'member_id' is 'caf\ufffd', expected {UTF8}"
    ]
    groups = evaluated_groups(tmp_path / "out")
    assert {g for g, errors in groups.items() if errors == {None}} == {"g1", "g2", "g3"}


def test_parquet_values_are_checked_per_group_and_optional_columns_may_be_left_out(
    tmp_path: Path, remote: list[str]
) -> None:
    """pandas/pyarrow write a partition count as int64: 3,000,000,000 is its group's error, not a cast failure;
    a null member_id likewise; neither table has its optional columns (group_instance_id, rack_id, valid_from)."""
    noon = dt.datetime(2024, 5, 1, 12, tzinfo=dt.UTC)
    membership = {
        "group_id": ["g1", "g1", "g2", "g3"],
        "snapshot_ts": [noon] * 4,
        "member_id": ["a", "b", "c", None],
        "topics": [["orders"], ["orders"], ["payments"], ["audit"]],
    }
    topics = {"topic": ["orders", "payments", "audit"], "partitions": [6, 3_000_000_000, 3]}
    pq.write_table(pa.table(membership), tmp_path / "membership.parquet")
    pq.write_table(pa.table(topics), tmp_path / "topics.parquet")
    done = run(
        "--membership", str(tmp_path / "membership.parquet"), "--topics", str(tmp_path / "topics.parquet"),
        "--out", str(tmp_path / "out"), *remote,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    listed = errors_listed(done.stdout)
    assert listed[0] == "g2: partition count 3000000000 of topic='payments' must be an integer in 0..2147483647 (INT32)"
    assert listed[1].startswith("g3: snapshot 2024-05-01 ")
    assert listed[1].endswith(": a member row has a null or empty member_id")
    assert len(listed) == 2
    assert evaluated_groups(tmp_path / "out")["g1"] == {None}


def test_a_strategy_listed_twice_and_an_actual_table_of_another_shape_are_exit_2(
    tmp_path: Path, remote: list[str]
) -> None:
    twice = [*remote, "--strategies", "range", "sticky", "range"]
    status, stdout, stderr, _ = evaluate(tmp_path / "twice", twice, membership=GOOD_MEMBERSHIP, topics=GOOD_TOPICS)
    assert (status, stdout) == (2, "")
    assert stderr.splitlines()[-1] == (
        "assignors evaluate: error: strategy 'range' is listed twice; list each strategy once"
    )
    status, stdout, stderr, _ = evaluate(
        tmp_path / "actual", remote, membership=GOOD_MEMBERSHIP, topics=GOOD_TOPICS, actual=GOOD_TOPICS
    )
    assert (status, stdout) == (2, "")
    assert stderr.splitlines()[-1] == (
        "assignors evaluate: error: actual table: missing column 'group_id'; missing column 'snapshot_ts'; "
        "missing column 'generation'; missing column 'protocol'; missing column 'leader'; missing column "
        "'member_id'; missing column 'assigned'. Expected schema: group_id string, snapshot_ts timestamp, "
        "generation int, protocol string, leader string, member_id string, group_instance_id string, "
        "assigned array<string>"
    )
