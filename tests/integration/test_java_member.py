"""Apache Kafka's own Java consumer (kafka-clients' ``KafkaConsumer`` with Kafka's ``CooperativeStickyAssignor``)
and kafka-python consumers running our cooperative-sticky, in one group on a real broker: leadership passes both
ways, and each side decodes the other's bytes exactly.

The Java member (``dev.assignors.member.ConsumerMember``) prints what Kafka's assignor decoded: as leader, every
member's subscription (topics, owned partitions, generation) and the assignment it made; as any member, the
assignment it received. Our assignor's side is noted by ``recording`` (members.py).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest

from assignors.testing import KafkaBroker
from helpers.group_log import Event, GroupLog, settled
from helpers.members import PARTITIONS, SESSION_TIMEOUT_MS, KafkaPythonMember, Led
from helpers.processes import ProcessMember, java_command

pytestmark = [pytest.mark.integration, pytest.mark.kafka]


def _member_of(name: str, member_ids: Any) -> str:
    """The member id the coordinator gave client ``name`` (it starts with the client id)."""
    (found,) = (member for member in member_ids if member.startswith(f"{name}-"))
    return str(found)


def _java_led(member: ProcessMember, client: str) -> list[dict[str, Any]]:
    """The Java member's rounds as leader that included client ``client``."""
    member.poll()
    return [
        line
        for line in member.lines
        if line["e"] == "led" and any(m.startswith(f"{client}-") for m in line["subscriptions"])
    ]


def _received(member: ProcessMember) -> list[dict[str, Any]]:
    member.poll()
    return [line for line in member.lines if line["e"] == "received"]


def test_java_and_kafka_python_lead_each_other(broker: KafkaBroker, topic: str, group: str, tmp_path: Path) -> None:  # noqa: PLR0915 - one story
    log = GroupLog()
    led: list[Led] = []
    python = partial(
        KafkaPythonMember,
        bootstrap=broker.bootstrap_servers,
        topic=topic,
        group=group,
        log=log,
        strategy="cooperative-sticky",
        led=led,
    )
    options = {"bootstrap": broker.bootstrap_servers, "group": group, "topic": topic}
    options["session_ms"] = str(SESSION_TIMEOUT_MS)

    def java(name: str) -> ProcessMember:
        member = ProcessMember(name, java_command(name=name, **options), tmp_path)
        log.sources.append(member.new_events)
        return member

    wait = partial(settled, log, partitions=PARTITIONS, deadline_s=90.0)
    threads: dict[str, KafkaPythonMember] = {}
    processes: dict[str, ProcessMember] = {}
    try:
        # 1. Java first: it leads. kafka-python a then b join; Kafka's assignor reads our subscriptions.
        processes["j1"] = java("j1")
        wait({"j1": 12})
        threads["a"] = python("a")
        wait({"j1": 6, "a": 6})
        before_b = log.holdings()["a"]
        threads["b"] = python("b")
        first = wait({"j1": 4, "a": 4, "b": 4})
        assert led == []  # Java led every round
        rounds = _java_led(processes["j1"], "b")
        assert rounds
        a_id = _member_of("a", rounds[0]["subscriptions"])
        seen = rounds[0]["subscriptions"][a_id]  # a's JoinGroup metadata when b joined, as Kafka decoded it
        assert seen["topics"] == [topic]
        assert set(seen["owned"]) == before_b
        assert seen["generation"] >= 1
        final = rounds[-1]["assignment"]  # what Kafka's assignor gave, as kafka-python read it
        assert set(final[a_id]) == first["a"]
        assert set(final[_member_of("b", final)]) == first["b"]

        # 2. The Java leader crashes: at session expiry a kafka-python member leads, with our assignor.
        held = log.holdings()["j1"]
        processes["j1"].kill()
        log.add(Event(processes["j1"].killed_at or 0.0, "j1", "lost", tuple(sorted(held))))
        second = wait({"a": 6, "b": 6})
        assert first["a"] <= second["a"]
        assert first["b"] <= second["b"]
        assert led
        ours = led[-1]
        assert ours.leader in {"a", "b"}
        assert sorted(m.split("-")[0] for m in ours.subscriptions) == ["a", "b"]

        # 3. Another Java member joins: our leader assigns it, Kafka's consumer reads our bytes.
        processes["j2"] = java("j2")
        third = wait({"a": 4, "b": 4, "j2": 4})
        got = _received(processes["j2"])[-1]
        assert set(got["partitions"]) == third["j2"]
        assert led[-1].assignment[got["member"]] == tuple(sorted(third["j2"]))
        assert {call.leader for call in led} <= {"a", "b"}

        # 4. kafka-python c joins: our leader reads what j2 owns from Kafka's bytes.
        calls = len(led)
        threads["c"] = python("c")
        wait({"a": 3, "b": 3, "j2": 3, "c": 3})
        joined = next(call for call in led[calls:] if any(m.startswith("c-") for m in call.subscriptions))
        j2 = joined.subscriptions[got["member"]]
        assert j2.topics == (topic,)
        assert {tp.partition for tp in j2.owned_partitions} == third["j2"]
        assert j2.generation_id == got["generation"]

        assert log.full_revocations(["a", "b", "c", "j2"]) == []  # COOPERATIVE on both clients, before any leaves

        # 5. The kafka-python members leave; Java leads again and assigns kafka-python d.
        for name in ("a", "b", "c"):
            threads.pop(name).leave()
        wait({"j2": 12})
        threads["d"] = python("d")
        fourth = wait({"j2": 6, "d": 6})
        rounds = _java_led(processes["j2"], "d")
        assert rounds
        d_id = _member_of("d", rounds[0]["subscriptions"])
        assert rounds[0]["subscriptions"][d_id]["topics"] == [topic]
        assert rounds[0]["subscriptions"][d_id]["owned"] == []
        assert set(rounds[-1]["assignment"][d_id]) == fourth["d"]
        assert {call.leader for call in led} <= {"a", "b", "c"}  # d never led: j2 did

        assert log.double_ownership() == []
        assert log.full_revocations(["j2", "d"]) == []
    finally:
        for thread in threads.values():
            thread.leave()
        closed = {name: member.closed_cleanly() for name, member in processes.items() if member.killed_at is None}
    assert {m.name: m.error for m in threads.values()} == dict.fromkeys(threads)
    assert closed == {"j2": True}, {name: processes[name].tail() for name in closed}
