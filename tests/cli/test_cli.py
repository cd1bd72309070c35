"""`assignors assign`: the example snapshot pinned, the library's results, one-line errors for every bad input."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import (
    Cluster,
    RangeAssignor,
    RoundRobinAssignor,
    Subscription,
    TopicPartition,
    parse_topic_partition,
)
from assignors.cli import main
from assignors.metrics import check_assignment
from assignors.testing import Group, groups

EXAMPLE = Path(__file__).parents[2] / "src" / "assignors" / "examples" / "snapshot.json"
PREFIX = "assignors assign: error: "


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["assign", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def reports(capsys: pytest.CaptureFixture[str], path: Path, *strategies: str) -> dict[str, dict[str, Any]]:
    chosen = [arg for name in strategies for arg in ("--strategy", name)]
    status, out, err = run(capsys, "--input", str(path), "--json", *chosen)
    assert (status, err) == (0, "")
    return {report["strategy"]: report for report in json.loads(out)}


def test_example_range_and_roundrobin_are_kafkas(capsys: pytest.CaptureFixture[str]) -> None:
    """The bundled snapshot, worked by hand with Kafka's rules.

    Order: static members first by instance id (7f3a is checkout-1, 02c9 checkout-2), then c815, e0d1.
    Range: orders and payments (6 partitions each, same subscribers) are co-partitioned and rack-aware
    (racks a, b, c, c); 4 consumers give 1 each plus 2 extra. p0 {a,b} -> 7f3a; p1 {b,c} -> 02c9;
    p2 {c,a} -> 7f3a (now at 2, the first extra); p3 {a,b} -> 02c9 (the second extra); p4 {b,c}: 02c9
    is full -> c815; p5 {c,a} -> e0d1. audit has no racks: plain ranges over 7f3a, 02c9, e0d1.
    RoundRobin: audit, orders, payments in name order around 7f3a, 02c9, c815, e0d1, skipping c815 on audit.
    """
    got = reports(capsys, EXAMPLE, "range", "roundrobin")
    assert got["range"]["assignment"] == {
        "consumer-02c9": ["audit-1", "orders-1", "orders-3", "payments-1", "payments-3"],
        "consumer-7f3a": ["audit-0", "orders-0", "orders-2", "payments-0", "payments-2"],
        "consumer-c815": ["orders-4", "payments-4"],
        "consumer-e0d1": ["audit-2", "orders-5", "payments-5"],
    }
    assert got["range"]["balance"] == {"min_load": 2, "max_load": 5, "spread": 3, "stddev": 1.299}
    # owned: 7f3a o0 o1 p0 p1 a0 keeps o0 p0 a0; 02c9 o2 o3 p2 p3 a1 keeps o3 p3 a1; c815 keeps o4 p4;
    # moved: o1 p1 o2 p2 (to other survivors), o5 p5 (c815 -> e0d1), a2 (c815 -> e0d1).
    assert got["range"]["movement"] == {"moved": 7, "retained": 8, "released": 0, "revoked": 15}
    assert got["range"]["rounds"] == 1
    assert got["roundrobin"]["assignment"] == {
        "consumer-02c9": ["audit-1", "orders-1", "orders-5", "payments-3"],
        "consumer-7f3a": ["audit-0", "orders-0", "orders-4", "payments-2"],
        "consumer-c815": ["orders-2", "payments-0", "payments-4"],
        "consumer-e0d1": ["audit-2", "orders-3", "payments-1", "payments-5"],
    }


def test_example_sticky_strategies_settle_balanced(capsys: pytest.CaptureFixture[str]) -> None:
    """Sticky keeps 10 of the 15 owned partitions; cooperative-sticky reaches as much in two rounds.

    c815 owns audit-2 without subscribing to audit, so at least that partition moves; the other
    moves bring off-rack partitions home (KIP-881), never at the cost of balance.
    """
    got = reports(capsys, EXAMPLE, "sticky", "cooperative-sticky")
    snapshot = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    cluster = Cluster({topic: 3 if topic == "audit" else 6 for topic in snapshot["topics"]})
    for name in ("sticky", "cooperative-sticky"):
        report = got[name]
        assignment = {m: [parse_topic_partition(p) for p in ps] for m, ps in report["assignment"].items()}
        subscribed = {m: Subscription(spec["topics"]) for m, spec in snapshot["members"].items()}
        assert check_assignment(cluster, subscribed, assignment) == []
        assert report["balance"]["spread"] == 1
        assert report["movement"]["retained"] == 10
    assert got["sticky"]["rounds"] == 1
    assert "first_round" not in got["sticky"]
    cooperative = got["cooperative-sticky"]
    assert cooperative["rounds"] == 2
    assert cooperative["movement"]["revoked"] == cooperative["movement"]["moved"] == 5
    # Round 1 gives nobody a partition that another member still owns: e0d1, new, gets nothing yet.
    first = cooperative["first_round"]
    assert first["withheld"] == 5
    assert first["assignment"]["consumer-e0d1"] == []
    owned = {p: m for m, spec in snapshot["members"].items() for p in spec.get("owned", [])}
    for member, partitions in first["assignment"].items():
        assert all(owned.get(p, member) == member for p in partitions)


def test_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    """The text form: a header, one line per member with its partitions sorted, the figures."""
    status, out, err = run(capsys, "--input", str(EXAMPLE), "--strategy", "range", "--strategy", "cooperative-sticky")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[:3] == [
        "4 members, 3 topics, 15 partitions",
        "== range (EAGER)",
        "  consumer-02c9     5  audit-1 orders-1 orders-3 payments-1 payments-3",
    ]
    assert lines[6] == (
        "  balance: min 2, max 5, spread 3, stddev 1.299  |  vs owned: kept 8, moved 7, released 0, revoked 15"
    )
    assert lines[7] == "== cooperative-sticky (COOPERATIVE, settles in 2 rounds)"
    assert lines[-1].startswith("  round 1 withheld the 5 partition(s) that change owner")


def snapshot_json(group: Group) -> dict[str, Any]:
    """A generated group as the command's snapshot JSON (owned claims beyond the metadata dropped)."""
    cluster = group.cluster
    topics: dict[str, Any] = {}
    for topic, count in cluster.partitions_per_topic.items():
        racks = [sorted(cluster.racks_of(TopicPartition(topic, p))) for p in range(count)]
        topics[topic] = {"partitions": count, "racks": racks} if any(racks) else count
    members: dict[str, Any] = {}
    for member, sub in group.subscriptions.items():
        spec: dict[str, Any] = {"topics": list(sub.topics), "generation": sub.generation_id}
        spec["owned"] = [
            str(tp) for tp in sub.owned_partitions if tp.partition < (cluster.partition_count(tp.topic) or 0)
        ]
        if sub.rack_id is not None:
            spec["rack"] = sub.rack_id
        if sub.group_instance_id is not None:
            spec["group_instance_id"] = sub.group_instance_id
        members[member] = spec
    return {"topics": topics, "members": members}


