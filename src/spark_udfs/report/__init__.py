"""The report: the evaluation aggregated on Spark into a summary, ranked, and drawn as text and HTML.

:mod:`~spark_udfs.report.aggregation` (:func:`~spark_udfs.report.aggregation.summarize`, on Spark),
:mod:`~spark_udfs.report.summary` (what it yields, as plain data), :mod:`~spark_udfs.report.ranking` (the
score and its figures), :mod:`~spark_udfs.report.text` (the headline and the terminal's table),
:mod:`~spark_udfs.report.html` (the page, laid out from :mod:`~spark_udfs.report.page` and
:mod:`~spark_udfs.report.charts`).
"""
