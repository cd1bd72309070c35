"""``assignors collect`` on a secured real broker (Kafka 4.4.0): SASL PLAIN and SCRAM, TLS, ACLs.

One broker per module (``KafkaBroker`` with a ``SASL_PLAINTEXT``, an ``SSL`` and a ``SASL_SSL`` listener, its
certificates made with openssl at start, and the ``StandardAuthorizer``); every case runs the installed ``assignors``
executable as a user would and checks the exit status, the one line on stderr, that no ``--out`` is left behind
when nothing was read, and that no password appears in anything printed. The principals:

- ``alice``: no ACL at all; ``bob``: DESCRIBE on ``__consumer_offsets`` but not READ;
- ``carol``: DESCRIBE on every group and topic (what the Admin route needs), and no READ on ``__consumer_offsets``.
"""

from __future__ import annotations

import datetime as dt
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("confluent_kafka", reason="needs the collect extra")
pq = pytest.importorskip("pyarrow.parquet", reason="needs the collect extra")

from assignors import Assignment, Subscription, TopicPartition  # noqa: E402
from assignors.collect import VersionUnreadError, read_cluster_file, read_cluster_version  # noqa: E402
from assignors.offsets_topic import GroupMetadata, MemberMetadata, encode_record  # noqa: E402
from assignors.testing import KafkaBroker  # noqa: E402
from assignors.testing._groups import MemberProcess, MemberSpec, Observation, settle_group  # noqa: E402
from helpers.kafka_jvm import classpath, kafka_version  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

EXECUTABLE = Path(sys.executable).with_name("assignors")
USERS = {"alice": "alice-pw-7f3a91", "bob": "bob-pw-c2d4e8", "carol": "carol-pw-5b6a0f"}
WRONG = "wrong-pw-9e8d7c"
SECRETS = (*USERS.values(), WRONG)
TIMEOUT = 2.5  # --timeout of the failing cases: each must end well within it and the start-up of Python
T0 = 1_760_000_000_000


