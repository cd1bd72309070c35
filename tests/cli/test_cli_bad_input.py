"""Bad input through the real ``assignors`` executable, without Spark: one line, a named error, no traceback.

Each case runs the installed entry point in a subprocess and pins the exit status and the exact message
(``assign`` size guards and results, ``collect --from-dump`` on dumps without group metadata, usage
errors of ``demo`` and ``evaluate`` that are refused before a Spark session starts), and the library's
size ceiling through the API.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import (
    AssignorError,
    Cluster,
    ConfigurationError,
    GroupTooLargeError,
    InvalidSubscriptionError,
    Subscription,
    get_assignor,
    set_size_limits,
    size_limits,
)
from assignors._assign import assign_snapshot
from assignors._core.snapshot import parse_snapshot
from assignors.consumer_group import server_assignor

EXECUTABLE = Path(sys.executable).with_name("assignors")
COLLECT_MISSING = find_spec("pyarrow") is None  # collect writes Parquet: the `collect` extra
SPARK_MISSING = find_spec("pyspark") is None  # evaluate: the `spark` extra
needs_collect = pytest.mark.skipif(COLLECT_MISSING, reason="needs the collect extra (pyarrow)")
needs_spark = pytest.mark.skipif(SPARK_MISSING, reason="needs the spark extra (pyspark)")
DUMP_LOG_KEY = 'key: {"type":"2","data":{"group":"group"}}'
DUMP_LOG_PAYLOAD = (
    'payload: {"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range","leader":"member",'
    '"currentStateTimestamp":-1,"members":[{"memberId":"member","groupInstanceId":"instance","clientId":"client",'
    '"clientHost":"host","rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],"userData":null,'
    '"ownedPartitions":[{"topic":"foo","partitions":[0]}],"generationId":0,"rackId":"rack"},"assignment":'
    '{"assignedPartitions":[{"topic":"foo","partitions":[0]}],"userData":null}}]}}'
)
GOOD_LINE = f"| offset: 0 CreateTime: 1700000000000 keySize: 11 valueSize: 300 {DUMP_LOG_KEY} {DUMP_LOG_PAYLOAD}"
OFFSET_COMMIT_LINE = (
    '| offset: 1 CreateTime: 1700000000000 key: {"type":"1","data":{"group":"g","topic":"t","partition":0}} '
    'payload: {"version":"3","data":{"offset":5,"leaderEpoch":-1,"metadata":"","commitTimestamp":1}}'
)


def cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the installed ``assignors`` executable; its status, stdout and stderr (never a traceback)."""
    assert EXECUTABLE.exists(), f"the assignors entry point is not installed next to {sys.executable}"
    done = subprocess.run(  # noqa: S603 - the project's own executable
        [str(EXECUTABLE), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


# --- assign: the size ceiling -------------------------------------------------------------


def test_a_billion_partitions_is_refused_at_once_naming_the_figure_and_how_to_raise_it(tmp_path: Path) -> None:
    snapshot = write(tmp_path / "s.json", {"topics": {"t": 1_000_000_000}, "members": {"a": {"topics": ["t"]}}})
    status, out, err = cli("assign", "--input", str(snapshot))
    assert (status, out) == (2, "")
    assert err == (
        "assignors assign: error: the group has 1,000,000,000 partitions, more than the ceiling of 10,000,000; "
        "if that is not a typo, raise it with the environment variable ASSIGNORS_MAX_PARTITIONS or "
        "assignors.set_size_limits(max_partitions=...)\n"
    )


def test_the_ceiling_is_raised_and_lowered_by_the_environment(tmp_path: Path) -> None:
    snapshot = write(
        tmp_path / "s.json", {"topics": {"t": 20}, "members": {"a": {"topics": ["t"]}, "b": {"topics": ["t"]}}}
    )
    status, _, err = cli(
        "assign", "--input", str(snapshot), "--strategy", "range", env={"ASSIGNORS_MAX_PARTITIONS": "19"}
    )
    assert status == 2
    assert "the group has 20 partitions, more than the ceiling of 19" in err
    status, out, err = cli(
        "assign", "--input", str(snapshot), "--strategy", "range", env={"ASSIGNORS_MAX_PARTITIONS": "20"}
    )
    assert (status, err) == (0, "")
    assert out.startswith("2 members, 1 topics, 20 partitions\n")
    status, _, err = cli("assign", "--input", str(snapshot), "--strategy", "range", env={"ASSIGNORS_MAX_MEMBERS": "1"})
    assert status == 2
    assert "the group has 2 members, more than the ceiling of 1; if that is not a typo, raise it with the " in err
    assert "ASSIGNORS_MAX_MEMBERS or assignors.set_size_limits(max_members=...)" in err


def test_a_ceiling_that_is_not_a_positive_integer_is_a_named_error(tmp_path: Path) -> None:
    snapshot = write(tmp_path / "s.json", {"topics": {"t": 2}, "members": {"a": {"topics": ["t"]}}})
    status, out, err = cli("assign", "--input", str(snapshot), env={"ASSIGNORS_MAX_PARTITIONS": "lots"})
    assert (status, out) == (2, "")
    assert err == (
        "assignors assign: error: environment variable ASSIGNORS_MAX_PARTITIONS='lots': expected a positive integer\n"
    )


@pytest.fixture
def limits_restored() -> Iterator[None]:
    yield
    set_size_limits()


@given(
    partitions=st.lists(st.integers(0, 40), min_size=1, max_size=4),
    members=st.integers(1, 6),
    max_partitions=st.integers(1, 100),
    max_members=st.integers(1, 8),
    name=st.sampled_from(["range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "consumer-range"]),
)
def test_every_assignor_refuses_exactly_the_groups_above_the_ceiling(
    partitions: list[int], members: int, max_partitions: int, max_members: int, name: str
) -> None:
    """A group is refused iff its subscribed partitions or its members exceed the ceiling; the error says which."""
    cluster = Cluster({f"t{i}": count for i, count in enumerate(partitions)})
    subscriptions = {f"m{i}": Subscription(sorted(cluster.partitions_per_topic)) for i in range(members)}
    assignor = server_assignor(name) if name in {"uniform", "consumer-range"} else get_assignor(name)
    set_size_limits(max_partitions=max_partitions, max_members=max_members)
    try:
        total = sum(partitions)
        if total > max_partitions or members > max_members:
            with pytest.raises(GroupTooLargeError) as raised:
                assignor.assign(cluster, subscriptions)
            error = raised.value
            assert isinstance(error, InvalidSubscriptionError)
            assert isinstance(error, AssignorError)
            expected = (
                ("partitions", total, max_partitions) if total > max_partitions else ("members", members, max_members)
            )
            assert (error.what, error.count, error.limit) == expected
        else:
            result = assignor.assign(cluster, subscriptions)
            assert sum(len(a.partitions) for a in result.values()) == total
    finally:
        set_size_limits()


@pytest.mark.usefixtures("limits_restored")
def test_set_size_limits_overrides_the_environment_and_checks_its_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSIGNORS_MAX_PARTITIONS", "5")
    assert size_limits().max_partitions == 5
    assert set_size_limits(max_partitions=7).max_partitions == 7
    assert set_size_limits().max_partitions == 5
    monkeypatch.delenv("ASSIGNORS_MAX_PARTITIONS")
    assert size_limits().max_partitions == 10_000_000
    assert size_limits().max_members == 1_000_000
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ConfigurationError, match="max_partitions must be a positive integer"):
            set_size_limits(max_partitions=bad)  # type: ignore[arg-type]


# --- assign: the small wrong results ----------------------------------------------------------

TWO_CLAIMS = {
    "topics": {"t": 2},
    "members": {
        "a": {"topics": ["t"], "owned": ["t-0"], "generation": 1},
        "b": {"topics": ["t"], "owned": ["t-0"], "generation": 1},
        "c": {"topics": ["t"]},
    },
}


def test_one_partition_claimed_by_two_members_is_withheld_once(tmp_path: Path) -> None:
    snapshot = write(tmp_path / "s.json", TWO_CLAIMS)
    status, out, err = cli("assign", "--input", str(snapshot), "--strategy", "cooperative-sticky")
    assert (status, err) == (0, "")
    assert "  round 1 withheld the 1 partition(s) that change owner;" in out
    status, out, err = cli("assign", "--input", str(snapshot), "--strategy", "cooperative-sticky", "--json")
    assert (status, err) == (0, "")
    (report,) = json.loads(out)
    assert report["first_round"]["withheld"] == 1


def test_assign_json_lists_are_sorted(tmp_path: Path) -> None:
    """Sticky keeps a member's owned partitions first; the JSON lists them sorted, as the text does."""
    snapshot = write(
        tmp_path / "s.json",
        {
            "topics": {"t": 12},
            "members": {
                "a": {"topics": ["t"], "owned": ["t-11", "t-10", "t-2"], "generation": 1},
                "b": {"topics": ["t"], "owned": ["t-9", "t-1"], "generation": 1},
                "c": {"topics": ["t"]},
            },
        },
    )
    status, out, err = cli("assign", "--input", str(snapshot), "--json")
    assert (status, err) == (0, "")
    for report in json.loads(out):
        for listed in [report["assignment"], report.get("first_round", {}).get("assignment", {})]:
            for partitions in listed.values():
                numbers = [int(p.rsplit("-", 1)[1]) for p in partitions]
                assert numbers == sorted(numbers), (report["strategy"], partitions)


# --- collect --from-dump ------------------------------------------------------------------------


@needs_collect
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "no group metadata found in DUMP: the file is empty"),
        (
            "# README\nThis is not a dump\n",
            (
                "no group metadata found in DUMP: no record decoded, 1 undecodable (first undecodable line 1: "
                "object 1 at character 0: invalid JSON at character 0: Expecting value)"
            ),
        ),
        (
            "\n\n  {not json",
            (
                "no group metadata found in DUMP: no record decoded, 1 undecodable (first undecodable line 3: "
                "object 1 at character 4: invalid JSON at character 5: "
                "Expecting property name enclosed in double quotes)"
            ),
        ),
        (
            f"batch header\n| offset: 3 key: {{oops}} payload: <DELETE>\n{OFFSET_COMMIT_LINE}\n",
            (
                "no group metadata found in DUMP: 1 records read (offset commits 1), 1 undecodable (first undecodable "
                "line 2: invalid JSON at column 18: Expecting property name enclosed in double quotes)"
            ),
        ),
        (
            b"\x89PNG\r\n\x1a\n\x00\x00binary",
            (
                "no group metadata found in DUMP: it is not a text dump (byte 0 is not UTF-8); give the output of "
                "kafka-dump-log.sh --offsets-decoder or of the GroupMetadataMessageFormatter"
            ),
        ),
    ],
    ids=["empty", "readme", "broken-json-on-line-3", "only-offset-commits", "binary"],
)
def test_a_dump_without_group_metadata_is_an_error_and_writes_nothing(
    tmp_path: Path, content: str | bytes, message: str
) -> None:
    dump = tmp_path / "dump.txt"
    if isinstance(content, bytes):
        dump.write_bytes(content)
    else:
        dump.write_text(content, encoding="utf-8")
    out = tmp_path / "out"
    status, printed, err = cli("collect", "--from-dump", str(dump), "--out", str(out))
    assert (status, printed) == (2, "")
    assert err == f"assignors collect: error: {message.replace('DUMP', str(dump))}\n"
    assert not out.exists()


