"""``assignors collect``: the cluster's own consumer-group history as the evaluation's input tables.

``assignors collect --bootstrap-servers HOST:PORT --out DIR [--groups REGEX] [--since TS]
[--follow] [--topic T] [--from-dump FILE] [--topics PATH] [--topic-ids PATH]`` reads
``__consumer_offsets`` (every partition from the earliest offset, committed records only:
librdkafka drops transactional control batches) or a text dump of it, folds the records with
:class:`assignors.offsets_topic.HistoryBuilder`, and writes ``DIR/membership``,
``DIR/actual`` and ``DIR/topics`` as Parquet. Rows are written as they come, one part file
per flush, so Ctrl-C (or a crash) keeps everything written so far; ``--follow`` keeps
tailing the topic. Needs the ``collect`` extra (confluent-kafka, pyarrow; only pyarrow with
``--from-dump``), imported only when the command runs.
"""

from __future__ import annotations

import argparse
import base64
import csv
import datetime as dt
import importlib
import json
import re
import struct
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from assignors.cli import CliError
from assignors.offsets_topic import (
    ACTUAL_COLUMNS,
    HistoryBuilder,
    TopicCounts,
    read_dump_log,
    read_formatter_output,
    timestamp_of,
)
from spark_udfs.replay import MEMBERSHIP_COLUMNS, TOPICS_COLUMNS

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["COLLECT_TABLES", "TableWriter", "cluster_topic_ids", "collect_dump", "collect_topic", "register", "run"]

OFFSETS_TOPIC = "__consumer_offsets"
FLUSH_SECONDS = 2.0
METADATA_SECONDS = 15.0
"""How long ``collect`` waits for the cluster's topic metadata (topic ids of KIP-848 records)."""
COLLECT_TABLES = ("membership", "actual", "topics")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``assignors collect`` (imports neither pyarrow nor confluent_kafka)."""
    parser = subparsers.add_parser(
        "collect", help="read consumer-group history from __consumer_offsets into membership/actual/topics tables"
    )
    parser.add_argument("--bootstrap-servers", help="HOST:PORT[,HOST:PORT...] of the cluster")
    parser.add_argument("--out", required=True, help="output directory (membership/, actual/, topics/ as Parquet)")
    parser.add_argument("--groups", help="only groups whose id matches this regular expression (re.search)")
    parser.add_argument("--since", help="skip snapshots before this time: ISO 8601 (UTC if no zone) or epoch ms")
    parser.add_argument("--follow", action="store_true", help="keep tailing the topic until Ctrl-C")
    parser.add_argument("--topic", default=OFFSETS_TOPIC, help=f"topic to read (default: {OFFSETS_TOPIC})")
    parser.add_argument(
        "--from-dump", metavar="FILE", help="read kafka-dump-log.sh --offsets-decoder or formatter output instead"
    )
    parser.add_argument(
        "--topics", metavar="PATH", help="partition counts: JSON {topic: count} or CSV topic,partitions[,valid_from]"
    )
    parser.add_argument(
        "--topic-ids",
        metavar="PATH",
        help="JSON {topic id: name} for KIP-848 records (Kafka 4.1+); else read from the cluster when needed",
    )
    parser.add_argument("--properties", metavar="FILE", help="extra librdkafka settings, one key=value a line")
    parser.set_defaults(run=run)


def _require(names: Sequence[str]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            msg = (
                f"assignors collect needs the collect extra ({name} is not installed): pip install 'assignors[collect]'"
            )
            raise CliError(msg) from None


def _parse_time(text: str) -> dt.datetime:
    if re.fullmatch(r"\d{1,16}", text):
        return timestamp_of(int(text))
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        msg = f"--since {text!r}: expected ISO 8601 (2026-01-31T12:00:00Z) or epoch milliseconds"
        raise CliError(msg) from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=dt.UTC)


def _read_topic_counts(path: str) -> TopicCounts:
    """``{"topic": count}`` JSON, or CSV with a ``topic,partitions[,valid_from]`` header."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        msg = f"--topics {path}: cannot read: {error}"
        raise CliError(msg) from None
    rows: list[tuple[str, int, dt.datetime | None]] = []
    if text.lstrip().startswith("{"):
        data = json.loads(text)
        for topic, count in sorted(data.items()):
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                msg = f"--topics {path}: topic {topic!r} has count {count!r}, expected an integer >= 0"
                raise CliError(msg)
            rows.append((topic, count, None))
        return TopicCounts(rows)
    for line, row in enumerate(csv.DictReader(text.splitlines()), 2):
        topic, count, since = row.get("topic"), row.get("partitions"), row.get("valid_from")
        if not topic or not count or not count.isdigit():
            msg = f"--topics {path} line {line}: expected topic,partitions[,valid_from], got {row}"
            raise CliError(msg)
        rows.append((topic, int(count), _parse_time(since) if since else None))
    return TopicCounts(rows)


