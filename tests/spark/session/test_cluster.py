"""The evaluation on a real Spark standalone cluster, run by the recipe docs/spark.md and the README show.

The recipe's steps (tests/helpers/cluster_recipe.py, compared with both pages' text by
tests/docs/test_cluster_recipe.py) run here in order, with the test's own places: the wheel built with ``pip
wheel``; two virtualenvs made with ``python -m venv``, the executors' with pandas and pyarrow, the driver's with
plotly too, neither with this project, so the wheel is what they import; ``SPARK_HOME`` from the pyspark package, as
the pages' command prints it; a master and two workers on 127.0.0.1 (free ports, work directories under
``tmp_path``); ``spark-submit --py-files`` the wheel with ``file://`` inputs. Then a Spark Connect server on the
same cluster and executors, and ``assignors evaluate --remote`` against it. Both outputs equal a local run's. Every
process is stopped by its PID.
"""

from __future__ import annotations

import importlib.metadata
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from helpers.cluster_recipe import DRIVER_PACKAGES, SPARK_HOME_COMMAND, STRATEGIES, Places, Step, Worker, steps
from helpers.spark_processes import (
    Process,
    free_port,
    spark_home,
    start,
    start_connect_server,
    wait_for_port,
    without_spark,
)
from spark_udfs import evaluate_history
from spark_udfs.demo.sample import generate_history
from spark_udfs.replay import MEMBERSHIP_COLUMNS, TOPICS_COLUMNS, ddl

pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("cluster")]  # its own JVMs: beside the spark group

ROOT = Path(__file__).parents[3]


def _run(command: list[str], *, timeout: float, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(  # noqa: S603 - the recipe's commands
        command, capture_output=True, text=True, check=False, timeout=timeout, env=env, cwd=ROOT
    )
    assert done.returncode == 0, f"{command[:4]} exited with {done.returncode}:\n{done.stdout}\n{done.stderr[-4000:]}"
    return done.stdout


def _places(tmp_path: Path) -> Places:
    """The recipe on this machine: the SPARK_HOME the pages' command prints, free ports, paths under tmp_path."""
    home = _run([sys.executable, *shlex.split(SPARK_HOME_COMMAND)[1:]], timeout=60).strip()
    assert Path(home) == spark_home()
    cluster = tmp_path / "cluster"
    return Places(
        python=sys.executable,
        spark_home_value=home,
        spark_home=home,
        executors=str(tmp_path / "executors"),
        driver=str(tmp_path / "driver"),
        master_port=free_port(),
        master_webui_port=free_port(),
        workers=tuple(Worker(free_port(), free_port(), str(cluster / f"worker-{i}")) for i in range(2)),
        wheel_dir=str(tmp_path / "dist"),
        version=importlib.metadata.version("assignors"),
        data=tmp_path.as_uri(),
        pins={name: importlib.metadata.version(name) for name in DRIVER_PACKAGES},  # pip's cache serves them
    )


def _run_recipe(recipe: list[Step], processes: list[Process], log_dir: Path) -> str:
    """Each step in order, as a shell would; background processes go to ``processes``. Returns the last's output."""
    # A reader's shell: without Spark's variables and without anything that would find the project.
    env, printed = without_spark("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV", "VIRTUAL_ENV"), ""
    for index, step in enumerate(recipe):
        if not step.argv:
            env.update(step.env)
        elif step.background:
            name = f"{index:02d}-{step.argv[1].rsplit('.', 1)[-1].lower()}"
            process = start(name, list(step.argv), log_dir, env)
            processes.append(process)
            wait_for_port(process, int(step.option("--port")))
        else:
            printed = _run(list(step.argv), timeout=600, env={**env, **dict(step.env)})
    return printed


def test_standalone_cluster_equals_the_local_run(spark: SparkSession, tmp_path: Path) -> None:
    places = _places(tmp_path)
    recipe = steps(places)
    history = generate_history(6, 6, seed=5)
    inputs = tmp_path / "history"
    spark.createDataFrame(history.membership, ddl(MEMBERSHIP_COLUMNS)).write.parquet(str(inputs / "membership"))
    spark.createDataFrame(history.topics, ddl(TOPICS_COLUMNS)).write.parquet(str(inputs / "topics"))
    membership, topics = spark.read.parquet(str(inputs / "membership")), spark.read.parquet(str(inputs / "topics"))
    local = evaluate_history(membership, topics, strategies=STRATEGIES)

    processes: list[Process] = []
    remote_out = tmp_path / "remote-out"
    try:
        printed = _run_recipe(recipe, processes, tmp_path / "cluster")
        # A Spark Connect server on the same cluster, its executors on the same virtualenv without the
        # project: the client ships the packages (spark_udfs.session.ship_packages).
        server, url = start_connect_server(
            tmp_path / "connect",
            master=places.master_url,
            python=f"{places.executors}/bin/python",
            conf={"spark.executor.memory": "768m"},
        )
        processes.append(server)
        remote = subprocess.run(  # noqa: S603
            [sys.executable, "-m", "assignors", "evaluate", "--remote", url,
             "--membership", (inputs / "membership").as_uri(), "--topics", (inputs / "topics").as_uri(),
             "--out", remote_out.as_uri(), "--report", str(tmp_path / "remote-report.html"),
             "--strategies", *STRATEGIES],
            capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip
    finally:
        for process in reversed(processes):
            process.stop()
    assert len(processes) == 4  # a master, two workers, the Connect server
    assert all(process.popen.poll() is not None for process in processes)
    for venv in (places.executors, places.driver):  # neither has the project: driver and executors import the wheel
        no_project = subprocess.run([f"{venv}/bin/python", "-c", "import assignors"], capture_output=True, check=False)  # noqa: S603
        assert no_project.returncode == 1
    assert remote.returncode == 0, f"{remote.stdout}\n{remote.stderr[-4000:]}\n{server.tail()}"
    assert "6 groups, 36 snapshots" in remote.stdout
    assert "6 groups, 36 snapshots" in printed
    out = tmp_path / "eval"
    assert (out / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    drop = ["assign_ms"]
    cluster_rows = sorted(map(str, spark.read.parquet(str(out / "evaluation")).drop(*drop).collect()))
    local_rows = sorted(map(str, local.drop(*drop).collect()))
    assert len(local_rows) == 36 * len(STRATEGIES)
    assert cluster_rows == local_rows
    remote_rows = sorted(map(str, spark.read.parquet(str(remote_out / "evaluation")).drop(*drop).collect()))
    assert remote_rows == local_rows
    for worker in places.workers:  # the executors ran on both workers
        assert list(Path(worker.work_dir).glob("app-*/*/stderr"))
