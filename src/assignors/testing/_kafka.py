"""A real Apache Kafka broker on loopback, for tests: KRaft, one combined broker and controller.

:class:`KafkaBroker` formats fresh KRaft storage (``kafka.tools.StorageTool format --standalone``) and runs
``kafka.Kafka`` on two free 127.0.0.1 ports, from one of:

- ``classpath=``: the jars to run (e.g. what ``make jvm`` wrote to ``jvm/target/kafka-VERSION/classpath.txt``);
- ``kafka_home=`` or ``$KAFKA_HOME``: a Kafka distribution of your own (its ``libs/``);
- else Maven: ``org.apache.kafka:kafka_2.13`` at ``version=`` (``$KAFKA_VERSION``, default
  :data:`DEFAULT_KAFKA_VERSION`) resolved from Maven Central into ``~/.m2``; the classpath is cached under
  ``$XDG_CACHE_HOME/assignors/`` (``~/.cache/assignors/``).

It is ready when it answers a Metadata request naming itself with the cluster id it was formatted with, and
names a group coordinator (the first FindCoordinator creates ``__consumer_offsets``). Its settings suit tests
(override any with ``config=``): one replica for the internal topics, ``group.initial.rebalance.delay.ms=0``, short
minimum session and heartbeat intervals for both group protocols, no time retention (``log.retention.ms=-1``: a
record with a fixed, old timestamp stays), and on 4.3+
``group.consumer.assignment.interval.ms=0`` (the consumer protocol computes a new target assignment at once).

Secured listeners, for tests of what clients see on the clusters operators run (all off by default; the
``PLAINTEXT`` listener of :attr:`KafkaBroker.bootstrap_servers` always stays, for the test's own admin work):

- ``sasl_users={"alice": "alice-secret"}``: a ``SASL_PLAINTEXT`` listener taking PLAIN, SCRAM-SHA-256 and
  SCRAM-SHA-512 logins of these users (the SCRAM credentials are written when the storage is formatted,
  ``StorageTool format --add-scram``, as KRaft needs them before the broker runs);
- ``tls=True``: an ``SSL`` listener (and ``SASL_SSL`` with ``sasl_users``) with a certificate for 127.0.0.1
  signed by a certificate authority made for this broker with ``openssl`` in its data folder
  (:attr:`KafkaBroker.ca_file`, the PEM file clients trust); nothing is kept after ``stop()``;
- ``authorizer=True``: Kafka's ``StandardAuthorizer`` (KRaft's ACLs), with no ACL nothing is allowed; the super
  users are ``User:ANONYMOUS`` (the broker's own PLAINTEXT and controller listeners, and TLS without client
  certificates) and ``super_users``.

:meth:`KafkaBroker.listener` gives each listener's address and :meth:`KafkaBroker.client_settings` the
librdkafka settings of a client of one.

Standard library only: the Java side needs ``java`` (17+) and, for the Maven route, ``mvn`` (and ``openssl``
for ``tls=True``).
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from assignors.testing._process import LOOPBACK, Process, free_port, start

__all__ = ["DEFAULT_KAFKA_VERSION", "KafkaBroker", "KafkaBrokerError", "kafka_classpath"]

DEFAULT_KAFKA_VERSION = "4.4.0"
"""The Kafka version used when none is given: the one ``jvm/pom.xml`` pins (a test keeps the two equal)."""

_MAVEN_TIMEOUT = 900.0
_TLS_STORE_PASSWORD = "assignors-test-store"  # noqa: S105 - a throw-away keystore's, made per broker
_LOG4J = "2.25.5"  # the log4j-core of Kafka 4.x: its SLF4J binding, so the broker's log says why it failed

_LOG_CONFIG = """\
status = error
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.out.ref = out
logger.started.name = kafka.server.KafkaRaftServer
logger.started.level = INFO
"""

_POM = """\
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.assignors</groupId><artifactId>kafka-broker-classpath</artifactId><version>0</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>{version}</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>{log4j}</version></dependency>
  </dependencies>
