"""The benchmark runner's bookkeeping (RESULTS.md is rendered from the JSON runs alone, --only selects) and its Java
side: Kafka's own assignors timed on exactly our groups, their results checked, the ratio rendered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from benchmarks import __main__ as benchmarks_main
from benchmarks import java
from benchmarks.__main__ import (
    DEMO_LABEL,
    NO_REASON,
    RESULTS_DIR,
    RESULTS_MD,
    SLOWER_HEADING,
    _java_available,
    main,
    render,
    selected,
    why_slower,
)
from benchmarks.case import run_case, workload_of

from assignors import (
    COOPERATIVE_STICKY_ASSIGNOR_NAME,
    RANGE_ASSIGNOR_NAME,
    ROUNDROBIN_ASSIGNOR_NAME,
    STICKY_ASSIGNOR_NAME,
    Assignment,
    Cluster,
    Subscription,
    TopicPartition,
)
from assignors.consumer_group import UNIFORM_ASSIGNOR_NAME
from helpers import java_oracle, kafka_jvm
from helpers.java_oracle import JavaOracle, bench_assignments


def test_results_md_is_exactly_the_rendering_of_the_recorded_runs() -> None:
    """One source of truth: the committed RESULTS.md is what `python -m benchmarks --render` writes."""
    assert RESULTS_MD.read_text(encoding="utf-8") == render(RESULTS_DIR)


def test_only_selects_by_every_word() -> None:
    assert selected("", "spark evaluation")
    assert selected("spark", "spark evaluation")
    assert not selected("sticky", "spark evaluation")
    assert selected(
        "Sticky RACKS cooperative", "sticky racks 500x2000, 2000 members, 3 racks, fresh cooperative-sticky"
    )
    assert not selected("sticky racks range", "sticky racks 500x2000, 2000 members, 3 racks, fresh sticky")


def test_each_row_is_its_cases_latest_run(tmp_path: Path) -> None:
    def run(date: str, median: float) -> dict[str, object]:
        case = {"section": "range/roundrobin", "workload": "10x20, 20 members (small group)", "assignor": "range"}
        figures = {"target_s": None, "median_s": median, "min_s": median, "max_s": median, "peak_rss_mb": 16.0}
        return {"date": date, "python": "3.11", "cores": 2, "machine": "x86_64", "cases": [case | figures]}

    (tmp_path / "2026-01-01T00-00-00Z.json").write_text(json.dumps(run("2026-01-01", 0.002)), encoding="utf-8")
    (tmp_path / "2026-02-01T00-00-00Z.json").write_text(json.dumps(run("2026-02-01", 0.001)), encoding="utf-8")
    text = render(tmp_path)
    assert "| 1.0 ms | 1.0-1.0 ms | 16 MB |  |  |  |  | 2026-02-01 |" in text
    assert "2.0 ms" not in text
    out = tmp_path / "RESULTS.md"
    assert main(["--render", "--results", str(tmp_path), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == text


# --- Kafka's Java beside ours ---------------------------------------------------------------------------------------

TINY = {"workload": "identical", "args": [3, 4, 5], "repeat": 3, "warmup_s": 0.05, "warmup": 2}


def _java_classpath() -> list[str]:
    """The oracle's build (skips with how to make it, fails under CI=true), as the bench finds it."""
    kafka_jvm.classpath()
    path, why = java.classpath()
    assert path, why
    return path


