"""Play scenarios on one real broker, one group per strategy, all of a scenario's groups at once.

Each group has its own topics (``{scenario}-{n}-a``, ...) and group id; one producer thread writes a record to
every partition of every topic every :attr:`Settings.produce_interval_s`. The members print their listener calls
and the partitions each poll fetched, stamped with CLOCK_MONOTONIC (Java's ``System.nanoTime``, Python's
``time.monotonic``), so the runner's own clock orders everything.

- Java groups: one :class:`dev.assignors.member.GroupHost` JVM per group (its members are threads), and a JVM of
  its own for a member that will crash (SIGKILL).
- Python groups: one ``python -m assignors._member`` process per member (kafka-python or aiokafka with this
  project's assignors).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assignors.testing._groups import MemberProcess, TimedMemberSpec
from assignors.testing._process import Process, start
from calibration.scenarios import Action, Scenario, Settings, Strategy

ROOT = Path(__file__).resolve().parents[1]
HOST = "dev.assignors.member.GroupHost"
LISTENER = ("assigned", "revoked", "lost")
TOPIC_TIMEOUT_S = 60.0

Partition = tuple[str, int]


def java_classpath(version: str) -> list[str]:
    """This project's Java classes and Kafka's jars as ``make jvm`` built them."""
    folder = ROOT / "jvm" / "target" / f"kafka-{version}"
    listing = folder / "classpath.txt"
    if not listing.is_file():
        msg = f"no {listing}: run `make jvm KAFKA_VERSION={version}` (needs java and mvn)"
        raise RuntimeError(msg)
    jars = [entry for entry in listing.read_text(encoding="utf-8").strip().split(os.pathsep) if entry]
    return [str(folder / "classes"), *jars]


def _pairs(listed: Iterable[Sequence[Any]]) -> tuple[Partition, ...]:
    return tuple(sorted((str(topic), int(number)) for topic, number in listed))


@dataclass
class Member:
    name: str
    topics: tuple[str, ...]
    instance: str | None
    alive: bool = True
    started_at: float = 0.0
    ended_at: float | None = None
    crashed: bool = False


_NEVER = Member("", (), None, started_at=float("inf"))


class Group:
    """One group of one strategy: its members, their events (normalised), and actions on them."""

    def __init__(  # noqa: PLR0913, PLR0917 - one group's set-up
        self, strategy: Strategy, group_id: str, prefix: str, settings: Settings, bootstrap: str, work: Path
    ) -> None:
        self.strategy = strategy
        self.group_id = group_id
        self.prefix = prefix
        self.settings = settings
        self.bootstrap = bootstrap
        self.work = work
        self.members: dict[str, Member] = {}
        self.events: list[dict[str, Any]] = []
        self._host: Process | None = None
        self._host_control = work / "host.control"
        self._solo: dict[str, Process] = {}
        self._python: dict[str, MemberProcess] = {}
        self._read: dict[str, int] = {}
        self.kafka_version = ""

    # -- processes ------------------------------------------------------------------------------------------
    def _java_argv(self, control: Path) -> list[str]:
        jvm = ["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"]
        options = {
            "bootstrap": self.bootstrap,
            "group": self.group_id,
            "control": str(control),
            "protocol": self.strategy.protocol,
            "strategy": self.strategy.setting,
            "session_ms": str(self.settings.session_ms),
            "heartbeat_ms": str(self.settings.heartbeat_ms),
            "metadata_ms": str(self.settings.metadata_ms),
        }
        classpath = ":".join(java_classpath(self.kafka_version))
        return [*jvm, "-cp", classpath, HOST, *(f"{k}={v}" for k, v in options.items())]

    def _java_host(self) -> Process:
        if self._host is None:
            self.work.mkdir(parents=True, exist_ok=True)
            self._host_control.write_text("", encoding="utf-8")
            self._host = start("host", self._java_argv(self._host_control), self.work)
        return self._host

    def _topic_names(self, suffixes: str) -> tuple[str, ...]:
        return tuple(f"{self.prefix}-{suffix}" for suffix in suffixes.split(","))

    def start(self, name: str, suffixes: str, instance: str | None = None, *, solo: bool = False) -> None:
        topics = self._topic_names(suffixes)
        self.members[name] = Member(name, topics, instance or None, started_at=time.monotonic())
        if self.strategy.client == "java":
            line = f"start {name} {','.join(topics)}" + (f" {instance}" if instance else "") + "\n"
            if solo:
                control = self.work / f"{name}.control"
                control.write_text(line, encoding="utf-8")
                self._solo[name] = start(f"solo-{name}", self._java_argv(control), self.work)
            else:
                self._java_host()
                with self._host_control.open("a", encoding="utf-8") as out:
                    out.write(line)
            return
        spec = TimedMemberSpec(
            name=name,
            client=self.strategy.client,
            group=self.group_id,
            topics=topics,
            strategy=self.strategy.setting,
            session_timeout_ms=self.settings.session_ms,
            heartbeat_interval_ms=self.settings.heartbeat_ms,
            group_instance_id=instance or None,
            metadata_max_age_ms=self.settings.metadata_ms,
            fetched=True,
        )
        label = f"{name}-{len([k for k in self._python if k.startswith(name)])}"
        self._python[label] = MemberProcess.launch(spec, self.bootstrap, self.work / label)

    def stop(self, name: str) -> None:
        member = self.members[name]
        member.alive, member.ended_at = False, time.monotonic()
        if self.strategy.client == "java":
            if name in self._solo:
                self._solo[name].stop(40.0)
            else:
                with self._host_control.open("a", encoding="utf-8") as out:
                    out.write(f"stop {name}\n")
            return
        process = self._live_python(name)
        threading.Thread(target=process.leave, args=(40.0,), daemon=True).start()

    def crash(self, name: str) -> None:
        member = self.members[name]
        member.alive, member.ended_at, member.crashed = False, time.monotonic(), True
        if self.strategy.client == "java":
            self._solo[name].kill()
        else:
            self._live_python(name).kill()

    def subscribe(self, name: str, suffixes: str) -> None:
        topics = self._topic_names(suffixes)
        self.members[name].topics = topics
        if self.strategy.client == "java":
            with self._host_control.open("a", encoding="utf-8") as out:
                out.write(f"subscribe {name} {','.join(topics)}\n")
        else:
            self._live_python(name).subscribe(topics)

    def _live_python(self, name: str) -> MemberProcess:
        labels = [label for label in self._python if label.rsplit("-", 1)[0] == name]
        return self._python[labels[-1]]

    def close(self) -> None:
        if self._host is not None:
            with self._host_control.open("a", encoding="utf-8") as out:
                out.write("exit\n")
        for process in self._solo.values():
            process.stop(40.0)
        for member in self._python.values():
            member.leave(40.0)
        if self._host is not None:
            deadline = time.monotonic() + 40.0
            while self._host.alive() and time.monotonic() < deadline:
                time.sleep(0.2)
            self._host.stop(10.0)
        self.read()

    # -- events -------------------------------------------------------------------------------------------
    def _lines(self, key: str, log: Path) -> list[dict[str, Any]]:
        start_at = self._read.get(key, 0)
        try:
            with log.open("rb") as file:
                file.seek(start_at)
                data = file.read()
        except FileNotFoundError:
            return []
        complete = data.rfind(b"\n") + 1
        if complete == 0:
            return []
        self._read[key] = start_at + complete
        found = []
        for raw in data[:complete].splitlines():
            if raw.startswith(b"{"):
                try:
                    found.append(json.loads(raw))
                except json.JSONDecodeError:
                    continue
        return found

    def read(self) -> list[dict[str, Any]]:
        """Read new lines of every member; events as ``{t, e, m, partitions, member_id, gen}``."""
        new: list[dict[str, Any]] = []
        processes = ([("host", self._host)] if self._host is not None else []) + list(self._solo.items())
        for key, process in processes:
            new.extend(
                {
                    "t": float(line["t"]),
                    "e": line["e"],
                    "m": line["m"],
                    "partitions": _pairs(line.get("partitions", ())),
                    "member_id": line.get("member_id"),
                    "gen": line.get("gen"),
                }
                for line in self._lines(key, process.log)
                if "m" in line and "e" in line
            )
        for label, member in self._python.items():
            new.extend(
                {
                    "t": float(line["t"]),
                    "e": line["event"],
                    "m": label.rsplit("-", 1)[0],
                    "partitions": _pairs(line.get("partitions", ())),
                    "member_id": line.get("member_id"),
                    "gen": line.get("generation"),
                }
                for line in self._lines(label, member.process.log)
                if "event" in line and "t" in line
            )
        new.sort(key=lambda event: event["t"])
        self.events.extend(new)
        return new

    def holdings(self) -> dict[str, set[Partition]]:
        """What each member holds now (its listener calls in order)."""
        held: dict[str, set[Partition]] = {}
        for event in sorted(self.events, key=lambda e: e["t"]):
            if event["e"] not in LISTENER:
                continue
            mine = held.setdefault(event["m"], set())
            if event["e"] == "assigned":
                mine.update(event["partitions"])
            else:
                mine.difference_update(event["partitions"])
        return held

    def member_ids(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for event in self.events:
            if event["e"] in LISTENER and event.get("member_id"):
                found[event["m"]] = str(event["member_id"])
        return found

    def settled(self, counts: dict[str, int], since: float) -> float | None:
        """The time of the last listener call if the group is settled now, else None."""
        self.read()
        live = {name: m for name, m in self.members.items() if m.alive}
        held = self.holdings()
        wanted = sorted({(t, p) for m in live.values() for t in m.topics for p in range(counts[t])})
        got = sorted(tp for name in live for tp in held.get(name, set()))
        if got != wanted:
            return None
        if any(tp[0] not in live[name].topics for name in live for tp in held.get(name, set())):
            return None
        joined = {e["m"] for e in self.events if e["e"] == "assigned" and e["t"] >= live.get(e["m"], _NEVER).started_at}
        if set(live) - joined:  # a member that has not joined yet (a Python member takes seconds to start)
            return None
        calls = [e["t"] for e in self.events if e["e"] in LISTENER and e["m"] in live]
        last = max(calls, default=since)
        if time.monotonic() - max(last, since) < self.quiet_s():
            return None
        return last

    def quiet_s(self) -> float:
        """How long no listener call must come for the group to be settled: ``quiet_s``, and at least a heartbeat
        interval of the group's protocol and a second more. A KIP-848 member learns of a new target (a subscription
        change, a revocation to make, a partition freed for it) only on its next heartbeat, so a step's listener
        calls can be a heartbeat apart: with the quiet no longer than that, a step was taken as settled between two
        of them (a subscription change's revocations then counted in the next step)."""
        interval = (
            self.settings.broker_heartbeat_ms if self.strategy.protocol == "consumer" else self.settings.heartbeat_ms
        )
        return max(self.settings.quiet_s, interval / 1000 + 1.0)

    def failures(self) -> list[str]:
        return [f"{e['m']}: {e}" for e in self.events if e["e"] == "failed"]


@dataclass
class StepRecord:
    actions: list[list[str]]
    t0: float
    settled_at: float | None = None
    end: float = 0.0
    end_wall: float = 0.0
    """The step's end on the wall clock (the cluster's records carry wall-clock times)."""
    members: dict[str, dict[str, Any]] = field(default_factory=dict)
    holdings: dict[str, list[list[Any]]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    crashed: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    measured: bool = True


class Producer:
    """A process of its own (``python -m calibration.produce``) writing a record to every partition of every topic
    every ``interval`` seconds: the runner's own work (reading the members' output) never delays it."""

    def __init__(self, bootstrap: str, interval: float, work: Path) -> None:
        work.mkdir(parents=True, exist_ok=True)
        self._topics = work / "producer-topics.json"
        self.counts: dict[str, int] = {}
        self._write()
        command = [sys.executable, "-m", "calibration.produce", bootstrap, str(interval), str(self._topics)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self._process = start("producer", command, work, env)

    def _write(self) -> None:
        partial = self._topics.with_suffix(".partial")
        partial.write_text(json.dumps(self.counts), encoding="utf-8")
        partial.replace(self._topics)

    def set(self, topic: str, count: int) -> None:
        self.counts[topic] = count
        self._write()

    def drop(self, topics: Iterable[str]) -> None:
        for topic in topics:
            self.counts.pop(topic, None)
        self._write()

    def report(self) -> list[str]:
        """What the producer printed: its counts every 5 s and its first failures."""
        return self._process.log.read_text(encoding="utf-8", errors="replace").splitlines()

    def alive(self) -> bool:
        return self._process.alive()

    def close(self) -> None:
        self._process.stop(20.0)


def create_topics(bootstrap: str, topics: dict[str, int]) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 2})
    futures = admin.create_topics([NewTopic(name, count, 1) for name, count in topics.items()], request_timeout=30)
    for future in futures.values():
        future.result(TOPIC_TIMEOUT_S)
    _wait_partitions(admin, topics)


def grow_topic(bootstrap: str, topic: str, count: int) -> None:
    from confluent_kafka.admin import AdminClient, NewPartitions  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 2})
    for future in admin.create_partitions([NewPartitions(topic, count)], request_timeout=30).values():
        future.result(TOPIC_TIMEOUT_S)
    _wait_partitions(admin, {topic: count})


