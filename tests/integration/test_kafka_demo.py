"""``make kafka-demo``, run as the README shows it: a real broker, real groups, their history collected and evaluated.

The test runs the Makefile's recipe itself (``make kafka-demo``) with two changes a test needs: the output goes to a
temporary folder (``KAFKA_DEMO_OUT``), and make is told not to rebuild the venv or the jvm classpath (``-o``): the
suite runs inside that venv, and ``make jvm`` built the classpath it runs the broker from.

Checked: what the demo prints (the headline "Your cluster did ...; STRATEGY would have done ..." with real figures,
the self-check, the files it names), that the report holds the same headline, that the collected tables end where
the members' own observations end, and that nothing it started is left running.
"""

from __future__ import annotations

import html
import json
import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helpers.kafka_jvm import ROOT, classpath, kafka_version

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

HEADLINE = re.compile(
    r"Your cluster did pause (?P<pause>[\d,]+) partition-seconds, worst load (?P<load>[\d.]+)x the mean, "
    r"partitions moved (?P<moved>[\d,]+) \((?P<protocol>[A-Z, ]+)\); (?P<best>[\w-]+) \((?P<best_protocol>[A-Z]+)\) "
    r"would have done pause (?P<best_pause>[\d,]+) partition-seconds, worst load (?P<best_load>[\d.]+)x the mean, "
    r"partitions moved (?P<best_moved>[\d,]+)\."
)


@dataclass
class Demo:
    out: Path
    printed: str
    bootstrap: str


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    classpath()  # the jvm build is there (else: how to make it)
    out = tmp_path_factory.mktemp("kafka-demo") / "kafka-demo-output"
    venv = Path(sys.prefix)
    command = ["make", "--no-print-directory", "-o", f"{venv}/.installed-test", "-o", "jvm", "kafka-demo"]
    command += [f"VENV={venv}", f"KAFKA_VERSION={kafka_version()}", f"KAFKA_DEMO_OUT={out}"]
    done = subprocess.run(  # noqa: S603 - make, fixed arguments
        command, cwd=ROOT, capture_output=True, text=True, timeout=2400, check=False, env={**os.environ}
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-6000:]
    found = re.search(r"answers on (127\.0\.0\.1:\d+)", done.stdout)
    assert found is not None, done.stdout
    return Demo(out, done.stdout, found.group(1))


