"""Kafka's own Java classic assignors, driven from Python: what a group of Java consumers runs.

This project's ``sticky`` and ``cooperative-sticky`` balance at least as well as Kafka's ``StickyAssignor`` and
``CooperativeStickyAssignor``, and can move other partitions. A group of Java consumers (and, close to them,
librdkafka's, whose sticky assignor is a port of Java's) runs Kafka's. :func:`java_assignor` gives an assignor whose
``assign`` is Kafka's own class, unmodified, run by a JVM, so that a history can be replayed under both
(``assignors evaluate --kafka-jars``: the strategies ``java-sticky`` and ``java-cooperative-sticky``).

- **Kafka's jars** come from the user: :func:`kafka_classpath` takes a Kafka installation (``KAFKA_HOME`` or its
  ``libs``), a directory of jars, a classpath, or a file listing one (``make jvm``'s ``classpath.txt``). It needs
  ``kafka-clients`` and ``slf4j-api``; nothing is downloaded.
- **The JVM** runs ``KafkaAssignors.java`` (beside this module) as a single-file source program (JEP 330; Java 11
  and later: Spark 4 needs Java 17, so wherever the evaluation runs, ``java`` is there). One JVM per Java command
  and classpath per process, started at the first ``assign``, in its own session, given SIGTERM when this process
  dies (Linux, util-linux's ``setpriv --pdeathsig``), and stopped by its PID at exit (:func:`stop_jvms`).
- **The wire** is Kafka's: each member's subscription goes as ``ConsumerProtocol`` bytes
  (:func:`assignors.consumer_protocol.encode_subscription`), each assignment comes back the same way.
- **Each member's own state** (what the sticky assignors put in their subscription's user data) is this project's
  sticky assignors', which write Kafka's bytes for it: the Java ``StickyAssignor``'s previous assignment and
  generation, the ``CooperativeStickyAssignor``'s generation.

Failures: Kafka's code throwing for an input is :class:`JavaAssignorError` (its class and message); a JVM that
cannot start, dies, or does not answer within the timeout is :class:`JavaProcessError`, whose message ends with the
JVM's own last lines. Both are :class:`~assignors.AssignorError`.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, NoReturn

from assignors._builtin.range import RangeAssignor
from assignors._builtin.round_robin import RoundRobinAssignor
from assignors._builtin.sticky.assignor import CooperativeStickyAssignor, StickyAssignor
from assignors._core.errors import AssignorError, ConfigurationError, ProtocolError
from assignors._core.model import Assignment, Cluster, MemberId, Subscription
from assignors._wire.consumer_protocol import decode_assignment, encode_subscription
from assignors._wire.flex import FlexReader

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = [
    "DIFFERENT_FROM_OURS",
    "JAVA_ASSIGNORS",
    "JavaAssignor",
    "JavaAssignorError",
    "JavaCooperativeStickyAssignor",
    "JavaProcessError",
    "JavaRangeAssignor",
    "JavaRoundRobinAssignor",
    "JavaStickyAssignor",
    "java_assignor",
    "kafka_classpath",
    "stop_jvms",
]

SOURCE = Path(__file__).with_name("KafkaAssignors.java")
JAVA_ASSIGNORS: dict[str, str] = {
    "range": "RangeAssignor",
    "roundrobin": "RoundRobinAssignor",
    "sticky": "StickyAssignor",
    "cooperative-sticky": "CooperativeStickyAssignor",
}
"""Kafka's classic assignors :func:`java_assignor` drives: the protocol name -> Kafka's class."""
DIFFERENT_FROM_OURS: tuple[str, ...] = ("sticky", "cooperative-sticky")
"""The classic assignors whose Kafka class can assign otherwise than ours (this project's range and roundrobin are
Kafka's to the partition): the ones worth replaying both ways."""

_START_SECONDS = 120.0  # the first start compiles the source in memory: a few seconds here, more on a busy machine
_MAX_FRAME = 1 << 30
_INT32 = struct.Struct(">i")
_SETPRIV = shutil.which("setpriv") if sys.platform == "linux" else None


class JavaProcessError(AssignorError):
    """The JVM could not start, died, answered something else, or did not answer in time."""


class JavaAssignorError(AssignorError):
    """Kafka's Java assignor threw for this input.

    Attributes:
        java_class: the class of what it threw (``java.lang.IllegalStateException``).
        trace: its stack trace.
    """

    def __init__(self, message: str, trace: str) -> None:
        super().__init__(message)
        self.java_class = message.split(":", 1)[0]
        self.trace = trace


def kafka_classpath(location: str | os.PathLike[str] | Sequence[str]) -> tuple[str, ...]:
    """The jars of Kafka's clients at ``location``: a Kafka installation (``KAFKA_HOME``, its ``libs``), a
    directory of jars, a classpath (``a.jar:b.jar``), a file listing one (``classpath.txt``), or a sequence of
    entries.

    A location is read once per process: the replay builds Kafka's assignor for every group and strategy, and each
    build resolves its jars here.

    Raises:
        ConfigurationError: no such path, or no ``kafka-clients`` jar on it (the message says where it looked).
    """
    if isinstance(location, str | os.PathLike):
        return _classpath(os.fspath(location))
    given = tuple(str(entry) for entry in location)
    if len(given) == 1 and not given[0].endswith(".jar"):  # one location: a directory, a classpath, a listing
        return _classpath(given[0])
    return _classpath(given)


def _probe(test: Callable[[], bool]) -> bool:
    """``test()`` of a location that may be a classpath: a long one is no file name (``ENAMETOOLONG``: False)."""
    try:
        return test()
    except OSError:
        return False


@functools.lru_cache(maxsize=64)
def _classpath(location: str | tuple[str, ...]) -> tuple[str, ...]:
    """:func:`kafka_classpath` of one location, or of entries given one by one (a failure is not kept)."""
    if isinstance(location, tuple):
        entries = list(location)
    else:
        text = location
        path = Path(text)
        if _probe(path.is_dir):
            libs = path / "libs" if (path / "libs").is_dir() else path
            entries = sorted(str(jar) for jar in libs.glob("*.jar"))
        elif _probe(path.is_file) and path.suffix != ".jar":
            entries = [e for e in path.read_text(encoding="utf-8").strip().split(os.pathsep) if e]
        else:
            entries = [e for e in text.split(os.pathsep) if e]
    missing = [entry for entry in entries if not Path(entry).exists()]
    if missing:
        msg = f"Kafka's jars {location!s:.200}: {missing[0]} does not exist"
        raise ConfigurationError(msg)
    if not any(Path(entry).name.startswith("kafka-clients") for entry in entries):
        msg = (
            f"Kafka's jars {location!s:.200}: no kafka-clients jar there (give a Kafka installation, its libs "
            "directory, or a classpath with kafka-clients and slf4j-api)"
        )
        raise ConfigurationError(msg)
    return tuple(entries)


@dataclass
class _Jvm:
    """One running ``KafkaAssignors.java``: its pipes, its log, and the kafka-clients version it runs."""

    popen: subprocess.Popen[bytes]
    log: IO[bytes]
    version: str
    timeout: float
    lock: threading.Lock

    def tail(self, lines: int = 20) -> str:
        self.log.flush()
        self.log.seek(0)
        text = self.log.read().decode("utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def fail(self, what: str) -> NoReturn:
        """Raise :class:`JavaProcessError`: ``what`` went wrong, and the JVM's last lines."""
        tail = self.tail()
        msg = f"Kafka's Java assignors ({what})" + (f"; the JVM said:\n{tail}" if tail else "")
        raise JavaProcessError(msg)

    def read_frame(self, deadline: float) -> bytes:
        size = _INT32.unpack(self._read(4, deadline))[0]
        if not 0 <= size <= _MAX_FRAME:
            self.fail(f"answered a frame of {size} bytes")
        return self._read(size, deadline)

    def _read(self, size: int, deadline: float) -> bytes:
        out = self.popen.stdout
        assert out is not None  # noqa: S101 - started with a pipe
        parts: list[bytes] = []
        with selectors.DefaultSelector() as selector:
            selector.register(out, selectors.EVENT_READ)
            while size:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    self.fail(f"no answer within {self.timeout:g} s")
                chunk = os.read(out.fileno(), min(size, 1 << 20))
                if not chunk:
                    code = self.popen.wait(5)
                    self.fail(f"the JVM exited with status {code}")
                parts.append(chunk)
                size -= len(chunk)
        return b"".join(parts)

    def call(self, request: bytes) -> bytes:
        with self.lock:
            if self.popen.poll() is not None:
                self.fail(f"the JVM exited with status {self.popen.returncode}")
            stdin = self.popen.stdin
            assert stdin is not None  # noqa: S101 - started with a pipe
            try:
                stdin.write(_INT32.pack(len(request)) + request)
                stdin.flush()
            except BrokenPipeError:
                self.fail("the JVM closed its input")
            return self.read_frame(time.monotonic() + self.timeout)

    def stop(self) -> None:
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(10)
        for stream in (self.popen.stdin, self.popen.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.log.close()


_JVMS: dict[tuple[str, tuple[str, ...]], _Jvm] = {}
_JVMS_LOCK = threading.Lock()


def stop_jvms() -> None:
    """Stop every JVM this process started (also run at exit)."""
    with _JVMS_LOCK:
        running = list(_JVMS.values())
        _JVMS.clear()
    for jvm in running:
        jvm.stop()


atexit.register(stop_jvms)


def _jvm(java: str, classpath: tuple[str, ...], timeout: float) -> _Jvm:
    key = (java, classpath)
    with _JVMS_LOCK:
        running = _JVMS.get(key)
        if running is not None:
            if running.popen.poll() is None:
                return running
            running.stop()  # died: its pipes and log closed, a new one started
            del _JVMS[key]
        command = [java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss8m", "-cp", os.pathsep.join(classpath)]
        command.append(str(SOURCE))
        if _SETPRIV:
            command = [_SETPRIV, "--pdeathsig", "TERM", "--", *command]
        log = tempfile.TemporaryFile(prefix="assignors-kafka-java-")  # noqa: SIM115 - closed by _Jvm.stop
        try:
            popen = subprocess.Popen(  # noqa: S603 - java and this package's own source file
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, start_new_session=True
            )
        except OSError as error:
            log.close()
            msg = f"Kafka's Java assignors: cannot run {java!r} ({error.strerror or error}); install a JDK 11+"
            raise JavaProcessError(msg) from None
        jvm = _Jvm(popen, log, "", timeout, threading.Lock())
        try:
            hello = jvm.read_frame(time.monotonic() + max(timeout, _START_SECONDS))
            jvm.version = _text(FlexReader(hello), "version")
        except BaseException:
            jvm.stop()
            raise
        _JVMS[key] = jvm
        return jvm


def _text(reader: FlexReader, field: str) -> str:
    """A string of the frames: an INT32 length, then UTF-8 (read in place: no copy of the rest of the frame)."""
    start = reader.offset
    return reader.utf8(reader.int32(field), field, start)


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return _INT32.pack(len(raw)) + raw


def _request(name: str, cluster: Cluster, subscriptions: Mapping[MemberId, Subscription]) -> bytes:
    topics = {topic for subscription in subscriptions.values() for topic in subscription.topics}
    counts = {t: n for t, n in cluster.partitions_per_topic.items() if t in topics}
    parts = [_string(name), _INT32.pack(len(counts))]
    for topic in sorted(counts):
        parts += [_string(topic), _INT32.pack(counts[topic])]
    racks = sorted(cluster.partition_racks.items())
    parts.append(_INT32.pack(len(racks)))
    for partition, names in racks:
        parts += [_string(partition.topic), _INT32.pack(partition.partition), _INT32.pack(len(names))]
        parts += [_string(rack) for rack in sorted(names)]
    parts.append(_INT32.pack(len(subscriptions)))
    for member, subscription in subscriptions.items():
        encoded = encode_subscription(subscription)
        parts += [_string(member), _string(subscription.group_instance_id or ""), _INT32.pack(len(encoded)), encoded]
    return b"".join(parts)


def _answer(frame: bytes, name: str) -> dict[MemberId, Assignment]:
    """The JVM's answer: each member's assignment, or what Kafka's code threw.

    Raises:
        JavaAssignorError: Kafka's code threw, or gave a member an assignment no member could hold.
        JavaProcessError: the frame does not read as an answer (named with its field and offset).
    """
    try:
        return _read_answer(FlexReader(frame), name)
    except ProtocolError as error:
        msg = f"Kafka's Java assignors answered a frame that does not read ({error})"
        raise JavaProcessError(msg) from None


def _read_answer(reader: FlexReader, name: str) -> dict[MemberId, Assignment]:
    status = reader.int8("status")
    if status == 1:
        message = _text(reader, "message")
        raise JavaAssignorError(message, _text(reader, "trace"))
    if status != 0:
        msg = f"status {status} at offset 0"
        raise ProtocolError(msg, field="status", offset=0)
    result: dict[MemberId, Assignment] = {}
    for _ in range(reader.checked_count(reader.int32("members"), 8, "members", 1)):
        member = _text(reader, "member")
        data = reader.nullable_bytes("assignment") or b""
        try:
            result[member] = decode_assignment(data)
        except AssignorError as error:  # Kafka's answer is no assignment a member could hold
            msg = f"Kafka's {JAVA_ASSIGNORS[name]} gave member {member!r} no valid assignment: {error}"
            raise JavaAssignorError(msg, "") from None
    return result


class _JavaMixin:
    """``assign`` by Kafka's Java class; everything else (the member's own state) is the Python base's."""

    _java_name: str
    _java: str
    _classpath: tuple[str, ...]
    _timeout: float

    def assign(self, cluster: Cluster, subscriptions: Mapping[MemberId, Subscription]) -> dict[MemberId, Assignment]:
        """Kafka's own class assigns (one JVM call); every member gets an entry."""
        jvm = _jvm(self._java, self._classpath, self._timeout)
        result = _answer(jvm.call(_request(self._java_name, cluster, subscriptions)), self._java_name)
        for member in subscriptions:
            result.setdefault(member, Assignment([]))
        return result

    @property
    def kafka_version(self) -> str:
        """The kafka-clients version the JVM runs (it is started if it is not)."""
        return _jvm(self._java, self._classpath, self._timeout).version


class JavaRangeAssignor(_JavaMixin, RangeAssignor):
    """Kafka's Java ``RangeAssignor`` (:func:`java_assignor`)."""


class JavaRoundRobinAssignor(_JavaMixin, RoundRobinAssignor):
    """Kafka's Java ``RoundRobinAssignor`` (:func:`java_assignor`)."""


class JavaStickyAssignor(_JavaMixin, StickyAssignor):
    """Kafka's Java ``StickyAssignor`` (:func:`java_assignor`); the member's user data is this project's, in
    Kafka's bytes."""


class JavaCooperativeStickyAssignor(_JavaMixin, CooperativeStickyAssignor):
    """Kafka's Java ``CooperativeStickyAssignor`` (:func:`java_assignor`)."""


JavaAssignor = JavaRangeAssignor | JavaRoundRobinAssignor | JavaStickyAssignor | JavaCooperativeStickyAssignor
"""What :func:`java_assignor` returns."""


def java_assignor(
    name: str,
    classpath: str | os.PathLike[str] | Sequence[str],
    *,
    java: str | None = None,
    timeout: float = 60.0,
) -> JavaAssignor:
    """Kafka's Java classic assignor ``name`` (``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``) on
    the jars at ``classpath`` (:func:`kafka_classpath`), run by ``java`` (default: ``$JAVA_HOME/bin/java``, else
    ``java`` on the path). Each call answers within ``timeout`` seconds or raises.

    The object is this project's assignor of that name (same protocol name, rebalance protocols and member state:
    the user data it sends) whose ``assign`` is Kafka's class.

    Raises:
        ConfigurationError: not a classic assignor name, a bad classpath or timeout, no such ``java``.
    """
    kinds: dict[str, type[JavaAssignor]] = {
        "range": JavaRangeAssignor,
        "roundrobin": JavaRoundRobinAssignor,
        "sticky": JavaStickyAssignor,
        "cooperative-sticky": JavaCooperativeStickyAssignor,
    }
    kind = kinds.get(name)
    if kind is None:
        msg = f"Kafka's Java assignor {name!r}: not one of {', '.join(kinds)}"
        raise ConfigurationError(msg)
    if not (isinstance(timeout, int | float) and timeout > 0):
        msg = f"timeout={timeout!r}: expected seconds > 0"
        raise ConfigurationError(msg)
    entries = kafka_classpath(classpath)
    command = java or _default_java()
    if _which(command) is None:
        msg = f"Kafka's Java assignors: cannot run {command!r} (not an executable); install a JDK 11+ or set JAVA_HOME"
        raise ConfigurationError(msg)
    assignor = kind()
    assignor._java_name = name  # noqa: SLF001 - set on the instance this function made
    assignor._java = command  # noqa: SLF001
    assignor._classpath = entries  # noqa: SLF001
    assignor._timeout = float(timeout)  # noqa: SLF001
    return assignor


_which = functools.lru_cache(maxsize=16)(shutil.which)
"""``shutil.which``, asked once per command (every group's Java assignor names the same ``java``)."""


def _default_java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        msg = "Kafka's Java assignors need java: install a JDK 11 or newer, or set JAVA_HOME"
        raise ConfigurationError(msg)
    return found
