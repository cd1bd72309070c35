"""``assignors collect``'s output: the three tables as Parquet directories, and the progress lines on stderr.

Imports pyarrow only when a :class:`TableWriter` is made (the ``collect`` extra).
"""

from __future__ import annotations

import importlib
import json
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from assignors._core.errors import UsageError
from assignors._core.tables import ACTUAL_COLUMNS, COLLECTED_TOPICS_COLUMNS, HANDOVERS_COLUMNS, MEMBERSHIP_COLUMNS
from assignors.collect._version import CLUSTER_FILE, write_cluster_file

if TYPE_CHECKING:
    from collections import Counter

    from assignors.collect._version import ClusterVersion


class History(Protocol):
    """What the tables are written from: :class:`assignors.offsets_topic.HistoryBuilder`, or the Admin route's."""

    stats: Counter[str]
    groups_seen: set[str]

    def drain(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]: ...

    def topics(self) -> list[dict[str, Any]]: ...


__all__ = ["COLLECT_TABLES", "HANDOVERS_TABLE", "ROUTE_FILE", "History", "Progress", "TableWriter"]

COLLECT_TABLES = ("membership", "actual", "topics")
HANDOVERS_TABLE = "handovers"
"""Beside them, from ``__consumer_offsets`` only: KIP-848's recorded hand-overs (written when there are any)."""
ROUTE_FILE = "_collect.json"
"""Beside the tables: the route that wrote them (the Admin route continues only its own)."""


class TableWriter:
    """The three tables as Parquet directories; every flush adds one part file (nothing is rewritten but topics)."""

    def __init__(self, out: str, *, route: str = "offsets") -> None:
        self.root = Path(out)
        self.route = route
        if self.root.exists() and not self.root.is_dir():
            msg = f"--out {out}: is a file, not a directory"
            raise UsageError(msg)
        self._made_root = not self.root.exists()
        self._parts = 0
        self._handover_parts = 0
        self.resumed = False
        """Whether the tables already held rows of this route (the Admin route goes on where it stopped)."""
        for table in COLLECT_TABLES:
            directory = self.root / table
            if directory.exists() and any(directory.glob("*.parquet")):
                if route != "admin" or self._route_written() != "admin":
                    msg = f"{directory} already holds collected rows; choose another --out or remove it"
                    if route == "admin":
                        msg += " (only the Admin route's own tables are continued)"
                    raise UsageError(msg)
                self.resumed = True
        if self.resumed:
            self._parts = max(int(p.stem.split("-")[1]) for p in (self.root / "membership").glob("part-*.parquet"))
        # The directories are made by the first write: a run that fails before any row leaves nothing behind.
        self.schemas = _arrow_schemas()

    def _write(self, table: str, rows: list[dict[str, Any]], path: Path) -> None:
        _write_parquet(rows, self.schemas[table], path)

    def _route_written(self) -> str | None:
        try:
            return str(json.loads((self.root / ROUTE_FILE).read_text(encoding="utf-8"))["route"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def existing(self, table: str) -> list[dict[str, Any]]:
        """The rows the table already holds (the Admin route's resumption)."""
        directory = self.root / table
        if not directory.exists() or not any(directory.glob("*.parquet")):
            return []
        return _read_parquet(directory, self.schemas[table])

    @property
    def parts(self) -> int:
        """Part files of membership and actual written so far (by this run and the runs it continues)."""
        return self._parts

    def written(self) -> str:
        """What the tables hold, for the line of a run that fails: kept, or nothing (and no --out left)."""
        if self._parts:
            return f"the tables in {self.root} keep every snapshot read before it"
        return f"nothing was written ({self.root} is not left behind)"

    def write_cluster(self, version: ClusterVersion) -> None:
        """``cluster.json`` beside the tables, once they are written (a run that wrote nothing leaves none)."""
        if self.root.is_dir():
            write_cluster_file(self.root, version)

    def discard_if_empty(self) -> None:
        """Remove the tables' directories (and --out, if this run made it) when no snapshot was written."""
        if self._parts:
            return
        for table in (*COLLECT_TABLES, HANDOVERS_TABLE):
            shutil.rmtree(self.root / table, ignore_errors=True)
        (self.root / ROUTE_FILE).unlink(missing_ok=True)
        (self.root / CLUSTER_FILE).unlink(missing_ok=True)
        if self._made_root and self.root.is_dir() and not any(self.root.iterdir()):
            self.root.rmdir()

    def flush(self, builder: History) -> int:
        """Write the rows added since the last flush and the current topics table; returns rows written."""
        for table in COLLECT_TABLES:
            (self.root / table).mkdir(parents=True, exist_ok=True)
        if self.route == "admin":
            (self.root / ROUTE_FILE).write_text(json.dumps({"route": self.route}) + "\n", encoding="utf-8")
        membership, actual = builder.drain()
        if membership:
            self._parts += 1
            name = f"part-{self._parts:05d}.parquet"
            self._write("membership", membership, self.root / "membership" / name)
            self._write("actual", actual, self.root / "actual" / name)
        self._write("topics", builder.topics(), self.root / "topics" / "part-00000.parquet")
        drain_handovers = getattr(builder, "drain_handovers", None)  # the Admin route sees no records
        handovers = drain_handovers() if drain_handovers is not None else []
        if handovers:
            self._handover_parts += 1
            (self.root / HANDOVERS_TABLE).mkdir(exist_ok=True)
            path = self.root / HANDOVERS_TABLE / f"part-{self._handover_parts:05d}.parquet"
            self._write(HANDOVERS_TABLE, handovers, path)
        return len(membership)


class Progress:
    """Progress lines on a stream: records read, their rate, groups, snapshots, and the lag when known."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.started = self.last = time.monotonic()
        self.records_then = 0

    def report(self, builder: History, lag: int | None, *, final: bool = False) -> None:
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


def _arrow(name: str = "pyarrow") -> Any:
    """pyarrow's module ``name`` (the ``collect`` extra), imported by name when a table is made, written or read:
    ``import assignors`` holds no import statement of it."""
    return importlib.import_module(name)


def _arrow_schemas() -> dict[str, Any]:
    """The tables' Arrow schemas, from the columns' one home (:mod:`assignors._core.tables`)."""
    pa = _arrow()

    kinds = {
        "string": pa.string(),
        "int": pa.int32(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "array<string>": pa.list_(pa.string()),
        "double": pa.float64(),
    }
    tables = (
        ("membership", MEMBERSHIP_COLUMNS),
        ("actual", ACTUAL_COLUMNS),
        ("topics", COLLECTED_TOPICS_COLUMNS),
        (HANDOVERS_TABLE, HANDOVERS_COLUMNS),
    )
    return {name: pa.schema([(column, kinds[kind]) for column, kind in columns]) for name, columns in tables}


def _write_parquet(rows: list[dict[str, Any]], schema: Any, path: Path) -> None:
    pa, pq = _arrow(), _arrow("pyarrow.parquet")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), temporary)
    temporary.replace(path)  # readers never see half a file


def _read_parquet(directory: Path, schema: Any) -> list[dict[str, Any]]:
    pq = _arrow("pyarrow.parquet")
    rows: list[dict[str, Any]] = pq.read_table(directory, schema=schema).to_pylist()
    return rows