@pytest.fixture(scope="module")
def broker() -> Iterator[KafkaBroker]:
    from confluent_kafka.admin import (  # type: ignore[attr-defined]
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    with KafkaBroker(classpath=classpath(), sasl_users=USERS, tls=True, authorizer=True) as running:
        admin = AdminClient({"bootstrap.servers": running.bootstrap_servers})  # ANONYMOUS: a super user

        def allow(principal: str, kind: Any, name: str, operation: Any) -> Any:
            pattern = ResourcePatternType.LITERAL
            return AclBinding(kind, name, pattern, principal, "*", operation, AclPermissionType.ALLOW)

        acls = [
            allow("User:bob", ResourceType.TOPIC, "__consumer_offsets", AclOperation.DESCRIBE),
            allow("User:carol", ResourceType.GROUP, "*", AclOperation.DESCRIBE),
            allow("User:carol", ResourceType.TOPIC, "*", AclOperation.DESCRIBE),
        ]
        for future in admin.create_acls(acls, request_timeout=30).values():
            future.result(60)
        yield running


def cli(*args: str, timeout: float = 120) -> tuple[int, str, str, float]:
    """The installed executable's status, stdout, stderr and seconds taken; never a traceback nor a secret."""
    began = time.monotonic()
    done = subprocess.run(  # noqa: S603 - the project's own executable
        [str(EXECUTABLE), *args], capture_output=True, text=True, check=False, timeout=timeout
    )
    taken = time.monotonic() - began
    assert "Traceback" not in done.stderr, done.stderr
    assert not [s for s in SECRETS if s in done.stdout + done.stderr], done.stdout + done.stderr
    return done.returncode, done.stdout, done.stderr, taken


def properties(path: Path, settings: dict[str, str]) -> Path:
    path.write_text("".join(f"{key}={value}\n" for key, value in settings.items()), encoding="utf-8")
    return path


def sasl_ssl(broker: KafkaBroker, user: str, mechanism: str = "SCRAM-SHA-512") -> dict[str, str]:
    settings = broker.client_settings("SASL_SSL", user=user, mechanism=mechanism)
    del settings["bootstrap.servers"]
    return settings


def test_every_failure_on_the_way_in_is_one_named_line_and_leaves_nothing(broker: KafkaBroker, tmp_path: Path) -> None:
    """A wrong address, no login or a wrong password (PLAIN, SCRAM through a Java client's JAAS line), TLS on one
    side only, an untrusted certificate: exit 2 with one line naming the cause and the setting, in bounded time."""
    jaas = (
        f'org.apache.kafka.common.security.scram.ScramLoginModule required \\\n    username="alice" password="{WRONG}";'
    )
    cases = [
        ("127.0.0.1:1", {}, "cannot reach 127.0.0.1:1: connection refused (is the address right, and the broker up?)"),
        (
            broker.listener("SASL_PLAINTEXT"),
            {},
            (
                "with security.protocol=PLAINTEXT: the listener closed the connection after its first answer, as a "
                "SASL listener does to a client that does not log in; set security.protocol=SASL_PLAINTEXT"
            ),
        ),
        (
            broker.listener("SASL_PLAINTEXT"),
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}
            | {"sasl.username": "alice", "sasl.password": WRONG},
            (
                "the broker refused the SASL PLAIN login of user 'alice' (Authentication failed: Invalid username or "
                "password); check sasl.mechanism, sasl.username and sasl.password in --properties"
            ),
        ),
        (
            broker.listener("SASL_PLAINTEXT"),
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": jaas},
            (
                "the broker refused the SASL SCRAM-SHA-256 login of user 'alice' (Authentication failed during "
                "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256)"
            ),
        ),
        (
            broker.listener("SSL"),
            {},
            (
                "the listener closed the connection at the first request, as a TLS listener does; set "
                "security.protocol=SSL (or SASL_SSL) and ssl.ca.location in --properties"
            ),
        ),
        (
            broker.bootstrap_servers,
            {"security.protocol": "SSL", "ssl.ca.location": str(broker.ca_file)},
            "over TLS (security.protocol=SSL): the listener does not speak TLS; set security.protocol=PLAINTEXT",
        ),
        (
            broker.listener("SSL"),
            {"security.protocol": "SSL"},
            (
                "over TLS: the broker's certificate is not trusted (certificate verify failed); give the certificate "
                "authority that signed it with ssl.ca.location=CA.pem in --properties"
            ),
        ),
    ]
    cases.append((broker.listener("SASL_PLAINTEXT"), cases[2][1], cases[2][2]))  # the Admin route: the same line
    for number, (bootstrap, settings, expected) in enumerate(cases):
        out = tmp_path / f"out-{number}"
        given = properties(tmp_path / f"client-{number}.properties", settings)
        argv = ["collect", "--bootstrap-servers", bootstrap, "--properties", str(given), "--out", str(out)]
        argv += ["--via", "admin"] if number == len(cases) - 1 else []
        status, printed, err, taken = cli(*argv, "--timeout", str(TIMEOUT))
        assert (status, printed) == (2, ""), (bootstrap, err)
        assert err.startswith("assignors collect: error: "), err
        assert expected in err, err
        assert len(err.splitlines()) == 1, err
        assert not out.exists()
        assert taken < TIMEOUT + 10, (expected, taken)


def test_read_refused_on_the_offsets_topic_names_the_acl_and_the_admin_route(
    broker: KafkaBroker, tmp_path: Path
) -> None:
    """Logged in, without READ on __consumer_offsets (alice: no DESCRIBE either, so the metadata refuses; bob:
    DESCRIBE only, so the fetch refuses): the ACL to ask for, and ``--via admin``."""
    for user in ("alice", "bob"):
        given = properties(tmp_path / f"{user}.properties", sasl_ssl(broker, user))
        out = tmp_path / f"out-{user}"
        status, printed, err, _ = cli(
            "collect", "--bootstrap-servers", broker.listener("SASL_SSL"), "--properties", str(given),
            "--out", str(out), "--timeout", str(TIMEOUT),
        )  # fmt: skip
        assert (status, printed) == (2, ""), err
        assert err == (
            f"assignors collect: error: not allowed to read __consumer_offsets as User:{user} "
            f"(TOPIC_AUTHORIZATION_FAILED): ask for the ACL 'ALLOW User:{user} READ on TOPIC __consumer_offsets' "
            f"(kafka-acls.sh --bootstrap-server {broker.listener('SASL_SSL')} --add --allow-principal User:{user} "
            "--operation Read --topic __consumer_offsets), or collect through the Admin API: --via admin (needs "
            "only DESCRIBE on the groups; --via auto takes it when READ is refused)\n"
        ), user
        assert not out.exists()


