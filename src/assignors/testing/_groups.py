"""Real consumer groups on a real broker: each member its own process, its rebalance listener's calls as JSON lines.

Used by the real-broker tests and ``make kafka-demo``. A member is ``python -m assignors._member`` with one
client (confluent-kafka, kafka-python, aiokafka) in one group; it prints one JSON line per listener call
(``assigned``, ``revoked``, ``lost``) with its member id and, where the client tells, its generation. The parent
(:class:`MemberProcess`) reads them back, tells the member to change its subscription through a control file,
stops it with SIGTERM (the client leaves the group) or kills it with SIGKILL (a crash: the coordinator notices
when its session times out).

- Classic members: confluent-kafka with librdkafka's own ``partition.assignment.strategy``, kafka-python and
  aiokafka with this project's assignors through :mod:`assignors.kafka_python` and :mod:`assignors.aiokafka`.
- KIP-848 members: confluent-kafka with ``group.protocol=consumer`` and ``group.remote.assignor``.

:func:`settle_group` waits until the broker's view (Admin ``describe_consumer_groups``: the members, each one's
assignment and, for consumer-protocol groups, its target) agrees with what the members hold, and returns that
agreement: the group's steady state as the clients observed it.

The clients are imported only in the member processes and by :func:`settle_group` (confluent-kafka's Admin).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assignors._groups.member_process import CLIENTS, STACKS_SIGNAL
from assignors.testing._process import Process, start

__all__ = ["CLIENTS", "MemberProcess", "MemberSpec", "Observation", "TimedMemberSpec", "settle_group", "wait_for"]

SETTLE_QUIET_S = 1.0
"""A steady state must hold this long with no listener call in between."""
STACKS_TIMEOUT_S = 3.0

Partition = tuple[str, int]


@dataclass(frozen=True)
class MemberSpec:
    """One member: its client, group and topics; ``strategy`` for a classic member, ``remote_assignor`` for KIP-848.

    ``strategy`` is librdkafka's assignor name for confluent-kafka, this project's assignor name for kafka-python
    and aiokafka. ``remote_assignor`` (confluent-kafka only) makes the member speak the consumer protocol.
    """

    name: str
    client: str
    group: str
    topics: tuple[str, ...]
    strategy: str | None = None
    remote_assignor: str | None = None
    session_timeout_ms: int = 6000

    def argv(self, bootstrap: str, control: Path) -> list[str]:
        args = [
            sys.executable,
            "-m",
            "assignors._member",
            "--bootstrap-servers",
            bootstrap,
            "--client",
            self.client,
            "--group",
            self.group,
            "--name",
            self.name,
            "--topics",
            ",".join(self.topics),
            "--control",
            str(control),
            "--session-timeout-ms",
            str(self.session_timeout_ms),
        ]
        if self.strategy:
            args += ["--strategy", self.strategy]
        if self.remote_assignor:
            args += ["--remote-assignor", self.remote_assignor]
        return args


@dataclass(frozen=True)
class TimedMemberSpec(MemberSpec):
    """A :class:`MemberSpec` with the calibration's settings (kafka-python and aiokafka members).

    ``fetched`` makes the member print a ``fetched`` line with the partitions of every poll that returned records
    (``make calibrate`` measures pauses from them); ``group_instance_id`` makes it a static member.
    """

    heartbeat_interval_ms: int = 500
    group_instance_id: str | None = None
    metadata_max_age_ms: int | None = None
    fetched: bool = False

    def argv(self, bootstrap: str, control: Path) -> list[str]:
        args = [*super().argv(bootstrap, control), "--heartbeat-interval-ms", str(self.heartbeat_interval_ms)]
        if self.group_instance_id:
            args += ["--group-instance-id", self.group_instance_id]
        if self.metadata_max_age_ms is not None:
            args += ["--metadata-max-age-ms", str(self.metadata_max_age_ms)]
        if self.fetched:
            args.append("--fetched")
        return args


@dataclass
class MemberProcess:
    """The parent's handle on one member process: its events so far, what it holds, its member id."""

    spec: MemberSpec
    process: Process
    control: Path
    events: list[dict[str, Any]] = field(default_factory=list)
    topics: tuple[str, ...] = ()
    """The topics it subscribes to now (its spec's, until :meth:`subscribe`)."""
    _read: int = 0

    def __post_init__(self) -> None:
        self.topics = self.topics or self.spec.topics

    @classmethod
    def launch(cls, spec: MemberSpec, bootstrap: str, work_dir: Path) -> MemberProcess:
        work_dir.mkdir(parents=True, exist_ok=True)
        control = work_dir / f"{spec.name}.control"
        control.write_text("", encoding="utf-8")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        return cls(spec, start(f"member-{spec.name}", spec.argv(bootstrap, control), work_dir, env), control)

    @property
    def name(self) -> str:
        return self.spec.name

    def refresh(self) -> list[dict[str, Any]]:
        """Read the member's new JSON lines (other lines of its log, such as client warnings, are skipped)."""
        text = self.process.log.read_text(encoding="utf-8", errors="replace")
        complete = text[: text.rfind("\n") + 1]
        new = complete[self._read :]
        self._read = len(complete)
        for line in new.splitlines():
            if line.startswith("{"):
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(event, dict) and "event" in event:
                    self.events.append(event)
        return self.events

    def holdings(self) -> set[Partition]:
        """What the member holds after its last listener call."""
        held: set[Partition] = set()
        for event in self.refresh():
            partitions = {(topic, int(number)) for topic, number in event.get("partitions", ())}
            if event["event"] == "assigned":
                held |= partitions
            elif event["event"] in ("revoked", "lost"):
                held -= partitions
        return held

    @property
    def member_id(self) -> str | None:
        ids = [e["member_id"] for e in self.refresh() if e.get("member_id")]
        return ids[-1] if ids else None

    def last_event_at(self) -> float:
        """When its last listener call came (``fetched`` lines are not listener calls)."""
        events = [e for e in self.refresh() if e["event"] in ("assigned", "revoked", "lost")]
        return float(events[-1]["at"]) if events else 0.0

    def alive(self) -> bool:
        return self.process.alive()

    def subscribe(self, topics: Sequence[str]) -> None:
        """Ask the member to change its subscription (it reads the control file between polls)."""
        with self.control.open("a", encoding="utf-8") as out:
            out.write("subscribe " + ",".join(topics) + "\n")
        self.topics = tuple(topics)

    def leave(self, timeout: float = 60.0) -> None:
        """SIGTERM: the member closes its consumer, which leaves the group."""
        self.process.stop(timeout)
        self.refresh()

    def stacks(self, timeout: float = STACKS_TIMEOUT_S) -> str:
        """Every thread's Python stack in the live member, as ``faulthandler`` writes it on :data:`STACKS_SIGNAL`.

        For a timeout's message: where a member that stopped making progress is waiting. Empty if it is not alive
        or wrote nothing within ``timeout``.
        """
        if not self.alive():
            return ""
        before = self.process.log.stat().st_size
        os.kill(self.process.pid, STACKS_SIGNAL)
        deadline, size = time.monotonic() + timeout, before
        while time.monotonic() < deadline:
            time.sleep(0.2)
            grown = self.process.log.stat().st_size
            if grown == size > before:  # it wrote, and has stopped writing
                break
            size = grown
        with self.process.log.open("rb") as log:
            log.seek(before)
            return log.read().decode("utf-8", errors="replace")

    def kill(self) -> None:
        """SIGKILL: a crash; the coordinator finds out when the member's session times out."""
        self.process.kill()
        self.refresh()


