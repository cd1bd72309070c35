"""``assignors collect`` on a live cluster: ``__consumer_offsets`` read through confluent-kafka, and topic ids.

:func:`collect_topic` reads every partition of the topic from the earliest offset (committed
records only) into the tables; :func:`cluster_topic_ids` asks the cluster for the topic ids that
KIP-848 records name. confluent-kafka (the ``collect`` extra) is imported only when they run.
"""

from __future__ import annotations

import base64
import struct
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from assignors._core.errors import UsageError
from assignors.collect._client import ClientEvents, ReadDeniedError, denied_message
from assignors.collect._tables import Progress

if TYPE_CHECKING:
    from assignors.collect._tables import TableWriter
    from assignors.offsets_topic import HistoryBuilder

__all__ = ["CONNECT_SECONDS", "FLUSH_SECONDS", "METADATA_SECONDS", "cluster_topic_ids", "collect_topic", "connect"]

CONNECT_SECONDS = 10.0
"""How long ``collect`` waits for a cluster's first answer, and (without ``--follow``) for one lost mid-read
(``--timeout``): a broker that restarts is back well within it (one here answers 3-4 s after its start)."""
FLUSH_SECONDS = 2.0
METADATA_SECONDS = 15.0
"""How long ``collect`` waits for the cluster's topic metadata (topic ids of KIP-848 records)."""


_DENIED = ("TOPIC_AUTHORIZATION_FAILED", "CLUSTER_AUTHORIZATION_FAILED")


def connect(
    client: Any, settings: dict[str, str], events: ClientEvents, timeout: float, topic: str | None = None
) -> Any:
    """The cluster's metadata (of ``topic`` or of every topic), asked until ``timeout``; else one line naming why.

    A refused login, an untrusted certificate or TLS spoken to a listener without it fail at once: waiting does
    not change them.
    """
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + timeout
    while True:
        try:
            metadata = client.list_topics(topic, timeout=min(1.0, max(deadline - time.monotonic(), 0.1)))
        except KafkaException:
            client.poll(0.05)  # hands over librdkafka's errors and log lines
            if events.decisive() or time.monotonic() >= deadline:
                raise UsageError(events.explain(settings, timeout)) from None
            continue
        events.alive()
        return metadata


class _TopicReader:
    """One pass over a topic's partitions; tracks positions, end-of-partition and the high watermarks."""

    def __init__(
        self, consumer: Any, topic: str, settings: dict[str, str], events: ClientEvents, timeout: float
    ) -> None:
        from confluent_kafka import OFFSET_BEGINNING, KafkaException, TopicPartition

        self.consumer, self.topic, self.settings = consumer, topic, settings
        metadata = connect(consumer, settings, events, timeout, topic)
        described = metadata.topics.get(topic)
        if described is not None and described.error is not None and described.error.name() in _DENIED:
            raise ReadDeniedError(denied_message(topic, settings))
        if described is None or described.error is not None or not described.partitions:
            reason = described.error.str() if described is not None and described.error is not None else "not found"
            msg = f"topic {topic!r}: {reason}"
            raise UsageError(msg)
        self.partitions: list[int] = sorted(described.partitions)
        self.high: dict[int, int] = {}
        self.position: dict[int, int] = {}
        for number in self.partitions:
            try:
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, number), timeout=timeout)
            except KafkaException as error:
                consumer.poll(0.05)
                if error.args[0].name() in _DENIED:
                    raise ReadDeniedError(denied_message(topic, settings)) from None
                raise UsageError(events.explain(settings, timeout)) from None
            self.position[number], self.high[number] = low, high
        # Done when librdkafka says so (end of partition), also for an empty one: its first fetch is where a
        # principal without READ is refused (with DESCRIBE, the metadata and the offsets above answer).
        self.done: set[int] = set()
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in self.partitions])

    def at_end(self) -> bool:
        return len(self.done) == len(self.partitions)

    def handle(self, message: Any, builder: HistoryBuilder) -> bool:
        """Fold one message; whether the topic answered (a record or the end of a partition)."""
        from confluent_kafka import TIMESTAMP_NOT_AVAILABLE, KafkaError

        error = message.error()
        number: int = message.partition()
        if error is not None and error.code() == KafkaError._PARTITION_EOF:  # noqa: SLF001 - librdkafka's name
            self.done.add(number)
            return True
        if error is not None and error.name() in _DENIED:
            raise ReadDeniedError(denied_message(self.topic, self.settings))
        if error is not None and error.name() == "GROUP_AUTHORIZATION_FAILED":
            return False  # the consumer's group id is never joined nor committed to: its coordinator is not needed
        if error is not None:
            if error.fatal():
                msg = f"reading {self.topic!r}: {error.str()}"
                raise UsageError(msg)
            builder.errors.append(f"partition {number}: {error.str()}")
            return False
        offset: int = message.offset()
        self.position[number] = offset + 1
        self.done.discard(number)
        kind, stamp = message.timestamp()
        key = message.key()
        if key is None:
            builder.stats["records without a key"] += 1
        else:
            ms = None if kind == TIMESTAMP_NOT_AVAILABLE else stamp
            builder.add_raw(key, message.value(), ms, f"partition {number} offset {offset}")
        return True

    def lag(self) -> int:
        from confluent_kafka import TopicPartition

        for number in self.partitions:
            _, high = self.consumer.get_watermark_offsets(TopicPartition(self.topic, number), cached=True)
            self.high[number] = max(self.high[number], high or 0)
        return sum(max(self.high[p] - self.position[p], 0) for p in self.partitions)


