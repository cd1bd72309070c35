"""A SparkSession: the one already running, a Spark Connect client, or a new one with offline-safe local defaults."""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pyspark.sql import SparkSession

__all__ = [
    "LOCAL_DEFAULTS",
    "SESSION_DEFAULTS",
    "SessionError",
    "class_archive_options",
    "first_line",
    "get_session",
    "is_connect",
    "settings_for",
    "ship_packages",
    "ship_wheels",
]

# Session settings every kind of session gets (all can be set over Spark Connect).
SESSION_DEFAULTS: dict[str, str] = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
}
# Only a ``local[...]`` session: everything on loopback, no UI, a shuffle sized for a few cores.
LOCAL_DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.python.worker.reuse": "true",
    # C1 only: a local evaluation's driver JVM lives seconds to minutes, where the C2 compiler's work does not pay
    # back. Measured with benchmarks/spark_eval.py's phases and a 300 x 48 demo history (2 cores, 2026-11-28): the
    # report 14.9 s -> 7.9 s, the whole evaluation 45.5 s -> 39.4 s. On the 1000 x 100 history, where the Python
    # replay is 90% of the time, the difference is within the shared machine's noise: Spark took 0.67x and 0.82x of
    # plain Python's time in two runs with C1, 0.76x in one without. The driver's Java options: a user's
    # SPARK_SUBMIT_OPTS still apply.
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
}


