"""``assignors.kafka_java``: Kafka's own classic assignors driven from Python give what Kafka's classes give.

The reference is the Java oracle (one JVM running the same classes through ``dev.assignors.oracle``, built by
``make jvm``): on every group the properties draw, the bridge's result is the oracle's, member by member, partition
by partition in the order a member receives them (Kafka's bytes group them by topic), user data
included. Kafka throwing is a :class:`JavaAssignorError` naming the class
and the JVM goes on serving; a JVM that dies or is silent is a :class:`JavaProcessError` with its last lines.
"""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import AssignorError, Cluster, ConfigurationError, InvalidSubscriptionError, Subscription, TopicPartition
from assignors.consumer_protocol import decode_assignment, encode_assignment
from assignors.kafka_java import (
    JavaAssignorError,
    JavaProcessError,
    java_assignor,
    kafka_classpath,
    stop_jvms,
)
from assignors.testing import Group
from helpers.java_oracle import JavaError, JavaOracle
from helpers.kafka_jvm import build_dir, classpath, kafka_version
from helpers.oracle_groups import classic_groups, cooperative_groups, sticky_groups

NAMES = ("range", "roundrobin", "sticky", "cooperative-sticky")


def _jars() -> tuple[str, ...]:
    return kafka_classpath(classpath()[1:])  # Kafka's jars, without the oracle's own classes


def _same(name: str, group: Group, oracle: JavaOracle) -> None:
    bridge = java_assignor(name, _jars())
    try:
        expected = oracle.assign(name, group.cluster, group.subscriptions)
    except InvalidSubscriptionError:  # Kafka's result lists a partition twice (docs/java-parity.md)
        with pytest.raises(JavaAssignorError, match=r"no valid assignment: .* lists partition '[^']+' twice"):
            bridge.assign(group.cluster, group.subscriptions)
        return
    except JavaError as error:
        with pytest.raises(JavaAssignorError, match=f"^{error.java_class}"):
            bridge.assign(group.cluster, group.subscriptions)
        return
    got = bridge.assign(group.cluster, group.subscriptions)
    # what the members receive: Kafka's bytes, partitions grouped by topic (ConsumerProtocol.serializeAssignment)
    received = {m: decode_assignment(encode_assignment(a)) for m, a in expected.items()}
    assert {m: (a.partitions, a.user_data) for m, a in got.items()} == {
        m: (a.partitions, a.user_data) for m, a in received.items()
    }


@given(name=st.sampled_from(NAMES[:2]), group=classic_groups(racks=False))
def test_range_and_roundrobin_are_kafkas(name: str, group: Group, oracle: JavaOracle) -> None:
    _same(name, group, oracle)


@given(group=sticky_groups())
def test_sticky_is_kafkas(group: Group, oracle: JavaOracle) -> None:
    _same("sticky", group, oracle)


@given(group=cooperative_groups())
def test_cooperative_sticky_is_kafkas(group: Group, oracle: JavaOracle) -> None:
    _same("cooperative-sticky", group, oracle)


def test_the_jvm_runs_the_builds_kafka_and_one_jvm_serves_every_assignor() -> None:
    first, second = java_assignor("sticky", _jars()), java_assignor("range", _jars())
    assert first.kafka_version == second.kafka_version == kafka_version()
    assert first.name == "sticky"
    assert type(first).__name__ == "JavaStickyAssignor"
    result = second.assign(
        Cluster({"t": 3}), {"a": Subscription(["t"]), "b": Subscription(["t"]), "c": Subscription([])}
    )
    assert {m: [str(tp) for tp in a.partitions] for m, a in result.items()} == {
        "a": ["t-0", "t-1"],
        "b": ["t-2"],
        "c": [],
    }


def test_a_member_state_is_ours_and_kafka_reads_it() -> None:
    """The eager StickyAssignor reads a member's previous assignment from its user data alone (ownedPartitions are
    empty after an eager revoke): the member's own assignor writes it, as a Java member's does."""
    member = java_assignor("sticky", _jars())
    t = [TopicPartition("t", p) for p in range(4)]
    from assignors import Assignment

    member.on_assignment(Assignment([t[3], t[2]]), 5)
    data = member.subscription_user_data(["t"])
    subscriptions = {"a": Subscription(["t"], user_data=data, generation_id=5), "b": Subscription(["t"])}
    result = member.assign(Cluster({"t": 4}), subscriptions)
    assert set(result["a"].partitions) == {t[2], t[3]}
    without = member.assign(Cluster({"t": 4}), {"a": Subscription(["t"], generation_id=5), "b": Subscription(["t"])})
    assert without["a"].partitions == (t[0], t[2])  # no user data: no history (round robin), as Kafka reads it


