"""Where a table is: a path or a URI, and its local file when it has one."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["join_uri", "local_path"]


def local_path(uri: str) -> Path | None:
    """The local file system path of ``uri`` (a plain path or ``file:``), else None (``hdfs://``, ``s3a://``...)."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if len(parsed.scheme) <= 1:  # no scheme, or a Windows drive letter
        return Path(uri)
    return None


def join_uri(base: str, name: str) -> str:
    """``base/name`` for a path or a URI."""
    return f"{base.rstrip('/')}/{name}"