class SessionError(RuntimeError):
    """The session asked for cannot be had: a master or remote URL while another session is active, or both."""


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` (a session or a DataFrame's session) is a Spark Connect client (no JVM behind it)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def get_session(master: str | None = None, app_name: str = "assignors", *, remote: str | None = None) -> SparkSession:
    """The active SparkSession, a Spark Connect session, or a new local or cluster one.

    - Neither ``master`` nor ``remote``: the active session if there is one (so the one
      ``spark-submit`` configured, on its master), else a new ``local[*]`` session.
    - ``remote`` (``sc://HOST:PORT``): a Spark Connect client; only UTC session time and Arrow
      are set, as the server owns everything else, and this project's packages are added to the
      session (:func:`ship_packages`), so the server's executors need only pandas and pyarrow.
    - ``master``: a new session on it. For ``local[...]`` the driver runs on loopback
      (``SPARK_LOCAL_IP=127.0.0.1`` unless set), the UI is off, the shuffle small and the Python
      workers run this interpreter; for any other master (``spark://``, ``yarn``, ``k8s://``)
      none of that is imposed: executors must reach the driver and run their own Python.

    Raises:
        SessionError: ``master`` or ``remote`` is given while a session is already active (it
            would be silently ignored), or both are given; ``master`` is no master URL Spark
            takes, or Spark did not start on it; no Spark Connect server takes a connection at
            ``remote`` within :data:`CONNECT_TIMEOUT_SECONDS`.
    """
    from pyspark.sql import SparkSession

    if master is not None and remote is not None:
        msg = f"give a Spark master ({master}) or a Spark Connect URL ({remote}), not both"
        raise SessionError(msg)
    active = SparkSession.getActiveSession()
    if active is not None:
        if master is not None or remote is not None:
            running = (
                "a Spark Connect session" if is_connect(active) else f"a session on {active.conf.get('spark.master')}"
            )
            msg = (
                f"{running} is already active in this process; it cannot be moved to {master or remote}: "
                "leave out --master/--remote to use it, or stop it first"
            )
            raise SessionError(msg)
        return active
    if remote is not None:
        _check_connect_url(remote)
        builder = SparkSession.builder.remote(remote).appName(app_name)
        for key, value in SESSION_DEFAULTS.items():
            builder = builder.config(key, value)
        connected = builder.getOrCreate()
        ship_packages(connected)
        return connected
    if master is None and "PYSPARK_GATEWAY_PORT" in os.environ:
        # Under spark-submit: the JVM is up and configured (master, deploy mode); keep it as it is.
        builder = SparkSession.builder.appName(app_name)
        for key, value in SESSION_DEFAULTS.items():
            builder = builder.config(key, value)
        submitted = builder.getOrCreate()
        ship_wheels(submitted)
        return submitted
    return _new_session(master or "local[*]", app_name)


def _new_session(chosen: str, app_name: str) -> SparkSession:
    """A new classic session on the master ``chosen``, with :func:`settings_for` its settings."""
    from pyspark.sql import SparkSession

    if not _MASTER.fullmatch(chosen):
        msg = f"master {chosen!r}: expected local, local[N], local[*], spark://HOST:PORT, yarn or k8s://URL"
        raise SessionError(msg)
    environment, settings = settings_for(chosen)
    for key, value in environment.items():
        os.environ.setdefault(key, value)
    builder = SparkSession.builder.appName(app_name).master(chosen)
    for key, value in settings.items():
        builder = builder.config(key, value)
    if chosen.startswith("spark://"):
        addresses = chosen.removeprefix("spark://").split(",")  # a standalone master with standbys: h1:p1,h2:p2
        hosts = [_host_port("Spark master", f"spark://{address}", 7077) for address in addresses]
        _check_reachable(chosen, "Spark master", hosts)
    try:
        session = builder.getOrCreate()
    except Exception as error:  # noqa: BLE001 - the JVM did not start: py4j's and PySpark's errors alike
        msg = f"Spark did not start on {chosen}: {first_line(error)}"
        raise SessionError(msg) from None
    session.sparkContext.setLogLevel("ERROR")
    return session


_MASTER = re.compile(r"local(\[[^\]]+\])?|local-cluster\[[^\]]+\]|yarn|(spark|k8s)://\S+")
"""The master URLs Spark 4 takes (its SparkSubmit refuses any other with a Java stack trace)."""
CONNECT_TIMEOUT_SECONDS = 10.0
"""How long :func:`get_session` waits for a Spark Connect server's port before saying it cannot reach it."""
_CONNECT_PORT = 15002  # Spark Connect's default port


def first_line(error: BaseException) -> str:
    """The line of an error's text that says what went wrong: Spark's error condition when there is one."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("An error occurred while calling")] or lines
    named = next((line for line in lines if re.search(r"\[[A-Z][A-Z_.]+\]", line)), None)
    return named or (lines[0] if lines else type(error).__name__)


def _host_port(what: str, url: str, default_port: int) -> tuple[str, int]:
    """``(host, port)`` of ``scheme://HOST[:PORT]``, or a :class:`SessionError` naming the URL."""
    parsed = urlparse(url.split(";", 1)[0])
    if not parsed.hostname:
        msg = f"{what} URL {url!r}: expected {parsed.scheme}://HOST[:PORT]"
        raise SessionError(msg)
    try:
        return parsed.hostname, parsed.port or default_port
    except ValueError:
        msg = f"{what} URL {url!r}: the port is not a number in 0..65535"
        raise SessionError(msg) from None


def _check_reachable(url: str, what: str, hosts: Sequence[tuple[str, int]]) -> None:
    """Refuse ``url`` when none of its ``hosts`` takes a TCP connection within :data:`CONNECT_TIMEOUT_SECONDS`.

    Spark's own clients retry for a minute (a standalone master) or for minutes (Spark Connect),
    printing Java stack traces meanwhile.
    """
    reasons = []
    for host, port in hosts:
        try:
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_SECONDS).close()
        except OSError as error:
            reasons.append(error.strerror or str(error) or type(error).__name__)
        else:
            return
    msg = f"cannot reach a {what} at {url}: {'; '.join(reasons)} (waited up to {CONNECT_TIMEOUT_SECONDS:g} s)"
    raise SessionError(msg)


def _check_connect_url(remote: str) -> None:
    """Refuse a Spark Connect URL that is not ``sc://HOST[:PORT]`` or whose server takes no connection."""
    if urlparse(remote).scheme != "sc":
        msg = f"Spark Connect URL {remote!r}: expected sc://HOST[:PORT]"
        raise SessionError(msg)
    _check_reachable(remote, "Spark Connect server", [_host_port("Spark Connect", remote, _CONNECT_PORT)])


_PACKAGES = ("assignors", "spark_udfs")  # pure Python: importable from a zip


def ship_packages(session: SparkSession) -> list[str]:
    """Add this project's packages to a Spark Connect session as a Python artifact; returns the file names.

    The pandas functions that replay the groups run in the server's executors, which import
    ``spark_udfs`` and ``assignors`` there. A managed Connect server does not have them, so both
    packages are zipped from where this process imports them and uploaded with
    ``SparkSession.addArtifacts(..., pyfile=True)``: the session's executors put the zip on their
    Python path (artifacts are per session, so other users of the server are not affected).
    """
    import importlib

    with tempfile.TemporaryDirectory(prefix="assignors-artifact-") as folder:
        archive = Path(folder) / "assignors-packages.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bundle:
            for name in _PACKAGES:
                root = Path(importlib.import_module(name).__file__ or "").parent
                for path in sorted(root.rglob("*")):
                    if path.is_file() and "__pycache__" not in path.parts:
                        bundle.write(path, f"{name}/{path.relative_to(root).as_posix()}")
        session.addArtifacts(str(archive), pyfile=True)
    return [archive.name]


def ship_wheels(session: SparkSession) -> list[str]:
    """Put the wheels of ``spark-submit --py-files`` on the executors' Python path; returns the ones added.

    Spark adds only ``.zip``, ``.egg`` and ``.jar`` files from ``--py-files`` to the Python
    path of its workers; a wheel is a zip archive, so each local ``.whl`` is added again
    under a ``.zip`` name (``SparkContext.addPyFile``). Pure-Python wheels, such as this
    project's, import from there.
    """
    added: list[str] = []
    listed = session.conf.get("spark.submit.pyFiles", "") or ""
    for entry in filter(None, (item.strip() for item in listed.split(","))):
        parsed = urlparse(entry)
        if not entry.lower().endswith(".whl") or parsed.scheme not in {"", "file", "local"}:
            continue
        wheel = Path(unquote(parsed.path))
        if not wheel.is_file():
            continue
        copy = Path(tempfile.mkdtemp(prefix="assignors-py-files-")) / f"{wheel.stem}.zip"
        shutil.copyfile(wheel, copy)
        session.sparkContext.addPyFile(str(copy))
        added.append(str(wheel))
    return added


def settings_for(master: str) -> tuple[dict[str, str], dict[str, str]]:
    """The environment defaults and the Spark settings of a new session on ``master``.

    Loopback and the driver's own Python only for ``local[...]``: on a cluster, executors on other
    hosts must reach the driver and run the Python they have.
    """
    if not master.startswith("local"):
        return {}, dict(SESSION_DEFAULTS)
    environment = {
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    settings = {**SESSION_DEFAULTS, **LOCAL_DEFAULTS}
    archive = class_archive_options()
    if archive:
        settings["spark.driver.extraJavaOptions"] = f"{settings['spark.driver.extraJavaOptions']} {archive}"
    return environment, settings


ARCHIVE_SETTLE_SECONDS = 30.0
"""A class archive a JVM dumped this long ago is complete: it becomes the one later sessions map."""


def _cache_dir() -> Path:
    """``$XDG_CACHE_HOME/assignors/jvm`` (default ``~/.cache/assignors/jvm``): files that may be deleted any time."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "assignors" / "jvm"


def _java_identity() -> str:
    """What the archive depends on: the JVM (its real path and file time) and the jars (pyspark's version and
    place). A change of any gives another archive's name; the JVM checks the class path itself too."""
    import hashlib

    import pyspark

    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else (shutil.which("java") or "java")
    try:
        real = Path(java).resolve()
        stamp = f"{real}:{real.stat().st_mtime_ns}"
    except OSError:
        stamp = java
    text = f"{pyspark.__version__}:{Path(pyspark.__file__).parent}:{stamp}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def class_archive_options(cache: Path | None = None, *, now: float | None = None) -> str:
    """The driver JVM's options for a class-data-sharing archive of a local session, or "" (none).

    A local session's JVM spends seconds loading and verifying Spark's classes at each start. The first session
    dumps the classes it loaded into a dynamic archive at its exit (``-XX:ArchiveClassesAtExit``, to a name of its
    own); once that file is older than :data:`ARCHIVE_SETTLE_SECONDS` (the dump finished) it is renamed to the
    archive later sessions map (``-XX:SharedArchiveFile``). Measured on 2 cores (2026-11-29): a session
    6.2-7.5 s -> 3.0-3.5 s and its first job 3.3-4.6 s -> 1.2-1.3 s. The files live under ``cache`` (default
    :func:`_cache_dir`; delete it any time); an archive the JVM cannot use (another JVM or class path) is ignored
    by the JVM, CDS's log lines are off. ``ASSIGNORS_CLASS_ARCHIVE=0`` turns it off; so does a cache directory
    that cannot be made.
    """
    if os.environ.get("ASSIGNORS_CLASS_ARCHIVE", "1") == "0":
        return ""
    import time

    folder = cache or _cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return ""
    name = f"spark-{_java_identity()}.jsa"
    archive = folder / name
    quiet = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"
    moment = time.time() if now is None else now
    for dumped in sorted(folder.glob(f"{name}.*.tmp")):
        try:
            if moment - dumped.stat().st_mtime <= ARCHIVE_SETTLE_SECONDS or not dumped.stat().st_size:
                continue  # still being written (or empty): left to its JVM
            if archive.is_file():
                dumped.unlink()  # another session's dump, not needed
            else:
                dumped.replace(archive)  # atomic: a session maps the whole file or none
        except OSError:
            continue
    if archive.is_file():
        return f"-XX:SharedArchiveFile={archive} {quiet}"
    return f"-XX:ArchiveClassesAtExit={folder / f'{name}.{os.getpid()}.tmp'} {quiet}"