@needs_collect
def test_a_partial_dump_prints_what_it_read_and_what_it_skipped(tmp_path: Path) -> None:
    dump = write(
        tmp_path / "dump.txt", f"{GOOD_LINE}\n| offset: 2 key: {{oops}} payload: <DELETE>\n{OFFSET_COMMIT_LINE}\n"
    )
    out = tmp_path / "out"
    status, printed, err = cli("collect", "--from-dump", str(dump), "--out", str(out))
    assert status == 0, err
    lines = printed.splitlines()
    assert lines[0] == "read: 2 records read (group metadata 1, offset commits 1); 1 snapshots of 1 groups"
    assert lines[1] == "skipped (why: count): undecodable 1"
    assert "skipped: line 2: invalid JSON at column 18: Expecting property name enclosed in double quotes" in lines
    assert lines[-1].startswith("next: assignors evaluate ")
    assert sorted(p.name for p in out.iterdir()) == ["actual", "membership", "topics"]


@needs_collect
@pytest.mark.parametrize(
    ("option", "content", "message"),
    [
        ("--topics", None, "--topics FILE: cannot read: No such file or directory"),
        ("--topics", '{"orders": ', "--topics FILE: invalid JSON at line 1 column 12: Expecting value"),
        (
            "--topics",
            '{"orders": 3000000000}',
            "--topics FILE: topic 'orders' has count 3000000000, expected an integer in 0..2147483647",
        ),
        (
            "--topics",
            "orders,6\n",
            "--topics FILE: expected JSON {topic: count} or CSV with a topic,partitions[,valid_from] header",
        ),
        (
            "--topics",
            "topic,partitions\norders,6\npayments,two\n",
            "--topics FILE line 3: topic 'payments' has count 'two', expected an integer in 0..2147483647",
        ),
        (
            "--topics",
            "topic,partitions,valid_from\norders,6,last tuesday\n",
            (
                "--topics FILE line 2: valid_from 'last tuesday': expected ISO 8601 (2026-01-31T12:00:00Z) "
                "or epoch milliseconds"
            ),
        ),
        (
            "--topics",
            b"topic,partitions\ncaf\xe9,6\n",
            "--topics FILE: not UTF-8 text (invalid continuation byte at byte 20)",
        ),
        ("--topic-ids", "[1]", "--topic-ids FILE: expected a JSON object {topic id: topic name}"),
        ("--topic-ids", None, "--topic-ids FILE: cannot read: No such file or directory"),
    ],
    ids=[
        "missing", "broken-json", "beyond-int32", "no-header", "not-a-number", "bad-valid-from", "latin-1",
        "ids-not-an-object", "ids-missing",
    ],
)  # fmt: skip
def test_a_bad_option_file_of_collect_is_one_line_and_writes_nothing(
    tmp_path: Path, option: str, content: str | bytes | None, message: str
) -> None:
    given = tmp_path / "given"
    if isinstance(content, bytes):
        given.write_bytes(content)
    elif content is not None:
        given.write_text(content, encoding="utf-8")
    dump = write(tmp_path / "dump.txt", f"{GOOD_LINE}\n")
    out = tmp_path / "out"
    status, printed, err = cli("collect", "--from-dump", str(dump), option, str(given), "--out", str(out))
    assert (status, printed) == (2, "")
    assert err == f"assignors collect: error: {message.replace('FILE', str(given))}\n"
    assert not out.exists()


