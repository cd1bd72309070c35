"""What a real group's member process and its parent agree on: the clients a member runs, how often it polls, how long
it waits for metadata, and the signal that makes it write its threads' stacks.

The parent is :mod:`assignors.testing._groups` (behind the ``testing`` extra, which needs Hypothesis); the child is
``python -m assignors._member``, which runs in environments without that extra. Both read these from here, so the
child imports nothing of the kit.
"""

from __future__ import annotations

import signal

__all__ = ["CLIENTS", "METADATA_TIMEOUT_S", "POLL_S", "STACKS_SIGNAL"]

CLIENTS = ("confluent", "kafka-python", "aiokafka")
"""The clients a member process runs."""
POLL_S = 0.2
"""How long a member's poll waits for records."""
METADATA_TIMEOUT_S = 30.0
"""How long a member waits for the cluster's metadata."""
STACKS_SIGNAL = signal.SIGUSR1
"""A member writes every thread's Python stack to its log on this signal (``faulthandler``)."""
