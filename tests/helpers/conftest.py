"""The real groups' helpers import the Kafka clients at module level: without the client extras (``make core-test``)
pytest's doctest collection leaves them out, as tests/integration's conftest leaves out the tests that use them."""

from __future__ import annotations

import importlib.util

_CLIENTS = ("kafka", "aiokafka", "confluent_kafka")

collect_ignore = (
    [] if all(importlib.util.find_spec(client) is not None for client in _CLIENTS) else ["faults.py", "members.py"]
)
