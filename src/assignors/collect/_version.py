"""The cluster's Kafka version, as ``assignors collect`` reads it and ``assignors evaluate`` replays it.

No Kafka request returns a broker's version string. What every listener does answer, before any login, is
ApiVersions (KIP-511), and from version 3 its answer carries the features the broker's software supports
(KIP-584). The highest ``metadata.version`` level a broker supports is its release's
``MetadataVersion.latestProduction()``, one level per release from Kafka 3.3 on. :data:`RELEASE_LEVELS` holds them,
each read from that release's ``kafka-server-common`` jar and, from 3.9 on, checked against the broker of that
release (``tests/integration/test_cluster_version.py``).

A release names no patch. The replay takes the newest patch of the release this project knows
(:data:`NEWEST_PATCH`); within a release, the server assignors differ only in 4.0 (4.0.0 against 4.0.1 and later,
KAFKA-18688), which ``assignors evaluate --kafka-version 4.0.0`` states. A broker that runs with
``unstable.feature.versions.enable`` reports a testing level, which is no release's: it is not taken for one.

:func:`read_cluster_version` asks the bootstrap servers in turn over the listener's own transport (TLS with the
``ssl.*`` settings for ``SSL`` and ``SASL_SSL``; no login is needed for ApiVersions). :func:`write_cluster_file`
and :func:`read_cluster_file` keep what it read as ``cluster.json`` beside the tables.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import ssl
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from assignors._core.errors import ConfigurationError, ProtocolError
from assignors._wire.api_versions import UNSUPPORTED_VERSION, decode_api_versions, encode_api_versions_request

__all__ = [
    "CLUSTER_FILE",
    "NEWEST_PATCH",
    "RELEASE_LEVELS",
    "ClusterVersion",
    "VersionUnreadError",
    "cluster_version",
    "read_cluster_file",
    "read_cluster_version",
    "write_cluster_file",
]

CLUSTER_FILE = "cluster.json"
"""What ``assignors collect`` read of the cluster itself, beside its tables."""

RELEASE_LEVELS: dict[int, str] = {
    7: "3.3",
    8: "3.4",
    11: "3.5",
    14: "3.6",
    19: "3.7",
    20: "3.8",
    21: "3.9",
    25: "4.0",
    27: "4.1",
    29: "4.2",
    30: "4.3",
    33: "4.4",
}
"""``MetadataVersion.latestProduction().featureLevel()`` of each Kafka release -> the release (3.3-IV3 ... 4.4-IV2)."""

NEWEST_PATCH: dict[str, str] = {
    "3.8": "3.8.1",
    "3.9": "3.9.1",
    "4.0": "4.0.2",
    "4.1": "4.1.2",
    "4.2": "4.2.2",
    "4.3": "4.3.1",
    "4.4": "4.4.0",
}
"""The newest patch of each release on Maven Central when this table was written: what the replay runs for a
release read from the cluster (the releases before 3.8 predate the server assignors the replay models)."""

_METADATA = "metadata.version"
_GROUP = "group.version"
_MAX_RESPONSE = 1 << 20  # an ApiVersions answer is under 1 KiB; a size beyond this is no such answer
_PROTOCOLS = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}


class VersionUnreadError(ConfigurationError):
    """The cluster's version could not be read (the message says why; ``collect`` goes on without it)."""


@dataclass(frozen=True, slots=True)
class ClusterVersion:
    """What a broker's ApiVersions answer says of the cluster.

    Attributes:
        release: the Kafka release of the broker's software (``"4.4"``), or None when its ``metadata.version``
            level is no release's production level (``metadata_level`` then says which it is).
        kafka_version: the version the replay runs for that release (:data:`NEWEST_PATCH`), or None (before 3.8,
            or an unknown release).
        metadata_level: the highest ``metadata.version`` level the broker supports.
        finalized_metadata_level: the level the cluster runs now (lower during an upgrade), or None.
        group_version: the cluster's finalized ``group.version`` (1 and more: KIP-848's consumer protocol is on;
            0 or None: off).
        broker: the bootstrap server that answered.
        read_at: when (UTC, ISO 8601).
    """

    release: str | None
    kafka_version: str | None
    metadata_level: int
    finalized_metadata_level: int | None
    group_version: int | None
    broker: str
    read_at: str

    def describe(self) -> str:
        """One line: the release, and the levels it was read from."""
        finalized = "" if self.finalized_metadata_level is None else f", in use {self.finalized_metadata_level}"
        consumer = "on" if (self.group_version or 0) >= 1 else "off"
        levels = f"metadata.version up to level {self.metadata_level}{finalized}; group.version {self.group_version}"
        if self.release is None:
            newest = max(RELEASE_LEVELS)
            what = (
                f"a release newer than Kafka {RELEASE_LEVELS[newest]}"
                if self.metadata_level > newest
                else "no release's production level (unstable.feature.versions.enable?)"
            )
            return f"{what} ({levels}, from {self.broker}'s ApiVersions)"
        source = f"{self.broker}'s ApiVersions"
        return f"Apache Kafka {self.release} ({levels}: KIP-848's consumer protocol {consumer}; {source})"