Observation = dict[str, list[str]]
"""A group's steady state: member id -> its partitions as ``topic-partition`` strings, sorted."""


def _text(partitions: Iterable[Partition]) -> list[str]:
    return [f"{topic}-{number}" for topic, number in sorted(partitions)]


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``condition`` until it returns something truthy; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.25)
    msg = f"timed out after {timeout:.0f} s waiting for {what}"
    raise TimeoutError(msg)


def _described(admin: Any, group: str) -> Any:
    return admin.describe_consumer_groups([group], request_timeout=10)[group].result(15)


def _agrees(description: Any, ids: Mapping[str, str], held: Mapping[str, set[Partition]], *, target: bool) -> bool:
    """The broker describes the group Stable, with exactly these members, each assigned (and targeted) what it holds."""
    if str(getattr(description.state, "name", description.state)).upper() != "STABLE":
        return False
    by_id = {d.member_id: d for d in description.members}
    if set(by_id) != set(ids.values()):
        return False
    for name, member_id in ids.items():
        found, mine = by_id[member_id], _text(held[name])
        if _text((tp.topic, tp.partition) for tp in found.assignment.topic_partitions) != mine:
            return False
        goal = found.target_assignment
        if target and (goal is None or _text((tp.topic, tp.partition) for tp in goal.topic_partitions) != mine):
            return False
    return True


