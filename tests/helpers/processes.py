"""Group members in their own processes (the Java ``KafkaConsumer`` member, and Python consumers a test can
SIGKILL), read through the JSON lines they print, every wait bounded; each stopped or killed by its PID."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assignors.testing._process import Process, start
from helpers.group_log import Event
from helpers.kafka_jvm import classpath

JAVA_MEMBER = "dev.assignors.member.ConsumerMember"
PYTHON_MEMBER = Path(__file__).resolve().parent / "consumer_process.py"
LISTENER = frozenset({"assigned", "revoked", "lost"})
STOP_TIMEOUT_S = 40.0


def java_command(**options: str) -> list[str]:
    """The Java member (jvm/src/main/java/dev/assignors/member), as ``make jvm`` built it."""
    jvm = ["java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"]
    return [*jvm, "-cp", ":".join(classpath()), JAVA_MEMBER, *(f"{k}={v}" for k, v in options.items())]


def python_command(**options: str) -> list[str]:
    return [sys.executable, str(PYTHON_MEMBER), *(f"{k}={v}" for k, v in options.items())]


class ProcessMember:
    """One member process: its printed events (incrementally parsed), waits with deadlines, stop and kill.

    ``name`` is the member's client id, which the coordinator puts at the start of its member id. A restarted
    member is another ``ProcessMember`` (another incarnation) with the same client id.
    """

    def __init__(self, name: str, command: list[str], log_dir: Path, *, incarnation: str | None = None) -> None:
        self.name = name
        self.label = incarnation or name  # how the checks tell incarnations apart
        self.process: Process = start(self.label, command, log_dir)
        self.lines: list[dict[str, Any]] = []
        self._read = 0
        self._handed = 0
        self.stopped_at: float | None = None  # when SIGTERM was sent
        self.killed_at: float | None = None  # when SIGKILL was sent

    @property
    def pid(self) -> int:
        return self.process.pid

    def poll(self) -> list[dict[str, Any]]:
        """Parse what it printed since the last call (only complete lines that are JSON objects)."""
        with self.process.log.open("rb") as log:
            log.seek(self._read)
            data = log.read()
        complete = data.rfind(b"\n") + 1
        self._read += complete
        for raw in data[:complete].splitlines():
            if raw.startswith(b'{"'):
                self.lines.append(json.loads(raw))
        return self.lines

    def new_events(self) -> list[Event]:
        """Its listener events not handed out before (a :class:`GroupLog` source)."""
        self.poll()
        found = [
            Event(line["t"], self.label, line["e"], tuple(line["partitions"]))
            for line in self.lines[self._handed :]
            if line["e"] in LISTENER
        ]
        self._handed = len(self.lines)
        return found

    def wait_for(self, what: str, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60.0) -> dict[str, Any]:
        """The first line that satisfies ``predicate``; fails the test with the process's log after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            for line in self.poll():
                if predicate(line):
                    return line
            if not self.process.alive():
                pytest.fail(f"{self.label} exited ({self.process.popen.returncode}) before {what}:\n{self.tail()}")
            if time.monotonic() > deadline:
                pytest.fail(f"{self.label}: no {what} within {timeout} s:\n{self.tail()}")
            time.sleep(0.1)

    def stop(self) -> int | None:
        """SIGTERM (the member closes its consumer and leaves), SIGKILL if it lingers; its exit code."""
        if self.stopped_at is None and self.killed_at is None:
            self.stopped_at = time.monotonic()
        self.process.stop(timeout=STOP_TIMEOUT_S)
        self.poll()
        return self.process.popen.returncode

    def closed_cleanly(self) -> bool:
        """Stop it; whether it closed its consumer (printed ``closed``) and exited on SIGTERM's account: 0 for
        Python, 143 (128 + SIGTERM) for a JVM that ran its shutdown hook."""
        code = self.stop()
        return code in {0, 143} and any(line["e"] == "closed" for line in self.lines)

    def kill(self) -> None:
        """SIGKILL: a crash. Its partitions stop being held now; the coordinator learns at session expiry."""
        self.killed_at = time.monotonic()
        self.process.kill()
        self.poll()

    def tail(self, lines: int = 40) -> str:
        return self.process.tail(lines)
