"""Spark processes for the tests: pyspark's own launchers, on 127.0.0.1, each stopped by its PID.

- :func:`start_connect_server`: ``spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer``
  with ``spark.connect.grpc.binding.address=127.0.0.1`` on a free port.
- :func:`start`: any launcher, e.g. the standalone master and workers of the cluster recipe
  (tests/helpers/cluster_recipe.py), which tests/spark/session/test_cluster.py starts.

How processes are started, stopped and given ports (their own session, a death signal, no
``preexec_fn``, ports under the ephemeral range) is :mod:`assignors.testing._process`, which the
Kafka broker of the real-group tests shares.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from assignors.testing._process import LOOPBACK, Process, free_port, start, wait_for_port

__all__ = [
    "LOOPBACK",
    "TEST_JVM_OPTIONS",
    "Process",
    "free_port",
    "loopback_env",
    "spark_home",
    "start",
    "start_connect_server",
    "wait_for_port",
    "without_spark",
]

TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"
"""The Java options of the tests' Spark JVMs (``SPARK_SUBMIT_OPTS``, which ``spark-submit`` gives the JVM it starts):
C1 only. A test's JVM lives seconds to minutes on small inputs, where C2's compiling costs more than it wins: an
``assignors evaluate`` of a 3-member history on ``local[1]`` used 28 s of CPU instead of 47 s (a new local session of
``spark_udfs.session`` runs C1 only too, through ``spark.driver.extraJavaOptions``; a cluster keeps its own).
"""


def spark_home() -> Path:
    """The Spark distribution inside the pyspark package (bin/, jars/)."""
    import pyspark

    return Path(pyspark.__file__).parent


def without_spark(*also: str) -> dict[str, str]:
    """This process's environment without Spark's variables (``SPARK_*``, ``PYSPARK_*``) and the names ``also``."""
    return {k: v for k, v in os.environ.items() if k not in also and not k.startswith(("PYSPARK_", "SPARK_"))}


def loopback_env(python: str = sys.executable) -> dict[str, str]:
    """The environment of a Spark process: loopback only, Python workers on ``python``."""
    env = without_spark()
    env.update(
        SPARK_HOME=str(spark_home()),
        SPARK_LOCAL_IP=LOOPBACK,
        SPARK_LOCAL_HOSTNAME="localhost",
        PYSPARK_PYTHON=python,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        SPARK_SUBMIT_OPTS=TEST_JVM_OPTIONS,
    )
    return env


def start_connect_server(
    log_dir: Path, *, master: str = "local[2]", python: str = sys.executable, conf: dict[str, str] | None = None
) -> tuple[Process, str]:
    """A Spark Connect server on a free loopback port, its Python workers on ``python``; returns it and its URL.

    ``conf``: more Spark settings (``--conf``), e.g. the executors' memory on a standalone ``master``.
    """
    port = free_port()
    home = spark_home()
    command = [
        str(home / "bin" / "spark-submit"),
        "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--master", master,
        "--conf", f"spark.connect.grpc.binding.address={LOOPBACK}",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", f"spark.driver.host={LOOPBACK}",
        "--conf", f"spark.driver.bindAddress={LOOPBACK}",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.shuffle.partitions=8",
        "--conf", "spark.python.worker.reuse=true",
        "--conf", f"spark.pyspark.python={python}",
        *(item for key, value in (conf or {}).items() for item in ("--conf", f"{key}={value}")),
        "spark-internal",
    ]  # fmt: skip
    server = start("spark-connect-server", command, log_dir, loopback_env(python))
    try:
        wait_for_port(server, port)
    except BaseException:
        server.stop()
        raise
    return server, f"sc://{LOOPBACK}:{port}"