def assign_json(data: object, *args: str) -> tuple[int, str, str]:
    """Run the command on ``data`` written to a file (hypothesis cannot share a function-scoped tmp_path)."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "snapshot.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["assign", "--input", str(path), "--json", *args])
    return status, out.getvalue(), err.getvalue()


@given(groups(owned=True, max_members=6))
def test_reports_the_librarys_assignments(group: Group) -> None:
    """Range and RoundRobin print exactly what the library assigns; every strategy's result is valid."""
    status, out, err = assign_json(snapshot_json(group))
    assert (status, err) == (0, "")
    got = {report["strategy"]: report for report in json.loads(out)}
    assert list(got) == ["range", "roundrobin", "sticky", "cooperative-sticky"]
    for name, assignor in (("range", RangeAssignor()), ("roundrobin", RoundRobinAssignor())):
        expected = assignor.assign(group.cluster, group.subscriptions)
        assert got[name]["assignment"] == {m: [str(tp) for tp in a.partitions] for m, a in expected.items()}
    for report in got.values():
        assignment = {m: [parse_topic_partition(p) for p in ps] for m, ps in report["assignment"].items()}
        assert check_assignment(group.cluster, group.subscriptions, assignment) == []


BAD_SNAPSHOTS: list[tuple[object, str]] = [
    ([1, 2], "snapshot: expected an object, got array"),
    ({"topics": {}, "members": {}, "extra": 1}, "snapshot: unknown field(s) ['extra']"),
    ({"topics": {"t": -1}}, "topics.t: expected a partition count (an integer in 0..2147483647), got -1"),
    ({"topics": {"t": 2.5}}, "topics.t: expected a partition count (an integer in 0..2147483647), got 2.5"),
    ({"topics": {"t": True}}, "topics.t: expected a partition count (an integer in 0..2147483647), got True"),
    ({"topics": {"t": 2**31}}, "topics.t: expected a partition count (an integer in 0..2147483647), got 2147483648"),
    ({"topics": {"t": {"count": 2}}}, "topics.t: unknown field(s) ['count']"),
    ({"topics": {"t": {"partitions": 2, "racks": ["a", "b"]}}}, "topics.t.racks[0]: expected an array, got string"),
    ({"topics": {"t": {"partitions": 1, "racks": [["a"], ["b"]]}}}, "names partition 't-1', but topic='t' has 1"),
    ({"topics": {"t": {"partitions": 1, "racks": [[7]]}}}, "rack 7 of partition 't-0' must be a string"),
    ({"topics": {"": 1}}, "topics: expected a non-empty string, got ''"),
    ({"members": []}, "members: expected an object, got array"),
    ({"members": {"m": []}}, "members.m: expected an object, got array"),
    ({"members": {"m": {}}}, "members.m: missing field 'topics'"),
    ({"members": {"m": {"topics": "t"}}}, "members.m.topics: expected an array, got string"),
    ({"members": {"m": {"topics": [1]}}}, "members.m: topics must be non-empty strings, got 1"),
    ({"members": {"m": {"topics": [], "owner": []}}}, "members.m: unknown field(s) ['owner']"),
    ({"topics": {"t": 2}, "members": {"m": {"topics": ["t"], "owned": ["t-5"]}}},
     "members.m.owned[0]: partition 't-5' is not in the snapshot's topics"),
    ({"topics": {"t": 2}, "members": {"m": {"topics": ["t"], "owned": ["t"]}}},
     "members.m.owned[0]: partition 't' must look like 'topic-<partition number>'"),
    ({"topics": {"t": 2}, "members": {"m": {"topics": ["t"], "owned": [0]}}},
     "members.m.owned[0]: expected 'topic-partition', got 0"),
    ({"topics": {"t": 2}, "members": {"m": {"topics": ["t"], "owned": ["t-0", "t-0"]}}},
     "members.m: owned_partitions lists partition 't-0' twice"),
    ({"members": {"m": {"topics": [], "generation": "3"}}}, "members.m: generation_id='3' must be an integer"),
    ({"members": {"m": {"topics": [], "generation": 2**31}}}, "members.m: generation_id=2147483648 must be an integer"),
    ({"members": {"m": {"topics": [], "rack": 5}}}, "members.m: rack_id=5 must be a string or None"),
    ({"members": {"m": {"topics": [], "group_instance_id": ""}}}, "members.m: group_instance_id='' must be"),
    ({"members": {"": {"topics": []}}}, "members: expected a non-empty string, got ''"),
    # an empty topic key is named before any of its partitions is built from the racks
    ({"topics": {"": {"partitions": 1, "racks": [["a"]]}}}, "topics: expected a non-empty string, got ''"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), BAD_SNAPSHOTS)
