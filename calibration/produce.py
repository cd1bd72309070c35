"""``python -m calibration.produce BOOTSTRAP INTERVAL TOPICS_JSON``: the calibration's producer process.

Every INTERVAL seconds it writes one record to every partition of every topic that TOPICS_JSON (``{topic: count}``,
re-read when it changes) names, until SIGTERM.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    from confluent_kafka import Producer

    bootstrap, interval, listing = argv[0], float(argv[1]), Path(argv[2])
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "log_level": 2, "acks": 1})
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    counts: dict[str, int] = {}
    seen = 0.0
    while not stop.is_set():
        began = time.monotonic()
        try:
            changed = listing.stat().st_mtime
            if changed != seen:
                counts, seen = json.loads(listing.read_text(encoding="utf-8")), changed
        except (OSError, ValueError):
            pass
        for topic, count in counts.items():
            for partition in range(int(count)):
                try:
                    producer.produce(topic, b"x", partition=partition)
                except BufferError:
                    producer.poll(0.05)
        producer.poll(0)
        stop.wait(max(0.0, interval - (time.monotonic() - began)))
    producer.flush(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