@pytest.mark.parametrize(
    ("assignor", "round_"),
    [
        (RANGE_ASSIGNOR_NAME, 1),
        (ROUNDROBIN_ASSIGNOR_NAME, 1),
        (STICKY_ASSIGNOR_NAME, 2),
        (COOPERATIVE_STICKY_ASSIGNOR_NAME, 2),
        (UNIFORM_ASSIGNOR_NAME, 2),
    ],
)
def test_java_times_our_group_and_its_result_is_checked(
    assignor: str, round_: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Java gets exactly our case's group (a 2nd round: our round 1's owned partitions); a wrong answer fails."""
    _java_classpath()
    spec = {**TINY, "assignor": assignor, "round": round_}
    given: list[dict[str, Subscription]] = []
    real_bench = JavaOracle.bench

    def spy(self: JavaOracle, name: str, cluster: Cluster, subscriptions: dict[str, Subscription], **kw: Any) -> Any:
        given.append(dict(subscriptions))
        return real_bench(self, name, cluster, subscriptions, **kw)

    monkeypatch.setattr(JavaOracle, "bench", spy)
    figures = java.run_java_case(spec)
    assert given == [workload_of(spec).subscriptions]
    if round_ == 2:
        owners = [member for member, s in sorted(given[0].items()) if s.owned_partitions]
        assert owners == sorted(given[0])[1:]  # every member but the first owns its part of our round 1
    assert figures["kafka"] == kafka_jvm.kafka_version()
    assert figures["warmup_calls"] >= TINY["warmup"]
    assert 0 < figures["min_s"] <= figures["median_s"] <= figures["max_s"]

    def one_twice(answer: Any, *, server: bool = False) -> dict[str, Assignment]:
        result = bench_assignments(answer, server=server)
        giver, taker = sorted(result, key=lambda m: (-len(result[m].partitions), m))[:2]
        return {**result, taker: Assignment((*result[taker].partitions, result[giver].partitions[0]))}

    monkeypatch.setattr(java_oracle, "bench_assignments", one_twice)
    with pytest.raises(AssertionError, match="exactly once"):
        java.run_java_case(spec)


def test_java_eager_sticky_2nd_round_sees_the_owned_partitions(tmp_path: Path) -> None:
    """The eager StickyAssignor reads a member's previous assignment from its user data alone: the bench sends what
    Kafka's client would, so Java keeps every owned partition of a balanced, fully owned group (without that user
    data it would assign from scratch)."""
    members = [f"c{i}" for i in range(4)]
    # not what a fresh assignment gives (that is c0: a-0 b-0, c1: a-1 b-1, ...)
    owned = {m: [TopicPartition("a", (i + 1) % 4), TopicPartition("b", (i + 2) % 4)] for i, m in enumerate(members)}
    subscriptions = {m: Subscription(["a", "b"], owned_partitions=owned[m], generation_id=3) for m in members}
    cluster = Cluster({"a": 4, "b": 4})
    with JavaOracle.start(_java_classpath(), tmp_path) as oracle:
        kept = oracle.bench(
            STICKY_ASSIGNOR_NAME, cluster, subscriptions, runs=1, warmup_s=0, warmup=1, client_user_data=True,
            result=True,
        )  # fmt: skip
        fresh = oracle.bench(STICKY_ASSIGNOR_NAME, cluster, subscriptions, runs=1, warmup_s=0, warmup=1, result=True)
    assert {m: sorted(a.partitions) for m, a in bench_assignments(kept).items()} == owned
    assert {m: sorted(a.partitions) for m, a in bench_assignments(fresh).items()} != owned


def test_a_row_with_java_renders_its_median_and_the_ratio(tmp_path: Path) -> None:
    """Our tiny case and Java's, measured here, render side by side with ours / Java."""
    _java_classpath()
    spec = {**TINY, "assignor": STICKY_ASSIGNOR_NAME, "round": 2}
    ours, theirs = run_case(spec), java.run_java_case(spec)
    case = {"section": "sticky small", "workload": "10x20, 20 members, 2nd round (owned partitions)"}
    record = {**case, "assignor": STICKY_ASSIGNOR_NAME, "target_s": None, **ours, "java": theirs}
    run = {"date": "2026-03-01", "python": "3.11", "cores": 2, "machine": "x86_64", "cases": [record]}
    (tmp_path / "2026-03-01T00-00-00Z.json").write_text(json.dumps(run), encoding="utf-8")
    text = render(tmp_path)
    factor = ours["median_s"] / theirs["median_s"]
    digits = f"{factor:.2f}x" if factor >= 0.1 else f"{factor:.3f}x"
    shown = digits if factor <= 1 else f"**{digits}**"
    java_ms = theirs["median_s"] * 1000
    median = f"{java_ms:.1f} ms" if java_ms >= 1 else f"{java_ms:.3f} ms"
    row = next(line for line in text.splitlines() if line.startswith("| sticky small"))
    assert row.endswith(f"| {median} | {shown} |  | 2026-03-01 |"), row  # CPU: both below 50 ms
    assert f"Kafka {kafka_jvm.kafka_version()} on " in text
    assert (SLOWER_HEADING in text) == (factor > 1)