def cluster_version(
    supported: dict[str, tuple[int, int]], finalized: dict[str, int], broker: str, read_at: str
) -> ClusterVersion:
    """The :class:`ClusterVersion` of an ApiVersions answer's features.

    Raises:
        VersionUnreadError: the answer has no ``metadata.version`` (a ZooKeeper-mode broker, or one before 2.7).
    """
    if _METADATA not in supported:
        msg = f"{broker}'s ApiVersions names no metadata.version (a ZooKeeper-mode broker, or one before Kafka 3.3)"
        raise VersionUnreadError(msg)
    level = supported[_METADATA][1]
    release = RELEASE_LEVELS.get(level)
    return ClusterVersion(
        release=release,
        kafka_version=NEWEST_PATCH.get(release) if release is not None else None,
        metadata_level=level,
        finalized_metadata_level=finalized.get(_METADATA),
        group_version=finalized.get(_GROUP),
        broker=broker,
        read_at=read_at,
    )


def read_cluster_version(settings: dict[str, str], timeout: float = 10.0) -> ClusterVersion:
    """Ask ``settings``' bootstrap servers, in turn, for ApiVersions; the first answer is the cluster's version.

    ``settings`` are librdkafka's (``bootstrap.servers``, ``security.protocol``, ``ssl.*``).

    Raises:
        VersionUnreadError: no server answered (each one's reason in the message), the answer predates
            ApiVersions v3, or it names no ``metadata.version``. No secret is in the message.
    """
    protocol = settings.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in _PROTOCOLS:
        msg = f"security.protocol={protocol}: not one of {', '.join(sorted(_PROTOCOLS))}"
        raise VersionUnreadError(msg)
    servers = [server.strip() for server in settings.get("bootstrap.servers", "").split(",") if server.strip()]
    if not servers:
        msg = "no bootstrap.servers to ask"
        raise VersionUnreadError(msg)
    deadline = time.monotonic() + timeout
    reasons: list[str] = []
    with tempfile.TemporaryDirectory(prefix="assignors-tls-") as scratch:
        context = _tls_context(settings, Path(scratch)) if protocol.endswith("SSL") else None
        for server in servers:
            left = deadline - time.monotonic()
            if left <= 0:
                reasons.append(f"{server}: not asked within {timeout:g} s")
                continue
            try:
                data = _exchange(server, context, left)
                answer = decode_api_versions(data, correlation_id=1)
            except (OSError, ProtocolError, ValueError) as error:
                reasons.append(f"{server}: {_reason(error)}")
                continue
            if answer.error_code == UNSUPPORTED_VERSION:
                msg = f"{server} does not know ApiVersions v3 (KIP-511): a broker before Kafka 2.4"
                raise VersionUnreadError(msg)
            if answer.error_code:
                reasons.append(f"{server}: ApiVersions error code {answer.error_code}")
                continue
            now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            return cluster_version(answer.supported_features, answer.finalized_features, server, now)
    msg = "no bootstrap server answered ApiVersions: " + "; ".join(reasons)
    raise VersionUnreadError(msg)


def _reason(error: BaseException) -> str:
    if isinstance(error, ssl.SSLError):
        return f"TLS: {error.reason or error}"
    if isinstance(error, TimeoutError | socket.timeout):
        return "no answer in time"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    return str(error) or type(error).__name__


def _host_port(server: str) -> tuple[str, int]:
    host, _, port = server.rpartition(":")
    if not host or not port.isdigit():
        msg = f"{server!r} is not HOST:PORT"
        raise ValueError(msg)
    return host.strip("[]"), int(port)


