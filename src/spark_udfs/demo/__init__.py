"""The demos: a generated sample history (``assignors demo``) and real groups on a local broker (``make kafka-demo``).

:mod:`~spark_udfs.demo.sample` generates the history; :mod:`~spark_udfs.demo.kafka_demo` runs real groups on
Apache Kafka, collects ``__consumer_offsets`` and evaluates them with ``--actual``.
"""
