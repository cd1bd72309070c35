"""The input files of the commands: their UTF-8 text, their JSON value, or one line naming option, path and problem.

``assignors assign``, ``simulate`` and ``collect`` read their files through these (``assignors.cli`` re-exports them).
"""

from __future__ import annotations

import json
from pathlib import Path

from assignors._core.errors import UsageError

__all__ = ["read_json", "read_text"]


def read_text(path: str, option: str = "") -> str:
    """The UTF-8 text of the file a command reads, or a one-line :class:`UsageError` naming ``option`` and ``path``."""
    where = f"{option} {path}" if option else path
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as error:
        msg = f"{where}: cannot read: {error.strerror or error}"
        raise UsageError(msg) from None
    except UnicodeDecodeError as error:
        msg = f"{where}: not UTF-8 text ({error.reason} at byte {error.start})"
        raise UsageError(msg) from None


def read_json(path: str, option: str = "") -> object:
    """The JSON value of the file a command reads, or a one-line :class:`UsageError` naming where it does not parse."""
    text = read_text(path, option)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        where = f"{option} {path}" if option else path
        msg = f"{where}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        raise UsageError(msg) from None