def test_bad_snapshot_is_one_line_naming_the_field(data: object, message: str) -> None:
    status, out, err = assign_json(data)
    assert (status, out) == (2, "")
    assert err.startswith(PREFIX)
    assert message in err
    assert err.count("\n") == 1


def test_unreadable_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing file, bytes that are not UTF-8 and broken JSON: one line each, exit status 2."""
    missing = tmp_path / "missing.json"
    assert run(capsys, "--input", str(missing)) == (
        2,
        "",
        f"{PREFIX}{missing}: cannot read: No such file or directory\n",
    )
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'{"topics": "\xff"}')
    assert run(capsys, "--input", str(binary)) == (
        2,
        "",
        f"{PREFIX}{binary}: not UTF-8 text (invalid start byte at byte 12)\n",
    )
    broken = tmp_path / "broken.json"
    broken.write_text('{"topics": {"t": 1}', encoding="utf-8")
    assert run(capsys, "--input", str(broken)) == (
        2,
        "",
        f"{PREFIX}{broken}: invalid JSON at line 1 column 20: Expecting ',' delimiter\n",
    )


def test_unknown_strategy_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["assign", "--input", str(EXAMPLE), "--strategy", "nope"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


JSON_LEAVES = (
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=6)
)
JSON = st.recursive(
    JSON_LEAVES,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)


def mostly(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Seven times in eight a well-formed value, else any JSON at all (so the deep checks get reached too).

    ``one_of`` would drop repeated branches, so the odds come from a drawn number; it shrinks towards valid.
    """
    return st.integers(0, 7).flatmap(lambda odds: JSON if odds == 7 else valid)