def _recorded(median: float, java_median: float | None, section: str = "range/roundrobin") -> dict[str, Any]:
    figures = {"target_s": None, "median_s": median, "min_s": median, "max_s": median, "peak_rss_mb": 16.0}
    label = "10x20, 20 members (small group)"
    record: dict[str, Any] = {"section": section, "workload": label, "assignor": "roundrobin"}
    if java_median is not None:
        record["java"] = {"median_s": java_median, "kafka": "4.4.0", "jvm": "JVM 17"}
    return {**record, **figures}


def test_slower_rows_say_why_and_an_unexplained_one_is_flagged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    because = {
        ("range/roundrobin", "10x20, 20 members (small group)", "roundrobin"): "exact",
        ("range/roundrobin", "", "roundrobin"): "by section",
        ("", "", "roundrobin"): "by assignor",
    }
    monkeypatch.setattr(benchmarks_main, "SLOWER_BECAUSE", because)
    run = {"date": "2026-03-01", "python": "3.11", "cores": 2, "machine": "x86_64", "cases": [_recorded(0.004, 0.001)]}
    (tmp_path / "2026-03-01T00-00-00Z.json").write_text(json.dumps(run), encoding="utf-8")
    text = render(tmp_path)
    assert "| 4.0 ms | 4.0-4.0 ms | 16 MB |  | 1.0 ms | **4.00x** |  | 2026-03-01 |" in text
    assert "- range/roundrobin, 10x20, 20 members (small group), roundrobin (4.00x): exact" in text.splitlines()
    assert why_slower({**_recorded(0.004, 0.001), "workload": "other"}) == "by section"
    assert why_slower(_recorded(0.004, 0.001, section="other")) == "by assignor"
    assert why_slower({**_recorded(0.004, 0.001), "assignor": "nobody"}) == NO_REASON
    del because["range/roundrobin", "10x20, 20 members (small group)", "roundrobin"]
    assert "roundrobin (4.00x): by section" in render(tmp_path)


def test_a_ratio_far_below_one_keeps_its_digits(tmp_path: Path) -> None:
    run = {"date": "2026-03-01", "python": "3.11", "cores": 2, "machine": "x86_64", "cases": [_recorded(0.01, 4.3)]}
    (tmp_path / "2026-03-01T00-00-00Z.json").write_text(json.dumps(run), encoding="utf-8")
    assert "| 4300.0 ms | 0.002x |  |" in render(tmp_path)


def test_faster_rows_and_rows_without_java_list_nothing(tmp_path: Path) -> None:
    run = {"date": "2026-03-01", "python": "3.11", "cores": 2, "machine": "x86_64", "cases": [_recorded(0.001, 0.002)]}
    (tmp_path / "2026-03-01T00-00-00Z.json").write_text(json.dumps(run), encoding="utf-8")
    text = render(tmp_path)
    assert "| 1.0 ms | 1.0-1.0 ms | 16 MB |  | 2.0 ms | 0.50x |  | 2026-03-01 |" in text
    assert SLOWER_HEADING not in text
    run["cases"] = [_recorded(0.001, None)]
    (tmp_path / "2026-03-01T00-00-00Z.json").write_text(json.dumps(run), encoding="utf-8")
    assert "| 1.0 ms | 1.0-1.0 ms | 16 MB |  |  |  |  | 2026-03-01 |" in render(tmp_path)


def test_the_cpu_ratio_shows_where_both_sides_took_long_enough_to_tell(tmp_path: Path) -> None:
    record = _recorded(0.4, 0.2)
    record["cpu_median_s"], record["java"]["cpu_median_s"] = 0.3, 0.1
    run = {"date": "2026-03-01", "python": "3.11", "cores": 2, "machine": "x86_64", "cases": [record]}
    (tmp_path / "2026-03-01T00-00-00Z.json").write_text(json.dumps(run), encoding="utf-8")
    assert "| 200.0 ms | **2.00x** | 3.00x | 2026-03-01 |" in render(tmp_path)
    record["java"]["cpu_median_s"] = 0.04  # below CPU_RATIO_FLOOR_S: the JVM counts CPU in 10 ms ticks
    (tmp_path / "2026-03-01T00-00-00Z.json").write_text(json.dumps(run), encoding="utf-8")
    assert "| 200.0 ms | **2.00x** |  | 2026-03-01 |" in render(tmp_path)