def _table(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


def test_it_prints_your_cluster_did_and_what_the_best_strategy_would_have_done(demo: Demo) -> None:
    """The headline, in the figures of the score: the recorded assignments' and the first replayed strategy's."""
    found = HEADLINE.search(demo.printed)
    assert found is not None, demo.printed
    assert found["best"] in {"uniform", "consumer-range", "cooperative-sticky", "sticky", "range", "roundrobin"}
    assert int(found["moved"].replace(",", "")) > 0  # the cluster did move partitions: joins, a crash, a scale-out
    assert int(found["best_moved"].replace(",", "")) > 0
    evaluation = _table(demo.out / "report" / "evaluation")
    recorded = [r for r in evaluation if r["strategy"] == "actual"]
    assert {r["group_id"] for r in recorded} == {"eager-range", "cooperative", "kip848"}
    assert all(r["error"] is None for r in evaluation)
    assert sum(r["moved"] for r in recorded) == int(found["moved"].replace(",", ""))
    assert sum(r["moved"] for r in evaluation if r["strategy"] == found["best"]) == int(
        found["best_moved"].replace(",", "")
    )


def test_the_report_holds_the_same_headline(demo: Demo) -> None:
    page = (demo.out / "report" / "report.html").read_text(encoding="utf-8")
    headline = re.search(r'<p class="headline" id="headline">(.*?)</p>', page)
    assert headline is not None
    printed = HEADLINE.search(demo.printed)
    assert printed is not None
    assert html.unescape(headline.group(1)) == printed.group(0)
    assert 'id="self-check"' in page


def test_the_replay_runs_the_kafka_release_collect_read_from_the_cluster(demo: Demo) -> None:
    """``collect`` wrote the broker's release (its ApiVersions) beside the tables; ``evaluate --actual`` replayed
    uniform and consumer-range as that release's newest patch and says so in its parameters."""
    from assignors.collect import NEWEST_PATCH, read_cluster_file

    release = ".".join(kafka_version().split(".")[:2])
    cluster = read_cluster_file(demo.out / "history" / "cluster.json")
    assert (cluster.release, cluster.broker, cluster.group_version) == (release, demo.bootstrap, 1)
    parameters = json.loads((demo.out / "report" / "parameters.json").read_text(encoding="utf-8"))
    row = next(p for p in parameters if p["parameter"] == "kafka_version")
    assert row["text"] == NEWEST_PATCH[release]
    assert row["source"].startswith(f"the cluster's own answer (Apache Kafka {release} (metadata.version up to")
    assert row["source"].endswith(f"cluster.json): {NEWEST_PATCH[release]}, the newest {release} patch")
    page = (demo.out / "report" / "report.html").read_text(encoding="utf-8")
    assert html.escape(f"the cluster's own answer (Apache Kafka {release}") in page


def test_the_self_check_reproduces_every_range_generation(demo: Demo) -> None:
    """aiokafka's members ran this project's range: every generation the broker recorded is reproduced."""
    rows = _table(demo.out / "report" / "self_check")
    assert {r["group_id"] for r in rows} == {"eager-range"}
    assert len(rows) >= 5  # one generation per step at least
    assert all(r["matched"] for r in rows), [r["mismatches"] for r in rows if not r["matched"]]
    assert f"self-check: {len(rows)} of {len(rows)} recorded range/roundrobin snapshots reproduced" in demo.printed


def test_the_tables_end_where_the_members_observations_end(demo: Demo) -> None:
    """The last recorded snapshot of each group is the steady state its members held after the last step (a, c, d
    and e: b crashed); each step's steady state is a recorded snapshot, in order; the protocols are the groups'."""
    observed = json.loads((demo.out / "observed.json").read_text(encoding="utf-8"))
    actual = _table(demo.out / "history" / "actual")
    protocols = {r["group_id"]: r["protocol"] for r in actual}
    assert protocols == {"eager-range": "range", "cooperative": "cooperative-sticky", "kip848": "uniform"}
    for group, steps in observed.items():
        assert [s["what"] for s in steps] == ["a joins", "b joins", "c joins", "b crashes (SIGKILL)", "d and e join"]
        assert sorted(steps[-1]["members"]) == ["a", "c", "d", "e"]
        snapshots: dict[Any, dict[str, list[str]]] = {}
        for row in actual:
            if row["group_id"] == group:
                snapshots.setdefault(row["snapshot_ts"], {})[row["member_id"]] = row["assigned"]
        recorded = [snapshots[ts] for ts in sorted(snapshots)]
        held = [{s["member_ids"][name]: parts for name, parts in s["members"].items()} for s in steps]
        assert recorded[-1] == held[-1], group
        position = 0
        for step in held:
            assert step in recorded[position:], (group, step)
            position = recorded.index(step, position) + 1


def test_it_names_its_output_files_and_leaves_nothing_running(demo: Demo) -> None:
    written = demo.printed[demo.printed.index("kafka-demo done") :]
    for path in ("history", "report/report.html", "observed.json"):
        assert f"{demo.out / path}:" in written
        assert (demo.out / path).exists()
    for table in ("membership", "actual", "topics"):
        assert (demo.out / "history" / table).is_dir()
    host, port = demo.bootstrap.split(":")
    with socket.socket() as probe:  # the broker is gone: nothing answers on its port
        assert probe.connect_ex((host, int(port))) != 0
    members = str(demo.out / "members")
    running = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if members in (proc / "cmdline").read_bytes().decode(errors="replace"):
                    running.append(proc.name)
            except OSError:
                continue
    assert running == []