# --- the Admin route, on this broker where carol may not read __consumer_offsets -------------------------------

TOPICS = {"orders": 6, "payments": 4}
GROUPS: dict[str, dict[str, Any]] = {
    "admin-classic-range": {"client": "confluent", "strategy": "range"},
    "admin-kip848": {"client": "confluent", "remote_assignor": "uniform"},
}
_PROGRESS = re.compile(r"(\d+) records \((\d+)/s\), (\d+) groups, (\d+) snapshots")


def _wait_for_line(log: Path, process: subprocess.Popen[bytes], found: Any, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text(encoding="utf-8")
        for line in log.read_text(encoding="utf-8").splitlines():
            if found(line):
                return line
        time.sleep(0.2)
    msg = f"no such line in time:\n{log.read_text(encoding='utf-8')}"
    raise AssertionError(msg)


def _snapshots_at_least(count: int) -> Any:
    def check(line: str) -> bool:
        match = _PROGRESS.search(line)
        return match is not None and int(match.group(4)) >= count

    return check


def _recorded(out: Path, group: str) -> list[tuple[int, Observation]]:
    by_ts: dict[dt.datetime, tuple[int, Observation]] = {}
    for row in pq.read_table(out / "actual").to_pylist():
        if row["group_id"] == group:
            by_ts.setdefault(row["snapshot_ts"], (row["generation"], {}))[1][row["member_id"]] = row["assigned"]
    return [by_ts[ts] for ts in sorted(by_ts)]


def _start(argv: list[str], log: Path, printed: Path) -> subprocess.Popen[bytes]:
    """The executable with SIGINT at its default, as a terminal starts it (see tests/integration/test_collect.py)."""
    with log.open("wb") as err, printed.open("wb") as out:
        return subprocess.Popen(  # noqa: S603 - the project's executable and a fixed argument list
            ["env", "--default-signal=INT", str(EXECUTABLE), *argv],  # noqa: S607
            stdout=out,
            stderr=err,
        )


def _stop(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_the_admin_route_records_what_the_members_held_where_read_is_refused(  # noqa: PLR0915 - one story
    broker: KafkaBroker, tmp_path: Path
) -> None:
    """``--via auto`` as carol: READ is refused, so the Admin API is polled; a classic group (librdkafka's range)
    and a KIP-848 group (uniform) go through a, b, c joining and b leaving; each step's steady state, as the members
    held it and the broker described it, is a recorded snapshot, in order, and nothing else. Run again into the same
    --out, nothing is recorded twice; a change afterwards is the next snapshot."""
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    for future in admin.create_topics([NewTopic(t, n, 1) for t, n in TOPICS.items()]).values():
        future.result(60)
    given = properties(tmp_path / "carol.properties", sasl_ssl(broker, "carol", "SCRAM-SHA-256"))
    out = tmp_path / "history"
    base = ["collect", "--bootstrap-servers", broker.listener("SASL_SSL"), "--properties", str(given)]
    base += ["--groups", "^admin-", "--out", str(out)]
    log, printed = tmp_path / "stderr.txt", tmp_path / "stdout.txt"
    process = _start([*base, "--via", "auto", "--follow", "--interval", "0.3"], log, printed)
    members: dict[str, list[MemberProcess]] = {group: [] for group in GROUPS}
    steps: dict[str, list[Observation]] = {group: [] for group in GROUPS}
    try:
        _wait_for_line(log, process, lambda line: line.startswith("route: the Admin API"))
        taken = 0
        for step in ("a", "b", "c", "-b"):
            for group, shared in GROUPS.items():
                if step.startswith("-"):
                    members[group][1].leave()
                else:
                    spec = MemberSpec(f"{group}-{step}", group=group, topics=tuple(TOPICS), **shared)
                    members[group].append(MemberProcess.launch(spec, broker.bootstrap_servers, tmp_path))
                observed = settle_group(admin, group, members[group], TOPICS, consumer_protocol=group == "admin-kip848")
                steps[group].append(observed)
                taken += 1
                _wait_for_line(log, process, _snapshots_at_least(taken))
        status = _stop(process)
        assert status == 0, log.read_text(encoding="utf-8")
        said = log.read_text(encoding="utf-8")
        assert "not allowed to read __consumer_offsets as User:carol" in said
        assert "route: READ is refused (--via auto): taking the Admin API instead" in said
        release = ".".join(kafka_version().split(".")[:2])
        assert f"cluster: Apache Kafka {release} (metadata.version up to level " in said
        cluster = read_cluster_file(out / "cluster.json")
        assert (cluster.release, cluster.broker) == (release, broker.listener("SASL_SSL"))
        for group in GROUPS:
            recorded = _recorded(out, group)
            assert [snapshot for _, snapshot in recorded] == steps[group], group
            assert [generation for generation, _ in recorded] == [1, 2, 3, 4]
        membership = pq.read_table(out / "membership").to_pylist()
        assert {tuple(r["topics"]) for r in membership} == {tuple(sorted(TOPICS))}
        protocols = {(r["group_id"], r["protocol"]) for r in pq.read_table(out / "actual").to_pylist()}
        assert protocols == {("admin-classic-range", "range"), ("admin-kip848", "uniform")}
        topics = pq.read_table(out / "topics").to_pylist()
        assert [(r["topic"], r["partitions"]) for r in topics] == sorted(TOPICS.items())
        # again, into the same tables: the groups did not change, so nothing is recorded twice
        status, said, err, _ = cli(*base, "--via", "admin")
        assert status == 0, err
        assert "resuming the tables in" in err
        assert "read: 2 group descriptions; 0 new snapshots of 2 groups" in said
        assert [len(_recorded(out, group)) for group in GROUPS] == [4, 4]
        # a change later is the next snapshot, with the next generation
        members["admin-classic-range"][0].leave()
        last = settle_group(admin, "admin-classic-range", members["admin-classic-range"], TOPICS)
        status, said, err, _ = cli(*base, "--via", "admin")
        assert status == 0, err
        assert _recorded(out, "admin-classic-range")[-1] == (5, last)
        assert [len(_recorded(out, group)) for group in GROUPS] == [5, 4]
    finally:
        if process.poll() is None:
            _stop(process)
        for group_members in members.values():
            for member in group_members:
                if member.alive():
                    member.kill()


def test_the_clusters_version_is_read_on_every_listener_before_any_login(broker: KafkaBroker, tmp_path: Path) -> None:
    """ApiVersions is answered ahead of the SASL handshake: no user is needed, TLS is the listener's own; a CA that
    did not sign the broker's certificate is named as TLS's refusal."""
    release = ".".join(kafka_version().split(".")[:2])
    for protocol in ("PLAINTEXT", "SASL_PLAINTEXT", "SSL", "SASL_SSL"):
        settings = broker.client_settings(protocol)
        assert read_cluster_version(settings, timeout=30).release == release, protocol
    stranger = tmp_path / "stranger.pem"
    subprocess.run(  # noqa: S603 - openssl, fixed arguments
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(tmp_path / "k.pem"),  # noqa: S607
         "-out", str(stranger), "-days", "1", "-subj", "/CN=stranger"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    wrong = {**broker.client_settings("SSL"), "ssl.ca.location": str(stranger)}
    with pytest.raises(VersionUnreadError, match=r": TLS: CERTIFICATE_VERIFY_FAILED"):
        read_cluster_version(wrong, timeout=30)
    insecure = {**wrong, "enable.ssl.certificate.verification": "false"}
    assert read_cluster_version(insecure, timeout=30).release == release


# --- a broker that dies in the middle of a read, and one that restarts under --follow --------------------------


def _member(member_id: str, partitions: list[int]) -> MemberMetadata:
    return MemberMetadata(
        member_id,
        None,
        "client",
        "/127.0.0.1",
        30000,
        10000,
        Subscription(["orders"]),
        Assignment([TopicPartition("orders", p) for p in partitions]),
    )


def _generation(number: int) -> GroupMetadata:
    return GroupMetadata("app", number, "consumer", "range", "m1", T0, (_member("m1", [number % 6]),))


def _copies(bootstrap: str, topic: str, generations: range, *, create: bool = True) -> None:
    """GroupMetadata copies in ``topic``, one batch each."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    if create:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
            future.result(60)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for number in generations:
        key, value = encode_record(_generation(number))
        producer.produce(topic, value=value, key=key, timestamp=T0 + number)
        assert producer.flush(30) == 0


def test_a_broker_dying_mid_read_is_one_line_and_keeps_what_was_read(broker: KafkaBroker, tmp_path: Path) -> None:
    """A read slowed to a batch a fetch (librdkafka's fetch settings in --properties); the broker is killed after the
    first flush: exit 2 within --timeout, one error line, and the tables keep every snapshot it names."""
    topic = "copies-slow"
    _copies(broker.bootstrap_servers, topic, range(1, 41))
    slow = {"fetch.wait.max.ms": "300", "fetch.min.bytes": "100000000", "max.partition.fetch.bytes": "1"}
    given = properties(tmp_path / "slow.properties", slow)
    out = tmp_path / "history"
    argv = ["collect", "--bootstrap-servers", broker.bootstrap_servers, "--topic", topic, "--properties", str(given)]
    log, printed = tmp_path / "stderr.txt", tmp_path / "stdout.txt"
    process = _start([*argv, "--out", str(out), "--timeout", "3"], log, printed)
    try:
        _wait_for_line(log, process, _snapshots_at_least(3))
        assert any((out / "actual").glob("part-*.parquet"))
        broker.kill()
        killed = time.monotonic()
        status = process.wait(timeout=60)
        taken = time.monotonic() - killed
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        broker.start()
    err = log.read_text(encoding="utf-8").splitlines()
    assert status == 2, err
    assert [line for line in err if "error:" in line] == [err[-1]]
    found = re.fullmatch(
        r"assignors collect: error: lost the cluster after (\d+) records \(cannot reach 127\.0\.0\.1:\d+: connection "
        r"refused \(is the address right, and the broker up\?\) for 3 s\): the tables in (.*) keep every snapshot "
        r"read before it",
        err[-1],
    )
    assert found is not None, err
    assert found.group(2) == str(out)
    assert 3 <= int(found.group(1)) < 40
    assert taken < 3 + 10
    rows = pq.read_table(out / "actual").to_pylist()
    assert [r["generation"] for r in rows] == list(range(1, int(found.group(1)) + 1))


def test_follow_goes_on_across_a_broker_restart_with_nothing_lost_or_doubled(
    broker: KafkaBroker, tmp_path: Path
) -> None:
    topic = "copies-restart"
    _copies(broker.bootstrap_servers, topic, range(1, 4))
    out = tmp_path / "history"
    argv = ["collect", "--bootstrap-servers", broker.bootstrap_servers, "--topic", topic, "--out", str(out)]
    log, printed = tmp_path / "stderr.txt", tmp_path / "stdout.txt"
    process = _start([*argv, "--follow"], log, printed)
    # beside it, the Admin route polling (requests that give up after 1 s, so the outage is seen)
    admin_argv = ["collect", "--bootstrap-servers", broker.bootstrap_servers, "--via", "admin", "--follow"]
    admin_argv += ["--interval", "0.3", "--timeout", "1", "--groups", "^none$", "--out", str(tmp_path / "admin")]
    admin_log = tmp_path / "admin-stderr.txt"
    polling = _start(admin_argv, admin_log, tmp_path / "admin-stdout.txt")
    try:
        _wait_for_line(log, process, _snapshots_at_least(3))
        _wait_for_line(admin_log, polling, lambda line: line.startswith("route: the Admin API"))
        broker.restart(kill=True)
        _copies(broker.bootstrap_servers, topic, range(4, 6), create=False)
        _wait_for_line(log, process, _snapshots_at_least(5))
        _wait_for_line(admin_log, polling, lambda line: "the cluster answers again: polling goes on" in line)
        status = _stop(process)
        assert _stop(polling) == 0, admin_log.read_text(encoding="utf-8")
    finally:
        for started in (process, polling):
            if started.poll() is None:
                started.kill()
                started.wait()
    said = log.read_text(encoding="utf-8")
    assert status == 0, said
    assert ": waiting for it" in said
    assert ": polling again every 0.3 s" in admin_log.read_text(encoding="utf-8")
    rows = pq.read_table(out / "actual").to_pylist()
    assert [r["generation"] for r in rows] == [1, 2, 3, 4, 5]
    assert (out / "membership").is_dir()