def test_kafka_throwing_is_named_and_the_jvm_serves_on() -> None:
    """Kafka's code throwing is an answer: the exception's class, message and Java stack trace; the same JVM
    answers the next call. (Kafka's assignors refuse little; a class name it does not know is refused the same
    way, through the same path.)"""
    from assignors import kafka_java

    bridge = java_assignor("range", _jars())
    jvm = kafka_java._jvm(bridge._java, bridge._classpath, 60.0)
    request = kafka_java._request("nonsense", Cluster({"t": 1}), {"a": Subscription(["t"])})
    with pytest.raises(JavaAssignorError, match=r"^java\.lang\.IllegalArgumentException: unknown classic") as raised:
        kafka_java._answer(jvm.call(request), "range")
    assert raised.value.java_class == "java.lang.IllegalArgumentException"
    assert "at KafkaAssignors.assignor" in raised.value.trace
    tp = TopicPartition("t", 0)
    assert bridge.assign(Cluster({"t": 1}), {"a": Subscription(["t"])})["a"].partitions == (tp,)


def test_a_dead_jvm_is_one_error_with_its_last_lines_and_the_next_call_starts_another() -> None:
    bridge = java_assignor("range", _jars())
    bridge.assign(Cluster({"t": 1}), {"a": Subscription(["t"])})
    from assignors import kafka_java

    (jvm,) = [j for key, j in kafka_java._JVMS.items() if key[1] == _jars()]  # the running JVM
    os.killpg(jvm.popen.pid, signal.SIGKILL)
    jvm.popen.wait(10)
    with pytest.raises(JavaProcessError, match=r"the JVM exited with status -9"):
        jvm.call(b"")
    assert bridge.assign(Cluster({"t": 1}), {"a": Subscription(["t"])})["a"].partitions == (TopicPartition("t", 0),)
    stop_jvms()


def _fake_java(tmp_path: Path, body: str) -> str:
    script = tmp_path / "java"
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("echo 'Error: no main class' >&2; exit 1", r"the JVM exited with status 1\); the JVM said:\nError: no main"),
        ("sleep 30", r"no answer within 0.5 s"),
        ("printf '\\377\\377\\377\\377'; sleep 30", r"answered a frame of -1 bytes"),
        (
            "printf '\\000\\000\\000\\011\\000\\000\\000\\0054.4.0\\000\\000\\000\\001\\007'; sleep 30",
            r"answered a frame that does not read \(status 7 at offset 0\)",
        ),
    ],
)
def test_a_jvm_that_fails_is_one_error(tmp_path: Path, body: str, message: str) -> None:
    bridge = java_assignor("range", _jars(), java=_fake_java(tmp_path, body), timeout=0.5)
    from assignors import kafka_java

    start = kafka_java._START_SECONDS  # the first start's allowance, shortened
    kafka_java._START_SECONDS = 0.5
    try:
        with pytest.raises(JavaProcessError, match=message):
            bridge.assign(Cluster({"t": 1}), {"a": Subscription(["t"])})
    finally:
        kafka_java._START_SECONDS = start
        stop_jvms()


def test_a_missing_java_and_bad_jars_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"cannot run '/no/java' \(not an executable\)"):
        java_assignor("range", _jars(), java="/no/java")
    with pytest.raises(ConfigurationError, match=r"/no/such/dir does not exist"):
        kafka_classpath("/no/such/dir")
    (tmp_path / "x.jar").write_bytes(b"")
    with pytest.raises(ConfigurationError, match=r"no kafka-clients jar there"):
        kafka_classpath(tmp_path)
    with pytest.raises(ConfigurationError, match=r"'uniform': not one of range, roundrobin, sticky"):
        java_assignor("uniform", _jars())
    assert issubclass(JavaProcessError, AssignorError)


def test_a_kafka_installation_a_libs_directory_and_a_listing_all_read(tmp_path: Path) -> None:
    jars = _jars()
    libs = tmp_path / "kafka" / "libs"
    libs.mkdir(parents=True)
    for jar in jars:
        (libs / Path(jar).name).symlink_to(jar)
    expected = tuple(sorted(str(libs / Path(jar).name) for jar in jars))
    assert kafka_classpath(tmp_path / "kafka") == kafka_classpath(libs) == expected
    listing = build_dir() / "classpath.txt"
    assert kafka_classpath(listing) == tuple(listing.read_text(encoding="utf-8").strip().split(os.pathsep))
    assert kafka_classpath(os.pathsep.join(jars)) == jars


def test_a_classpath_longer_than_a_file_name_is_read_as_a_classpath(tmp_path: Path) -> None:
    """A classpath past PATH_MAX (a broker's, some 5,000 characters at Kafka 3.9.1) is not a file name to probe:
    its entries are read, and the first that does not exist is named."""
    entries = [str(tmp_path / f"{'x' * 200}-{index}.jar") for index in range(30)]
    with pytest.raises(ConfigurationError, match=r"x-0\.jar does not exist"):
        kafka_classpath(os.pathsep.join(entries))