def collect_topic(  # noqa: PLR0913 - the command's options
    settings: dict[str, str],
    topic: str,
    builder: HistoryBuilder,
    writer: TableWriter,
    *,
    follow: bool = False,
    progress: TextIO | None = None,
    flush_seconds: float = FLUSH_SECONDS,
    timeout: float = CONNECT_SECONDS,
    announce: str = "",
) -> None:
    """Read every partition of ``topic`` from the earliest offset into the tables (until the end unless ``follow``).

    Without ``follow``, a cluster that stays unreachable for ``timeout`` seconds in the middle of the read ends it
    with one line (what was read is written first); with ``follow`` the read waits for the cluster to come back and
    goes on from where it was.

    Raises:
        UsageError: the cluster cannot be reached or refuses the login (one line naming the setting to change).
        ReadDeniedError: the principal may not read ``topic`` (the ACL to ask for).
    """
    from confluent_kafka import Consumer, KafkaException

    events = ClientEvents()
    config = {
        "group.id": "assignors-collect",  # never joined nor committed: partitions are assigned by hand
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",
        **settings,
        **events.config(),
    }
    try:
        consumer = Consumer(config)
    except (KafkaException, ValueError) as error:
        msg = f"--properties: {_error_text(error)}"
        raise UsageError(msg) from None
    meter = Progress(progress or sys.stderr)
    out = progress or sys.stderr
    finished = False
    try:
        reader = _TopicReader(consumer, topic, settings, events, timeout)
        last_flush = time.monotonic()
        told = False
        while follow or not reader.at_end():
            message = consumer.poll(0.5)
            if message is not None:
                events.alive()
                told = False
                if reader.handle(message, builder) and announce:
                    out.write(announce)  # once the topic answered a fetch: READ is granted
                    announce = ""
            told = _watch(events, settings, out, told=told, give_up=None if follow else timeout)
            if events.down_since is not None and time.monotonic() - events.down_since >= timeout and not follow:
                writer.flush(builder)
                msg = (
                    f"lost the cluster after {builder.stats['records']} records ({events.explain(settings, timeout)}"
                    f" for {timeout:g} s): {writer.written()}"
                )
                raise UsageError(msg)
            if time.monotonic() - last_flush >= flush_seconds:
                writer.flush(builder)
                meter.report(builder, reader.lag())
                last_flush = time.monotonic()
        finished = True
    except KeyboardInterrupt:
        finished = True  # Ctrl-C: the tables are what was asked for, empty or not
        raise
    finally:
        writer.flush(builder)
        if not finished:
            writer.discard_if_empty()
        consumer.close()
        if finished:
            meter.report(builder, None, final=True)


def _watch(events: ClientEvents, settings: dict[str, str], out: TextIO, *, told: bool, give_up: float | None) -> bool:
    """Say once that the cluster is lost (and for how long it is waited for); whether it was said."""
    if events.down_since is None or told:
        return told
    then = "waiting for it" if give_up is None else f"waiting {give_up:g} s for it"
    out.write(f"  {events.explain(settings, time.monotonic() - events.down_since)}: {then}\n")
    return True


def _error_text(error: BaseException) -> str:
    """A librdkafka exception's own text (``KafkaError{...str="..."}`` unwrapped)."""
    first = error.args[0] if error.args else error
    return str(first.str()) if hasattr(first, "str") else str(first)


def _kafka_uuid_text(topic_id: Any) -> str:
    """A confluent-kafka ``Uuid`` as Kafka's ``Uuid.toString`` prints it (and the records' decoder does).

    ``str()`` of confluent-kafka's ``Uuid`` is standard base64 (``+`` and ``/``); Kafka's is URL-safe (``-`` and
    ``_``). Found on a real broker: an id with a ``/`` named no topic.
    """
    raw = struct.pack(">qq", topic_id.get_most_significant_bits(), topic_id.get_least_significant_bits())
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def cluster_topic_ids(settings: dict[str, str], timeout: float | None = None) -> dict[str, str]:
    """Topic id (as Kafka prints it) -> name, from the cluster's metadata (Admin ``describeTopics``).

    Kafka 4.1+ writes no record naming the topics of a KIP-848 group's assignments, so the
    names come from the cluster. A cluster that does not answer in time (or an old one) gives
    what it answered, with a warning naming ``--topic-ids`` on stderr.
    """
    from concurrent.futures import wait

    from confluent_kafka import KafkaException, TopicCollection
    from confluent_kafka.admin import AdminClient

    seconds = METADATA_SECONDS if timeout is None else timeout
    config: dict[str, Any] = {**settings, **ClientEvents().config()}
    admin = AdminClient(config)
    try:
        names = sorted(admin.list_topics(timeout=seconds).topics)
        futures = admin.describe_topics(TopicCollection(names), request_timeout=seconds)
    except KafkaException as error:
        sys.stderr.write(f"warning: cannot read topic ids from the cluster ({error}); give them with --topic-ids\n")
        return {}
    done, _ = wait(list(futures.values()), timeout=seconds)
    ids: dict[str, str] = {}
    for name, future in sorted(futures.items()):
        if future in done and future.exception() is None:
            ids[_kafka_uuid_text(future.result().topic_id)] = name
    if len(ids) < len(names):
        sys.stderr.write(
            f"warning: the cluster gave the topic ids of {len(ids)} of {len(names)} topics in {seconds:g} s; "
            "give the others with --topic-ids\n"
        )
    return ids
