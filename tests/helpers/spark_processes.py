"""Spark processes for the tests: pyspark's own launchers, on 127.0.0.1, each stopped by its PID.

- :func:`start_connect_server`: ``spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer``
  with ``spark.connect.grpc.binding.address=127.0.0.1`` on a free port.
- :func:`start`: any launcher, e.g. the standalone master and workers of the cluster recipe
  (tests/helpers/cluster_recipe.py), which tests/spark/test_cluster.py starts.

Every process starts in its own session (process group), so stopping it by its PID also ends
the Python workers it forked. On Linux each also gets SIGTERM when the test process dies
(``PR_SET_PDEATHSIG``, set by util-linux's ``setpriv --pdeathsig`` in front of the command), so a
killed pytest leaves no server behind.

No process here is started with a ``preexec_fn``: that makes ``subprocess`` fork() and run the
``pthread_atfork`` handlers of the libraries the test process has loaded. gRPC's (the Spark
Connect client) restarts its poller thread in the child, the child's ``close_fds`` closes that
poller's epoll descriptor before exec, and gRPC aborts the child (SIGABRT, "epoll_wait error: Bad
file descriptor"). Without one, ``subprocess`` uses vfork(), which runs no such handlers.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

LOOPBACK = "127.0.0.1"


_SETPRIV = shutil.which("setpriv") if sys.platform == "linux" else None


def _past_setpriv(pid: int, timeout: float = 10.0) -> None:
    """Until process ``pid`` runs its own command: setpriv has set the death signal by then.

    ``Popen`` returns once setpriv itself is exec'd; a starter that died before setpriv's prctl
    would leave the command without its death signal.
    """
    assert _SETPRIV is not None
    launcher, deadline = os.path.realpath(_SETPRIV), time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if str(Path(f"/proc/{pid}/exe").readlink()) != launcher:
                return
        except OSError:  # exited already
            return
        time.sleep(0.001)
    msg = f"process {pid} was still setpriv after {timeout:.0f} s"
    raise RuntimeError(msg)


def spark_home() -> Path:
    """The Spark distribution inside the pyspark package (bin/, jars/)."""
    import pyspark

    return Path(pyspark.__file__).parent


_HANDED_OUT: set[int] = set()


def _below_the_ephemeral_range() -> range:
    """Ports under the kernel's ephemeral range: never given to a bind(0) or an outgoing connection."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return range(0)
    return range(20000, low)


def free_port() -> int:
    """A loopback port that is free now, and that no other socket takes before the server asks for it.

    A port from bind(0) is in the ephemeral range, which the kernel also hands to every outgoing connection (the
    Spark tests' own, a gRPC client's) between this probe and the server's bind; a port under that range is only
    ever taken by a server that names it. So: a random port under the range where there is one (Linux), never
    the same twice in this process, else bind(0).
    """
    candidates, pick = _below_the_ephemeral_range(), random.SystemRandom()
    for _ in range(200):
        port = pick.choice(candidates) if candidates else 0
        if port in _HANDED_OUT:
            continue
        with socket.socket() as probe:
            try:
                probe.bind((LOOPBACK, port))
            except OSError:
                continue
            chosen: int = probe.getsockname()[1]
        _HANDED_OUT.add(chosen)
        return chosen
    msg = f"no free port on {LOOPBACK}"
    raise RuntimeError(msg)


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
    )
    return env


@dataclass
class Process:
    """One started process, its log and how to stop it."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    _log_file: IO[bytes] = field(repr=False)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM its process group (it and the Python workers it forked), then SIGKILL if it lingers."""
        pid = self.popen.pid
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                self.popen.wait(timeout)
        with contextlib.suppress(ProcessLookupError):  # forked workers still in its group
            os.killpg(pid, signal.SIGKILL)
        self._log_file.close()

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def start(name: str, command: list[str], log_dir: Path, env: dict[str, str]) -> Process:
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"{name}.log"
    log_file = log.open("wb")
    popen = subprocess.Popen(  # noqa: S603 - pyspark's own launchers, fixed arguments
        [_SETPRIV, "--pdeathsig", "TERM", "--", *command] if _SETPRIV else command,
        stdout=log_file,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    if _SETPRIV:
        _past_setpriv(popen.pid)
    return Process(name, popen, log, log_file)


def wait_for_port(process: Process, port: int, timeout: float = 180.0) -> None:
    """Until ``port`` on loopback accepts connections; fails with the process's log if it exits or times out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.popen.poll() is not None:
            msg = f"{process.name} exited with {process.popen.returncode}:\n{process.tail()}"
            raise RuntimeError(msg)
        with socket.socket() as probe:
            probe.settimeout(1.0)
            if probe.connect_ex((LOOPBACK, port)) == 0:
                return
        time.sleep(0.5)
    msg = f"{process.name} did not listen on {LOOPBACK}:{port} within {timeout:.0f} s:\n{process.tail()}"
    raise RuntimeError(msg)


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