</project>
"""


class KafkaBrokerError(RuntimeError):
    """The broker could not be set up or did not come up: the message names what is missing and how to get it."""


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def _java(java: str | None) -> str:
    if java:
        if not os.access(java, os.X_OK):
            msg = f"java={java!r} is not an executable: give the java of a JDK 17 or newer"
            raise KafkaBrokerError(msg)
        return java
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        msg = (
            "java not found (PATH, JAVA_HOME): Kafka's broker needs a JDK 17 or newer "
            "(Debian: apt-get install openjdk-17-jdk-headless)"
        )
        raise KafkaBrokerError(msg)
    return found


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "assignors"


def kafka_classpath(version: str | None = None, *, kafka_home: str | os.PathLike[str] | None = None) -> list[str]:
    """The jars that run Kafka's broker: from ``kafka_home`` (or ``$KAFKA_HOME``), else Maven at ``version``.

    Maven's answer is cached per version (``~/.cache/assignors/kafka-VERSION/classpath.txt``); jars stay in
    ``~/.m2``. Raises :class:`KafkaBrokerError` naming what is missing (``mvn``, a reachable Maven Central, a
    distribution's ``libs/``).
    """
    home = kafka_home if kafka_home is not None else os.environ.get("KAFKA_HOME")
    if home:
        libs = Path(home) / "libs"
        jars = sorted(str(jar) for jar in libs.glob("*.jar"))
        if not jars:
            msg = f"KAFKA_HOME={home} has no libs/*.jar: point it at an unpacked Apache Kafka distribution"
            raise KafkaBrokerError(msg)
        return jars
    version = version or os.environ.get("KAFKA_VERSION") or DEFAULT_KAFKA_VERSION
    if not re.fullmatch(r"[0-9][0-9A-Za-z.\-]*", version):
        msg = f"Kafka version {version!r} is not a version number (e.g. {DEFAULT_KAFKA_VERSION})"
        raise KafkaBrokerError(msg)
    folder = _cache_dir() / f"kafka-{version}"
    cached = folder / "classpath.txt"
    if not cached.is_file():
        mvn = shutil.which("mvn")
        if mvn is None:
            msg = (
                f"mvn not found: Kafka {version}'s jars come from Maven Central through Maven 3.8+ (Debian: apt-get "
                "install maven), or give KafkaBroker(kafka_home=...) / KAFKA_HOME an unpacked Kafka distribution"
            )
            raise KafkaBrokerError(msg)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "pom.xml").write_text(_POM.format(version=version, log4j=_LOG4J), encoding="utf-8")
        partial = folder / "classpath.txt.partial"
        command = [mvn, "-q", "-B", "-f", str(folder / "pom.xml"), "dependency:build-classpath"]
        command.append(f"-Dmdep.outputFile={partial}")
        try:
            done = subprocess.run(  # noqa: S603 - fixed command
                command, capture_output=True, text=True, timeout=_MAVEN_TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired:
            msg = f"Maven did not resolve Kafka {version} within {_MAVEN_TIMEOUT:.0f} s: is Maven Central reachable?"
            raise KafkaBrokerError(msg) from None
        if done.returncode != 0 or not partial.is_file():
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            msg = f"Maven could not resolve org.apache.kafka:kafka_2.13:{version} (Maven Central reachable?):\n{tail}"
            raise KafkaBrokerError(msg)
        partial.replace(cached)
    return [entry for entry in cached.read_text(encoding="utf-8").strip().split(os.pathsep) if entry]


def _kafka_version_of(classpath: Sequence[str]) -> str | None:
    for entry in classpath:
        found = re.fullmatch(r"kafka-clients-([0-9][^/]*?)\.jar", Path(entry).name)
        if found:
            return found.group(1)
    return None


def _metadata_request(correlation_id: int) -> bytes:
    """A Metadata v4 request (no topics): the oldest version every Kafka from 3.x to 4.x answers."""
    client = b"assignors-ready-check"
    header = struct.pack(">hhih", 3, 4, correlation_id, len(client)) + client
    body = struct.pack(">ib", 0, 0)  # topics: empty array; allow_auto_topic_creation: false
    return struct.pack(">i", len(header) + len(body)) + header + body


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            msg = "connection closed"
            raise OSError(msg)
        data += chunk
    return data


def _string(data: bytes, offset: int) -> tuple[str | None, int]:
    """A Kafka nullable STRING at ``offset`` and the offset after it."""
    (size,) = struct.unpack_from(">h", data, offset)
    offset += 2
    if size < 0:
        return None, offset
    return data[offset : offset + size].decode("utf-8", errors="replace"), offset + size


def _exchange(port: int, request: bytes, timeout: float = 2.0) -> bytes | None:
    """Send one request to the broker on ``port``; its response (after the size), or None if it did not answer."""
    try:
        with socket.create_connection((LOOPBACK, port), timeout=timeout) as sock:
            sock.sendall(request)
            (size,) = struct.unpack(">i", _read_exactly(sock, 4))
            if not 6 <= size <= 1 << 20:  # noqa: PLR2004 - correlation id and an error code at least
                return None
            return _read_exactly(sock, size)
    except OSError:
        return None


def _answers_metadata(port: int, cluster_id: str | None = None, timeout: float = 2.0) -> bool:
    """Whether the broker on ``port`` answers Metadata naming itself (and, if given, this cluster id).

    The cluster id tells this broker from another one that took the port in between (the ports are picked free,
    but another process may pick the same one before this broker binds it).
    """
    response = _exchange(port, _metadata_request(1), timeout)
    if response is None:
        return False
    try:
        correlation_id, _throttle, brokers = struct.unpack_from(">iii", response, 0)
        offset = 12
        for _ in range(min(brokers, 1000)):  # node id, host, port, rack
            _host, offset = _string(response, offset + 4)
            _rack, offset = _string(response, offset + 4)
        answered_id, _ = _string(response, offset)
    except struct.error:
        return False
    return bool(correlation_id == 1 and brokers > 0 and (cluster_id is None or answered_id == cluster_id))


def _coordinator_ready(port: int, timeout: float = 2.0) -> bool:
    """Whether the broker names a group coordinator (FindCoordinator v0 for a probe group answers with no error).

    The first FindCoordinator creates ``__consumer_offsets``; until its partitions are loaded the answer is
    ``COORDINATOR_NOT_AVAILABLE``; members that join before then race the loading of their coordinator in their
    first rebalance. So the broker is ready after it.
    """
    client, group = b"assignors-ready-check", b"assignors-ready-check"
    header = struct.pack(">hhih", 10, 0, 2, len(client)) + client  # FindCoordinator v0, correlation id 2
    body = struct.pack(">h", len(group)) + group
    response = _exchange(port, struct.pack(">i", len(header) + len(body)) + header + body, timeout)
    if response is None:
        return False
    correlation_id, error_code = struct.unpack_from(">ih", response, 0)
    return bool(correlation_id == 2 and error_code == 0)  # noqa: PLR2004 - the correlation id sent


class KafkaBroker:
    """One Apache Kafka broker+controller (KRaft) on loopback, for tests of real consumer groups.

    Use it as a context manager::

        with KafkaBroker() as broker:
            consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, ...)

    ``restart()`` stops it (gracefully, or at once with ``kill=True``) and starts it again on the same ports with
    the same data; ``stop()`` ends it and removes the data folder it made. The process runs in its own session,
    is stopped by its PID, and on Linux dies with the process that started it.

    Args:
        version: Kafka's version for the Maven route (default ``$KAFKA_VERSION`` or :data:`DEFAULT_KAFKA_VERSION`).
        kafka_home: a Kafka distribution to run instead (default ``$KAFKA_HOME``).
        classpath: the jars to run instead of either.
        config: broker settings that replace or add to the defaults.
        heap: the JVM's maximum heap (``-Xmx``).
        data_dir: where to keep the log and metadata (default: a new temporary folder, removed by ``stop()``).
        start_timeout: seconds to wait for the broker to answer before failing with its log.
        java: the ``java`` executable (default ``$JAVA_HOME/bin/java``, else ``java`` on the PATH).
        sasl_users: user name -> password: a ``SASL_PLAINTEXT`` listener (PLAIN, SCRAM-SHA-256/512 logins).
        tls: an ``SSL`` listener (and ``SASL_SSL`` with ``sasl_users``), its certificate signed by :attr:`ca_file`.
        authorizer: Kafka's ``StandardAuthorizer`` with ACLs (nothing allowed without one).
        super_users: user names allowed everything under the authorizer (besides ``ANONYMOUS``).
    """

    def __init__(  # noqa: PLR0913 - every one a keyword with a default
        self,
        *,
        version: str | None = None,
        kafka_home: str | os.PathLike[str] | None = None,
        classpath: Sequence[str] | str | None = None,
        config: Mapping[str, str | int] | None = None,
        heap: str = "512m",
        data_dir: str | os.PathLike[str] | None = None,
        start_timeout: float = 90.0,
        java: str | None = None,
        sasl_users: Mapping[str, str] | None = None,
        tls: bool = False,
        authorizer: bool = False,
        super_users: Sequence[str] = (),
    ) -> None:
        self._sasl_users = dict(sasl_users or {})
        for name, password in self._sasl_users.items():
            if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or not re.fullmatch(r"[^\s\"\\,\]=]+", password):
                msg = f'sasl_users: user {name!r}: names are [A-Za-z0-9_.-]+, passwords without spaces or "\\,]='
                raise KafkaBrokerError(msg)
        self._tls = tls
        self._authorizer = authorizer
        self._super_users = tuple(super_users)
        self._listeners: dict[str, int] = {}
        self.ca_file: Path | None = None
        """With ``tls=True``, once started: the PEM certificate of the authority that signed the broker's."""
        if isinstance(classpath, str):
            classpath = [entry for entry in classpath.split(os.pathsep) if entry]
        self._classpath = list(classpath) if classpath is not None else None
        self._requested_version = version
        self._kafka_home = kafka_home
        self._overrides = {key: str(value) for key, value in (config or {}).items()}
        self._heap = heap
        self._given_dir = Path(data_dir) if data_dir is not None else None
        self._start_timeout = start_timeout
        self._java_arg = java
        self._process: Process | None = None
        self._dir: Path | None = None
        self._port = 0
        self._controller_port = 0
        self._cluster_id = _cluster_id()
        self.version: str | None = None
        """The Kafka version running (read from its kafka-clients jar), once started."""
        self.startup_seconds: float | None = None
        """Seconds from launching the JVM to the broker's first Metadata answer, at the last start."""

    # -- the public face ------------------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        """``127.0.0.1:PORT`` of the broker's client listener."""
        if not self._port:
            msg = "the broker has not been started"
            raise KafkaBrokerError(msg)
        return f"{LOOPBACK}:{self._port}"

    def listener(self, protocol: str = "PLAINTEXT") -> str:
        """``127.0.0.1:PORT`` of the listener of a security protocol (``PLAINTEXT``, ``SASL_PLAINTEXT``, ``SSL``,
        ``SASL_SSL``), as far as the broker was made with it."""
        if protocol == "PLAINTEXT":
            return self.bootstrap_servers
        if protocol not in self._listeners:
            msg = f"the broker has no {protocol} listener (it has {', '.join(['PLAINTEXT', *self._listeners])})"
            raise KafkaBrokerError(msg)
        return f"{LOOPBACK}:{self._listeners[protocol]}"

    def client_settings(
        self,
        protocol: str = "PLAINTEXT",
        *,
        user: str | None = None,
        password: str | None = None,
        mechanism: str = "PLAIN",
    ) -> dict[str, str]:
        """librdkafka settings (confluent-kafka) of a client of the ``protocol`` listener, logged in as ``user``
        (with its own password unless ``password`` is given) with ``mechanism`` (PLAIN, SCRAM-SHA-256/512)."""
        settings = {"bootstrap.servers": self.listener(protocol), "security.protocol": protocol.lower()}
        if protocol.endswith("SSL") and self.ca_file is not None:
            settings["ssl.ca.location"] = str(self.ca_file)
        if protocol.startswith("SASL"):
            name = user if user is not None else next(iter(self._sasl_users))
            settings["sasl.mechanism"] = mechanism
            settings["sasl.username"] = name
            settings["sasl.password"] = password if password is not None else self._sasl_users.get(name, "")
        return settings

    @property
    def pid(self) -> int | None:
        """The broker JVM's process id while it runs."""
        return self._process.pid if self._process is not None and self._process.alive() else None

    def start(self) -> Self:
        """Format storage (first start only), launch the broker and wait until it answers Metadata."""
        if self._process is not None and self._process.alive():
            return self
        java = _java(self._java_arg)
        if self._classpath is None:
            self._classpath = kafka_classpath(self._requested_version, kafka_home=self._kafka_home)
        self.version = _kafka_version_of(self._classpath) or self._requested_version
        if self._dir is None:
            self._dir = self._given_dir or Path(tempfile.mkdtemp(prefix="kafka-broker-"))
            self._dir.mkdir(parents=True, exist_ok=True)
            self._port, self._controller_port = free_port(), free_port()
            protocols = (["SASL_PLAINTEXT"] if self._sasl_users else []) + (["SSL"] if self._tls else [])
            protocols += ["SASL_SSL"] if self._sasl_users and self._tls else []
            self._listeners = {protocol: free_port() for protocol in protocols}
            if self._tls:
                self._make_certificates()
            self._write_config()
            self._format(java)
        self._launch(java)
        return self

    def stop(self) -> None:
        """Stop the broker (SIGTERM, then SIGKILL) and remove the data folder it made."""
        self._halt(kill=False)
        if self._dir is not None and self._given_dir is None:
            shutil.rmtree(self._dir, ignore_errors=True)
        self._dir = None
        self._port = self._controller_port = 0
        self._listeners = {}
        self.ca_file = None

    def kill(self) -> None:
        """SIGKILL the broker (a crash), keeping its data and ports: :meth:`start` brings it back as it was."""
        self._halt(kill=True)

    def restart(self, *, kill: bool = False) -> None:
        """Stop the broker (gracefully, or SIGKILL with ``kill=True``) and start it on the same ports and data."""
        if self._dir is None:
            msg = "the broker has not been started"
            raise KafkaBrokerError(msg)
        self._halt(kill=kill)
        self._launch(_java(self._java_arg))

    def log_tail(self, lines: int = 60) -> str:
        """The last lines of the broker's log (warnings and errors, and its start-up line)."""
        return self._process.tail(lines) if self._process is not None else ""

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # -- the parts --------------------------------------------------------------------------------------------
    def _settings(self) -> dict[str, str]:
        assert self._dir is not None  # noqa: S101 - start() made it
        settings = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.bootstrap.servers": f"{LOOPBACK}:{self._controller_port}",
            "listeners": f"PLAINTEXT://{LOOPBACK}:{self._port},CONTROLLER://{LOOPBACK}:{self._controller_port}",
            "advertised.listeners": f"PLAINTEXT://{LOOPBACK}:{self._port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self._dir / "data"),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "3",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "group.min.session.timeout.ms": "1000",
            "group.consumer.min.session.timeout.ms": "1000",
            "group.consumer.min.heartbeat.interval.ms": "100",
            "group.consumer.heartbeat.interval.ms": "500",
            "log.flush.interval.messages": "1",  # a SIGKILLed broker loses no acknowledged record
            # Tests write records with fixed timestamps (years old soon enough); Kafka's time retention (7 days)
            # deletes them at its first check, 5 min after the start: a read from the earliest offset then finds
            # them gone, or loses them mid-read (seen in CI: a module's broker older than 5 min).
            "log.retention.ms": "-1",
        }
        if self.version is None or _version_key(self.version) >= (4, 3):
            settings["group.consumer.assignment.interval.ms"] = "0"
        settings.update(self._secured_settings())
        settings.update(self._overrides)
        return settings

    def _secured_settings(self) -> dict[str, str]:
        """The listeners, logins, certificates and authorizer asked for (none by default)."""
        settings: dict[str, str] = {}
        if self._listeners:
            extra = [f"{protocol}://{LOOPBACK}:{port}" for protocol, port in self._listeners.items()]
            settings["listeners"] = ",".join(
                [f"PLAINTEXT://{LOOPBACK}:{self._port}", *extra, f"CONTROLLER://{LOOPBACK}:{self._controller_port}"]
            )
            settings["advertised.listeners"] = ",".join([f"PLAINTEXT://{LOOPBACK}:{self._port}", *extra])
            settings["listener.security.protocol.map"] = ",".join(
                ["PLAINTEXT:PLAINTEXT", "CONTROLLER:PLAINTEXT", *(f"{p}:{p}" for p in self._listeners)]
            )
        if self._sasl_users:
            settings["sasl.enabled.mechanisms"] = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
            users = " ".join(f'user_{name}="{password}"' for name, password in self._sasl_users.items())
            for protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
                if protocol in self._listeners:
                    prefix = f"listener.name.{protocol.lower()}"
                    plain = "org.apache.kafka.common.security.plain.PlainLoginModule"
                    settings[f"{prefix}.plain.sasl.jaas.config"] = f"{plain} required {users};"
                    for scram in ("scram-sha-256", "scram-sha-512"):
                        module = "org.apache.kafka.common.security.scram.ScramLoginModule"
                        settings[f"{prefix}.{scram}.sasl.jaas.config"] = f"{module} required;"
        if self._tls:
            assert self._dir is not None  # noqa: S101 - start() made it
            settings["ssl.keystore.type"] = "PKCS12"
            settings["ssl.keystore.location"] = str(self._dir / "tls" / "broker.p12")
            settings["ssl.keystore.password"] = _TLS_STORE_PASSWORD
            settings["ssl.key.password"] = _TLS_STORE_PASSWORD
            settings["ssl.client.auth"] = "none"
        if self._authorizer:
            settings["authorizer.class.name"] = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
            settings["super.users"] = ";".join(f"User:{name}" for name in ("ANONYMOUS", *self._super_users))
            settings["allow.everyone.if.no.acl.found"] = "false"
        return settings

    def _make_certificates(self) -> None:
        """A certificate authority and the broker's key and certificate (for 127.0.0.1), with ``openssl``."""
        assert self._dir is not None  # noqa: S101 - start() made it
        openssl = shutil.which("openssl")
        if openssl is None:
            msg = "openssl not found: KafkaBroker(tls=True) makes its certificates with it (apt-get install openssl)"
            raise KafkaBrokerError(msg)
        folder = self._dir / "tls"
        folder.mkdir(exist_ok=True)
        (folder / "san.txt").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n", encoding="ascii")
        steps = [
            "req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=assignors-test-ca",
            "req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr -subj /CN=localhost",
            "x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out broker.pem -days 2",
            "pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem -name broker -out broker.p12",
        ]
        steps[2] += " -extfile san.txt"
        steps[3] += f" -passout pass:{_TLS_STORE_PASSWORD}"
        for step in steps:
            try:
                done = subprocess.run(  # noqa: S603 - openssl with a fixed argument list
                    [openssl, *step.split()], cwd=folder, capture_output=True, text=True, timeout=60, check=False
                )
            except subprocess.TimeoutExpired:
                msg = f"openssl {step.split()[0]} did not finish within 60 s"
                raise KafkaBrokerError(msg) from None
            if done.returncode != 0:
                msg = f"openssl {step.split()[0]} failed (exit {done.returncode}): {done.stderr.strip()[-500:]}"
                raise KafkaBrokerError(msg)
        self.ca_file = folder / "ca.pem"

    def _write_config(self) -> None:
        assert self._dir is not None  # noqa: S101
        lines = [f"{key}={value}" for key, value in self._settings().items()]
        (self._dir / "server.properties").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (self._dir / "log4j2.properties").write_text(_LOG_CONFIG, encoding="utf-8")

    def _jvm(self, java: str, heap: str) -> list[str]:
        assert self._dir is not None  # noqa: S101
        assert self._classpath is not None  # noqa: S101
        return [
            java,
            f"-Xmx{heap}",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",  # C1 only: starts in about half the CPU time on two cores
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self._dir / 'log4j2.properties'}",
            "-cp",
            os.pathsep.join(self._classpath),
        ]

    def _format(self, java: str) -> None:
        assert self._dir is not None  # noqa: S101
        command = [*self._jvm(java, "256m"), "kafka.tools.StorageTool", "format", "--standalone"]
        command += ["-t", self._cluster_id, "-c", str(self._dir / "server.properties")]
        for name, password in self._sasl_users.items():
            for scram in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
                command += ["--add-scram", f"{scram}=[name={name},password={password}]"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)  # noqa: S603
        except subprocess.TimeoutExpired:
            msg = "Kafka's StorageTool did not format the KRaft storage within 120 s"
            raise KafkaBrokerError(msg) from None
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            msg = f"Kafka's StorageTool could not format {self._dir / 'data'} (exit {done.returncode}):\n{tail}"
            raise KafkaBrokerError(msg)

    def _launch(self, java: str) -> None:
        assert self._dir is not None  # noqa: S101
        command = [*self._jvm(java, self._heap), "kafka.Kafka", str(self._dir / "server.properties")]
        began = time.monotonic()
        self._process = start("kafka-broker", command, self._dir, {**os.environ, "LC_ALL": "C"})
        deadline = began + self._start_timeout
        while time.monotonic() < deadline:
            if not self._process.alive():
                msg = f"the Kafka broker exited with {self._process.popen.returncode}:\n{self._process.tail()}"
                self._process.stop()
                raise KafkaBrokerError(msg)
            if _answers_metadata(self._port, self._cluster_id) and _coordinator_ready(self._port):
                self.startup_seconds = time.monotonic() - began
                return
            time.sleep(0.2)
        tail = self._process.tail()
        self._process.stop()
        msg = f"the Kafka broker did not answer on {LOOPBACK}:{self._port} within {self._start_timeout:.0f} s:\n{tail}"
        raise KafkaBrokerError(msg)

    def _halt(self, *, kill: bool) -> None:
        if self._process is None:
            return
        if kill:
            self._process.kill()
        else:
            self._process.stop(timeout=60.0)
        self._process = None


def _cluster_id() -> str:
    """A fresh KRaft cluster id: 16 random bytes in URL-safe base64 without padding, as ``random-uuid`` prints.

    Like Kafka's ``Uuid.randomUuid``, never one that starts with ``-``: the command line would read it as an option.
    """
    while True:
        found = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")
        if not found.startswith("-"):
            return found
