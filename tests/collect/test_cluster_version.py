"""The cluster's Kafka version: from a broker's ApiVersions answer to the version ``assignors evaluate`` replays.

No Kafka here: the answers are real brokers' (``tests/wire/data``) or built with the wire tests' encoder, served by
a socket on 127.0.0.1 (``tests/integration/test_cluster_version.py`` asks real brokers).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import ConfigurationError
from assignors.collect import (
    NEWEST_PATCH,
    RELEASE_LEVELS,
    ClusterVersion,
    VersionUnreadError,
    read_cluster_file,
    read_cluster_version,
    write_cluster_file,
)
from assignors.collect._version import cluster_version
from assignors.consumer_group import KAFKA_VERSION

DATA = Path(__file__).parents[1] / "wire" / "data"
NOW = "2026-11-29T12:00:00+00:00"


@contextmanager
def serving(reply: Callable[[bytes], bytes], *, read: bool = True) -> Iterator[str]:
    """A one-connection server on 127.0.0.1: reads one request (unless not ``read``), writes ``reply(request)``,
    closes."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    port = listener.getsockname()[1]

    def serve() -> None:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        with connection:
            connection.settimeout(10)
            request = b""
            size = int.from_bytes(connection.recv(4), "big") if read else 0
            while len(request) < size:
                request += connection.recv(size - len(request))
            connection.sendall(reply(request))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        listener.close()
        thread.join(timeout=10)


def sized(answer: bytes) -> bytes:
    return len(answer).to_bytes(4, "big") + answer


def test_a_kafka_4_4_broker_reads_as_release_4_4() -> None:
    real = (DATA / "api_versions_4.4.0.bin").read_bytes()
    seen: list[bytes] = []

    def reply(request: bytes) -> bytes:
        seen.append(request)
        return sized(real)

    with serving(reply) as server:
        found = read_cluster_version({"bootstrap.servers": server}, timeout=10)
    assert seen[0][:4] == bytes.fromhex("00120003")  # ApiVersions v3
    assert (found.release, found.kafka_version, found.metadata_level) == ("4.4", "4.4.0", 33)
    assert (found.finalized_metadata_level, found.group_version, found.broker) == (33, 1, server)
    assert found.describe().startswith(
        "Apache Kafka 4.4 (metadata.version up to level 33, in use 33; group.version 1: KIP-848's consumer protocol on;"
    )


def test_a_kafka_3_9_broker_reads_as_release_3_9_without_the_consumer_protocol() -> None:
    real = (DATA / "api_versions_3.9.1.bin").read_bytes()
    with serving(lambda _: sized(real)) as server:
        found = read_cluster_version({"bootstrap.servers": f"127.0.0.1:1,{server}"}, timeout=10)
    assert (found.release, found.kafka_version, found.group_version) == ("3.9", "3.9.1", None)
    assert "consumer protocol off" in found.describe()


def test_each_release_is_its_production_level_and_only_that() -> None:
    """The table is one level per release, rising with the release; a level between two is no release's."""
    releases = [RELEASE_LEVELS[level] for level in sorted(RELEASE_LEVELS)]
    assert releases == sorted(releases, key=lambda r: tuple(map(int, r.split("."))))
    assert NEWEST_PATCH[RELEASE_LEVELS[max(RELEASE_LEVELS)]] == KAFKA_VERSION  # the pinned Kafka is the newest
    for level in range(1, max(RELEASE_LEVELS) + 3):
        found = cluster_version({"metadata.version": (1, level)}, {}, "b:1", NOW)
        assert found.release == RELEASE_LEVELS.get(level)
        assert found.kafka_version == NEWEST_PATCH.get(found.release or "")
    unstable = cluster_version({"metadata.version": (7, 31)}, {}, "b:1", NOW)  # 4.3 with unstable versions on
    assert unstable.release is None
    assert "no release's production level" in unstable.describe()
    newer = cluster_version({"metadata.version": (7, 40)}, {}, "b:1", NOW)
    assert newer.describe().startswith("a release newer than Kafka 4.4")


def test_an_answer_without_metadata_version_is_not_a_version() -> None:
    with pytest.raises(VersionUnreadError, match=r"b:1's ApiVersions names no metadata.version"):
        cluster_version({}, {}, "b:1", NOW)


def test_a_broker_before_2_4_says_so() -> None:
    old = bytes.fromhex("00000001002300000000")  # UNSUPPORTED_VERSION, version 0's layout, no keys
    with (
        serving(lambda _: sized(old)) as server,
        pytest.raises(VersionUnreadError, match=r"does not know ApiVersions v3 \(KIP-511\): a broker before Kafka 2.4"),
    ):
        read_cluster_version({"bootstrap.servers": server})


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (lambda _: b"", "the connection closed after 0 of 4 bytes"),
        (
            lambda _: (1 << 30).to_bytes(4, "big"),
            "the answer's size 1073741824 at offset 0 is no ApiVersions answer (at most 1048576)",
        ),
        (lambda _: sized(b"\x00\x00\x00\x01\x00"), "error_code: needs 2 bytes at offset 4, only 1 left"),
        (
            lambda _: sized(b"\x00\x00\x00\x09\x00\x00\x01"),
            "correlation_id: 9 at offset 0, expected 1 (not the answer to this request)",
        ),
    ],
)
def test_whatever_a_server_answers_the_reason_is_one_line(reply: Callable[[bytes], bytes], reason: str) -> None:
    with serving(reply) as server, pytest.raises(VersionUnreadError) as raised:
        read_cluster_version({"bootstrap.servers": server}, timeout=5)
    assert str(raised.value) == f"no bootstrap server answered ApiVersions: {server}: {reason}"


