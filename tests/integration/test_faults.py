"""Faults, with nothing lost, one scenario per client/assignor pair on a real broker.

A producer writes keyed records (50 a second, idempotent, acks=all) to a 6-partition topic the whole time (but for
the broker's restart: ``KeyedProducer.pause``) while the group's members, each in its own process: join one by one
(c1, s1, c2, then c3); s1, a static member (group.instance.id), is SIGKILLed and restarted within its session
timeout; c2 leaves; c1 is SIGKILLed (the coordinator notices at session expiry); the broker restarts; c4 joins.
Then, from every member's listener log, records and commits, and from the broker:

- no partition was ever held by two live members at once (a SIGKILLed member holds nothing from its kill on; an
  expelled member that later reports its partitions lost was a fenced zombie: counted, see ``held_twice``);
- every acknowledged record was consumed at least once (same key at the same offset);
- committed offsets never went backwards, and at the end the group's committed offsets are the log-end offsets;
- under COOPERATIVE, no survivor of a rebalance ever gave up everything it held;
- the restarted static member got back exactly what it held, and nobody else's assignment moved for it (KIP-345).

The figures (records produced, consumed, duplicates, seconds) are printed with each scenario's result.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from assignors.testing import KafkaBroker
from helpers.faults import (
    KeyedProducer,
    commits_going_back,
    committed_and_end,
    held_twice,
    kill,
    missing,
    settled_balanced,
    survivors_giving_up_everything,
    wait_until_consumed,
)
from helpers.group_log import GroupLog
from helpers.processes import ProcessMember, java_command, python_command
from integration.conftest import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

PARTITIONS = 6
SESSION_MS = "10000"  # a SIGKILLed dynamic member is noticed within 10 s; a broker restart fits inside it
STATIC_SESSION_MS = "20000"  # the static member's restart (a new process) fits well inside it

# Which client runs each member: ("kafka-python" | "aiokafka", our strategy) or "java" (Kafka's own assignor).
Client = tuple[str, str] | str
PAIRS: dict[str, dict[str, Client]] = {
    "kafka-python+cooperative-sticky": dict.fromkeys(
        ["c1", "s1", "c2", "c3", "c4"], ("kafka-python", "cooperative-sticky")
    ),
    "aiokafka+sticky": dict.fromkeys(["c1", "s1", "c2", "c3", "c4"], ("aiokafka", "sticky")),
    "java+kafka-python+cooperative-sticky": {
        "c1": ("kafka-python", "cooperative-sticky"),
        "s1": "java",
        "c2": "java",
        "c3": ("kafka-python", "cooperative-sticky"),
        "c4": "java",
    },
}


@pytest.mark.parametrize("pair", list(PAIRS))
def test_faults_lose_nothing(broker: KafkaBroker, group: str, tmp_path: Path, pair: str) -> None:  # noqa: PLR0915 - one story
    began = time.monotonic()
    topic = f"faults-{group}"
    create_topic(broker.bootstrap_servers, topic, PARTITIONS)
    log = GroupLog()
    everyone: list[ProcessMember] = []

    def spawn(name: str, label: str | None = None) -> ProcessMember:
        options = {"bootstrap": broker.bootstrap_servers, "group": group, "topic": topic, "name": name}
        options["session_ms"] = SESSION_MS
        if name == "s1":
            options |= {"instance": "static-1", "session_ms": STATIC_SESSION_MS}
        client = PAIRS[pair][name]
        if client == "java":
            command = java_command(**options)
        else:
            command = python_command(client=client[0], strategy=client[1], **options)
        member = ProcessMember(name, command, tmp_path, incarnation=label)
        everyone.append(member)
        log.sources.append(member.new_events)
        return member

    live: dict[str, ProcessMember] = {}
    wait: Callable[..., dict[str, set[int]]] = lambda: settled_balanced(log, live, partitions=PARTITIONS)  # noqa: E731
    producer = KeyedProducer(broker.bootstrap_servers, topic, log_file=tmp_path / "producer.log")
    try:
        for name in ("c1", "s1", "c2", "c3"):
            live[name] = spawn(name)
            wait()

        # The static member crashes and comes back within its session timeout: same partitions, nobody moves.
        held = kill(live.pop("s1"), log)
        crashed_at = time.monotonic()
        live["s1#2"] = spawn("s1", "s1#2")
        after = wait()
        assert after["s1#2"] == held
        moved = [e for e in log.snapshot() if e.at > crashed_at and e.consumer != "s1#2"]
        assert moved == []

        live.pop("c2").stop()  # leaves the group
        wait()
        kill(live.pop("c1"), log)  # the coordinator notices at session expiry
        wait()
        producer.pause()  # nothing in flight across the restart (KeyedProducer.pause says why)
        down_at = time.monotonic() - producer.began
        broker.restart()
        up_at = time.monotonic() - producer.began
        producer.resume()
        wait()
        live["c4"] = spawn("c4")
        wait()

        producer.finish()
        counts = wait_until_consumed(producer.delivered, lambda: everyone, 120.0)
        deadline = time.monotonic() + 60.0
        while True:
            committed, ends = committed_and_end(broker.bootstrap_servers, group, topic, PARTITIONS)
            if committed == ends or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        going_back = commits_going_back(everyone)
        double, zombies = held_twice(log)
        until = {m.label: m.stopped_at or m.killed_at or float("inf") for m in everyone}
        gave_up_all = survivors_giving_up_everything(log, until)
    finally:
        producer.stop.set()
        closed = {label: member.closed_cleanly() for label, member in live.items()}
        for member in everyone:
            if member.process.alive():
                member.stop()
    seconds = time.monotonic() - began
    duplicates = sum(n - 1 for n in counts.values())
    print(  # noqa: T201 - the scenario's figures, for the record
        f"\n[faults {pair}] produced {len(producer.delivered)} (written {producer.written}), consumed "
        f"{sum(counts.values())} ({len(counts)} distinct, {duplicates} duplicates), {zombies} zombie overlaps, "
        f"{seconds:.1f} s"
    )
    assert producer.failures == [], (
        f"the broker restarted from +{down_at:.1f} s to +{up_at:.1f} s; {len(producer.failures)} records failed, "
        f"{producer.failures[:3]}; the producer from the restart on:\n{producer.story(down_at - 1.0)}"
    )
    assert producer.unflushed == 0
    assert missing(producer.delivered, counts) == []
    assert committed == ends
    assert going_back == []
    assert double == [], "\n".join(f"{e.at:.3f} {e.consumer} {e.kind} {e.partitions}" for e in log.snapshot())
    if pair != "aiokafka+sticky":  # COOPERATIVE on every member
        assert gave_up_all == []
    assert closed == dict.fromkeys(live, True), {label: live[label].tail() for label in closed}
