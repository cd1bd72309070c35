"""Kafka's own Java classes as a live oracle: one JVM, JSON lines over its stdin and stdout.

The JVM runs ``dev.assignors.oracle.Oracle`` (jvm/src/main/java/dev/assignors/oracle/), built by ``make jvm``
against a Kafka version's jars from Maven Central. It drives Kafka's unmodified classes: the classic
``RangeAssignor``, ``RoundRobinAssignor``, ``StickyAssignor`` and ``CooperativeStickyAssignor`` through
``ConsumerPartitionAssignor.assign(Cluster, GroupSubscription)``; the group coordinator's ``UniformAssignor`` and
``RangeAssignor`` through ``GroupSpec``/``SubscribedTopicDescriber`` with topic ids; and ``ConsumerProtocol``.

Failure: Kafka's code throwing is an answer (:class:`JavaError`); the JVM dying, answering something that is not
a JSON object, or taking longer than the timeout is :class:`OracleError`, whose message carries the JVM's
stderr. Every read waits at most ``timeout`` seconds. The JVM starts in its own session, gets SIGTERM if this
process dies (Linux), and is stopped by its PID.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Self

from assignors import Assignment, Cluster, Subscription, TopicPartition
from assignors.consumer_group import CoordinatorTable
from assignors.testing import _process

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from types import TracebackType

__all__ = ["JavaError", "JavaOracle", "OracleError", "bench_assignments", "side_by_side", "topic_id"]

MAIN_CLASS = "dev.assignors.oracle.Oracle"


class OracleError(AssertionError):
    """The oracle itself failed: it died, answered garbage, or did not answer in time."""


class JavaError(Exception):
    """Kafka's Java code threw for this input (``java_class``: the exception's class name)."""

    def __init__(self, message: str, trace: str) -> None:
        super().__init__(message)
        self.java_class = message.split(":", 1)[0]
        self.trace = trace


def topic_id(topic: str) -> tuple[int, int]:
    """A deterministic topic id (the two signed 64-bit halves of Kafka's ``Uuid``) derived from the name."""
    digest = hashlib.sha256(topic.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True), int.from_bytes(digest[8:16], "big", signed=True)


def _pairs(partitions: Iterable[TopicPartition]) -> list[list[object]]:
    return [[tp.topic, tp.partition] for tp in partitions]


def _partitions(pairs: Iterable[Sequence[Any]]) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(str(topic), int(number)) for topic, number in pairs)


def _hex(data: bytes | None) -> str | None:
    return None if data is None else data.hex()


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else bytes.fromhex(text)


def member_json(subscription: Subscription) -> dict[str, Any]:
    return {
        "topics": list(subscription.topics),
        "user_data": _hex(subscription.user_data),
        "owned": _pairs(subscription.owned_partitions),
        "generation": subscription.generation_id,
        "rack": subscription.rack_id,
        "instance": subscription.group_instance_id,
    }


def group_json(
    cluster: Cluster,
    subscriptions: Mapping[str, Subscription],
    *,
    topic_ids: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, Any]:
    """The oracle's group: topics, replica racks, members; and topic ids for every topic named anywhere."""
    group: dict[str, Any] = {
        "topics": dict(cluster.partitions_per_topic),
        "racks": [[tp.topic, tp.partition, sorted(racks)] for tp, racks in cluster.partition_racks.items()],
        # in the order the coordinator puts them into memberSpecs (a table holding these members, added in Java's
        # string order: coordinator_member_order's default), which decides the order inside one HashMap bucket
        "members": {
            member: member_json(subscriptions[member])
            for member in CoordinatorTable.holding(subscriptions).put_order(subscriptions)
        },
    }
    named = set(cluster.partitions_per_topic)
    for subscription in subscriptions.values():
        named.update(subscription.topics)
        named.update(tp.topic for tp in subscription.owned_partitions)
    given = topic_ids or {}
    group["topic_ids"] = {topic: list(given.get(topic) or topic_id(topic)) for topic in sorted(named)}
    return group


