"""KIP-848, the consumer group protocol (``group.protocol=consumer``): the broker assigns.

- :class:`UniformAssignor` (``"uniform"``, the default) and :class:`RangeAssignor`
  (``"range"``): the built-in server-side assignors. Their input's ``owned_partitions``
  is each member's previous *target* assignment.
"""

from assignors.consumer_group._common import CONSUMER_PROTOCOL, ServerAssignor
from assignors.consumer_group._heterogeneous import MAX_ITERATION_COUNT
from assignors.consumer_group._range import RangeAssignor
from assignors.consumer_group._uniform import UNIFORM_ASSIGNOR_NAME, UniformAssignor

__all__ = [
    "CONSUMER_PROTOCOL",
    "MAX_ITERATION_COUNT",
    "UNIFORM_ASSIGNOR_NAME",
    "RangeAssignor",
    "ServerAssignor",
    "UniformAssignor",
]
