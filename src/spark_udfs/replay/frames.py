"""One group's replay as pandas frames or Arrow tables: the body of the Spark job.

:func:`replay_frame` reads a group's membership rows from a pandas frame, runs
:func:`spark_udfs.replay.group_replay.replay_group` and returns its output rows typed as
``OUTPUT_COLUMNS`` (nullable integers and booleans). :func:`replay_table` does the same on Arrow tables, what
``evaluate_history``'s ``applyInArrow`` passes and takes: no pandas on either side (on the demo's history the
pandas frames in and out, and Spark's conversions of them, were about a fifth of a worker's time).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from assignors.metrics import DEFAULT_PAUSE_MODEL
from assignors.tables import ASSIGNMENT_TYPE, OUTPUT_COLUMNS
from spark_udfs.replay.group_replay import STRATEGIES, MemberRow, Row, TopicHistory, replay_group
from spark_udfs.replay.timing import PauseTiming
from spark_udfs.replay.values import is_missing
from spark_udfs.replay.weights import WeightHistory

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from assignors.metrics import PauseModel

__all__ = ["member_rows", "replay_frame", "replay_table", "rows_to_frame", "rows_to_table", "table_member_rows"]

_PANDAS_TYPES = {"string": "object", "timestamp": "datetime64[ns]", "int": "Int64", "boolean": "boolean"}


def rows_to_frame(rows: list[Row], columns: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Rows as a pandas DataFrame with the columns' types (nullable integers and booleans)."""
    import pandas as pd

    data: dict[str, Any] = {}
    for name, kind in columns:
        values = [row[name] for row in rows]
        if kind == "double":
            data[name] = pd.Series([math.nan if v is None else v for v in values], dtype="float64")
        elif kind in _PANDAS_TYPES:
            data[name] = pd.Series(values, dtype=_PANDAS_TYPES[kind])
        else:
            data[name] = pd.Series(values, dtype="object")
    return pd.DataFrame(data, columns=[name for name, _ in columns])


def _value(value: Any) -> Any:
    return None if is_missing(value) else value


def _stamps(column: pd.Series[Any]) -> list[Any]:
    """The column's timestamps as ``datetime`` (None when missing), each distinct value converted once.

    A group's rows hold a few hundred timestamps for thousands of rows: a datetime64 column is factorized and only
    its distinct values become ``datetime`` (the same values the row-by-row loop gives, shared between rows).
    """
    import pandas as pd

    if column.dtype.kind != "M":  # not datetime64: row by row, as the values come
        return [None if is_missing(ts) else ts.to_pydatetime() for ts in column]
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    # code -1 (NaT) picks the None appended last
    converted: list[Any] = [None if is_missing(ts) else ts.to_pydatetime() for ts in uniques]
    converted.append(None)
    return [converted[code] for code in codes.tolist()]


def member_rows(frame: pd.DataFrame) -> list[MemberRow]:
    """The membership rows of a pandas frame with the ``MEMBERSHIP_COLUMNS``."""
    return [
        MemberRow(
            ts,
            _value(member_id),
            None if topics is None or (isinstance(topics, float) and math.isnan(topics)) else tuple(topics),
            _value(instance),
            _value(rack),
        )
        for ts, member_id, topics, instance, rack in zip(
            _stamps(frame["snapshot_ts"]),
            frame["member_id"].tolist(),
            frame["topics"].tolist(),
            frame["group_instance_id"].tolist(),
            frame["rack_id"].tolist(),
            strict=True,
        )
    ]