def _read_topic_ids(path: str) -> dict[str, str]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        msg = f"--topic-ids {path}: cannot read: {error}"
        raise CliError(msg) from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        msg = f"--topic-ids {path}: expected a JSON object {{topic id: topic name}}"
        raise CliError(msg)
    return data


class TableWriter:
    """The three tables as Parquet directories; every flush adds one part file (nothing is rewritten but topics)."""

    def __init__(self, out: str) -> None:
        import pyarrow as pa

        self.root = Path(out)
        if self.root.exists() and not self.root.is_dir():
            msg = f"--out {out}: is a file, not a directory"
            raise CliError(msg)
        for table in COLLECT_TABLES:
            directory = self.root / table
            if directory.exists() and any(directory.glob("*.parquet")):
                msg = f"{directory} already holds collected rows; choose another --out or remove it"
                raise CliError(msg)
        # The directories are made by the first write: a run that finds nothing leaves nothing behind.
        self._parts = 0
        kinds = {
            "string": pa.string(),
            "int": pa.int32(),
            "timestamp": pa.timestamp("us", tz="UTC"),
            "array<string>": pa.list_(pa.string()),
        }
        self.schemas = {
            name: pa.schema([(column, kinds[kind]) for column, kind in columns])
            for name, columns in (
                ("membership", MEMBERSHIP_COLUMNS),
                ("actual", ACTUAL_COLUMNS),
                ("topics", TOPICS_COLUMNS),
            )
        }

    def _write(self, table: str, rows: list[dict[str, Any]], path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        pq.write_table(pa.Table.from_pylist(rows, schema=self.schemas[table]), temporary)
        temporary.replace(path)  # readers never see half a file

    def flush(self, builder: HistoryBuilder) -> int:
        """Write the rows added since the last flush and the current topics table; returns rows written."""
        for table in COLLECT_TABLES:
            (self.root / table).mkdir(parents=True, exist_ok=True)
        membership, actual = builder.drain()
        if membership:
            self._parts += 1
            name = f"part-{self._parts:05d}.parquet"
            self._write("membership", membership, self.root / "membership" / name)
            self._write("actual", actual, self.root / "actual" / name)
        self._write("topics", builder.topics(), self.root / "topics" / "part-00000.parquet")
        return len(membership)


class _Progress:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.started = self.last = time.monotonic()
        self.records_then = 0

    def report(self, builder: HistoryBuilder, lag: int | None, *, final: bool = False) -> None:
        now = time.monotonic()
        records = builder.stats["records"]
        rate = (records - self.records_then) / max(now - self.last, 1e-9)
        if final:
            rate = records / max(now - self.started, 1e-9)
        lag_text = "" if lag is None else f", lag to the end {lag}"
        self.stream.write(
            f"  {records} records ({rate:.0f}/s), {len(builder.groups_seen)} groups, "
            f"{builder.stats['snapshots']} snapshots{lag_text}\n"
        )
        self.stream.flush()
        self.last, self.records_then = now, records


def collect_dump(path: str, builder: HistoryBuilder, writer: TableWriter, progress: TextIO | None = None) -> None:
    """Fold a dump file (format detected: dump-log lines, else concatenated formatter JSON) into the tables.

    Raises:
        CliError: the file cannot be read, or holds no group metadata (nothing is written then): the
            message says what was read and where the first undecodable line is.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        msg = f"--from-dump {path}: cannot read: {error.strerror or error}"
        raise CliError(msg) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        msg = (
            f"no group metadata found in {path}: it is not a text dump (byte {error.start} is not UTF-8); "
            "give the output of kafka-dump-log.sh --offsets-decoder or of the GroupMetadataMessageFormatter"
        )
        raise CliError(msg) from None
    entries = read_dump_log(text.splitlines()) if " payload: " in text else read_formatter_output(text)
    meter = _Progress(progress or sys.stderr)
    first_bad: str | None = None
    try:
        for entry in entries:
            if entry.record is None:
                builder.stats["undecodable"] += 1
                builder.errors.append(entry.error or entry.where)
                if first_bad is None:
                    line = f"line {entry.line}" if entry.line is not None else entry.where
                    problem = entry.error or "undecodable"
                    first_bad = problem if problem.startswith(f"{line}:") else f"{line}: {problem}"
            else:
                builder.add(entry.record, entry.timestamp_ms)
    except KeyboardInterrupt:
        writer.flush(builder)
        meter.report(builder, None, final=True)
        raise
    _check_found(path, text, builder, first_bad)
    writer.flush(builder)
    meter.report(builder, None, final=True)


_METADATA_KINDS = ("group metadata", "KIP-848 records", "legacy KIP-848 records", "group tombstones")


def _check_found(path: str, text: str, builder: HistoryBuilder, first_bad: str | None) -> None:
    """Refuse a dump with no group metadata record at all: nothing is written, the message says what was read.

    Group metadata that gives no snapshot (only empty generations, only other protocols, all filtered
    out) is a valid read: its counts are printed with why each record was skipped.
    """
    stats = builder.stats
    if any(stats[kind] for kind in _METADATA_KINDS) or stats["filtered out"]:
        return
    bad = f" (first undecodable {first_bad})" if first_bad else ""
    if not text.strip():
        what = "the file is empty"
    elif not stats["records"] and not stats["undecodable"]:
        what = "no line looks like a record of kafka-dump-log.sh --offsets-decoder or of the formatter"
    elif not stats["records"]:
        what = f"no record decoded, {stats['undecodable']} undecodable"
    else:
        what = f"{_counts(builder)}" + (f", {stats['undecodable']} undecodable" if stats["undecodable"] else "")
    msg = f"no group metadata found in {path}: {what}{bad}"
    raise CliError(msg)


_READ_KINDS = (
    "group metadata",
    "KIP-848 records",
    "legacy KIP-848 records",
    "group tombstones",
    "offset commits",
    "other record types",
)
_SKIP_REASONS = (
    ("undecodable", "undecodable"),
    ("filtered out", "filtered out by --groups"),
    ("non-consumer groups", "not a consumer group"),
    ("empty generations", "empty generations"),
    ("snapshots with undecodable members", "snapshots with undecodable members"),
    ("snapshots without a timestamp", "snapshots without a timestamp"),
    ("before --since", "before --since"),
    ("records without a key", "records without a key"),
)


def _counts(builder: HistoryBuilder) -> str:
    """``N records read: group metadata A, ...`` (the kinds present)."""
    stats = builder.stats
    kinds = ", ".join(f"{kind} {stats[kind]}" for kind in _READ_KINDS if stats[kind])
    return f"{stats['records']} records read" + (f" ({kinds})" if kinds else "")


def _skipped(builder: HistoryBuilder) -> str:
    """``skipped: undecodable N, filtered out by --groups M, ...`` (the reasons present), or empty."""
    parts = [f"{label} {builder.stats[key]}" for key, label in _SKIP_REASONS if builder.stats[key]]
    return ", ".join(parts)


class _TopicReader:
    """One pass over a topic's partitions; tracks positions, end-of-partition and the high watermarks."""

    def __init__(self, consumer: Any, topic: str) -> None:
        from confluent_kafka import OFFSET_BEGINNING, TopicPartition

        self.consumer, self.topic = consumer, topic
        metadata = consumer.list_topics(topic, timeout=15)
        described = metadata.topics.get(topic)
        if described is None or described.error is not None or not described.partitions:
            reason = described.error if described is not None else "not found"
            msg = f"topic {topic!r}: {reason}"
            raise CliError(msg)
        self.partitions: list[int] = sorted(described.partitions)
        self.high: dict[int, int] = {}
        self.position: dict[int, int] = {}
        for number in self.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, number), timeout=15)
            self.position[number], self.high[number] = low, high
        self.done = {p for p in self.partitions if self.high[p] <= self.position[p]}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in self.partitions])

    def at_end(self) -> bool:
        return len(self.done) == len(self.partitions)

    def handle(self, message: Any, builder: HistoryBuilder) -> None:
        from confluent_kafka import TIMESTAMP_NOT_AVAILABLE, KafkaError

        error = message.error()
        number: int = message.partition()
        if error is not None and error.code() == KafkaError._PARTITION_EOF:  # noqa: SLF001 - librdkafka's name
            self.done.add(number)
        elif error is not None:
            if error.fatal():
                msg = f"reading {self.topic!r}: {error.str()}"
                raise CliError(msg)
            builder.errors.append(f"partition {number}: {error.str()}")
        else:
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
) -> None:
    """Read every partition of ``topic`` from the earliest offset into the tables (until the end unless ``follow``)."""
    from confluent_kafka import Consumer

    config = {
        "group.id": "assignors-collect",  # never joined nor committed: partitions are assigned by hand
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",
        **settings,
    }
    consumer = Consumer(config)
    meter = _Progress(progress or sys.stderr)
    try:
        reader = _TopicReader(consumer, topic)
        last_flush = time.monotonic()
        while follow or not reader.at_end():
            message = consumer.poll(0.5)
            if message is not None:
                reader.handle(message, builder)
            if time.monotonic() - last_flush >= flush_seconds:
                writer.flush(builder)
                meter.report(builder, reader.lag())
                last_flush = time.monotonic()
    finally:
        writer.flush(builder)
        consumer.close()
        meter.report(builder, None, final=True)


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
    config: dict[str, str | int | float | bool] = {**settings}
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