def test_every_committed_row_slower_than_java_says_why() -> None:
    assert NO_REASON not in RESULTS_MD.read_text(encoding="utf-8")


def test_without_java_the_bench_says_so_in_one_line(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.setattr(java, "classpath", lambda: ([], "no `java` on PATH"))
    assert not _java_available(no_java=False)
    assert capsys.readouterr().out.splitlines() == [
        "Kafka's Java assignors are not timed in this run: no `java` on PATH. Our rows only."
    ]
    assert not _java_available(no_java=True)
    assert capsys.readouterr().out == ""


def test_the_timed_demo_renders_under_the_spark_evaluation(tmp_path: Path) -> None:
    """`python -m benchmarks.spark_demo`'s figures, its latest run, with the target; a failed run says why."""

    def run(date: str, demo: dict[str, Any]) -> dict[str, Any]:
        return {"date": date, "python": "3.11", "cores": 2, "machine": "x86_64", "cases": [], "demo": demo}

    timed = {"groups": 150, "snapshots": 48, "runs_s": [21.04, 17.5, 17.01], "median_s": 17.5, "target_s": 20.0}
    (tmp_path / "2026-01-01T00-00-00Z.json").write_text(json.dumps(run("2026-01-01", timed)), encoding="utf-8")
    text = render(tmp_path)
    assert "## Spark evaluation" in text
    assert "`assignors demo --groups 150` (150 groups x 48 snapshots of the demo's sample history" in text
    assert "median 17.5 s (runs 21.0, 17.5, 17.0 s; <= 20 s ok), 2026-01-01." in text
    slow = {**timed, "runs_s": [25.0, 24.0, 26.0], "median_s": 25.0}
    (tmp_path / "2026-02-01T00-00-00Z.json").write_text(json.dumps(run("2026-02-01", slow)), encoding="utf-8")
    assert "median 25.0 s (runs 25.0, 24.0, 26.0 s; <= 20 s **over**), 2026-02-01." in render(tmp_path)
    failed = {"groups": 150, "error": "fails: no Java"}
    (tmp_path / "2026-03-01T00-00-00Z.json").write_text(json.dumps(run("2026-03-01", failed)), encoding="utf-8")
    assert "`assignors demo --groups 150` (2026-03-01): fails: no Java" in render(tmp_path)
    assert selected("demo", DEMO_LABEL)
    assert selected("spark", DEMO_LABEL)
    assert not selected("evaluation", DEMO_LABEL)


def test_the_spark_row_says_how_far_it_is_from_issue_36s_baseline(tmp_path: Path) -> None:
    """The Spark row's evaluations/s against the baseline's, Spark's and plain Python's, with the 1.5x target."""
    figures = {
        "groups": 10,
        "snapshots": 5,
        "membership_rows": 100,
        "evaluations": 200,
        "rebalances": 40,
        "plain_s": 1.0,
        "spark_evaluate_s": 1.0,
        "spark_wall_s": 2.0,
        "overhead": 1.0,
        "evaluations_per_s_spark": 6075.0,
        "evaluations_per_s_plain": 2624.0,
        "same_output": True,
    }

    def rendered(date: str, **changes: float) -> str:
        run = {"date": date, "python": "3.11", "cores": 2, "machine": "x86_64", "cases": []}
        run["spark"] = {**figures, **changes, "date": date}
        (tmp_path / f"{date}T00-00-00Z.json").write_text(json.dumps(run), encoding="utf-8")
        return render(tmp_path)

    text = rendered("2026-01-01")
    assert (
        "Against 2026-11-26 (4,050 evaluations/s on Spark, 2,624 in plain Python): Spark 1.50x (>= 1.5x ok),"
        " plain Python 1.00x." in text
    )
    assert "Spark 1.48x (>= 1.5x **short**)" in rendered("2026-02-01", evaluations_per_s_spark=6000.0)
