"""The Spark jobs: the history evaluation, the actual strategy, the ``__consumer_offsets`` decoder, the command's route.

:mod:`~spark_udfs.jobs.history` (:func:`~spark_udfs.jobs.history.evaluate_history`: every group replayed per
strategy), :mod:`~spark_udfs.jobs.actual` (the recorded assignments measured alike, and the self-check),
:mod:`~spark_udfs.jobs.consumer_offsets` (raw ``__consumer_offsets`` rows into the tables) and
:mod:`~spark_udfs.jobs.evaluate` (what ``assignors evaluate`` and ``demo`` run: tables in, evaluation, report).
"""