@dataclass
class JavaOracle:
    """One running oracle JVM (start it with :meth:`start`; a context manager that stops it)."""

    popen: subprocess.Popen[bytes]
    stderr_log: Path
    timeout: float
    version: str = ""
    _stderr_file: IO[bytes] | None = field(default=None, repr=False)
    _buffer: bytearray = field(default_factory=bytearray, repr=False)
    requests: int = 0

    @classmethod
    def start(
        cls,
        classpath: Sequence[str],
        log_dir: Path,
        *,
        timeout: float = 120.0,
        java: str = "java",
        heap: str | None = None,
    ) -> JavaOracle:
        """Start the JVM and wait (at most ``timeout`` seconds) for its ready line."""
        log_dir.mkdir(parents=True, exist_ok=True)
        stderr_log = log_dir / "java-oracle.stderr.log"
        stderr_file = stderr_log.open("wb")
        command = [java, *([f"-Xmx{heap}"] if heap else []), "-cp", os.pathsep.join(classpath), MAIN_CLASS]
        if _process._SETPRIV:
            command = [_process._SETPRIV, "--pdeathsig", "TERM", "--", *command]
        try:
            popen = subprocess.Popen(  # noqa: S603 - a fixed command
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr_file,
                start_new_session=True,
            )
        except BaseException:
            stderr_file.close()
            raise
        oracle = cls(popen, stderr_log, timeout, _stderr_file=stderr_file)
        try:
            if _process._SETPRIV:
                _process._past_setpriv(popen.pid)
            ready = oracle._read_answer(timeout)
            if "ready" not in ready:
                oracle._fail(f"expected a ready line, got {ready!r}")
            oracle.version = str(ready["ready"])
        except BaseException:
            oracle.stop()
            raise
        return oracle

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return tuple(int(part) for part in self.version.split("-")[0].split(".") if part.isdigit())

    def stop(self, timeout: float = 10.0) -> None:
        """Close its stdin (it exits), then SIGTERM and SIGKILL its process group if it lingers."""
        pid = self.popen.pid
        if self.popen.poll() is None:
            with contextlib.suppress(OSError):
                assert self.popen.stdin is not None
                self.popen.stdin.close()
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGTERM)
                try:
                    self.popen.wait(timeout)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(pid, signal.SIGKILL)
                    self.popen.wait(timeout)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        if self.popen.stdin is not None:
            with contextlib.suppress(OSError):
                self.popen.stdin.close()
        if self.popen.stdout is not None:
            self.popen.stdout.close()
        if self._stderr_file is not None:
            self._stderr_file.close()
            self._stderr_file = None

    def stderr(self, lines: int = 40) -> str:
        """The last ``lines`` lines the JVM wrote to stderr."""
        if self._stderr_file is not None:
            self._stderr_file.flush()
        text = self.stderr_log.read_text(encoding="utf-8", errors="replace") if self.stderr_log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def _fail(self, what: str) -> None:
        state = "running" if self.popen.poll() is None else f"exited with {self.popen.returncode}"
        msg = f"Java oracle (pid {self.popen.pid}, {state}): {what}\n--- its stderr ---\n{self.stderr()}"
        raise OracleError(msg)

    def _read_answer(self, timeout: float) -> dict[str, Any]:
        """One line from the JVM's stdout, parsed; at most ``timeout`` seconds."""
        assert self.popen.stdout is not None
        fd = self.popen.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while (end := self._buffer.find(b"\n")) < 0:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    self._fail(f"no answer within {timeout:.0f} s")
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.popen.wait(5)
                    self._fail("its stdout closed (the JVM died)")
                self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        try:
            answer = json.loads(line)
        except ValueError:
            self._fail(f"answered garbage: {line[:300]!r}")
        if not isinstance(answer, dict):
            self._fail(f"answered a non-object: {line[:300]!r}")
        return answer  # type: ignore[no-any-return] # checked above

    def request(self, payload: Mapping[str, Any], *, timeout: float | None = None) -> dict[str, Any]:
        """Send one request and return its answer; :class:`JavaError` when Kafka's code threw."""
        assert self.popen.stdin is not None
        if self.popen.poll() is not None:
            self._fail("it is not running")
        try:
            self.popen.stdin.write(json.dumps(payload, separators=(",", ":")).encode("utf-8") + b"\n")
            self.popen.stdin.flush()
        except BrokenPipeError:
            self._fail("its stdin closed (the JVM died)")
        self.requests += 1
        answer = self._read_answer(self.timeout if timeout is None else timeout)
        if "error" in answer:
            raise JavaError(str(answer["error"]), str(answer.get("trace", "")))
        return answer

    # --- the assignors ---------------------------------------------------------------------------------------

    def assign(
        self, assignor: str, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> dict[str, Assignment]:
        """Kafka's classic assignor ``assignor`` (range, roundrobin, sticky, cooperative-sticky) on this group.

        Each Assignment keeps Java's partition order and user data. An answer an :class:`Assignment` cannot hold
        (a partition listed twice) raises ``InvalidSubscriptionError``; :meth:`assign_partitions` returns it as is.
        """
        answer = self.request({"op": "assign", "assignor": assignor, "group": group_json(cluster, subscriptions)})
        return {
            member: Assignment(_partitions(result["partitions"]), user_data=_bytes(result["user_data"]))
            for member, result in answer["assignments"].items()
        }

    def assign_partitions(
        self, assignor: str, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> dict[str, tuple[TopicPartition, ...]]:
        """Kafka's classic assignor's partitions per member, exactly as Java listed them (duplicates kept)."""
        answer = self.request({"op": "assign", "assignor": assignor, "group": group_json(cluster, subscriptions)})
        return {member: _partitions(result["partitions"]) for member, result in answer["assignments"].items()}

    def server_assign(
        self,
        assignor: str,
        cluster: Cluster,
        subscriptions: Mapping[str, Subscription],
        *,
        topic_ids: Mapping[str, tuple[int, int]] | None = None,
    ) -> dict[str, Assignment]:
        """The group coordinator's ``uniform`` or ``range`` assignor; ``owned_partitions`` is the previous target.

        ``topic_ids`` (name to the two halves of a ``Uuid``) default to ids derived from the names.
        """
        group = group_json(cluster, subscriptions, topic_ids=topic_ids)
        answer = self.request({"op": "server_assign", "assignor": assignor, "group": group})
        return {member: Assignment(_partitions(pairs)) for member, pairs in answer["assignments"].items()}

    # --- ConsumerProtocol ------------------------------------------------------------------------------------

    def encode_subscription(self, subscription: Subscription, version: int) -> bytes:
        answer = self.request(
            {"op": "encode_subscription", "version": version, "subscription": member_json(subscription)}
        )
        return bytes.fromhex(answer["hex"])

    def decode_subscription(self, data: bytes) -> Subscription:
        fields = self.request({"op": "decode_subscription", "hex": data.hex()})["subscription"]
        return Subscription(
            fields["topics"],
            user_data=_bytes(fields["user_data"]),
            owned_partitions=_partitions(fields["owned"]),
            generation_id=fields["generation"],
            rack_id=fields["rack"],
        )

    def decode_subscription_fields(self, data: bytes) -> dict[str, Any]:
        """What Java's ``deserializeSubscription`` read, as JSON fields (topics and owned in Java's order)."""
        return self.request({"op": "decode_subscription", "hex": data.hex()})["subscription"]  # type: ignore[no-any-return]

    def encode_assignment(self, assignment: Assignment, version: int) -> bytes:
        payload = {"partitions": _pairs(assignment.partitions), "user_data": _hex(assignment.user_data)}
        answer = self.request({"op": "encode_assignment", "version": version, "assignment": payload})
        return bytes.fromhex(answer["hex"])

    def decode_assignment(self, data: bytes) -> Assignment:
        fields = self.request({"op": "decode_assignment", "hex": data.hex()})["assignment"]
        return Assignment(_partitions(fields["partitions"]), user_data=_bytes(fields["user_data"]))

    def encode_sticky_user_data(self, partitions: Iterable[TopicPartition], generation: int) -> bytes:
        """What a Java ``StickyAssignor`` member sends after ``onAssignment(partitions)`` at ``generation``."""
        answer = self.request(
            {"op": "encode_sticky_user_data", "partitions": _pairs(partitions), "generation": generation}
        )
        return bytes.fromhex(answer["hex"])

    # --- the benchmark ---------------------------------------------------------------------------------------

    def bench(
        self,
        assignor: str,
        cluster: Cluster,
        subscriptions: Mapping[str, Subscription],
        *,
        server: bool = False,
        round_: int = 1,
        runs: int = 5,
        warmup_s: float = 3.0,
        warmup: int = 3,
        min_runs: int | None = None,
        budget_s: float | None = None,
        client_user_data: bool = False,
        result: bool = False,
        timeout: float = 900.0,
    ) -> dict[str, Any]:
        """Kafka's assignor timed warm in this JVM: ``nanos`` per timed call, ``warmup_calls``, ``assigned``, ``jvm``.

        Warm-up calls run for ``warmup_s`` seconds and at least ``warmup`` calls, then ``runs`` timed calls (fewer,
        at least ``min_runs``, once the timed calls took ``budget_s`` seconds).
        ``round_=2`` times the round after Java's own first one (every member but the first owns what Java gave
        it, with the user data Kafka's client would send). ``client_user_data`` (classic assignors) gives each member
        with a generation and no user data the user data its client would send with the owned partitions given
        here: a 2nd round from the caller's own first one. ``result`` adds the last timed call's result
        (:func:`bench_assignments` reads it).
        """
        payload = {
            "op": "server_bench" if server else "bench",
            "assignor": assignor,
            "group": group_json(cluster, subscriptions) if server else _compact_group(cluster, subscriptions),
            "round": round_,
            "runs": runs,
            "warmup_s": warmup_s,
            "warmup": warmup,
            **({} if min_runs is None else {"min_runs": min_runs}),
            **({} if budget_s is None else {"budget_s": budget_s}),
            "client_user_data": client_user_data,
            "result": result,
        }
        return self.request(payload, timeout=timeout)

    def peak_rss_mb(self) -> float | None:
        """The JVM's peak resident set so far (Linux ``VmHWM``), or None where /proc does not tell."""
        try:
            status = Path(f"/proc/{self.popen.pid}/status").read_text(encoding="utf-8")
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return None


def bench_assignments(answer: Mapping[str, Any], *, server: bool = False) -> dict[str, Assignment]:
    """The result a ``bench`` / ``server_bench`` answer carries (asked with ``result=True``)."""
    if server:
        return {member: Assignment(_partitions(pairs)) for member, pairs in answer["assignments"].items()}
    return {
        member: Assignment(_partitions(result["partitions"]), user_data=_bytes(result["user_data"]))
        for member, result in answer["assignments"].items()
    }


def _compact_group(cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Any]:
    group = group_json(cluster, subscriptions)
    del group["topic_ids"]
    return group


def side_by_side(ours: Mapping[str, Assignment], java: Mapping[str, Assignment], *, title: str = "ours | Java") -> str:
    """Both results per member, partitions sorted, differing members marked: a counterexample a person reads."""
    lines = [f"member | {title}"]
    for member in sorted(set(ours) | set(java)):
        mine = sorted(map(str, ours[member].partitions)) if member in ours else ["(absent)"]
        theirs = sorted(map(str, java[member].partitions)) if member in java else ["(absent)"]
        mark = "  " if mine == theirs else "!!"
        lines.append(f"{mark} {member}: {' '.join(mine) or '-'}  |  {' '.join(theirs) or '-'}")
    return "\n".join(lines)