def _settings(args: argparse.Namespace) -> dict[str, str]:
    settings = {"bootstrap.servers": args.bootstrap_servers}
    if args.properties:
        for line in Path(args.properties).read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                name, sep, value = line.partition("=")
                if not sep:
                    msg = f"--properties {args.properties}: {line!r} is not key=value"
                    raise CliError(msg)
                settings[name.strip()] = value.strip()
    return settings


def _summary(builder: HistoryBuilder, out: str, stream: TextIO) -> None:
    stats = ", ".join(f"{name} {count}" for name, count in sorted(builder.stats.items()))
    groups = len(builder.groups_seen)
    stream.write(f"read: {_counts(builder)}; {builder.stats['snapshots']} snapshots of {groups} groups\n")
    skipped = _skipped(builder)
    if skipped:
        stream.write(f"skipped (why: count): {skipped}\n")
    stream.write(f"collected: {stats}\n")
    if builder.kinds:
        kinds = ", ".join(f"{name} {count}" for name, count in sorted(builder.kinds.items()))
        stream.write(f"decoded: {kinds}\n")
    stream.writelines(f"warning: {warning}\n" for warning in builder.warnings)
    stream.writelines(f"skipped: {line}\n" for line in builder.errors[:10])
    if len(builder.errors) > 10:  # noqa: PLR2004 - the first ten are shown
        stream.write(f"skipped: ... and {len(builder.errors) - 10} more\n")
    bounds, unsized = builder.lower_bound_topics(), builder.unsized_topics()
    if bounds:
        stream.write(
            f"note: partition counts of {len(bounds)} topics ({', '.join(bounds[:5])}"
            f"{', ...' if len(bounds) > 5 else ''}) are lower bounds from assigned partitions; "  # noqa: PLR2004
            "give exact counts with --topics\n"
        )
    if unsized:
        stream.write(f"note: no partition count for {', '.join(unsized)}: give them with --topics\n")
    root = Path(out)
    stream.write(f"wrote {root / 'membership'}, {root / 'actual'} and {root / 'topics'}\n")
    if not builder.stats["snapshots"]:
        stream.write("note: no consumer-group snapshot was collected, so there is nothing to evaluate\n")
        return
    stream.write(
        f"next: assignors evaluate --membership {root / 'membership'} --topics {root / 'topics'} "
        f"--actual {root / 'actual'} --out REPORT_DIR\n"
    )


