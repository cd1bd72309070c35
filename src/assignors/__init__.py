"""Kafka's consumer partition assignors in pure Python.

The public API: the domain model (:class:`TopicPartition`, :class:`Subscription`,
:class:`Assignment`, :class:`Cluster`, :class:`RebalanceProtocol`), the
:class:`ConsumerPartitionAssignor` protocol, the built-in assignors and
:func:`get_assignor`, and the :class:`AssignorError` tree. Submodules:
:mod:`assignors.metrics`.
"""

from importlib import metadata as _metadata

from assignors._builtin.range import RangeAssignor
from assignors._builtin.registry import assignor_names, get_assignor
from assignors._builtin.round_robin import RoundRobinAssignor
from assignors._builtin.sticky.assignor import CooperativeStickyAssignor, StickyAssignor
from assignors._builtin.weighted.assignor import WEIGHTED_STICKY_ASSIGNOR_NAME, WeightedStickyAssignor
from assignors._core.errors import (
    AssignorError,
    ConfigurationError,
    CooperativeViolationError,
    EncodingError,
    GroupTooLargeError,
    InconsistentGroupProtocolError,
    InvalidSubscriptionError,
    ProtocolError,
    ScenarioError,
    SimulationError,
    UnknownAssignorError,
    UsageError,
)
from assignors._core.interface import ConsumerPartitionAssignor
from assignors._core.limits import SizeLimits, set_size_limits, size_limits
from assignors._core.model import (
    COOPERATIVE_STICKY_ASSIGNOR_NAME,
    DEFAULT_GENERATION,
    RANGE_ASSIGNOR_NAME,
    ROUNDROBIN_ASSIGNOR_NAME,
    STICKY_ASSIGNOR_NAME,
    Assignment,
    Cluster,
    MemberId,
    RebalanceProtocol,
    Subscription,
    Topic,
    TopicPartition,
    parse_topic_partition,
)

__all__ = [
    "COOPERATIVE_STICKY_ASSIGNOR_NAME",
    "DEFAULT_GENERATION",
    "RANGE_ASSIGNOR_NAME",
    "ROUNDROBIN_ASSIGNOR_NAME",
    "STICKY_ASSIGNOR_NAME",
    "WEIGHTED_STICKY_ASSIGNOR_NAME",
    "Assignment",
    "AssignorError",
    "Cluster",
    "ConfigurationError",
    "ConsumerPartitionAssignor",
    "CooperativeStickyAssignor",
    "CooperativeViolationError",
    "EncodingError",
    "GroupTooLargeError",
    "InconsistentGroupProtocolError",
    "InvalidSubscriptionError",
    "MemberId",
    "ProtocolError",
    "RangeAssignor",
    "RebalanceProtocol",
    "RoundRobinAssignor",
    "ScenarioError",
    "SimulationError",
    "SizeLimits",
    "StickyAssignor",
    "Subscription",
    "Topic",
    "TopicPartition",
    "UnknownAssignorError",
    "UsageError",
    "WeightedStickyAssignor",
    "assignor_names",
    "get_assignor",
    "parse_topic_partition",
    "set_size_limits",
    "size_limits",
]

try:
    __version__ = _metadata.version("assignors")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
