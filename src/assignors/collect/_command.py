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

This module holds the command and the dump's reading; :mod:`assignors.collect._tables` writes
the tables and :mod:`assignors.collect._kafka` reads a live cluster.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import importlib
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from assignors._core.errors import UsageError as CliError
from assignors._core.files import read_json, read_text
from assignors._core.model import INT32_MAX
from assignors.collect._admin import DEFAULT_INTERVAL, AdminHistory, collect_admin
from assignors.collect._client import ReadDeniedError, Redactor, client_settings, read_properties
from assignors.collect._kafka import CONNECT_SECONDS, cluster_topic_ids, collect_topic
from assignors.collect._tables import COLLECT_TABLES, Progress, TableWriter
from assignors.collect._version import CLUSTER_FILE, VersionUnreadError, read_cluster_version
from assignors.consumer_group import KAFKA_VERSION
from assignors.offsets_topic import (
    HistoryBuilder,
    TopicCounts,
    read_dump_log,
    read_formatter_output,
    timestamp_of,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = ["COLLECT_TABLES", "TableWriter", "collect_dump", "register", "run"]

OFFSETS_TOPIC = "__consumer_offsets"
VIA = ("offsets", "admin", "auto")


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
    parser.add_argument(
        "--via",
        choices=VIA,
        default="offsets",
        help="offsets: read __consumer_offsets (READ on it; the default); admin: poll the groups' descriptions "
        "(DESCRIBE on the groups); auto: offsets, and admin when READ is refused",
    )
    parser.add_argument(
        "--interval",
        type=float,
        default=DEFAULT_INTERVAL,
        metavar="SECONDS",
        help=f"--via admin --follow: seconds between two polls (default {DEFAULT_INTERVAL:g})",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=CONNECT_SECONDS,
        metavar="SECONDS",
        help=f"how long to wait for the cluster, at the start and when lost without --follow (default "
        f"{CONNECT_SECONDS:g})",
    )
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


def _parse_time(text: str, where: str = "--since") -> dt.datetime:
    if re.fullmatch(r"\d{1,16}", text):
        return timestamp_of(int(text))
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        msg = f"{where} {text!r}: expected ISO 8601 (2026-01-31T12:00:00Z) or epoch milliseconds"
        raise CliError(msg) from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=dt.UTC)


def _partition_count(where: str, topic: object, count: object) -> int:
    """``count`` when it is a partition count Kafka can hold (0..INT32_MAX), else a :class:`CliError` naming it."""
    if isinstance(count, str) and count.strip().isdigit():
        count = int(count)
    if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= INT32_MAX:
        msg = f"{where}: topic {topic!r} has count {count!r}, expected an integer in 0..{INT32_MAX}"
        raise CliError(msg)
    return count


def _read_topic_counts(path: str) -> TopicCounts:
    """``{"topic": count}`` JSON, or CSV with a ``topic,partitions[,valid_from]`` header."""
    text = read_text(path, "--topics")
    rows: list[tuple[str, int, dt.datetime | None]] = []
    if text.lstrip().startswith("{"):
        data = read_json(path, "--topics")
        if not isinstance(data, dict):  # pragma: no cover - a text that starts with "{" and parses is an object
            msg = f"--topics {path}: expected a JSON object {{topic: count}}"
            raise CliError(msg)
        for topic, count in sorted(data.items()):
            rows.append((topic, _partition_count(f"--topics {path}", topic, count), None))
        return TopicCounts(rows)
    reader = csv.DictReader(text.splitlines())
    if not {"topic", "partitions"} <= set(reader.fieldnames or ()):
        msg = f"--topics {path}: expected JSON {{topic: count}} or CSV with a topic,partitions[,valid_from] header"
        raise CliError(msg)
    for line, row in enumerate(reader, 2):
        topic, since = row.get("topic"), row.get("valid_from")
        if not topic:
            msg = f"--topics {path} line {line}: the topic is empty"
            raise CliError(msg)
        count = _partition_count(f"--topics {path} line {line}", topic, row.get("partitions"))
        rows.append((topic, count, _parse_time(since, f"--topics {path} line {line}: valid_from") if since else None))
    return TopicCounts(rows)


def _read_topic_ids(path: str) -> dict[str, str]:
    data = read_json(path, "--topic-ids")
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        msg = f"--topic-ids {path}: expected a JSON object {{topic id: topic name}}"
        raise CliError(msg)
    return data


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
    meter = Progress(progress or sys.stderr)
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


def _record_cluster(settings: dict[str, str], writer: TableWriter, progress: TextIO) -> None:
    """The cluster's Kafka version from its ApiVersions, said on ``progress`` and written beside the tables; or,
    when it cannot be read, why (the tables stand without it). A dump (no settings) has no cluster to ask."""
    if not settings:
        return
    try:
        found = read_cluster_version(settings, timeout=CONNECT_SECONDS)
    except VersionUnreadError as error:
        progress.write(
            f"note: the cluster's Kafka version was not read ({error}); assignors evaluate replays uniform and "
            f"consumer-range as Kafka {KAFKA_VERSION} runs them unless --kafka-version says otherwise\n"
        )
        return
    replay = (
        f"assignors evaluate replays uniform and consumer-range as Kafka {found.kafka_version}"
        if found.kafka_version is not None
        else f"before the server assignors the replay models: assignors evaluate replays Kafka {KAFKA_VERSION}'s"
    )
    writer.write_cluster(found)
    progress.write(f"cluster: {found.describe()}; {replay} ({CLUSTER_FILE})\n")


