"""``assignors collect``: a cluster's consumer-group history as the evaluation's input tables.

Two routes to the same ``membership``, ``actual`` and ``topics`` tables: ``__consumer_offsets`` (every record the
group coordinators wrote, from the earliest offset; READ on the internal topic) and the Admin API (the groups'
descriptions polled at an interval; DESCRIBE on the groups). Needs the ``collect`` extra (confluent-kafka, pyarrow),
imported only when the command runs; registering the command imports neither.
"""

from assignors.collect._command import COLLECT_TABLES, TableWriter, collect_dump, register, run
from assignors.collect._kafka import cluster_topic_ids, collect_topic

__all__ = ["COLLECT_TABLES", "TableWriter", "cluster_topic_ids", "collect_dump", "collect_topic", "register", "run"]
