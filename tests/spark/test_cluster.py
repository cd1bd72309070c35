"""The evaluation on a real Spark standalone cluster, run the way docs/spark.md tells users to run it.

A master and two workers from the pyspark package on 127.0.0.1; the project built as a wheel and
shipped with ``--py-files``; the executors run a virtualenv that has pandas and pyarrow but not
this project, so the wheel is what they import; the driver's virtualenv has plotly too (it renders
the report) and not the project either; inputs and output as ``file://`` URIs. Then a Spark
Connect server on the same cluster and executors, and ``assignors evaluate --remote`` against it.
Both outputs equal a local run's. Every process is stopped by its PID.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_processes import LOOPBACK, loopback_env, spark_home, start_connect_server, start_standalone_cluster
from spark_udfs import evaluate_history
from spark_udfs.replay import MEMBERSHIP_COLUMNS, TOPICS_COLUMNS, ddl
from spark_udfs.sample import generate_history

pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("cluster")]  # its own JVMs: beside the spark group

ROOT = Path(__file__).parents[2]
STRATEGIES = ("range", "sticky", "cooperative-sticky")


def _run(command: list[str], *, timeout: float, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=timeout, env=env)  # noqa: S603
    assert done.returncode == 0, f"{command[:4]} exited with {done.returncode}:\n{done.stdout}\n{done.stderr[-4000:]}"
    return done.stdout


def _build_wheel(dist: Path) -> Path:
    """``pip wheel --no-deps -w dist .``, as docs/spark.md says."""
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(ROOT)], timeout=300)
    (wheel,) = dist.glob("assignors-*.whl")
    return wheel


EXECUTOR_PACKAGES = ("pandas", "pyarrow")  # the pandas UDFs
DRIVER_PACKAGES = (*EXECUTOR_PACKAGES, "plotly")  # and the report, which the driver writes


def _venv(where: Path, packages: tuple[str, ...]) -> Path:
    """A virtualenv with ``packages`` (this process's versions, so pip's cache serves them) and no project."""
    venv.EnvBuilder(with_pip=True, system_site_packages=False, clear=True).create(where)
    python = where / "bin" / "python"
    wanted = [f"{name}=={importlib.metadata.version(name)}" for name in packages]
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PIP_REQUIRE_VIRTUALENV"}}
    _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *wanted], timeout=600, env=env)
    return python


def test_standalone_cluster_equals_the_local_run(spark: SparkSession, tmp_path: Path) -> None:
    history = generate_history(6, 6, seed=5)
    inputs = tmp_path / "input"
    spark.createDataFrame(history.membership, ddl(MEMBERSHIP_COLUMNS)).write.parquet(str(inputs / "membership"))
    spark.createDataFrame(history.topics, ddl(TOPICS_COLUMNS)).write.parquet(str(inputs / "topics"))
    membership, topics = spark.read.parquet(str(inputs / "membership")), spark.read.parquet(str(inputs / "topics"))
    local = evaluate_history(membership, topics, strategies=STRATEGIES)

    wheel = _build_wheel(tmp_path / "dist")
    python = _venv(tmp_path / "executor-venv", EXECUTOR_PACKAGES)
    driver = _venv(tmp_path / "driver-venv", DRIVER_PACKAGES)
    for where in (python, driver):  # neither has the project: driver and executors import the wheel
        no_project = subprocess.run([str(where), "-c", "import assignors"], capture_output=True, check=False)  # noqa: S603
        assert no_project.returncode == 1

    processes, master = start_standalone_cluster(tmp_path / "cluster", python=str(python))
    out, remote_out = tmp_path / "out", tmp_path / "remote-out"
    try:
        env = loopback_env(str(python))
        env["PYSPARK_DRIVER_PYTHON"] = str(driver)
        env.pop("PYTHONPATH", None)
        printed = _run(
            [str(spark_home() / "bin" / "spark-submit"),
             "--master", master,
             "--conf", f"spark.driver.host={LOOPBACK}",
             "--conf", f"spark.pyspark.python={python}",
             "--conf", f"spark.pyspark.driver.python={driver}",
             "--executor-memory", "768m",
             "--py-files", str(wheel),
             str(ROOT / "src" / "spark_udfs" / "submit.py"),
             "evaluate",
             "--membership", (inputs / "membership").as_uri(),
             "--topics", (inputs / "topics").as_uri(),
             "--out", out.as_uri(),
             "--strategies", *STRATEGIES],
            timeout=600,
            env=env,
        )  # fmt: skip
        # A Spark Connect server on the same cluster, its executors on the same virtualenv without the
        # project: the client ships the packages (spark_udfs.session.ship_packages).
        server, url = start_connect_server(
            tmp_path / "connect", master=master, python=str(python), conf={"spark.executor.memory": "768m"}
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
    assert remote.returncode == 0, f"{remote.stdout}\n{remote.stderr[-4000:]}\n{server.tail()}"
    assert "6 groups, 36 snapshots" in remote.stdout
    assert all(process.popen.poll() is not None for process in processes)
    assert "6 groups, 36 snapshots" in printed
    assert (out / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    drop = ["assign_ms"]
    cluster_rows = sorted(map(str, spark.read.parquet(str(out / "evaluation")).drop(*drop).collect()))
    local_rows = sorted(map(str, local.drop(*drop).collect()))
    assert len(local_rows) == 36 * len(STRATEGIES)
    assert cluster_rows == local_rows
    remote_rows = sorted(map(str, spark.read.parquet(str(remote_out / "evaluation")).drop(*drop).collect()))
    assert remote_rows == local_rows
    app_logs = list((tmp_path / "cluster").glob("worker-*/app-*/*/stderr"))
    assert app_logs  # the executors ran on the two workers