def replay_frame(  # noqa: PLR0913 - the replay's options
    frame: pd.DataFrame,
    history: TopicHistory,
    strategies: Sequence[str] = STRATEGIES,
    *,
    detail: bool = False,
    weights: WeightHistory | None = None,
    timing: PauseModel | PauseTiming = DEFAULT_PAUSE_MODEL,
    errors: Mapping[str | None, str] | None = None,
    kafka_version: str | None = None,
    kafka_jars: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The ``applyInPandas`` body: one group's membership rows in, its output rows out.

    With ``detail`` each output row also carries ``detail``: the per-member partitions of
    that snapshot and strategy, as a list of ``{"member", "partitions"}``. ``errors`` maps a
    group id to the fault found in its rows before the replay (its rows carry it).
    """
    import pandas as pd

    group_id = _value(frame["group_id"].iloc[0]) if len(frame) else None
    settings = (detail, weights, timing, errors, kafka_version, kafka_jars)
    output, details = _replayed(group_id, member_rows(frame), history, strategies, settings)
    result = rows_to_frame(output, OUTPUT_COLUMNS)
    if details is not None:
        result["detail"] = pd.Series(details, dtype="object")
    return result


_Settings = tuple[
    bool,
    "WeightHistory | None",
    "PauseModel | PauseTiming",
    "Mapping[str | None, str] | None",
    "str | None",
    "Sequence[str] | None",
]


def _replayed(
    group_id: str | None, rows: list[MemberRow], history: TopicHistory, strategies: Sequence[str], settings: _Settings
) -> tuple[list[Row], list[list[dict[str, Any]]] | None]:
    """The body both paths share: the group's output rows and (with ``detail``) each row's ``detail``.

    ``settings``: :func:`replay_frame`'s ``detail``, ``weights``, ``timing``, ``errors``, ``kafka_version`` and
    ``kafka_jars``.
    """
    detail, weights, timing, errors, kafka_version, kafka_jars = settings
    output, members = replay_group(
        group_id,
        rows,
        history,
        strategies,
        detail=detail,
        weights=weights,
        timing=timing,
        input_error=(errors or {}).get(group_id),
        kafka_version=kafka_version,
        kafka_jars=kafka_jars,
    )
    if not detail:
        return output, None
    nested: dict[tuple[Any, str], list[dict[str, Any]]] = {}
    for row in members:
        nested.setdefault((row["snapshot_ts"], row["strategy"]), []).append(
            {"member": row["member"], "partitions": row["partitions"]}
        )
    return output, [nested.get((row["snapshot_ts"], row["strategy"]), []) for row in output]


def replay_table(  # noqa: PLR0913 - the replay's options
    table: pa.Table,
    history: TopicHistory,
    strategies: Sequence[str] = STRATEGIES,
    *,
    detail: bool = False,
    weights: WeightHistory | None = None,
    timing: PauseModel | PauseTiming = DEFAULT_PAUSE_MODEL,
    errors: Mapping[str | None, str] | None = None,
    kafka_version: str | None = None,
    kafka_jars: Sequence[str] | None = None,
    time_zone: str = "UTC",
) -> pa.Table:
    """The ``applyInArrow`` body: :func:`replay_frame` on one group's Arrow table, its output an Arrow table.

    The same rows as :func:`replay_frame` gives (the pandas and Arrow paths share everything but the conversions).
    ``time_zone`` is the Spark session's: Spark hands timestamps over as UTC instants, and the replay sees them as
    the pandas path does, as the session's wall-clock times. The output's strings are Arrow's large strings when
    the input's are (``spark.sql.execution.arrow.useLargeVarTypes``), as Spark then expects.
    """
    import pyarrow as pa

    group_id = table.column("group_id")[0].as_py() if table.num_rows else None
    settings = (detail, weights, timing, errors, kafka_version, kafka_jars)
    output, details = _replayed(group_id, table_member_rows(table, time_zone), history, strategies, settings)
    large = pa.types.is_large_string(table.schema.field("member_id").type)
    columns = [*OUTPUT_COLUMNS, ("detail", ASSIGNMENT_TYPE)] if detail else list(OUTPUT_COLUMNS)
    values = {"detail": details} if details is not None else {}
    return rows_to_table(output, columns, large=large, time_zone=time_zone, values=values)


def table_member_rows(table: pa.Table, time_zone: str = "UTC") -> list[MemberRow]:
    """The membership rows of an Arrow table with the ``MEMBERSHIP_COLUMNS`` (timestamps in ``time_zone``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    stamps = table.column("snapshot_ts")
    if pa.types.is_timestamp(stamps.type) and stamps.type.tz is not None:
        stamps = pc.local_timestamp(stamps.cast(pa.timestamp(stamps.type.unit, tz=time_zone)))
    # a few hundred distinct times for thousands of rows: each becomes one datetime, shared by its rows
    encoded = pc.dictionary_encode(stamps).combine_chunks()
    distinct: list[Any] = [*encoded.dictionary.to_pylist(), None]
    codes = encoded.indices.fill_null(-1).to_pylist()
    return [
        MemberRow(distinct[code], member_id, None if topics is None else tuple(topics), instance, rack)
        for code, member_id, topics, instance, rack in zip(
            codes,
            table.column("member_id").to_pylist(),
            table.column("topics").to_pylist(),
            table.column("group_instance_id").to_pylist(),
            table.column("rack_id").to_pylist(),
            strict=True,
        )
    ]


def rows_to_table(
    rows: list[Row],
    columns: Sequence[tuple[str, str]],
    *,
    large: bool = False,
    time_zone: str = "UTC",
    values: Mapping[str, list[Any]] | None = None,
) -> pa.Table:
    """Rows as an Arrow table of the types Spark expects for ``columns`` (``ddl(columns)``; timestamps as UTC
    instants of the wall-clock times in ``time_zone``). ``values``: columns given whole instead of from the rows.
    A NaN double is null, as pandas' conversion makes it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arrays = []
    for name, kind in columns:
        column = values[name] if values and name in values else [row[name] for row in rows]
        if kind == "timestamp":
            stamps = pa.array(column, type=pa.timestamp("us"))
            if time_zone != "UTC":  # wall-clock times of the session's zone: their instants
                stamps = pc.assume_timezone(stamps, time_zone, ambiguous="earliest", nonexistent="earliest")
            arrays.append(stamps.cast(pa.timestamp("us", tz="UTC")))
        else:
            arrays.append(pa.array(column, type=_arrow_kind(kind, large=large), from_pandas=True))
    return pa.Table.from_arrays(arrays, names=[name for name, _ in columns])


def _arrow_kind(kind: str, *, large: bool) -> pa.DataType:
    """The Arrow type Spark's Arrow conversion gives the column type ``kind``."""
    import pyarrow as pa

    text = pa.large_string() if large else pa.string()  # Spark's large types are its strings' only: lists stay
    simple = {"string": text, "int": pa.int32(), "double": pa.float64(), "boolean": pa.bool_()}
    if kind in simple:
        return simple[kind]
    if kind == "array<string>":
        return pa.list_(text)
    if kind == ASSIGNMENT_TYPE:
        return pa.list_(pa.struct([("member", text), ("partitions", pa.list_(text))]))
    msg = f"no Arrow type for the output column type {kind!r}"
    raise ValueError(msg)