def test_a_closed_port_and_a_bad_address_are_named() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
    with pytest.raises(VersionUnreadError) as raised:
        read_cluster_version({"bootstrap.servers": f"127.0.0.1:{port}, nowhere"}, timeout=5)
    assert str(raised.value) == (
        f"no bootstrap server answered ApiVersions: 127.0.0.1:{port}: connection refused; "
        "nowhere: 'nowhere' is not HOST:PORT"
    )


def test_a_silent_server_is_given_up_within_the_timeout() -> None:
    listener = socket.create_server(("127.0.0.1", 0))  # accepts into its backlog, never answers
    with listener, pytest.raises(VersionUnreadError, match="no answer in time"):
        read_cluster_version({"bootstrap.servers": f"127.0.0.1:{listener.getsockname()[1]}"}, timeout=0.5)


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        ({"security.protocol": "KERBEROS"}, "security.protocol=KERBEROS: not one of PLAINTEXT, SASL_PLAINTEXT"),
        ({"security.protocol": "SSL", "ssl.ca.location": "/no/such/ca.pem"}, "ssl.ca.location /no/such/ca.pem: no"),
        ({"security.protocol": "SSL", "ssl.keystore.location": "k.p12"}, "ssl.keystore.location (PKCS#12) is not"),
        ({"bootstrap.servers": " , "}, "no bootstrap.servers to ask"),
    ],
)
def test_settings_it_cannot_use_are_named(settings: dict[str, str], reason: str) -> None:
    with pytest.raises(VersionUnreadError) as raised:
        read_cluster_version({"bootstrap.servers": "127.0.0.1:9", **settings}, timeout=1)
    assert str(raised.value).startswith(reason)


def test_tls_to_a_plaintext_listener_is_a_tls_reason() -> None:
    real = (DATA / "api_versions_4.4.0.bin").read_bytes()
    with serving(lambda _: sized(real), read=False) as server, pytest.raises(VersionUnreadError, match=r": TLS: "):
        read_cluster_version({"bootstrap.servers": server, "security.protocol": "SSL"}, timeout=5)


versions = st.builds(
    ClusterVersion,
    release=st.none() | st.sampled_from(sorted(NEWEST_PATCH)),
    kafka_version=st.none() | st.sampled_from(sorted(NEWEST_PATCH.values())),
    metadata_level=st.integers(0, 2**15 - 1),
    finalized_metadata_level=st.none() | st.integers(0, 2**15 - 1),
    group_version=st.none() | st.integers(0, 10),
    broker=st.text(min_size=1, max_size=30),
    read_at=st.just(NOW),
)


@given(versions)
def test_the_cluster_file_reads_back_what_was_written(version: ClusterVersion) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = write_cluster_file(directory, version)
        assert path.name == "cluster.json"
        assert read_cluster_file(path) == version
        assert [p.name for p in Path(directory).iterdir()] == ["cluster.json"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not the cluster file assignors collect writes"),
        ("[]", "expected a JSON object"),
        ('{"release": "4.4"}', "no field 'kafka_version'"),
        (
            (
                '{"release": "4.4", "kafka_version": "4.4.0", "metadata_level": "33", "finalized_metadata_level": 33, '
                '"group_version": 1, "broker": "b:1", "read_at": "now"}'
            ),
            "field 'metadata_level' is '33', expected int",
        ),
    ],
)
def test_a_bad_cluster_file_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigurationError, match=message) as raised:
        read_cluster_file(path)
    assert str(path) in str(raised.value)


def _release(release: str, group_version: int | None = 1) -> ClusterVersion:
    level = next(level for level, name in RELEASE_LEVELS.items() if name == release)
    return cluster_version({"metadata.version": (7, level)}, {"group.version": group_version or 0}, "b:1", NOW)


def test_evaluate_replays_the_clusters_release_as_its_newest_patch() -> None:
    from spark_udfs.replay.timing import cluster_kafka_version

    version, source = cluster_kafka_version(_release("4.1"), "out/cluster.json", ["uniform", "range"])
    assert version == "4.1.2"
    assert source.startswith("the cluster's own answer (Apache Kafka 4.1 (metadata.version up to level 27")
    assert source.endswith("; out/cluster.json): 4.1.2, the newest 4.1 patch")


def test_a_4_0_cluster_names_the_patch_that_replays_otherwise() -> None:
    from spark_udfs.replay.timing import cluster_kafka_version

    version, source = cluster_kafka_version(_release("4.0"), "c.json", ["uniform"])
    assert version == "4.0.2"
    assert source.endswith("(4.0.0 replays uniform before KAFKA-18688: --kafka-version 4.0.0 if your brokers run it)")


def test_a_release_before_the_modelled_server_assignors_replays_the_pinned_kafka() -> None:
    """3.8 had uniform (early access, modelled) but not KIP-848's server range (3.9): with consumer-range the
    replay cannot run 3.8, so it runs the pinned Kafka and says why; 3.7's is none of them."""
    from spark_udfs.replay.timing import PINNED_KAFKA, cluster_kafka_version

    assert cluster_kafka_version(_release("3.8", None), "c.json", ["uniform"])[0] == "3.8.1"
    version, source = cluster_kafka_version(_release("3.8", None), "c.json", ["uniform", "consumer-range"])
    assert version is None
    assert source.startswith(f"{PINNED_KAFKA}, what an upgrade would run: the cluster's own answer (Apache Kafka 3.8")
    assert "is kafka_version='3.8.1': KIP-848's server range is modelled from Kafka 3.9.0 on" in source
    version, source = cluster_kafka_version(_release("3.7", None), "c.json", ["uniform"])
    assert version is None
    assert source.endswith("is a release this replay does not model")
