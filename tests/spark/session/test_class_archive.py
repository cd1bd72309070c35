"""class_archive_options: a local driver JVM dumps its classes once, later ones map the settled archive."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from spark_udfs import session
from spark_udfs.session import ARCHIVE_SETTLE_SECONDS, class_archive_options, settings_for


def _option(options: str, flag: str) -> str | None:
    found = [part.split("=", 1)[1] for part in options.split() if part.startswith(f"{flag}=")]
    return found[0] if found else None


def test_dump_then_map_once_settled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSIGNORS_CLASS_ARCHIVE", raising=False)
    first = class_archive_options(tmp_path)
    dump = _option(first, "-XX:ArchiveClassesAtExit")
    assert dump is not None
    assert _option(first, "-XX:SharedArchiveFile") is None
    assert "-Xlog:cds=off" in first
    dumped = tmp_path / Path(dump).name
    assert dumped.parent == tmp_path
    assert dumped.name.endswith(f".{os.getpid()}.tmp")
    dumped.write_bytes(b"classes")
    # while the JVM may still write it: not mapped, another session dumps its own
    assert _option(class_archive_options(tmp_path), "-XX:ArchiveClassesAtExit") is not None
    later = time.time() + ARCHIVE_SETTLE_SECONDS + 1
    mapped = _option(class_archive_options(tmp_path, now=later), "-XX:SharedArchiveFile")
    assert mapped is not None
    assert not dumped.exists()
    assert (tmp_path / Path(mapped).name).read_bytes() == b"classes"
    # a second settled dump is removed, the archive kept
    dumped.write_bytes(b"other")
    assert _option(class_archive_options(tmp_path, now=later + 60), "-XX:SharedArchiveFile") == mapped
    assert not dumped.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [Path(mapped).name]


def test_an_empty_dump_is_never_mapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSIGNORS_CLASS_ARCHIVE", raising=False)
    dump = _option(class_archive_options(tmp_path), "-XX:ArchiveClassesAtExit")
    assert dump is not None
    (tmp_path / Path(dump).name).write_bytes(b"")
    options = class_archive_options(tmp_path, now=time.time() + ARCHIVE_SETTLE_SECONDS + 1)
    assert _option(options, "-XX:SharedArchiveFile") is None


def test_off_by_the_environment_or_without_a_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSIGNORS_CLASS_ARCHIVE", "0")
    assert class_archive_options(tmp_path / "cache") == ""
    assert not (tmp_path / "cache").exists()
    monkeypatch.delenv("ASSIGNORS_CLASS_ARCHIVE")
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert class_archive_options(blocker / "cache") == ""


def test_only_local_sessions_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSIGNORS_CLASS_ARCHIVE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _, local = settings_for("local[2]")
    options = local["spark.driver.extraJavaOptions"]
    assert options.startswith(session.LOCAL_DEFAULTS["spark.driver.extraJavaOptions"] + " ")
    assert str(tmp_path / "assignors" / "jvm") in options
    for master in ("yarn", "spark://spark-master.example:7077"):
        _, settings = settings_for(master)
        assert "spark.driver.extraJavaOptions" not in settings