NAMES = st.sampled_from(["t", "u", "", "t-1"])
TOPIC_KEYS = st.integers(0, 7).map(lambda odds: "" if odds == 7 else ("t", "u", "t-1")[odds % 3])
PARTITIONS = mostly(st.sampled_from(["t-0", "t-1", "u-0", "t-9", "t", "-1", "t--1", "t-2147483648"]))
RACKS = st.lists(st.lists(mostly(st.sampled_from(["a", "b", ""])), max_size=2), max_size=4)
TOPIC_SPECS = mostly(
    st.integers(-1, 4)
    | st.fixed_dictionaries({"partitions": mostly(st.integers(-1, 3))}, optional={"racks": mostly(RACKS)})
)
MEMBER_SPECS = mostly(
    st.fixed_dictionaries(
        {"topics": mostly(st.lists(mostly(NAMES), max_size=3))},
        optional={
            "owned": mostly(st.lists(PARTITIONS, max_size=3)),
            "generation": mostly(st.integers(-3, 3)),
            "rack": mostly(st.sampled_from(["a", "b", ""])),
            "group_instance_id": mostly(st.sampled_from(["i1", "i2", ""])),
        },
    )
)
SNAPSHOTS = mostly(
    st.fixed_dictionaries(
        {"topics": mostly(st.dictionaries(TOPIC_KEYS, TOPIC_SPECS, max_size=3))},
        optional={
            "members": mostly(st.dictionaries(st.sampled_from(["m1", "m2", "m3", ""]), MEMBER_SPECS, max_size=4))
        },
    )
)


@given(SNAPSHOTS)
def test_any_json_gives_a_report_or_one_line(data: object) -> None:
    """Whatever the JSON, the command prints valid reports (status 0) or one error line (status 2)."""
    status, out, err = assign_json(data)
    if status == 0:
        assert err == ""
        assert [report["strategy"] for report in json.loads(out)] == [
            "range",
            "roundrobin",
            "sticky",
            "cooperative-sticky",
        ]
    else:
        assert (status, out) == (2, "")
        assert err.startswith(PREFIX)
        assert err.count("\n") == 1