def _exchange(server: str, context: ssl.SSLContext | None, timeout: float) -> bytes:
    """Send one ApiVersions v3 request to ``server`` and return the answer after its size."""
    host, port = _host_port(server)
    deadline = time.monotonic() + timeout
    with socket.create_connection((host, port), timeout=timeout) as raw:
        sock: socket.socket = context.wrap_socket(raw, server_hostname=host) if context is not None else raw
        try:
            sock.sendall(encode_api_versions_request(1))
            size = int.from_bytes(_receive(sock, 4, deadline), "big", signed=True)
            if not 0 < size <= _MAX_RESPONSE:
                msg = f"the answer's size {size} at offset 0 is no ApiVersions answer (at most {_MAX_RESPONSE})"
                raise ProtocolError(msg, field="size", offset=0)
            return _receive(sock, size, deadline)
        finally:
            if sock is not raw:
                sock.close()


def _receive(sock: socket.socket, size: int, deadline: float) -> bytes:
    parts: list[bytes] = []
    left = size
    while left:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = sock.recv(min(left, 65536))
        if not chunk:
            msg = f"the connection closed after {size - left} of {size} bytes"
            raise ConnectionError(msg)
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _tls_context(settings: dict[str, str], scratch: Path) -> ssl.SSLContext:
    """librdkafka's ``ssl.*`` settings as Python's TLS context (PEM files or inline PEM; no PKCS#12 keystore)."""
    if settings.get("ssl.keystore.location"):
        msg = "ssl.keystore.location (PKCS#12) is not read here: give ssl.certificate.location and ssl.key.location"
        raise VersionUnreadError(msg)
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    ca_file, ca_pem = settings.get("ssl.ca.location"), settings.get("ssl.ca.pem")
    if ca_file and not Path(ca_file).exists():
        msg = f"ssl.ca.location {ca_file}: no such file or directory"
        raise VersionUnreadError(msg)
    if ca_file or ca_pem:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.load_verify_locations(
            cafile=ca_file if ca_file and Path(ca_file).is_file() else None,
            capath=ca_file if ca_file and Path(ca_file).is_dir() else None,
            cadata=ca_pem or None,
        )
    if settings.get("enable.ssl.certificate.verification", "true").lower() == "false":
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif settings.get("ssl.endpoint.identification.algorithm", "https").lower() == "none":
        context.check_hostname = False
    certificate = settings.get("ssl.certificate.location") or _pem_file(settings, "ssl.certificate.pem", scratch)
    key = settings.get("ssl.key.location") or _pem_file(settings, "ssl.key.pem", scratch)
    if certificate:
        try:
            context.load_cert_chain(certificate, key or None, password=settings.get("ssl.key.password") or None)
        except (OSError, ssl.SSLError) as error:
            msg = f"ssl.certificate/ssl.key: {type(error).__name__} (the key and its password are not shown)"
            raise VersionUnreadError(msg) from None
    return context


def _pem_file(settings: dict[str, str], name: str, scratch: Path) -> str | None:
    text = settings.get(name)
    if not text:
        return None
    path = scratch / name
    path.touch(mode=0o600)
    path.write_text(text, encoding="utf-8")
    return str(path)


def write_cluster_file(directory: str | os.PathLike[str], version: ClusterVersion) -> Path:
    """``directory/cluster.json``: what was read of the cluster (written whole, then moved into place)."""
    path = Path(directory) / CLUSTER_FILE
    scratch = path.with_suffix(".json.tmp")
    scratch.write_text(json.dumps(asdict(version), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    scratch.replace(path)
    return path


def read_cluster_file(path: str | os.PathLike[str]) -> ClusterVersion:
    """A ``cluster.json`` as :func:`write_cluster_file` wrote it.

    Raises:
        ConfigurationError: the file is not JSON or lacks a field (named), or a field has the wrong type.
    """
    try:
        data: Any = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        msg = f"{path}: not the cluster file assignors collect writes ({error})"
        raise ConfigurationError(msg) from None
    types = {
        "release": (str, type(None)),
        "kafka_version": (str, type(None)),
        "metadata_level": (int,),
        "finalized_metadata_level": (int, type(None)),
        "group_version": (int, type(None)),
        "broker": (str,),
        "read_at": (str,),
    }
    if not isinstance(data, dict):
        msg = f"{path}: expected a JSON object"
        raise ConfigurationError(msg)
    for name, allowed in types.items():
        if name not in data:
            msg = f"{path}: no field {name!r}"
            raise ConfigurationError(msg)
        value = data[name]
        if isinstance(value, bool) or not isinstance(value, allowed):
            msg = f"{path}: field {name!r} is {value!r}, expected {' or '.join(t.__name__ for t in allowed)}"
            raise ConfigurationError(msg)
    return ClusterVersion(**{name: data[name] for name in types})
