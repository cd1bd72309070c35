"""The input tables as Spark reads them: paths, Parquet or CSV reading, the CSV checks, the schemas' Spark side.

The columns of every table live in :mod:`assignors.tables`; here they become Spark DDL and checks:
:mod:`~spark_udfs.tables.paths` (a path or a URI, and its local file), :mod:`~spark_udfs.tables.schemas` (DDL,
the schema check, the optional columns, the CSV typing), :mod:`~spark_udfs.tables.csv_checks` (a CSV's typos,
named by file and line) and :mod:`~spark_udfs.tables.reading` (:func:`~spark_udfs.tables.reading.read_table`).
"""