@needs_collect
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "--properties FILE: cannot read: No such file or directory"),
        ("# comment\nsecurity.protocol\n", "--properties FILE line 2: 'security.protocol' is not key=value"),
        ("sasl.password hunter2-secret\n", "--properties FILE line 1: 'sasl.password ...' is not key=value"),
        ("hunter2-secret\n", "--properties FILE line 1: is not key=value (the line is not shown)"),
    ],
    ids=["missing", "not-key-value", "a-password-without-its-equals-sign", "a-lone-password"],
)
def test_a_bad_properties_file_is_refused_before_connecting(tmp_path: Path, content: str | None, message: str) -> None:
    given = tmp_path / "client.properties"
    if content is not None:
        given.write_text(content, encoding="utf-8")
    out = tmp_path / "out"
    status, printed, err = cli(
        "collect", "--bootstrap-servers", "127.0.0.1:1", "--properties", str(given), "--out", str(out)
    )
    assert (status, printed) == (2, "")
    assert err == f"assignors collect: error: {message.replace('FILE', str(given))}\n"
    assert not out.exists()


@needs_collect
def test_collect_out_that_is_a_file_is_refused(tmp_path: Path) -> None:
    dump = write(tmp_path / "dump.txt", f"{GOOD_LINE}\n")
    afile = write(tmp_path / "afile", "x")
    status, printed, err = cli("collect", "--from-dump", str(dump), "--out", str(afile))
    assert (status, printed) == (2, "")
    assert err == f"assignors collect: error: --out {afile}: is a file, not a directory\n"


