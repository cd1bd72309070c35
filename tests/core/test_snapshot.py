"""``assignors assign``'s snapshot files (assignors._core.snapshot): every error names its JSON path."""

from __future__ import annotations

import pytest

from assignors import InvalidSubscriptionError
from assignors._core.snapshot import parse_snapshot


def test_snapshot_empty_topic_with_racks_names_the_path() -> None:
    data = {"topics": {"": {"partitions": 2, "racks": [["a"], ["b"]]}}, "members": {"m": {"topics": [""]}}}
    with pytest.raises(InvalidSubscriptionError, match=r"^topics: expected a non-empty string, got ''$"):
        parse_snapshot(data)
