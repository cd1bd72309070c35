"""The HTML report in a real browser: Debian's headless chromium loads it from file:// with the network off.

The browser is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
commands on fd 3, replies on fd 4), so nothing listens on a port. Where chromium is not
installed the test is skipped, except under ``CI=true``, where ``.ci/run`` installs it and
its absence is a failure.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import SparkSession

pytestmark = pytest.mark.browser

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)


def chromium_path() -> str:
    """Debian's chromium, or skip (fail under CI=true, where .ci/run installs it)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail("CI=true but chromium is not installed: .ci/run installs Debian's chromium with apt-get")
    pytest.skip("chromium is not installed (apt-get install chromium); the browser test runs where it is")


class Browser:
    """A headless chromium driven over the DevTools protocol on a pipe; one page, attached in flat mode.

    It is started with ``posix_spawn``, whose file actions place the pipes at fds 3 and 4: a
    ``preexec_fn`` would make ``subprocess`` fork() and run the test process's ``pthread_atfork``
    handlers, and gRPC's (the Spark Connect client, loaded in the worker that runs the Spark tests)
    then aborts the child before exec now and then (see ``spark_processes``).
    """

    def __init__(self, executable: str, profile: Path) -> None:
        profile.mkdir(parents=True, exist_ok=True)
        self.log = profile.parent / "chromium.log"
        commands, self._to_browser = os.pipe()
        self._from_browser, replies = os.pipe()
        # Above 4, so that placing one at 3 or 4 in the child cannot overwrite the other; close-on-exec here.
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (commands, replies)]
        os.close(commands)
        os.close(replies)
        try:
            self.pid = os.posix_spawn(
                executable,
                [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 1, str(self.log), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                    (os.POSIX_SPAWN_DUP2, 1, 2),
                    (os.POSIX_SPAWN_DUP2, ends[0], 3),  # chromium reads commands on fd 3
                    (os.POSIX_SPAWN_DUP2, ends[1], 4),  # and writes replies on fd 4
                ],
            )
        finally:
            for fd in ends:
                os.close(fd)
        self.status: int | None = None
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def wait(self, timeout: float) -> int | None:
        """Its exit status once it has exited within ``timeout`` seconds (negative: the signal), else None."""
        deadline = time.monotonic() + timeout
        while self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
            elif time.monotonic() > deadline:
                break
            else:
                time.sleep(0.05)
        return self.status

    def send(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 60.0) -> dict[str, Any]:
        """Send one command (to the page once attached) and return its result; events seen meanwhile are kept."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session is not None and not method.startswith("Target."):
            message["sessionId"] = self.session
        try:
            os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        except BrokenPipeError as gone:
            raise RuntimeError(self.gone(f"{method}: chromium closed the DevTools pipe")) from gone
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    msg = f"{method}: {reply['error']}"
                    raise RuntimeError(msg)
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                msg = "chromium did not answer in time"
                raise TimeoutError(msg)
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError(self.gone("chromium closed the DevTools pipe"))
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def gone(self, what: str) -> str:
        """``what``, with chromium's exit status and the end of its log."""
        status = self.wait(5)
        tail = self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-30:]
        return "\n".join([f"{what} (exit status {status})", *tail])

    def open_page(self) -> None:
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send(
            "Network.emulateNetworkConditions",
            {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
        )

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            msg = f"{expression[:60]}...: {result['exceptionDetails']}"
            raise RuntimeError(msg)
        return result["result"].get("value")

    def close(self) -> None:
        try:
            self.session = None
            self.send("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        if self.wait(10) is None:
            os.kill(self.pid, signal.SIGKILL)
            self.wait(60)
        os.close(self._to_browser)
        os.close(self._from_browser)


CHART_STATE = """
Array.prototype.map.call(document.querySelectorAll('div.chart'), function (chart) {
  var box = chart.getBoundingClientRect();
  return {
    id: chart.id,
    title: chart.getAttribute('data-title'),
    svg: chart.querySelectorAll('svg.main-svg').length,
    traces: chart.querySelectorAll('.scatterlayer .trace').length,
    marks: chart.querySelectorAll('.scatterlayer path.js-line, .scatterlayer path.point').length,
    width: box.width,
    height: box.height
  };
})
"""


def load_report(
    browser: Browser, report: Path, *, width: int = 1400, height: int = 1800, wait: float = 60.0
) -> list[dict[str, Any]]:
    """Open ``report`` and wait until every chart has drawn; returns each chart's state."""
    browser.open_page()
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
    browser.send("Emulation.setDeviceMetricsOverride", metrics)
    browser.send("Page.navigate", {"url": report.resolve().as_uri()})
    deadline = time.monotonic() + wait
    while True:
        if browser.evaluate("document.readyState") == "complete":
            charts: list[dict[str, Any]] = browser.evaluate(CHART_STATE)
            if charts and all(c["svg"] and c["marks"] for c in charts):
                return charts
        if time.monotonic() > deadline:
            return browser.evaluate(CHART_STATE)  # type: ignore[no-any-return]
        time.sleep(0.25)


def screenshot(browser: Browser, path: Path) -> None:
    data = browser.send("Page.captureScreenshot", {"format": "png"})["data"]
    path.write_bytes(base64.b64decode(data))


def problems(browser: Browser) -> list[str]:
    """Console errors, uncaught exceptions, error log entries and any request that is not file:// or data:."""
    found = []
    for event in browser.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in {"error", "assert"}:
            found.append(f"console.{params['type']}: {params.get('args')}")
        elif method == "Runtime.exceptionThrown":
            found.append(f"exception: {params.get('exceptionDetails')}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            found.append(f"log: {params['entry'].get('text')}")
        elif method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            if not url.startswith(("file://", "data:", "about:")):
                found.append(f"network request: {url}")
    return found


@pytest.fixture(scope="module")
def report(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from spark_udfs.jobs.evaluate import run_demo

    out = tmp_path_factory.mktemp("report")
    run_demo(spark, str(out), groups=16, snapshots=16, progress=None)
    return out / "report.html"


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    executable = chromium_path()
    started = Browser(executable, tmp_path / "profile")
    try:
        yield started
    finally:
        started.close()


def test_the_report_renders_offline_in_chromium(report: Path, browser: Browser, tmp_path: Path) -> None:
    charts = load_report(browser, report)
    assert len(charts) >= 12  # 6 distributions, 6 time series, 2 per drill-down group
    empty = [c for c in charts if not (c["svg"] and c["traces"] and c["marks"] and c["width"] and c["height"])]
    assert not empty, empty
    assert problems(browser) == []
    ranking = browser.evaluate(
        "Array.prototype.map.call(document.querySelectorAll('#ranking-table tbody tr'),"
        " function (r) { return [r.cells[1].textContent, r.cells[2].textContent]; })"
    )
    # the classic four, KIP-848's two and weighted-sticky (the demo has weights), each labelled with its protocol
    assert sorted(map(tuple, ranking)) == [
        ("consumer-range", "CONSUMER"),
        ("cooperative-sticky", "COOPERATIVE"),
        ("range", "EAGER"),
        ("roundrobin", "EAGER"),
        ("sticky", "EAGER"),
        ("uniform", "CONSUMER"),
        ("weighted-sticky", "COOPERATIVE"),
    ]
    headers = browser.evaluate(
        "Array.prototype.map.call(document.querySelectorAll('#ranking-table th'), function (h) {"
        " return [h.textContent, h.getAttribute('title'), h.className]; })"
    )
    assert [h[0] for h in headers][:7] == ["rank", "strategy", "protocol", "rebalances", "pause", "imbalance", "moved"]
    assert all(h[1] for h in headers)  # every column has its one-line definition
    assert [h[0] for h in headers if "score" in h[2]] == ["pause", "imbalance", "moved"]
    image = tmp_path / "report.png"
    screenshot(browser, image)
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert image.stat().st_size > 20_000  # a page with charts, not a blank one


def test_the_group_table_sorts_on_a_click(report: Path, browser: Browser) -> None:
    load_report(browser, report)
    column = (
        "Array.prototype.map.call(document.querySelectorAll('#group-table tbody tr'), function (r) {"
        " return parseFloat(r.cells[5].getAttribute('data-v')); })"
    )
    browser.evaluate("document.querySelectorAll('#group-table th')[5].click()")
    ascending = browser.evaluate(column)
    assert ascending == sorted(ascending)
    browser.evaluate("document.querySelectorAll('#group-table th')[5].click()")
    assert browser.evaluate(column) == sorted(ascending, reverse=True)
    assert problems(browser) == []