INSTALL = "pip install 'assignors"


def test_without_its_extra_a_command_names_the_extra_to_install(tmp_path: Path) -> None:
    """Without the `collect` or `spark` extra (here hidden: importing pyarrow or pyspark fails, as where they are
    not installed), collect and evaluate say which extra to install, in one line, and write nothing."""
    hidden = tmp_path / "hidden"
    for name in ("pyarrow", "pyspark"):
        (hidden / name).mkdir(parents=True)
        write(hidden / name / "__init__.py", f"raise ImportError('no {name} here', name={name!r})\n")
    without = {"PYTHONPATH": str(hidden)}
    dump = write(tmp_path / "dump.txt", f"{GOOD_LINE}\n")
    collect = ("collect", "--from-dump", str(dump), "--out", str(tmp_path / "collected"))
    evaluate = ("evaluate", "--membership", "m.csv", "--topics", "t.csv", "--out", str(tmp_path / "evaluated"))
    collect_says = "assignors collect needs the collect extra (pyarrow is not installed)"
    assert cli(*collect, env=without) == (2, "", f"assignors collect: error: {collect_says}: {INSTALL}[collect]'\n")
    evaluate_says = "this command needs the spark extra (pyspark is not installed)"
    assert cli(*evaluate, env=without) == (2, "", f"assignors evaluate: error: {evaluate_says}: {INSTALL}[spark]'\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump.txt", "hidden"]