def _holdings_text(held: Mapping[str, set[Partition]]) -> str:
    return "; ".join(f"{name} holds {', '.join(_text(held[name])) or 'nothing'}" for name in sorted(held))


def _description_text(description: Any) -> str:
    state = str(getattr(description.state, "name", description.state))
    members = ", ".join(
        f"{d.member_id} assigned {', '.join(_text((tp.topic, tp.partition) for tp in d.assignment.topic_partitions))}"
        for d in sorted(description.members, key=lambda d: str(d.member_id))
    )
    return f"{state}, members: {members or 'none'}"


def _member_state(member: MemberProcess) -> str:
    """One member for a timeout's message: alive or its exit code, its last listener calls, its log's tail."""
    status = "alive" if member.alive() else f"exited with {member.process.popen.returncode}"
    calls = [f"{e['event']} {len(e.get('partitions', ()))}" for e in member.refresh()[-4:]]
    tail = member.process.tail(6).strip()
    stacks = member.stacks().strip()
    text = f"{tail}\n{stacks}" if stacks else tail
    return f"  {member.name} ({member.member_id}): {status}; last calls: {', '.join(calls) or 'none'}\n    " + (
        text.replace("\n", "\n    ")
    )


def settle_group(  # noqa: PLR0913 - what the steady state is checked against
    admin: Any,
    group: str,
    members: Sequence[MemberProcess],
    partitions: Mapping[str, int],
    timeout: float = 90.0,
    *,
    consumer_protocol: bool = False,
) -> Observation:
    """Wait for the group's steady state and return it as the clients hold it.

    Steady: every partition of the topics the live members subscribe to (``partitions`` gives each topic's count)
    is held by exactly one of them, each holding only topics it subscribes to now; the broker describes the group
    as Stable with exactly these members, each with the assignment it holds (and, for a consumer-protocol group, a
    target equal to it); and no listener call came for :data:`SETTLE_QUIET_S`.
    """
    live = [m for m in members if m.alive()]
    why = ["nothing checked yet"]  # the last reason the group was not steady, for the timeout's message

    def steady() -> Observation | None:
        held = {m.name: m.holdings() for m in live}
        ids = {m.name: m.member_id for m in live}
        wanted = sorted({(t, p) for m in live for t in m.topics for p in range(partitions[t])})
        if any(i is None for i in ids.values()):
            why[0] = "no member id yet: " + ", ".join(name for name, i in ids.items() if i is None)
            return None
        if sorted(tp for h in held.values() for tp in h) != wanted:
            why[0] = "the members do not hold every partition exactly once: " + _holdings_text(held)
            return None
        if any(topic not in m.topics for m in live for topic, _ in held[m.name]):
            why[0] = "a subscription change not reconciled yet: " + _holdings_text(held)
            return None
        if time.time() - max((m.last_event_at() for m in live), default=0.0) < SETTLE_QUIET_S:
            why[0] = f"a listener call came less than {SETTLE_QUIET_S} s ago"
            return None
        known = {name: member_id or "" for name, member_id in ids.items()}
        description = _described(admin, group)
        if not _agrees(description, known, held, target=consumer_protocol):
            why[0] = f"the broker does not agree: {_description_text(description)}; members: {_holdings_text(held)}"
            return None
        return {known[name]: _text(held[name]) for name in sorted(known)}

    try:
        result: Observation = wait_for(steady, timeout, f"group {group!r} to settle")
    except TimeoutError as error:
        states = "\n".join(_member_state(m) for m in members)
        msg = f"{error}; last seen: {why[0]}\n{states}"
        raise TimeoutError(msg) from None
    return result
