"""``assignors collect``: a cluster's consumer-group history as the evaluation's input tables.

Two routes to the same ``membership``, ``actual`` and ``topics`` tables: ``__consumer_offsets`` (every record the
group coordinators wrote, from the earliest offset; READ on the internal topic) and the Admin API (the groups'
descriptions polled at an interval; DESCRIBE on the groups). Needs the ``collect`` extra (confluent-kafka, pyarrow),
imported only when the command runs; registering the command imports neither. Beside the tables, ``cluster.json``
holds the cluster's Kafka release, read from a broker's ApiVersions (:func:`read_cluster_version`), which
``assignors evaluate`` replays the server assignors as.
"""

from assignors.collect._command import COLLECT_TABLES, TableWriter, collect_dump, register, run
from assignors.collect._kafka import cluster_topic_ids, collect_topic
from assignors.collect._version import (
    CLUSTER_FILE,
    NEWEST_PATCH,
    RELEASE_LEVELS,
    ClusterVersion,
    VersionUnreadError,
    read_cluster_file,
    read_cluster_version,
    write_cluster_file,
)

__all__ = [
    "CLUSTER_FILE",
    "COLLECT_TABLES",
    "NEWEST_PATCH",
    "RELEASE_LEVELS",
    "ClusterVersion",
    "TableWriter",
    "VersionUnreadError",
    "cluster_topic_ids",
    "collect_dump",
    "collect_topic",
    "read_cluster_file",
    "read_cluster_version",
    "register",
    "run",
    "write_cluster_file",
]