# --- evaluate and demo: refused before Spark starts -------------------------------------------------


@pytest.mark.parametrize("value", ["-3", "0", "three", "2.5"])
@pytest.mark.parametrize("option", ["--groups", "--snapshots"])
def test_demo_counts_below_one_are_usage_errors(tmp_path: Path, option: str, value: str) -> None:
    status, out, err = cli("demo", option, value, "--out", str(tmp_path / "demo"))
    assert (status, out) == (2, "")
    assert err.startswith("usage: assignors demo ")
    assert err.endswith(f"assignors demo: error: argument {option}: {value!r} is not a whole number >= 1\n")
    assert not (tmp_path / "demo").exists()


@needs_spark
def test_evaluate_out_that_is_a_file_or_under_one_is_refused(tmp_path: Path) -> None:
    afile = write(tmp_path / "afile", "x")
    for out, why in ((afile, ""), (afile / "sub", f" ({afile} is a file)")):
        status, printed, err = cli(
            "evaluate", "--membership", "m.csv", "--topics", "t.csv", "--out", str(out), "--master", "local[1]"
        )
        assert (status, printed) == (2, "")
        assert err == f"assignors evaluate: error: --out {out}: not a directory{why}\n"


@needs_spark
def test_evaluate_refuses_to_replace_an_evaluation(tmp_path: Path) -> None:
    (tmp_path / "out" / "evaluation").mkdir(parents=True)
    status, printed, err = cli(
        "evaluate", "--membership", "m.csv", "--topics", "t.csv", "--out", str(tmp_path / "out"), "--master", "local[1]"
    )
    assert (status, printed) == (2, "")
    evaluation = tmp_path / "out" / "evaluation"
    assert (
        err
        == f"assignors evaluate: error: {evaluation} already holds an evaluation; choose another --out or remove it\n"
    )