def run(args: argparse.Namespace, stream: TextIO | None = None, progress: TextIO | None = None) -> int:
    """Run ``assignors collect``; 0 when the tables are written (also after Ctrl-C)."""
    stream = stream or sys.stdout
    progress = progress or sys.stderr
    if not args.from_dump and not args.bootstrap_servers:
        msg = "assignors collect needs --bootstrap-servers HOST:PORT (or --from-dump FILE)"
        raise CliError(msg)
    _require(("pyarrow",) if args.from_dump else ("pyarrow", "confluent_kafka"))
    try:
        groups = re.compile(args.groups) if args.groups else None
    except re.error as error:
        msg = f"--groups {args.groups!r}: {error}"
        raise CliError(msg) from None
    builder = HistoryBuilder(
        groups=groups,
        since=_parse_time(args.since) if args.since else None,
        topic_counts=_read_topic_counts(args.topics) if args.topics else TopicCounts(),
        topic_ids=_read_topic_ids(args.topic_ids) if args.topic_ids else {},
    )
    writer = TableWriter(args.out)
    try:
        if args.from_dump:
            collect_dump(args.from_dump, builder, writer, progress)
        else:
            settings = _settings(args)
            builder.resolve_topic_ids = lambda: cluster_topic_ids(settings)
            collect_topic(settings, args.topic, builder, writer, follow=args.follow, progress=progress)
    except KeyboardInterrupt:
        progress.write("interrupted: the tables hold every record read so far\n")
    _summary(builder, args.out, stream)
    return 0