def _counts(builder: HistoryBuilder) -> str:
    """``N records read: group metadata A, ...`` (the kinds present)."""
    stats = builder.stats
    kinds = ", ".join(f"{kind} {stats[kind]}" for kind in _READ_KINDS if stats[kind])
    return f"{stats['records']} records read" + (f" ({kinds})" if kinds else "")


def _skipped(builder: HistoryBuilder) -> str:
    """``skipped: undecodable N, filtered out by --groups M, ...`` (the reasons present), or empty."""
    parts = [f"{label} {builder.stats[key]}" for key, label in _SKIP_REASONS if builder.stats[key]]
    return ", ".join(parts)


def _settings(args: argparse.Namespace) -> dict[str, str]:
    where = f"--properties {args.properties}"
    given = read_properties(read_text(args.properties, "--properties"), where) if args.properties else {}
    return client_settings(args.bootstrap_servers, given, where)


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
    """Run ``assignors collect``; 0 when the tables are written (also after Ctrl-C).

    No line it prints holds the value of a secret setting (:func:`assignors.collect._client.is_secret`).
    """
    redact = Redactor()
    try:
        return _run(args, stream or sys.stdout, progress or sys.stderr, redact)
    except CliError as error:
        raise CliError(redact(str(error))) from None


class _Redacting:
    """A stream that writes every line with the secret settings' values hidden."""

    def __init__(self, stream: TextIO, redact: Redactor) -> None:
        self.stream, self.redact = stream, redact

    def write(self, text: str) -> int:
        return self.stream.write(self.redact(text))

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.stream.flush()


def _run(args: argparse.Namespace, stream: TextIO, progress: TextIO, redact: Redactor) -> int:
    if not args.from_dump and not args.bootstrap_servers:
        msg = "assignors collect needs --bootstrap-servers HOST:PORT (or --from-dump FILE)"
        raise CliError(msg)
    if args.from_dump and args.via != "offsets":
        msg = "--from-dump reads a dump of __consumer_offsets: --via admin or auto needs --bootstrap-servers"
        raise CliError(msg)
    if not (args.interval > 0 and args.timeout > 0):
        msg = f"--interval {args.interval:g} and --timeout {args.timeout:g}: expected seconds > 0"
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
    settings = _settings(args) if not args.from_dump else {}  # a bad --properties is refused before --out is made
    redact.secrets[:] = Redactor.of(settings).secrets
    stream, progress = _Redacting(stream, redact), _Redacting(progress, redact)  # type: ignore[assignment]
    if args.via == "admin":
        return _run_admin(args, settings, groups, stream, progress)
    writer = TableWriter(args.out)
    try:
        if args.from_dump:
            collect_dump(args.from_dump, builder, writer, progress)
        else:
            builder.resolve_topic_ids = lambda: cluster_topic_ids(settings)
            collect_topic(
                settings,
                args.topic,
                builder,
                writer,
                follow=args.follow,
                progress=progress,
                timeout=args.timeout,
                announce=f"route: {args.topic} (every record from the earliest offset; READ on the topic)\n",
            )
    except ReadDeniedError as denied:
        writer.discard_if_empty()
        if args.via != "auto":
            raise
        progress.write(f"{denied}\n")
        progress.write("route: READ is refused (--via auto): taking the Admin API instead\n")
        return _run_admin(args, settings, groups, stream, progress)
    except KeyboardInterrupt:
        progress.write("interrupted: the tables hold every record read so far\n")
    _record_cluster(settings, writer, progress)
    _summary(builder, args.out, stream)
    return 0


def _run_admin(
    args: argparse.Namespace,
    settings: dict[str, str],
    groups: re.Pattern[str] | None,
    stream: TextIO,
    progress: TextIO,
) -> int:
    """``--via admin``: the groups' descriptions polled into the tables (continuing an earlier run's tables)."""
    history = AdminHistory(groups=groups)
    writer = TableWriter(args.out, route="admin")
    if writer.resumed:
        history.resume(writer.existing("actual"), writer.existing("topics"))
    every = f"every {args.interval:g} s until Ctrl-C" if args.follow else "once (--follow polls on)"
    announce = f"route: the Admin API, describing the groups {every} (DESCRIBE on the groups)\n"
    if writer.resumed:
        announce += (
            f"resuming the tables in {args.out}: {history.stats['resumed snapshots']} snapshots of "
            f"{history.groups_recorded} groups were there\n"
        )
    try:
        collect_admin(
            settings,
            history,
            writer,
            follow=args.follow,
            interval=args.interval,
            progress=progress,
            timeout=args.timeout,
            announce=announce,
        )
    except KeyboardInterrupt:
        progress.write("interrupted: the tables hold every snapshot taken so far\n")
    _record_cluster(settings, writer, progress)
    root = Path(args.out)
    stream.write(
        f"read: {history.stats['descriptions']} group descriptions; {history.stats['snapshots']} new snapshots of "
        f"{len(history.groups_seen)} groups\n"
    )
    stream.write(
        "note: through the Admin API the generation is the count of the group's recorded snapshots, and a member's "
        "topics are those assigned in its group (confluent-kafka's descriptions carry neither)\n"
    )
    stream.writelines(f"warning: {warning}\n" for warning in history.warnings)
    stream.write(f"wrote {root / 'membership'}, {root / 'actual'} and {root / 'topics'}\n")
    if history.stats["snapshots"] or writer.resumed:
        stream.write(
            f"next: assignors evaluate --membership {root / 'membership'} --topics {root / 'topics'} "
            f"--actual {root / 'actual'} --out REPORT_DIR\n"
        )
    else:
        stream.write("note: no stable consumer group was described, so there is nothing to evaluate\n")
    return 0
