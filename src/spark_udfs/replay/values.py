"""Missing values as pandas and Spark hand them to the replay, told apart without importing pandas."""

from __future__ import annotations

__all__ = ["is_missing"]


def is_missing(value: object) -> bool:
    """None, NaN or NaT (the only values unequal to themselves)."""
    return value is None or value != value  # noqa: PLR0124 - the NaN/NaT test without importing pandas
