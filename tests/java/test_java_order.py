"""``assignors.consumer_group._java_order`` against Java itself: the order in which a ``HashMap`` of member ids and a
``HashSet`` of Kafka topic ids iterate, and the hashes behind it (``String.hashCode``, Kafka's ``Uuid.hashCode``).

One JVM runs a single-file program over every drawn case at once (Kafka's ``Uuid`` from the oracle's classpath).
"""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assignors._core.util import java_sorted
from assignors.consumer_group._java_order import (
    coordinator_member_order,
    java_map_order,
    java_string_hash,
    kafka_uuid_hash,
    subscribed_topic_order,
    table_size_of_copy,
)
from helpers import kafka_jvm

PROGRAM = """
import java.util.*;
import org.apache.kafka.common.Uuid;

public class Orders {
    public static void main(String[] args) throws Exception {
        Scanner in = new Scanner(System.in);
        while (in.hasNextLine()) {
            String[] fields = in.nextLine().split("\\t", -1);
            List<String> out = new ArrayList<>();
            if (fields[0].equals("members")) {  // put in the given order, as the coordinator's memberSpecs
                Map<String, Integer> map = new HashMap<>();
                for (int i = 1; i < fields.length; i++) map.put(fields[i], i);
                out.addAll(map.keySet());
                out.add(Integer.toString(fields[1].hashCode()));
            } else {  // topic ids: a HashSet of them (puts), copied as the uniform builders copy it
                Set<Uuid> ids = new HashSet<>();
                for (int i = 1; i < fields.length; i++) ids.add(Uuid.fromString(fields[i]));
                for (Uuid id : new HashSet<>(ids)) out.add(id.toString());
                out.add(Integer.toString(Uuid.fromString(fields[1]).hashCode()));
            }
            System.out.println(String.join("\\t", out));
        }
    }
}
"""

_ID = st.binary(min_size=16, max_size=16).map(lambda raw: base64.urlsafe_b64encode(raw).decode().rstrip("="))
_NAME = st.text(st.characters(codec="utf-8", exclude_characters="\t\n\r"), min_size=1, max_size=30)


def _java(tmp_path: Path, lines: list[str]) -> list[list[str]]:
    java = shutil.which("java")
    if java is None:
        pytest.fail("java not found: these tests compare with Java's own HashMap")
    source = tmp_path / "Orders.java"
    source.write_text(PROGRAM)
    classpath = ":".join(kafka_jvm.classpath())
    done = subprocess.run(  # noqa: S603 - our own program, our drawn input
        [java, "-cp", classpath, str(source)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [line.split("\t") for line in done.stdout.splitlines()]


@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    members=st.lists(st.lists(_NAME, min_size=1, max_size=80, unique=True), min_size=150, max_size=150),
    topics=st.lists(st.lists(_ID, min_size=1, max_size=40, unique=True), min_size=150, max_size=150),
)
def test_orders_are_javas(
    tmp_path_factory: pytest.TempPathFactory, members: list[list[str]], topics: list[list[str]]
) -> None:
    """300 drawn maps in one JVM: member ids (any text, up to 80: the table grows past 16, 32 and 64) put in Java's
    string order, and topic ids (up to 40) put in the drawn order then copied, iterate in Java's order; the hashes
    are Java's."""
    members = [java_sorted(ids) for ids in members]
    lines = ["\t".join(["members", *ids]) for ids in members] + ["\t".join(["topics", *ids]) for ids in topics]
    answers = _java(tmp_path_factory.mktemp("orders"), lines)
    assert len(answers) == len(lines)
    for ids, answer in zip(members, answers[: len(members)], strict=True):
        assert coordinator_member_order(ids) == answer[:-1]
        assert java_string_hash(ids[0]) == int(answer[-1]) & 0xFFFFFFFF
    for ids, answer in zip(topics, answers[len(members) :], strict=True):
        put = java_map_order(ids, kafka_uuid_hash)
        copied = java_map_order(put, kafka_uuid_hash, table_size=lambda hashes: table_size_of_copy(len(hashes)))
        assert copied == answer[:-1]
        assert kafka_uuid_hash(ids[0]) == int(answer[-1]) & 0xFFFFFFFF


def test_subscribed_topics_go_in_the_order_of_their_ids() -> None:
    """Two topics whose ids share a bucket iterate in the order their names' set puts them (the coordinator
    resolves a member's ``HashSet`` of names); others by bucket."""
    ids = {"t0": "D2rtutSXJuY8t4jF6gtfIg", "t2": "4IN4wmoAGpt4b-qlem95pQ"}  # hashes 222371003, 2290348377: bucket 10
    assert subscribed_topic_order(["t2", "t0"], ids) == ["t0", "t2"]  # "t0" before "t2" in a HashSet of names
    assert subscribed_topic_order(["a", "b"], {"a": "AAAAAAAAAAEAAAAAAAAAAg", "b": "AAAAAAAAAAAAAAAAAAAAAQ"}) == [
        "b",
        "a",
    ]
