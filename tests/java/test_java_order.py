"""``assignors.consumer_group._java_order`` against Java itself: the order in which a ``HashMap`` of member ids and a
``HashSet`` of Kafka topic ids iterate, and the hashes behind it (``String.hashCode``, Kafka's ``Uuid.hashCode``).

One JVM runs a single-file program over every drawn case at once (Kafka's ``Uuid`` from the oracle's classpath).
"""

from __future__ import annotations

import base64
import random
import shutil
import string
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assignors.consumer_group._java_order import (
    CoordinatorTable,
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

_ALPHABET = [*string.ascii_letters, *string.digits, "-", "_", "\u00e9", "\u4e2d", "\U0001f600"]


def _uuid_text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _java(tmp_path: Path, program: str, lines: list[str]) -> list[str]:
    """Run ``program`` (a single-file Java program whose public class is its first ``public class``) on Kafka's
    classpath with ``lines`` as its input; its output lines."""
    java = shutil.which("java")
    if java is None:
        pytest.fail("java not found: these tests compare with Java's and Kafka's own classes")
    name = program.split("public class ", 1)[1].split(maxsplit=1)[0]
    source = tmp_path / f"{name}.java"
    source.write_text(program)
    done = subprocess.run(  # noqa: S603 - our own program, our drawn input
        [java, "-cp", ":".join(kafka_jvm.classpath()), str(source)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.splitlines()


@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1))
def test_orders_are_javas(tmp_path_factory: pytest.TempPathFactory, seed: int) -> None:
    """300 drawn maps in one JVM: member ids (1 to 30 characters of any text, up to 80 of them: the table grows past
    16, 32 and 64) put in the drawn order, and topic ids (up to 40) put in the drawn order then copied, iterate in
    Java's order; the hashes are Java's."""
    rng = random.Random(seed)  # noqa: S311 - drawn test data
    members = [
        list(dict.fromkeys("".join(rng.choices(_ALPHABET, k=rng.randint(1, 30))) for _ in range(rng.randint(1, 80))))
        for _ in range(150)
    ]
    topics = [list(dict.fromkeys(_uuid_text(rng.randbytes(16)) for _ in range(rng.randint(1, 40)))) for _ in range(150)]
    lines = ["\t".join(["members", *ids]) for ids in members] + ["\t".join(["topics", *ids]) for ids in topics]
    answers = [line.split("\t") for line in _java(tmp_path_factory.mktemp("orders"), PROGRAM, lines)]
    assert len(answers) == len(lines)
    for ids, answer in zip(members, answers[: len(members)], strict=True):
        assert java_map_order(ids, java_string_hash) == answer[:-1]
        assert java_string_hash(ids[0]) == int(answer[-1]) & 0xFFFFFFFF
    assert sum(len(ids) > 20 for ids in members) > 50  # tables past 16 and 32 slots
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


TIMELINE = """
import java.util.*;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

public class Timeline {
    // Each line: a group's history, one tab-separated field per step, member ids comma-separated. Every step but
    // the last is what the group held after it: members not in it are removed, the others added (those not held
    // yet in String order), then every member is put again (their next heartbeats). The last step is a target
    // computation: its members as TargetAssignmentBuilder puts them into memberSpecs, held members through the
    // coordinator's view of its table (UpdatedMembersAndTargetAssignmentView where this Kafka has it), the others
    // added by the view. Prints the HashMap's iteration order.
    public static void main(String[] args) throws Exception {
        Scanner in = new Scanner(System.in);
        while (in.hasNextLine()) {
            String[] steps = in.nextLine().split("\\t", -1);
            SnapshotRegistry registry = registry();
            TimelineHashMap<String, String> members = new TimelineHashMap<>(registry, 0);
            long epoch = 0;
            for (int s = 0; s < steps.length - 1; s++) {
                Set<String> now = ids(steps[s]);
                for (String held : new ArrayList<>(members.keySet())) if (!now.contains(held)) members.remove(held);
                for (String id : new TreeSet<>(now)) if (!members.containsKey(id)) members.put(id, id);
                for (String id : new TreeSet<>(now)) members.put(id, id + "'");
                // as the coordinator's runtime snapshots after each write
                SnapshotRegistry.class.getMethod("idempotentCreateSnapshot", long.class).invoke(registry, epoch++);
            }
            Set<String> computed = ids(steps[steps.length - 1]);
            Map<String, String> view = view(members, computed);
            Map<String, String> specs = new HashMap<>();
            view.forEach(specs::put);
            System.out.println(String.join(",", specs.keySet()));
        }
    }

    static SnapshotRegistry registry() throws Exception {  // LogContext moved to utils.internals in Kafka 4.2
        for (String name : new String[] {"org.apache.kafka.common.utils.internals.LogContext",
                                         "org.apache.kafka.common.utils.LogContext"}) {
            try {
                Class<?> context = Class.forName(name);
                Object logs = context.getConstructor().newInstance();
                return SnapshotRegistry.class.getConstructor(context).newInstance(logs);
            } catch (ClassNotFoundException e) {
                // the other package
            }
        }
        throw new IllegalStateException("no LogContext on the classpath");
    }

    static Set<String> ids(String field) {
        return field.isEmpty() ? new HashSet<>() : new HashSet<>(Arrays.asList(field.split(",", -1)));
    }

    @SuppressWarnings("unchecked")
    static Map<String, String> view(TimelineHashMap<String, String> members, Set<String> computed) throws Exception {
        Class<?> kind;
        try {
            kind = Class.forName("org.apache.kafka.coordinator.group.util.UpdatedMembersAndTargetAssignmentView");
        } catch (ClassNotFoundException e) {  // before it: memberSpecs from the members, then updatedMembers
            Map<String, String> specs = new LinkedHashMap<>();
            members.forEach((id, value) -> { if (computed.contains(id)) specs.put(id, value); });
            Map<String, String> updated = new HashMap<>();
            for (String id : new TreeSet<>(computed)) if (!members.containsKey(id)) updated.put(id, id);
            specs.putAll(updated);
            return specs;
        }
        Object view = kind.getConstructor(Map.class, Map.class, Map.class, java.util.function.Function.class)
            .newInstance(members, new HashMap<String, String>(), new HashMap<String, String>(),
                (java.util.function.Function<Object, String>) member -> null);
        for (String id : new ArrayList<>(members.keySet()))
            if (!computed.contains(id)) kind.getMethod("removeMember", String.class).invoke(view, id);
        java.lang.reflect.Method add = kind.getMethod("addOrUpdateMember", String.class, Object.class);
        for (String id : new TreeSet<>(computed)) if (!members.containsKey(id)) add.invoke(view, id, id);
        return (Map<String, String>) kind.getMethod("members").invoke(view);
    }
}
"""


def _histories(seed: int, count: int) -> list[list[list[str]]]:
    """``count`` group histories of 2 to 9 steps, up to 40 members each, their ids (1 to 30 characters of any text)
    drawn from a pool of 80 so that members leave and come back; every 4th history is one step and a computation
    with the same members (what ``coordinator_member_order`` takes without a table)."""
    rng = random.Random(seed)  # noqa: S311 - drawn test data
    alphabet = [*string.ascii_letters, *string.digits, "-", "_", "é", "中", "\U0001f600"]
    pool = sorted({"".join(rng.choices(alphabet, k=rng.randint(1, 30))) for _ in range(80)})
    return [[sorted(rng.sample(pool, rng.randint(0, 40))) for _ in range(rng.randint(2, 9))] for _ in range(count)]


@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1))
def test_coordinator_order_follows_its_table(tmp_path_factory: pytest.TempPathFactory, seed: int) -> None:
    """400 drawn group histories in one JVM (Kafka's TimelineHashMap and the coordinator's view of it): members
    joining, leaving and coming back, the table growing to 32 slots and never shrinking; the last step is a target
    computation with members joining, leaving and staying. The order of ``memberSpecs`` is Java's, in-bucket order
    included, and it is not the order without the table in many of them."""
    histories = _histories(seed, 400)
    lines = ["\t".join(",".join(step) for step in history) for history in histories]
    answers = [line.split(",") if line else [] for line in _java(tmp_path_factory.mktemp("timeline"), TIMELINE, lines)]
    assert len(answers) == len(lines)
    decided = 0
    for history, answer in zip(histories, answers, strict=True):
        table = CoordinatorTable()
        for step in history[:-1]:
            table.update(step)
        ours = coordinator_member_order(history[-1], table)
        assert ours == answer, history
        if len(history) == 2 and history[0] == history[1]:  # every member added at once, in Java's string order
            assert coordinator_member_order(history[-1]) == answer, history
        decided += ours != coordinator_member_order(history[-1])
    assert decided > 40  # the table's history decided the order, not the ids alone
