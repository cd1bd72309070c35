"""The test processes' launcher: a started process dies with the process that started it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")
def test_a_started_process_stops_when_its_starter_dies(tmp_path: Path) -> None:
    """A pytest killed mid-session leaves no Spark server behind: the child gets SIGTERM with its parent."""
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from spark_processes import start\n"
        f"child = start('sleeper', ['sleep', '120'], Path({str(tmp_path)!r}), dict(os.environ))\n"
        "print(child.popen.pid, flush=True)\n"
        "os._exit(0)  # no clean-up: as if killed\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)  # noqa: S603
    pid = int(done.stdout)
    try:
        deadline = time.monotonic() + 10
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's exit is reaped by init)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").split()[2] != "Z"
    except FileNotFoundError:
        return False