@needs_spark
@pytest.mark.parametrize(
    ("where", "message"),
    [
        (
            ["--master", "bogus://x"],
            "master 'bogus://x': expected local, local[N], local[*], spark://HOST:PORT, yarn or k8s://URL",
        ),
        (["--remote", "http://127.0.0.1:1"], "Spark Connect URL 'http://127.0.0.1:1': expected sc://HOST[:PORT]"),
        (
            ["--remote", "sc://127.0.0.1:99999"],
            "Spark Connect URL 'sc://127.0.0.1:99999': the port is not a number in 0..65535",
        ),
        (
            ["--remote", "sc://127.0.0.1:UNUSED"],
            "cannot reach a Spark Connect server at sc://127.0.0.1:UNUSED: Connection refused (waited up to 10 s)",
        ),
        (
            ["--master", "spark://127.0.0.1:UNUSED,localhost:UNUSED"],
            (
                "cannot reach a Spark master at spark://127.0.0.1:UNUSED,localhost:UNUSED: Connection refused; "
                "Connection refused (waited up to 10 s)"
            ),
        ),
        (
            ["--master", "spark://127.0.0.1:x"],
            "Spark master URL 'spark://127.0.0.1:x': the port is not a number in 0..65535",
        ),
        (["--report", "TMP"], "--report TMP: is a directory; give the file to write, e.g. TMP/report.html"),
        (["--report", "TMP/afile/report.html"], "--report TMP/afile/report.html: TMP/afile is a file"),
    ],
    ids=[
        "unknown-master", "not-sc", "bad-port", "nobody-listens", "no-standalone-master", "bad-master-port",
        "report-is-a-directory", "report-under-a-file",
    ],
)  # fmt: skip
def test_a_bad_master_remote_or_report_is_refused_before_spark_starts(
    tmp_path: Path, where: list[str], message: str
) -> None:
    """No JVM starts (no Java stack trace from SparkSubmit) and the client does not retry for minutes."""
    write(tmp_path / "afile", "x")
    with socket.socket() as unused:  # a port nobody listens on: bound, never listening
        unused.bind(("127.0.0.1", 0))
        port = str(unused.getsockname()[1])
        where = [w.replace("TMP", str(tmp_path)).replace("UNUSED", port) for w in where]
        for command in ("evaluate", "demo"):
            inputs = ["--membership", "m.csv", "--topics", "t.csv"] if command == "evaluate" else []
            out = tmp_path / f"out-{command}"
            status, printed, err = cli(command, *inputs, "--out", str(out), *where)
            assert (status, printed) == (2, "")
            expected = message.replace("TMP", str(tmp_path)).replace("UNUSED", port)
            assert err == f"assignors {command}: error: {expected}\n"
            assert not out.exists()


@given(
    partitions=st.integers(1, 8),
    claims=st.lists(st.sets(st.integers(0, 7), max_size=4), min_size=1, max_size=5),
    generations=st.lists(st.integers(1, 3), min_size=5, max_size=5),
)
def test_withheld_counts_each_partition_once(partitions: int, claims: list[set[int]], generations: list[int]) -> None:
    """Under cooperative-sticky, withheld is the number of distinct owned partitions whose first-round owner is not
    every member claiming them: never more than the partitions claimed, and more rounds exactly when it is not 0."""
    members = {
        f"m{i}": {
            "topics": ["t"],
            "owned": [f"t-{p}" for p in sorted(owned) if p < partitions],
            "generation": generations[i],
        }
        for i, owned in enumerate(claims)
    }
    snapshot = parse_snapshot({"topics": {"t": partitions}, "members": members})
    report = assign_snapshot(snapshot, "cooperative-sticky")
    claimed = {tp for s in snapshot.subscriptions.values() for tp in s.owned_partitions}
    first = report.first_round if report.first_round is not None else report.assignment
    owner = {tp: member for member, assignment in first.items() for tp in assignment.partitions}
    changing = {
        tp for member, s in snapshot.subscriptions.items() for tp in s.owned_partitions if owner.get(tp) != member
    }
    assert report.withheld == len(changing) <= len(claimed)
    assert (report.rounds > 1) == (report.withheld > 0)


def test_an_error_naming_a_line_break_stays_one_line(tmp_path: Path) -> None:
    snapshot = write(tmp_path / "s.json", {"topics": {"a\nb": None}})
    status, out, err = cli("assign", "--input", str(snapshot))
    assert (status, out) == (2, "")
    assert err == (
        "assignors assign: error: topics.a\\nb: expected a partition count (an integer in 0..2147483647), got None\n"
    )
