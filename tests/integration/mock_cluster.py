"""librdkafka's mock Kafka cluster (shipped in the confluent-kafka wheel), started through ctypes.

No JVM broker is available here; the mock speaks the Kafka protocol on loopback, with
group coordination, which is what the assignor adapters need.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from types import TracebackType
from typing import Self

import confluent_kafka

_CONSUMER = 1  # RD_KAFKA_CONSUMER


def _library() -> ctypes.CDLL:
    libs = Path(confluent_kafka.__file__).resolve().parent.parent / "confluent_kafka.libs"
    found = sorted(libs.glob("librdkafka*.so*"))
    if not found:
        msg = f"no librdkafka in {libs}: is the confluent-kafka wheel installed?"
        raise RuntimeError(msg)
    lib = ctypes.CDLL(str(found[0]))
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_set.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_topic_create.restype = ctypes.c_int
    lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    return lib


class MockCluster:
    """A one-broker mock cluster on loopback; a context manager that tears it down."""

    def __init__(self) -> None:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        self._lib = _library()
        errors = ctypes.create_string_buffer(512)
        conf = self._lib.rd_kafka_conf_new()
        self._lib.rd_kafka_conf_set(conf, b"log_level", b"3", errors, len(errors))  # errors only
        self._handle = self._lib.rd_kafka_new(_CONSUMER, conf, errors, len(errors))
        if not self._handle:
            msg = f"rd_kafka_new failed: {errors.value.decode()}"
            raise RuntimeError(msg)
        self._cluster = self._lib.rd_kafka_mock_cluster_new(self._handle, 1)
        if not self._cluster:
            msg = "rd_kafka_mock_cluster_new failed"
            raise RuntimeError(msg)
        self.bootstrap_servers: str = self._lib.rd_kafka_mock_cluster_bootstraps(self._cluster).decode()

    def create_topic(self, name: str, partitions: int) -> None:
        code = self._lib.rd_kafka_mock_topic_create(self._cluster, name.encode(), partitions, 1)
        if code != 0:
            msg = f"rd_kafka_mock_topic_create({name!r}, {partitions}) failed with error {code}"
            raise RuntimeError(msg)

    def close(self) -> None:
        if self._cluster:
            self._lib.rd_kafka_mock_cluster_destroy(self._cluster)
            self._cluster = None
        if self._handle:
            self._lib.rd_kafka_destroy(self._handle)
            self._handle = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
