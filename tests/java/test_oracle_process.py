"""The oracle's own failure modes: a JVM that dies, answers garbage or hangs fails the test with its stderr."""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest

from assignors import Cluster, Subscription
from helpers.java_oracle import JavaError, JavaOracle, OracleError


def _fake_java(tmp_path: Path, body: str) -> JavaOracle:
    """An oracle whose ``java`` is a shell script playing a broken JVM."""
    script = tmp_path / "java"
    script.write_text(f'#!/bin/sh\necho \'{{"ready": "0"}}\'\n{body}\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return JavaOracle.start(["x"], tmp_path, java=str(script), timeout=10)


def test_garbage_fails_with_stderr(tmp_path: Path) -> None:
    oracle = _fake_java(tmp_path, 'read line; echo "the cause" >&2; echo "not json"; sleep 30')
    with oracle, pytest.raises(OracleError, match=r"(?s)answered garbage.*the cause"):
        oracle.request({"op": "version"})


def test_death_fails_with_stderr(tmp_path: Path) -> None:
    oracle = _fake_java(tmp_path, 'read line; echo "dying words" >&2; exit 3')
    with oracle, pytest.raises(OracleError, match=r"(?s)died.*dying words"):
        oracle.request({"op": "version"})


def test_silence_times_out(tmp_path: Path) -> None:
    oracle = _fake_java(tmp_path, "sleep 30")
    with oracle, pytest.raises(OracleError, match="no answer within 1 s"):
        oracle.request({"op": "version"}, timeout=1)
    assert oracle.popen.poll() is not None  # stopped by its PID


def test_kafka_refusing_is_an_answer(oracle: JavaOracle) -> None:
    """Kafka's code throwing is a JavaError naming the exception, and the oracle keeps serving."""
    with pytest.raises(JavaError, match="unknown classic assignor"):
        oracle.assign("nonsense", Cluster({"t": 1}), {"m": Subscription(["t"])})
    assert oracle.request({"op": "version"})["version"] == oracle.version


def test_killed_oracle_fails_the_next_request(oracle: JavaOracle, tmp_path: Path) -> None:
    """A second JVM like the session's (whose classpath it reuses), killed: the next request fails."""
    args = [str(arg) for arg in oracle.popen.args]  # type: ignore[union-attr] # started with a list
    spare = JavaOracle.start(args[args.index("-cp") + 1].split(os.pathsep), tmp_path)
    try:
        os.killpg(spare.popen.pid, signal.SIGKILL)
        spare.popen.wait(10)
        with pytest.raises(OracleError, match=r"not running|died"):
            spare.request({"op": "version"})
    finally:
        spare.stop()
