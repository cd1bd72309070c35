"""``assignors collect``'s output: the three tables as Parquet directories, and the progress lines on stderr.

Imports pyarrow only when a :class:`TableWriter` is made (the ``collect`` extra).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from assignors._core.errors import UsageError
from assignors.offsets_topic import ACTUAL_COLUMNS
from spark_udfs.replay import MEMBERSHIP_COLUMNS, TOPICS_COLUMNS  # until their one home in assignors lands (issue 35)

if TYPE_CHECKING:
    from assignors.offsets_topic import HistoryBuilder

__all__ = ["COLLECT_TABLES", "Progress", "TableWriter"]

COLLECT_TABLES = ("membership", "actual", "topics")


class TableWriter:
    """The three tables as Parquet directories; every flush adds one part file (nothing is rewritten but topics)."""

    def __init__(self, out: str) -> None:
        import pyarrow as pa

        self.root = Path(out)
        if self.root.exists() and not self.root.is_dir():
            msg = f"--out {out}: is a file, not a directory"
            raise UsageError(msg)
        for table in COLLECT_TABLES:
            directory = self.root / table
            if directory.exists() and any(directory.glob("*.parquet")):
                msg = f"{directory} already holds collected rows; choose another --out or remove it"
                raise UsageError(msg)
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


class Progress:
    """Progress lines on a stream: records read, their rate, groups, snapshots, and the lag when known."""

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
