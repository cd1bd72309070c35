"""Local server processes for tests: on 127.0.0.1, each stopped by its own PID, none outliving its starter.

Shared by :class:`assignors.testing.KafkaBroker` and the project's own test harnesses (Spark's servers, the Java
oracle). Standard library only.

- Every process starts in its own session (process group): stopping it by its PID also ends what it forked.
- On Linux each also gets SIGTERM when the starting process dies (``PR_SET_PDEATHSIG``, set by util-linux's
  ``setpriv --pdeathsig`` in front of the command), so a killed test run leaves no server behind.
- No process is started with a ``preexec_fn``: that makes ``subprocess`` fork() and run the ``pthread_atfork``
  handlers of the libraries already loaded. gRPC's (the Spark Connect client) restarts its poller thread in the
  child, the child's ``close_fds`` closes that poller's epoll descriptor before exec, and gRPC aborts the child
  (SIGABRT, "epoll_wait error: Bad file descriptor"). Without one, ``subprocess`` uses vfork(), which runs none.
- Ports come from under the kernel's ephemeral range (see :func:`free_port`).
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

LOOPBACK = "127.0.0.1"

_SETPRIV = shutil.which("setpriv") if sys.platform == "linux" else None
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

    A port from bind(0) is in the ephemeral range, which the kernel also hands to every outgoing connection
    between this probe and the server's bind; a port under that range is only ever taken by a server that names
    it. So: a random port under the range where there is one (Linux), never the same twice in this process,
    else bind(0).
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


def _past_setpriv(pid: int, timeout: float = 10.0) -> None:
    """Until process ``pid`` runs its own command: setpriv has set the death signal by then.

    ``Popen`` returns once setpriv itself is exec'd; a starter that died before setpriv's prctl would leave the
    command without its death signal.
    """
    assert _SETPRIV is not None  # noqa: S101 - callers check
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


@dataclass
class Process:
    """One started process, its log, and how to stop it."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    _log_file: IO[bytes] = field(repr=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM its process group (it and whatever it forked), then SIGKILL if it lingers."""
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
        with contextlib.suppress(ProcessLookupError):  # forked children still in its group
            os.killpg(pid, signal.SIGKILL)
        self._log_file.close()

    def kill(self, timeout: float = 30.0) -> None:
        """SIGKILL its process group at once: a crash, as a machine that loses power sees it."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout)
        self._log_file.close()

    def tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of its log."""
        return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def start(name: str, command: Sequence[str], log_dir: Path, env: Mapping[str, str] | None = None) -> Process:
    """Start ``command`` in its own session, output to ``log_dir/NAME.log``, dying with this process on Linux."""
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"{name}.log"
    log_file = log.open("wb")
    try:
        popen = subprocess.Popen(  # noqa: S603 - the caller's fixed command
            [_SETPRIV, "--pdeathsig", "TERM", "--", *command] if _SETPRIV else list(command),
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(os.environ if env is None else env),
            start_new_session=True,
        )
    except BaseException:
        log_file.close()
        raise
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
        time.sleep(0.2)
    msg = f"{process.name} did not listen on {LOOPBACK}:{port} within {timeout:.0f} s:\n{process.tail()}"
    raise RuntimeError(msg)