def _wait_partitions(admin: Any, topics: dict[str, int]) -> None:
    deadline = time.monotonic() + TOPIC_TIMEOUT_S
    while time.monotonic() < deadline:
        listed = admin.list_topics(timeout=10).topics
        if all(
            name in listed
            and listed[name].error is None
            and len(listed[name].partitions) == count
            and all(p.leader >= 0 for p in listed[name].partitions.values())
            for name, count in topics.items()
        ):
            return
        time.sleep(0.2)
    msg = f"topics {sorted(topics)} did not get their partitions with leaders within {TOPIC_TIMEOUT_S:.0f} s"
    raise RuntimeError(msg)


@dataclass
class GroupRun:
    """What one group did in one scenario: its steps (set-up first) and every event of its members."""

    scenario: str
    strategy: Strategy
    group_id: str
    prefix: str
    steps: list[StepRecord]
    events: list[dict[str, Any]]
    members: dict[str, Member]
    failures: list[str]
    producer: list[str] = field(default_factory=list)
    """What the scenario's producer printed (its counts every 5 s, its first failures)."""
    topic_ids: dict[str, str] = field(default_factory=dict)
    """The broker's ids of the group's topics (name to id as Kafka prints it): the broker's ``uniform`` iterates
    topics in their ids' ``HashSet`` order, and the replay does too given them (``Cluster(topic_ids=...)``)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "strategy": self.strategy.label,
            "product": self.strategy.product,
            "protocol": self.strategy.protocol,
            "group_id": self.group_id,
            "prefix": self.prefix,
            "steps": [step.__dict__ for step in self.steps],
            "events": [{**e, "partitions": [list(p) for p in e["partitions"]]} for e in self.events],
            "members": {name: m.__dict__ for name, m in self.members.items()},
            "failures": self.failures,
            "producer": self.producer[-12:],
            "topic_ids": dict(sorted(self.topic_ids.items())),
        }


def _snapshot(group: Group, step: StepRecord, counts: dict[str, int]) -> None:
    ids = group.member_ids()
    held = group.holdings()
    step.counts = {t: counts[t] for t in sorted({t for m in group.members.values() if m.alive for t in m.topics})}
    for name, member in group.members.items():
        if not member.alive:
            continue
        step.members[name] = {
            "member_id": ids.get(name),
            "instance": member.instance,
            "topics": list(member.topics),
        }
        step.holdings[name] = [list(tp) for tp in sorted(held.get(name, set()))]


def play(  # noqa: C901, PLR0913, PLR0915 - one scenario's script for every group at once
    scenario: Scenario,
    strategies: Sequence[Strategy],
    *,
    bootstrap: str,
    settings: Settings,
    work: Path,
    kafka_version: str,
    log: Any = None,
) -> list[GroupRun]:
    """Play ``scenario`` once per strategy, all groups at once; one :class:`GroupRun` per strategy."""
    say = log or (lambda text: print(text, file=sys.stderr, flush=True))
    tag = uuid.uuid4().hex[:6]
    groups: list[Group] = []
    counts: dict[int, dict[str, int]] = {}
    for index, strategy in enumerate(strategies):
        prefix = f"{scenario.name}-{index}-{tag}"
        group = Group(strategy, f"calib-{prefix}", prefix, settings, bootstrap, work / prefix)
        group.kafka_version = kafka_version
        groups.append(group)
        counts[index] = {f"{prefix}-{suffix}": n for suffix, n in settings.partitions}
    create_topics(bootstrap, {name: n for c in counts.values() for name, n in c.items()})
    from assignors.collect import cluster_topic_ids  # confluent-kafka, as create_topics

    names_of = cluster_topic_ids({"bootstrap.servers": bootstrap})
    topic_ids = {name: topic_id for topic_id, name in names_of.items()}
    producer = Producer(bootstrap, settings.produce_interval_s, work / f"producer-{scenario.name}-{tag}")
    for c in counts.values():
        for name, n in c.items():
            producer.set(name, n)
    time.sleep(1.0)  # every partition has records before anyone joins
    records: dict[int, list[StepRecord]] = {i: [] for i in range(len(groups))}

    def do(actions: Sequence[Action], *, measured: bool) -> None:  # noqa: C901, PLR0912 - every kind of action
        t0 = time.monotonic()
        steps = {i: StepRecord([list(a) for a in actions], t0, measured=measured) for i in range(len(groups))}
        for action in actions:
            kind = action[0]
            if kind == "sleep":
                time.sleep(float(action[1]))
                continue
            if kind == "grow":
                for i, group in enumerate(groups):
                    topic = f"{group.prefix}-{action[1]}"
                    grow_topic(bootstrap, topic, int(action[2]))
                    counts[i][topic] = int(action[2])
                    producer.set(topic, int(action[2]))
                continue
            for i, group in enumerate(groups):
                if kind == "start":
                    instance = action[3] if len(action) > 3 else ""
                    group.start(action[1], action[2], instance or None, solo=len(action) > 4)
                elif kind == "stop":
                    group.stop(action[1])
                    steps[i].stopped.append(action[1])
                elif kind == "crash":
                    group.crash(action[1])
                    steps[i].crashed.append(action[1])
                elif kind == "subscribe":
                    group.subscribe(action[1], action[2])
        pending = set(range(len(groups)))
        deadline = time.monotonic() + settings.settle_timeout_s
        while pending and time.monotonic() < deadline:
            for i in sorted(pending):
                when = groups[i].settled(counts[i], t0)
                if when is not None:
                    steps[i].settled_at = when
                    _snapshot(groups[i], steps[i], counts[i])
                    pending.discard(i)
            time.sleep(0.25)
        for i in pending:
            say(f"  {groups[i].strategy.label}: did not settle within {settings.settle_timeout_s:.0f} s")
            _snapshot(groups[i], steps[i], counts[i])
        time.sleep(1.0)  # the last gaps close before the next step
        for i in range(len(groups)):
            steps[i].end, steps[i].end_wall = time.monotonic(), time.time()
            records[i].append(steps[i])

    try:
        if scenario.setup:
            do(scenario.setup, measured=False)
        for number, actions in enumerate(scenario.steps, start=1):
            say(f"  step {number}/{len(scenario.steps)}: {' + '.join(' '.join(a) for a in actions)}")
            do(actions, measured=True)
    finally:
        closers = [threading.Thread(target=group.close) for group in groups]
        for thread in closers:
            thread.start()
        for thread in closers:
            thread.join(90)
        producer.close()
        produced = producer.report()
    return [
        GroupRun(
            scenario.name,
            g.strategy,
            g.group_id,
            g.prefix,
            records[i],
            g.events,
            g.members,
            g.failures(),
            produced,
            {name: topic_ids[name] for name in sorted(counts[i]) if name in topic_ids},
        )
        for i, g in enumerate(groups)
    ]
